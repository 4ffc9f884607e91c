"""A lowered model: its verified OpenVX graph, and running a HAL request on it.

The graph runs as every OpenVX graph does: where each node has a native entry (``operations/nnapi``), its
compiled plan is walked in C (``core/native_plan.py``); hence libopenvx.so is loaded here, also when the model
comes from Python rather than through libneuralnetworks.so."""
from __future__ import annotations

import math
import threading
import time

import numpy as np

from ... import vx
from ...core import native_plan
from ...core.enums import Status
from ...core.errors import VXError
from ...core.in_place import InPlace, process_fed
from ...core.tensor import Tensor, assign
from ...operations.nnapi.common import Lending
from ..enums import DTYPES, ErrorStatus, OperandType, as_bool
from ..errors import NNAPIError
from ..hal.structs import OutputShape, Request, pool_bytes
from .context import GraphBuilder


def _start_library() -> None:
    """Start libopenvx.so, once: its start-up (cffi runs it on the first call into the library) installs the
    C loop that runs native plans (``capi/graph_api.py``); ``vxGetStatus(NULL)`` changes and logs nothing."""
    if native_plan.hooks is None:
        vx.vxGetStatus(vx.ffi.NULL)


def _copy_in(tensor: Tensor, array: np.ndarray) -> None:
    assign(tensor.array.T, array)
    tensor.root.writes += 1  # a kernel that packed this input at bind time (a filter) packs it again


_RESTORED = (np.dtype(np.bool_), np.dtype(np.uint16))
"""NNAPI dtypes whose tensors store another dtype (``operations.nnapi.common.VX_TYPES``)."""


def _as_stored(tensor: Tensor, array: np.ndarray) -> np.ndarray:
    """``array`` (an NNAPI dtype) as the dtype its tensor stores (``VX_TYPES``): booleans as bytes 0 and 1
    (any non-zero byte is true), uint16 bits as int16; other dtypes are the tensor's already."""
    stored = tensor.array.dtype
    if array.dtype == stored:
        return array
    if array.dtype == np.bool_:
        array = as_bool(array)
    return array.view(stored) if array.dtype.itemsize == stored.itemsize else array


