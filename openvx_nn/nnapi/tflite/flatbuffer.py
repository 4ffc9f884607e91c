"""A ``.tflite`` file's first subgraph as plain records: tensors (shape, type, quantization, constant data) and
operators (builtin name, inputs, outputs, options), read with the schema LiteRT ships
(``ai_edge_litert.schema_py_generated``, the ``litert`` extra)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import NNAPIError

DTYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8, "INT8": np.int8,
          "INT64": np.int64, "INT16": np.int16, "BOOL": np.bool_}
"""The tensor types this reader knows, by the schema's ``TensorType`` names."""


@dataclass
class Tensor:
    """One tensor of the subgraph; ``data`` is set for constants (a read-only view of the file's bytes)."""

    index: int
    name: str
    shape: tuple[int, ...]
    type: str
    scales: np.ndarray | None = None
    zero_points: np.ndarray | None = None
    axis: int = 0
    """The quantized dimension of a per-channel tensor."""
    data: np.ndarray | None = None
    sparse: bool = False
    """A sparse constant (its values are not read: only DENSIFY, which NNAPI lacks, takes it)."""

    @property
    def quantized(self) -> bool:
        return self.scales is not None and len(self.scales) > 0

    @property
    def per_channel(self) -> bool:
        return self.scales is not None and len(self.scales) > 1


@dataclass
class Operator:
    """One operator: its position, builtin name (``CUSTOM:code`` for custom ones), tensor indexes (-1: an
    omitted optional input) and the schema's options object (None when it has none)."""

    index: int
    name: str
    inputs: list[int]
    outputs: list[int]
    options: object


@dataclass
class Subgraph:
    """What the NNAPI mapping needs of a model: its tensors, operators in execution order, inputs, outputs."""

    tensors: list[Tensor]
    operators: list[Operator]
    inputs: list[int]
    outputs: list[int]
    description: str


def schema():
    """LiteRT's flatbuffer schema module; a clear error when LiteRT is not installed."""
    try:
        from ai_edge_litert import schema_py_generated
    except ImportError as err:
        raise NNAPIError("reading .tflite files needs LiteRT's schema: pip install 'openvx-nn[litert]'") from err
    return schema_py_generated


def read(source: str | Path | bytes) -> Subgraph:
    """The first subgraph of the ``.tflite`` model in ``source`` (a path or the file's bytes)."""
    s = schema()
    content = bytearray(source) if isinstance(source, (bytes, bytearray, memoryview)) else _read_file(source)
    if len(content) < 8 or content[4:8] != b"TFL3":
        raise NNAPIError("not a .tflite model: the flatbuffer identifier 'TFL3' is missing")
    model = s.ModelT.InitFromPackedBuf(content, 0)
    if not model.subgraphs:
        raise NNAPIError("the .tflite model has no subgraph")
    builtin = {value: name for name, value in vars(s.BuiltinOperator).items() if not name.startswith("_")}
    types = {value: name for name, value in vars(s.TensorType).items() if not name.startswith("_")}
    graph = model.subgraphs[0]
    tensors = [_tensor(k, t, types, model.buffers, content) for k, t in enumerate(graph.tensors or [])]
    operators = []
    for k, op in enumerate(graph.operators or []):
        code = model.operatorCodes[op.opcodeIndex]
        number = max(code.builtinCode, code.deprecatedBuiltinCode)  # small codes sit in the deprecated field
        name = builtin.get(number, f"builtin {number}")
        if number == s.BuiltinOperator.CUSTOM:
            name = "CUSTOM:" + (code.customCode or b"").decode(errors="replace")
        operators.append(Operator(k, name, _ints(op.inputs), _ints(op.outputs), op.builtinOptions))
    description = (model.description or b"").decode(errors="replace") if isinstance(model.description, bytes) \
        else str(model.description or "")
    return Subgraph(tensors, operators, _ints(graph.inputs), _ints(graph.outputs), description)


def _ints(values) -> list[int]:
    return [] if values is None else [int(v) for v in values]


def _read_file(path: str | Path) -> bytearray:
    """The file's bytes in a writable buffer: the model's constants are views of it, which the graph's tensors
    then read in place (NNAPI's CONSTANT_REFERENCE) instead of copying, as they must from read-only bytes."""
    with open(path, "rb") as file:
        content = bytearray(os.fstat(file.fileno()).st_size)
        if file.readinto(content) != len(content):
            raise NNAPIError(f"{path}: the file changed while it was read")
    return content


def _tensor(index: int, t, types: dict, buffers, content: bytes) -> Tensor:
    kind = types.get(t.type, f"type {t.type}")
    name = t.name.decode(errors="replace") if isinstance(t.name, bytes) else str(t.name or f"t{index}")
    shape = tuple(int(d) for d in (t.shape if t.shape is not None else ()))
    tensor = Tensor(index, name, shape, kind)
    q = t.quantization
    if q is not None and q.scale is not None and len(q.scale) > 0:
        tensor.scales = np.asarray(q.scale, np.float64)
        zero = q.zeroPoint if q.zeroPoint is not None and len(q.zeroPoint) else [0] * len(q.scale)
        tensor.zero_points = np.asarray(zero, np.int64)
        tensor.axis = int(q.quantizedDimension)
    buffer = buffers[t.buffer] if buffers and 0 < t.buffer < len(buffers) else None
    raw = None
    if buffer is not None and buffer.data is not None and len(buffer.data):
        raw = np.asarray(buffer.data, np.uint8)
    elif buffer is not None and buffer.offset > 1:  # a large model keeps its buffers after the flatbuffer
        raw = np.frombuffer(content, np.uint8, int(buffer.size), int(buffer.offset))
    if raw is not None and t.sparsity is not None:
        tensor.sparse = True
    elif raw is not None:
        if kind not in DTYPES:
            raise NNAPIError(f"tensor {index} ({name}) is a {kind} constant; this reader knows "
                             + ", ".join(DTYPES))
        dtype = np.dtype(DTYPES[kind])
        if raw.size != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise NNAPIError(f"tensor {index} ({name}): {raw.size} bytes of data for shape {list(shape)} of {kind}")
        tensor.data = raw.view(dtype).reshape(shape)
    return tensor
