"""TFLite tensors as operands of an ``openvx_nn.nnapi`` Model, chosen as TFLite's NNAPI delegate chooses them
for NNAPI 1.2 (API level 29).

- float32 -> TENSOR_FLOAT32, float16 -> TENSOR_FLOAT16, int32 -> TENSOR_INT32, uint8 -> TENSOR_QUANT8_ASYMM;
- int8 (asymmetric) -> TENSOR_QUANT8_ASYMM with the zero point and every value moved up by 128 (NNAPI 1.2 has
  no signed 8-bit activations; the delegate does the same), except a per-channel filter, which stays int8 as
  TENSOR_QUANT8_SYMM_PER_CHANNEL;
- a float16 constant read through DEQUANTIZE becomes a float32 constant (the delegate widens these weights on
  the host instead of adding the operation);
- a constant of shape [] becomes [1] (NNAPI tensors with a value need known dimensions).
"""
from __future__ import annotations

import numpy as np

from ..builder import Model
from ..enums import OperandType
from ..errors import NNAPIError
from .flatbuffer import Subgraph, Tensor

TENSOR_TYPES = {"FLOAT32": OperandType.TENSOR_FLOAT32, "FLOAT16": OperandType.TENSOR_FLOAT16,
                "INT32": OperandType.TENSOR_INT32, "UINT8": OperandType.TENSOR_QUANT8_ASYMM,
                "INT8": OperandType.TENSOR_QUANT8_ASYMM, "BOOL": OperandType.TENSOR_BOOL8}
INT8_SHIFT = 128
"""What an int8 tensor's zero point and values move by to become uint8."""


class Unsupported(NNAPIError):
    """A TFLite operator (or its options) that NNAPI 1.2 cannot express; names the operator and its index."""


class Mapper:
    """Builds one NNAPI Model from one subgraph: an operand per TFLite tensor (made on first use), constants
    for scalars and the operands that decompositions add."""

    def __init__(self, graph: Subgraph):
        self.graph = graph
        self.model = Model()
        self.operands: dict[int, int] = {}
        self.widened: dict[int, np.ndarray] = {}
        """TFLite tensors whose value the mapping computed on the host (float16 weights widened)."""
        self.kept: list[np.ndarray] = []
        """Arrays the model's operands reference without copying: they live as long as the mapper."""
        self.forms: dict[int, tuple] = {}
        """Each NNAPI operand's (type, dimensions, scale, zero point)."""

    def tensor(self, k: int) -> Tensor:
        return self.graph.tensors[k]

    def constant_value(self, k: int) -> np.ndarray | None:
        """Tensor ``k``'s value as the file (or a widening) gives it; None when it is computed at run time."""
        if k in self.widened:
            return self.widened[k]
        return self.graph.tensors[k].data

    def operand(self, k: int) -> int:
        """The NNAPI operand of TFLite tensor ``k``."""
        if k in self.operands:
            return self.operands[k]
        t = self.graph.tensors[k]
        value = self.constant_value(k)
        kind = OperandType.TENSOR_FLOAT32 if k in self.widened else TENSOR_TYPES.get(t.type)
        if t.sparse:
            raise NNAPIError(f"tensor {k} ({t.name}) is a sparse constant; NNAPI has no sparse tensors")
        if kind is None:
            raise NNAPIError(f"tensor {k} ({t.name}) is {t.type}; NNAPI 1.2 has no such tensor type")
        scale, zero = 0.0, 0
        if t.per_channel and t.type == "INT8":
            kind = OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL
        elif t.quantized and t.type in ("UINT8", "INT8"):
            scale, zero = float(t.scales[0]), int(t.zero_points[0]) + (INT8_SHIFT if t.type == "INT8" else 0)
        elif t.quantized and t.type == "INT32":
            scale = float(t.scales[0])
        if value is not None and t.type == "INT8" and kind == OperandType.TENSOR_QUANT8_ASYMM:
            value = (value.astype(np.int16) + INT8_SHIFT).astype(np.uint8)
        shape = t.shape if t.shape or value is None else (1,)
        index = self._add(kind, shape, scale, zero)
        if kind == OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            self.model.set_operand_symm_per_channel_quant_params(index, t.scales, t.axis)
        if value is not None:
            self.reference(index, value.reshape(shape))
        self.operands[k] = index
        return index

    def reference(self, index: int, value: np.ndarray) -> None:
        """Give operand ``index`` ``value`` without copying it (the mapper keeps the array alive)."""
        array = np.ascontiguousarray(value)
        self.kept.append(array)
        self.model.set_operand_reference(index, memoryview(array).cast("B"))

    def new(self, kind: OperandType, shape, value=None, scale: float = 0.0, zero_point: int = 0) -> int:
        """An operand of the mapping's own (a scalar argument, a decomposition's intermediate)."""
        index = self._add(kind, shape, scale, zero_point)
        if value is not None:
            self.model.set_operand_value(index, value)
        return index

    def _add(self, kind: OperandType, shape, scale: float, zero_point: int) -> int:
        index = self.model.add_operand(kind, list(shape), scale, zero_point)
        self.forms[index] = (kind, tuple(shape), scale, zero_point)
        return index

    def int32(self, value: int) -> int:
        return self.new(OperandType.INT32, (), np.int32(value))

    def float32(self, value: float) -> int:
        return self.new(OperandType.FLOAT32, (), np.float32(value))

    def boolean(self, value: bool) -> int:
        return self.new(OperandType.BOOL, (), np.bool_(value))

    def ints(self, values) -> int:
        """A TENSOR_INT32 constant (axes, shapes, paddings)."""
        array = np.asarray(values, np.int32)
        return self.new(OperandType.TENSOR_INT32, array.shape or (1,), array.reshape(array.shape or (1,)))

    def like(self, k: int) -> int:
        """A fresh operand of TFLite tensor ``k``'s type, shape and quantization (an intermediate)."""
        kind, shape, scale, zero_point = self.forms[self.operand(k)]
        return self.new(kind, shape, scale=scale, zero_point=zero_point)