class Lowered:
    def __init__(self, builder: GraphBuilder):
        _start_library()
        self.builder = builder
        self._lock = threading.Lock()
        model = builder.model
        self.model = model
        for k in list(model.inputIndexes) + list(model.outputIndexes):
            if builder.absent(k) or k in builder.parameters:
                continue  # omitted, or read as a parameter: the plan is made for the request's value
            if k not in builder.shapes:
                raise NNAPIError(f"model input or output operand {k} has unknown dimensions")
            builder.tensor(k)
        try:
            builder.graph.verify()
        except VXError as err:
            raise NNAPIError(f"the OpenVX graph does not verify: {err.message}",
                             ErrorStatus.GENERAL_FAILURE) from None
        self._inputs, self._outputs = self._slots(False), self._slots(True)
        # outputs whose rows the data decides: their tensor -> the tensor of the count, and the counts of the last run
        self._counted = {id(builder.tensors[k]): builder.tensor(c) for k, c in builder.counted.items()
                         if k in model.outputIndexes}
        self._rows: dict[int, int] = {}
        self._plan, self._lends, self._in_place = None, None, None
        self.run_ns = 0
        """How long the last run of the graph took (its inputs copied in or read in place), in nanoseconds."""

    @property
    def graph(self):
        return self.builder.graph

    def _slots(self, output: bool) -> list[tuple[int, Tensor, np.dtype, tuple[int, ...], int] | None]:
        """Per input (or output) position: (operand, tensor, dtype, NNAPI shape, bytes), or None for an
        input this graph does not read (omitted, or a parameter its signature holds): settled once."""
        slots = []
        for k in (self.model.outputIndexes if output else self.model.inputIndexes):
            if not output and (self.builder.absent(k) or k in self.builder.parameters):
                slots.append(None)
                continue
            shape = self.builder.shapes[k]
            dtype = DTYPES[OperandType(self.model.operands[k].type)]
            slots.append((k, self.builder.tensors[k], dtype, shape, math.prod(shape) * dtype.itemsize))
        return slots

    def _argument(self, request: Request, position: int, output: bool):
        """(tensor, the request's bytes, dtype, NNAPI shape) of input or output ``position``; None for an input
        this graph does not read."""
        arguments = request.outputs if output else request.inputs
        what = "output" if output else "input"
        slot = (self._outputs if output else self._inputs)[position]
        if position >= len(arguments):
            k = (self.model.outputIndexes if output else self.model.inputIndexes)[position]
            raise NNAPIError(f"{what} {position} (operand {k}) is missing from the request")
        if slot is None:
            return None  # omitted, or a parameter of this plan (its signature holds the value)
        k, tensor, dtype, shape, need = slot
        arg = arguments[position]
        if arg.hasNoValue:
            raise NNAPIError(f"{what} {position} (operand {k}) has no value; only an optional model input "
                             "may be omitted")
        if arg.dimensions and tuple(arg.dimensions) != tuple(shape):
            raise NNAPIError(f"{what} {position} (operand {k}) is given dimensions {list(arg.dimensions)}, "
                             f"the model has {list(shape)}")
        loc = arg.location
        if not 0 <= loc.poolIndex < len(request.pools):
            raise NNAPIError(f"{what} {position}: pool {loc.poolIndex} does not exist")
        data = pool_bytes(request.pools[loc.poolIndex])
        if loc.offset < 0 or loc.offset + loc.length > len(data):
            raise NNAPIError(f"{what} {position}: bytes {loc.offset}..{loc.offset + loc.length} lie outside "
                             f"pool {loc.poolIndex} of {len(data)} bytes")
        if output and id(tensor) in self._counted:  # its size is known after the run (``_run`` checks it)
            return tensor, data[loc.offset:loc.offset + loc.length], dtype, None
        if loc.length < need or (not output and loc.length != need):
            status = ErrorStatus.OUTPUT_INSUFFICIENT_SIZE if output else ErrorStatus.INVALID_ARGUMENT
            raise NNAPIError(f"{what} {position} (operand {k}) has {loc.length} bytes, it needs {need} "
                             f"({list(shape)} {dtype})", status)
        return tensor, data[loc.offset:loc.offset + need], dtype, shape

    def output_shapes(self, request: Request) -> list[OutputShape]:
        """Each output's dimensions in this graph, and whether the request's buffer holds them."""
        shapes = []
        for position, k in enumerate(self.model.outputIndexes):
            dims = list(self.builder.shapes[k])
            if k in self.builder.counted:  # the last run's rows (before any run: the most that can come)
                dims[0] = self._rows.get(k, dims[0])
            need = math.prod(dims) * DTYPES[OperandType(self.model.operands[k].type)].itemsize
            given = request.outputs[position].location.length if position < len(request.outputs) else 0
            shapes.append(OutputShape(dims, given >= need))
        return shapes

    def execute(self, request: Request) -> None:
        with self._lock:  # one request at a time: the graph's tensors are shared
            self._execute(request)

    def _execute(self, request: Request) -> None:
        inputs = [self._argument(request, i, False) for i in range(len(self._inputs))]
        outputs = [self._argument(request, i, True) for i in range(len(self._outputs))]
        for tensor, data, dtype, shape in outputs:
            if data.readonly:
                raise NNAPIError("an output pool is read-only")
        self._run([(a[0], np.frombuffer(a[1], a[2]).reshape(a[3])) for a in inputs if a is not None],
                  [(tensor, np.frombuffer(data, dtype, len(data) // dtype.itemsize) if shape is None else
                    np.frombuffer(data, dtype).reshape(shape)) for tensor, data, dtype, shape in outputs])

    def run_arrays(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> bool:
        """A request of arrays (``nnapi.Execution``'s fast path: no pools to read and check): run it when every
        input and output is an array of its operand's dtype and shape, C-ordered (outputs writable) and every
        input is one this graph reads; else False, nothing done (the request then takes the checked path)."""
        if self._counted:  # an output's size comes with the data: the checked path reports it
            return False
        feeds, fetches = [], []
        for slots, arrays, into in ((self._inputs, inputs, feeds), (self._outputs, outputs, fetches)):
            if len(arrays) != len(slots):
                return False
            for slot, array in zip(slots, arrays):
                if slot is None or not isinstance(array, np.ndarray) or array.dtype != slot[2] or \
                        array.shape != slot[3] or not array.flags.c_contiguous:
                    return False
                into.append((slot[1], array))
        if not all(array.flags.writeable for _, array in fetches):
            return False
        with self._lock:
            self._run(feeds, fetches)
        return True

    def _run(self, feeds: list[tuple[Tensor, np.ndarray]], fetches: list[tuple[Tensor, np.ndarray]]) -> None:
        """Run the graph on ``feeds`` (read in place where the native plan allows, ``core/in_place.py``, else
        copied into their tensors), copy the tensors of ``fetches`` out (NNAPI shapes)."""
        graph = self.graph
        plan = graph.plan
        if plan is not self._plan:  # bound anew: does its native run share layers with helper threads? which
            self._plan = plan  # inputs can it read in place?
            self._lends = Lending.of(plan)
            self._in_place = InPlace.of(graph, [slot[1] for slot in self._inputs if slot is not None],
                                        [slot[1] for slot in self._outputs])

        if any(array.dtype in _RESTORED for _, array in feeds):
            feeds = [(tensor, _as_stored(tensor, array)) for tensor, array in feeds]

        def run() -> int:
            return process_fed(graph, self._in_place, feeds, _copy_in)
        start = time.perf_counter_ns()
        status = run() if self._lends is None else self._lends.run(run)
        self.run_ns = time.perf_counter_ns() - start
        if status != Status.VX_SUCCESS and graph.native_allowed and not any(
                "error" in n.state for n, _ in self.builder.node_ops if n.status != Status.VX_SUCCESS):
            # a native entry failed, which returns a status only (a GATHER index out of range): once more on the
            # Python path, whose runner names the cause
            graph.native_allowed = False
            try:
                status = run()
            finally:
                graph.native_allowed = True
        if status != Status.VX_SUCCESS:
            failed = [(n, j) for n, j in self.builder.node_ops if n.status != Status.VX_SUCCESS]
            if not failed:
                raise NNAPIError(f"the graph failed (vx_status {Status(status).name})", ErrorStatus.GENERAL_FAILURE)
            node, j = failed[0]
            cause = node.state.get("error", "the context log has the cause")
            raise NNAPIError(f"{node.description.name} failed: {cause}", ErrorStatus.GENERAL_FAILURE, j,
                             self.model.operations[j].type)
        self._rows = {k: int(self.builder.tensors[c].array.reshape(-1)[0]) for k, c in self.builder.counted.items()
                      if k in self.model.outputIndexes}
        for tensor, array in fetches:
            source = tensor.array.T
            if id(tensor) in self._counted:  # the rows the run made, into the start of the caller's buffer
                source = source[:int(self._counted[id(tensor)].array.reshape(-1)[0])]
                if array.size < source.size:
                    raise NNAPIError(f"an output has {array.nbytes} bytes, its {list(source.shape)} result needs "
                                     f"{source.size * array.itemsize}", ErrorStatus.OUTPUT_INSUFFICIENT_SIZE)
                array = array[:source.size].reshape(source.shape)
            if array.dtype in _RESTORED:
                array = array.view(tensor.array.dtype)
            assign(array, source)

    def timings(self) -> list[tuple[int, str, float]]:
        return [(j, node.description.name, node.perf.tmp / 1e6) for node, j in self.builder.node_ops]

    def release(self) -> None:
        self.builder.release()
