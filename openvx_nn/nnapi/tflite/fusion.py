"""A separate RELU, RELU_N1_TO_1 or RELU6 after an ADD, SUB, MUL or DIV, or after a float32 CONV_2D,
DEPTHWISE_CONV_2D or FULLY_CONNECTED, folded into that operator's fused activation, as TFLite's converter writes
the same arithmetic (MediaPipe's face detector keeps 17 such pairs after adds, and a RELU after its first
convolution: a pass over 64x64x24 values, 7.5 us of its 0.8 ms on one thread).

The fold clamps the same float32 values the activation would (a convolution clamps its sum, bias added, in its
epilogue) and applies only where the operator has no fused activation of its own and its output is read by the
activation alone and is no model output. Quantized convolutions are left alone: the activation's output may be
quantized otherwise than the convolution's.
"""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from .flatbuffer import Operator, Subgraph

ACTIVATIONS = {"RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
"""The activation operators and their fused-activation codes."""
BINARY = ("ADD", "SUB", "MUL", "DIV")
WINDOWED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
"""The float32 operators with a fused activation a separate one after them folds into."""


def fold_activations(graph: Subgraph) -> list[Operator]:
    """``graph``'s operators with each foldable activation merged into the operator before it."""
    readers = Counter(k for op in graph.operators for k in op.inputs if k >= 0)
    writer = {op.outputs[0]: op for op in graph.operators if op.outputs}
    outputs = set(graph.outputs)
    merged: dict[int, Operator] = {}
    dropped: set[int] = set()
    for op in graph.operators:
        if op.name not in ACTIVATIONS:
            continue
        source = writer.get(op.inputs[0])
        if source is None or not (source.name in BINARY or (
                source.name in WINDOWED and graph.tensors[op.inputs[0]].type == "FLOAT32"
                and graph.tensors[op.outputs[0]].type == "FLOAT32")):
            continue
        if (source.index in merged
                or getattr(source.options, "fusedActivationFunction", 0) != 0
                or readers[op.inputs[0]] != 1 or op.inputs[0] in outputs):
            continue
        options = SimpleNamespace(**{**vars(source.options or SimpleNamespace()),
                                     "fusedActivationFunction": ACTIVATIONS[op.name]})
        merged[source.index] = Operator(source.index, source.name, source.inputs, op.outputs, options)
        dropped.add(op.index)
    return [merged.get(op.index, op) for op in graph.operators if op.index not in dropped]
