"""A ``.tflite`` file's first subgraph as plain records: tensors (shape, type, quantization, constant data) and
operators (builtin name, inputs, outputs, options), read by a small
flatbuffer reader of our own from the schema's facts (``schema_tables``): LiteRT's generated schema module costs
4.8 MiB of memory to import and unpacks the whole file into Python objects."""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ..errors import NNAPIError
from .schema_tables import BUILTIN_OPERATORS, BUILTIN_OPTIONS, TABLES, TENSOR_TYPES

DTYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8, "INT8": np.int8,
          "INT64": np.int64, "INT16": np.int16, "BOOL": np.bool_}
"""The tensor types this reader knows, by the schema's ``TensorType`` names."""


@dataclass
class Tensor:
    """One tensor of the subgraph; ``data`` is set for constants (a view of the file's bytes)."""

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


def read(source: str | Path | bytes) -> Subgraph:
    """The first subgraph of the ``.tflite`` model in ``source`` (a path or the file's bytes)."""
    content = bytearray(source) if isinstance(source, (bytes, bytearray, memoryview)) else _read_file(source)
    if len(content) < 8 or content[4:8] != b"TFL3":
        raise NNAPIError("not a .tflite model: the flatbuffer identifier 'TFL3' is missing")
    try:
        return _subgraph(_Reader(content))
    except (struct.error, IndexError, KeyError, ValueError) as err:
        raise NNAPIError(f"not a readable .tflite model: its flatbuffer is damaged ({err})") from None


def _subgraph(r: _Reader) -> Subgraph:
    model = r.table(r.offset(0), "Model")
    graphs = model["subgraphs"]
    if not graphs:
        raise NNAPIError("the .tflite model has no subgraph")
    graph = r.table(graphs[0], "SubGraph")
    buffers = [r.table(at, "Buffer") for at in model["buffers"] or ()]
    tensors = [_tensor(k, r.table(at, "Tensor"), buffers, r) for k, at in enumerate(graph["tensors"] or ())]
    codes = [r.table(at, "OperatorCode") for at in model["operatorCodes"] or ()]
    operators = []
    for k, at in enumerate(graph["operators"] or ()):
        op = r.table(at, "Operator")
        code = codes[op["opcodeIndex"]]
        number = max(code["builtinCode"], code["deprecatedBuiltinCode"])  # small codes sit in the deprecated field
        name = BUILTIN_OPERATORS.get(number, f"builtin {number}")
        if name == "CUSTOM":
            name = "CUSTOM:" + (code["customCode"] or b"").decode(errors="replace")
        kind = BUILTIN_OPTIONS.get(op["builtinOptionsType"])
        options = None if kind is None or op["builtinOptions"] is None else r.record(op["builtinOptions"], kind)
        operators.append(Operator(k, name, _ints(op["inputs"]), _ints(op["outputs"]), options))
    description = (model["description"] or b"").decode(errors="replace")
    return Subgraph(tensors, operators, _ints(graph["inputs"]), _ints(graph["outputs"]), description)


class _Reader:
    """Fields of the flatbuffer's tables by the names of ``schema_tables``: a scalar (its default when absent),
    a string as bytes, a vector of scalars as a NumPy view of the file, a table or a vector of tables as
    positions (None when absent). Only what is asked for is read."""

    def __init__(self, content: bytearray):
        self.content = content
        self.fields = {name: {f[0]: f[1:] for f in fields} for name, fields in TABLES.items()}

    def offset(self, at: int) -> int:
        return at + _U32.unpack_from(self.content, at)[0]

    def table(self, at: int, name: str) -> _Table:
        return _Table(self, at, self.fields[name])

    def record(self, at: int, name: str) -> SimpleNamespace:
        """Every scalar, string and vector field of table ``name`` at ``at`` (tables in it: None)."""
        table = self.table(at, name)
        return SimpleNamespace(**{field: table[field] if kind.lstrip("[") in _SCALARS or kind in ("s", "[s") else None
                                  for field, (_, kind, _) in table.fields.items()})

    def value(self, table: int, slot: int, kind: str, default):
        content = self.content
        vtable = table - _I32.unpack_from(content, table)[0]
        entry = 4 + 2 * slot
        field = _U16.unpack_from(content, vtable + entry)[0] if entry < _U16.unpack_from(content, vtable)[0] else 0
        if not field:
            return default
        at = table + field
        if kind in _SCALARS:
            return _SCALARS[kind].unpack_from(content, at)[0]
        target = self.offset(at)
        if kind in ("s", "u") or kind.startswith("t:"):
            return self._string(target) if kind == "s" else target
        count = _U32.unpack_from(content, target)[0]
        start = target + 4
        item = kind[1:]
        if start + count * (_SCALARS[item].size if item in _SCALARS else 4) > len(content):
            raise ValueError(f"a vector at byte {target} runs past the end")
        if item in _SCALARS:
            return np.frombuffer(content, np.dtype("<" + item), count, start)
        return [self._string(self.offset(start + 4 * k)) if item == "s" else self.offset(start + 4 * k)
                for k in range(count)]

    def _string(self, at: int) -> bytes:
        size = _U32.unpack_from(self.content, at)[0]
        if at + 4 + size > len(self.content):
            raise ValueError(f"a string at byte {at} runs past the end")
        return bytes(self.content[at + 4:at + 4 + size])


class _Table:
    __slots__ = ("at", "fields", "reader")

    def __init__(self, reader: _Reader, at: int, fields: dict):
        self.reader, self.at, self.fields = reader, at, fields

    def __getitem__(self, field: str):
        return self.reader.value(self.at, *self.fields[field])


_U16, _U32, _I32 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<i")
_SCALARS = {kind: struct.Struct("<" + kind) for kind in "?bBhHiIqQfd"}


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


def _tensor(index: int, t: _Table, buffers: list[_Table], r: _Reader) -> Tensor:
    number = t["type"]
    kind = TENSOR_TYPES.get(number, f"type {number}")
    name = (t["name"] or b"").decode(errors="replace") or f"t{index}"
    dims = t["shape"]
    shape = tuple(int(d) for d in (dims if dims is not None else ()))
    tensor = Tensor(index, name, shape, kind)
    at = t["quantization"]
    if at is not None:
        q = r.table(at, "QuantizationParameters")
        scale = q["scale"]
        if scale is not None and len(scale) > 0:
            tensor.scales = np.asarray(scale, np.float64)
            zero = q["zeroPoint"]
            tensor.zero_points = np.asarray(zero if zero is not None and len(zero) else [0] * len(scale), np.int64)
            tensor.axis = int(q["quantizedDimension"])
    k = t["buffer"]
    buffer = buffers[k] if 0 < k < len(buffers) else None
    raw = None
    if buffer is not None and buffer["data"] is not None and len(buffer["data"]):
        raw = buffer["data"]
    elif buffer is not None and buffer["offset"] > 1:  # a large model keeps its buffers after the flatbuffer
        raw = np.frombuffer(r.content, np.uint8, int(buffer["size"]), int(buffer["offset"]))
    if raw is not None and t["sparsity"] is not None:
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
