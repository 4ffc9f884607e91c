"""``load`` and ``NNEFModel``: an NNEF folder as one verified OpenVX graph, run by ``predict``."""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import vx
from ..api.graph_builder import to_vx
from ..core import native_plan
from ..core.tensor import assign
from .builder import Blob, NNEFBuilder
from .errors import NNEFError
from .lowering import lower
from .quantization import dequantized, fake_quantize
from .reader import DTYPES, read

SOURCES = ("external", "variable", "constant")


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of the graph: its NNEF name, shape and type (``scalar``, ``integer``, ``logical``)."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def numpy(self) -> type:
        return DTYPES[self.dtype]


@dataclass(frozen=True)
class OperationInfo:
    """One operation as imported: its NNEF name, results and how it runs on our graph."""

    name: str
    results: tuple[str, ...]
    lowering: str


def load(path, shapes: dict[str, list[int]] | None = None, internal: bool = False) -> NNEFModel:
    """Import the NNEF model in folder ``path`` (``graph.nnef`` and its ``.dat`` files); ``shapes``: input shapes
    other than the declared ones, by name (another batch size); ``internal``: the body of a kernel in the
    application's context (``NNEFBuilder``)."""
    graph = read(path, shapes)
    try:
        return NNEFModel(graph, str(path), internal)
    except NNEFError as err:
        if err.where is not None:
            raise
        raise NNEFError(err.reason, err.operation, os.path.join(os.fspath(path), "graph.nnef")) from None


class NNEFModel:
    """An NNEF graph running on one OpenVX graph.

    ``predict({name: array})`` takes an array per input in NNEF's shape and order and returns a dict of the
    outputs; ``inputs`` and ``outputs`` describe them in the graph's declaration order; ``operations`` lists how
    each operation was lowered.
    """

    def __init__(self, graph, path: str = "", internal: bool = False):
        self.path = path
        self.internal = internal
        self.nnef = graph
        self.inputs = [self._info(name) for name in graph.inputs]
        self.outputs = [self._info(name) for name in graph.outputs]
        self.operations: list[OperationInfo] = []
        self._lock = threading.RLock()
        if native_plan.hooks is None:  # start the library once: its start-up installs the native graph runner
            vx.vxGetStatus(vx.ffi.NULL)
        self.builder = self._build()

    def _info(self, name: str) -> TensorInfo:
        tensor = self.nnef.tensors[name]
        if tensor.dtype not in DTYPES:
            raise NNEFError(f"tensor '{name}' has type {tensor.dtype} (expected scalar, integer or logical)")
        return TensorInfo(name, tuple(int(d) for d in tensor.shape), tensor.dtype)

    def _build(self) -> NNEFBuilder:
        g = NNEFBuilder([info.name for info in self.outputs], self.internal)
        g.nnef = self.nnef
        with g.building():
            g.inputs = {}
            for op in self.nnef.operations:
                if op.name in SOURCES:
                    self._source(g, op)
                    continue
                how = lower(g, op)
                results = tuple(str(v) for vs in op.outputs.values() for v in (vs if isinstance(vs, list) else [vs]))
                how += "".join(f"; '{r}' {self._quantize(g, r)}" for r in results if self._quantized(r))
                self.operations.append(OperationInfo(op.name, results, how))
            g.operation = None
            for info in self.outputs:
                blob = g.blob(info.name)
                if blob.tensor.virtual or info.name in g.inputs or info.name in g.values:
                    g.coreml("reshape", (blob.tensor, g.output(info.name, info.shape)))
            g.verify()
        return g

    def _quantized(self, name: str) -> bool:
        return bool(self.nnef.tensors[name].quantization)

    def _quantize(self, g: NNEFBuilder, name: str) -> str:
        g.operation = f"quantization of '{name}'"
        try:
            return fake_quantize(g, name, self.nnef.tensors[name].quantization)
        except NNEFError as err:
            raise g.fail(err.reason) from None

    def _source(self, g: NNEFBuilder, op) -> None:
        name = str(op.outputs["output"])
        tensor = self.nnef.tensors[name]
        shape = tuple(int(d) for d in tensor.shape)
        if op.name == "external":
            g.inputs[name] = real = g.real(shape or (1,))
            g.blobs[name] = Blob(real, shape or (1,))
            if self._quantized(name):  # predict writes the input tensor; the graph reads its rounded copy
                self._quantize(g, name)
        elif op.name == "variable":
            data = np.asarray(tensor.data)
            if tensor.quantization and data.dtype.kind in "iu":  # a quantized variable's integers
                data = dequantized(name, data, tensor.quantization)
            g.constant_blob(name, np.asarray(data, np.float32).reshape(shape or (1,)))
        else:
            value = np.asarray(op.attribs["value"], np.float32)
            full = value if value.size == int(np.prod(shape)) else np.broadcast_to(value.reshape(-1)[:1], shape)
            g.constant_blob(name, np.asarray(full, np.float32).reshape(shape or (1,)))

    @property
    def graph(self):
        """The verified OpenVX graph (``openvx_nn.core.graph.Graph``)."""
        return self.builder.graph

    def predict(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run the graph; returns {output name: array} in NNEF's shape and type. Calls from several threads
        take turns."""
        arrays = self._arrays(inputs)
        with self._lock:
            g = self.builder
            for name, array in arrays.items():
                assign(g.inputs[name].array, to_vx(array))
            status = g.graph.process()
            if status != 0:
                raise NNEFError(f"the graph failed with status {status} (see the OpenVX log)")
            return {info.name: _typed(np.array(g.blobs[info.name].tensor.array.T), info) for info in self.outputs}

    def _arrays(self, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        known = {info.name for info in self.inputs}
        unknown = set(inputs) - known
        if unknown:
            raise NNEFError(f"unknown input(s) {sorted(unknown)} (the graph takes {[i.name for i in self.inputs]})")
        arrays = {}
        for info in self.inputs:
            if info.name not in inputs:
                raise NNEFError(f"input '{info.name}' is missing (the graph takes {[i.name for i in self.inputs]})")
            array = np.asarray(inputs[info.name])
            if tuple(array.shape) != info.shape:
                raise NNEFError(f"input '{info.name}' has shape {list(array.shape)}; the graph declares "
                                f"{list(info.shape)}")
            arrays[info.name] = np.ascontiguousarray(array, np.float32)
        return arrays

    def close(self) -> None:
        """Release the graph and every object made for it."""
        with self._lock:
            self.builder.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _typed(array: np.ndarray, info: TensorInfo) -> np.ndarray:
    """An output in its NNEF type: the graph computes in float32; integers are whole, logicals 0 or 1."""
    array = array.reshape(info.shape)
    if info.dtype == "integer":
        return np.rint(array).astype(np.int32)
    if info.dtype == "logical":
        return array != 0
    return array
