"""``.tflite`` models on the NNAPI front end, mapped as TFLite's NNAPI delegate maps them onto NNAPI 1.2.

>>> from openvx_nn.nnapi import tflite
>>> loaded = tflite.load("face_landmark.tflite")     # an openvx_nn.nnapi Model, finished
>>> run = loaded.compile()                          # an nnapi Compilation behind a callable
>>> outputs = run(image)                            # NumPy arrays, the model's output order

The reader is our own (the schema's facts in ``schema_tables``): no LiteRT needed.  The mapping builds the
Model through the builder's public API only; an operator NNAPI 1.2 cannot express (a custom operator,
DENSIFY, a resize with half-pixel centers, ...) refuses the model with ``Unsupported`` naming the operator and
its index.  int8 tensors run as uint8 with the zero point moved up by 128 (NNAPI 1.2 has no signed
activations); ``run`` takes and returns the file's own types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..builder import Compilation, Execution, Model
from .flatbuffer import DTYPES, Subgraph, Tensor, read
from .fusion import fold_activations
from .mapper import INT8_SHIFT, Mapper, Unsupported
from .operations import MAPPINGS

__all__ = ["MAPPINGS", "Runner", "TFLiteModel", "Unsupported", "load", "map_subgraph"]


@dataclass
class TFLiteModel:
    """A ``.tflite`` model mapped onto NNAPI: the finished ``model`` and the file's input and output tensors."""

    model: Model
    inputs: list[Tensor]
    outputs: list[Tensor]
    kept: list[np.ndarray] = field(default_factory=list, repr=False)
    """The constant arrays the model's operands reference."""

    def compile(self) -> Runner:
        compilation = Compilation(self.model)
        compilation.finish()
        return Runner(compilation, self)


class Runner:
    """A compiled model called with its inputs (file order, file types); returns fresh output arrays."""

    def __init__(self, compilation: Compilation, loaded: TFLiteModel):
        self.compilation, self.loaded = compilation, loaded
        self._outputs = [np.zeros(t.shape, _nnapi_dtype(t)) for t in loaded.outputs]

    def __call__(self, *arrays: np.ndarray) -> list[np.ndarray]:
        if len(arrays) != len(self.loaded.inputs):
            raise ValueError(f"the model takes {len(self.loaded.inputs)} inputs, got {len(arrays)}")
        execution = Execution(self.compilation)
        for k, (t, array) in enumerate(zip(self.loaded.inputs, arrays)):
            array = np.asarray(array)
            if t.type == "INT8":
                array = (array.astype(np.int16) + INT8_SHIFT).astype(np.uint8)
            execution.set_input(k, array.reshape(t.shape))
        for k, out in enumerate(self._outputs):
            execution.set_output(k, out)
        execution.compute()
        return [(out.astype(np.int16) - INT8_SHIFT).astype(np.int8) if t.type == "INT8" else out.copy()
                for t, out in zip(self.loaded.outputs, self._outputs)]

    def release(self) -> None:
        self.compilation.release()


def _nnapi_dtype(t: Tensor) -> np.dtype:
    return np.dtype(np.uint8 if t.type == "INT8" else DTYPES[t.type])


def map_subgraph(graph: Subgraph) -> TFLiteModel:
    """``graph``'s operators as NNAPI operations, in order (an activation after ADD, SUB, MUL or DIV fused
    into it); the Model finished."""
    m = Mapper(graph)
    for op in fold_activations(graph):
        mapping = MAPPINGS.get(op.name)
        if mapping is None:
            raise Unsupported(f"operator {op.index} ({op.name}) has no NNAPI 1.2 mapping")
        mapping(m, op)
    for k in graph.inputs + graph.outputs:
        if m.constant_value(k) is not None:
            raise Unsupported(f"tensor {k} ({graph.tensors[k].name}) is a model input or output and a constant")
    m.model.identify_inputs_and_outputs([m.operand(k) for k in graph.inputs], [m.operand(k) for k in graph.outputs])
    m.model.finish()
    return TFLiteModel(m.model, [graph.tensors[k] for k in graph.inputs], [graph.tensors[k] for k in graph.outputs],
                       m.kept)


def load(source: str | Path | bytes) -> TFLiteModel:
    """The ``.tflite`` model in ``source`` (a path or the file's bytes) as a finished NNAPI Model."""
    return map_subgraph(read(source))
