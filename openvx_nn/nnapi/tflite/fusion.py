"""A separate RELU, RELU_N1_TO_1 or RELU6 after an ADD, SUB, MUL or DIV folded into that operator's fused
activation, as TFLite's converter writes the same arithmetic (MediaPipe's face detector keeps 17 such pairs).

The fold is exact (the activation clamps the same float32 sum) and applies only where the binary operator has
no fused activation of its own and its output is read by the activation alone and is no model output.
"""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from .flatbuffer import Operator, Subgraph

ACTIVATIONS = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
"""The activation operators and their fused-activation codes."""
BINARY = ("ADD", "SUB", "MUL", "DIV")


def fold_activations(graph: Subgraph) -> list[Operator]:
    """``graph``'s operators with each foldable activation merged into the binary operator before it."""
    readers = Counter(k for op in graph.operators for k in op.inputs if k >= 0)
    writer = {op.outputs[0]: op for op in graph.operators if op.outputs}
    outputs = set(graph.outputs)
    merged: dict[int, Operator] = {}
    dropped: set[int] = set()
    for op in graph.operators:
        if op.name not in ACTIVATIONS:
            continue
        source = writer.get(op.inputs[0])
        if (source is None or source.name not in BINARY or source.index in merged
                or getattr(source.options, "fusedActivationFunction", 0) != 0
                or readers[op.inputs[0]] != 1 or op.inputs[0] in outputs):
            continue
        options = SimpleNamespace(**{**vars(source.options or SimpleNamespace()),
                                     "fusedActivationFunction": ACTIVATIONS[op.name]})
        merged[source.index] = Operator(source.index, source.name, source.inputs, op.outputs, options)
        dropped.add(op.index)
    return [merged.get(op.index, op) for op in graph.operators if op.index not in dropped]
