"""The NNAPI 1.0 HAL shapes: the model and request structs as dataclasses,
and the driver (``Device``, ``PreparedModel``) that runs them on OpenVX.

A prepared model is one verified ``vx_graph`` (``lowering.lower``); it keeps
its tensors between executions and releases every OpenVX object it made when
``release`` is called or it is garbage collected.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from .enums import ErrorStatus, OperandLifeTime, OperandType, OperationType
from .errors import NNAPIError


@dataclass
class DataLocation:
    poolIndex: int = 0
    offset: int = 0
    length: int = 0


@dataclass
class Operand:
    type: OperandType
    dimensions: list[int] = field(default_factory=list)
    numberOfConsumers: int = 0
    scale: float = 0.0
    zeroPoint: int = 0
    lifetime: OperandLifeTime = OperandLifeTime.TEMPORARY_VARIABLE
    location: DataLocation = field(default_factory=DataLocation)


@dataclass
class Operation:
    type: OperationType
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)


@dataclass
class Model:
    operands: list[Operand] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    inputIndexes: list[int] = field(default_factory=list)
    outputIndexes: list[int] = field(default_factory=list)
    operandValues: bytes = b""
    pools: list = field(default_factory=list)
    """Memory pools: anything exposing the buffer protocol (bytes, bytearray, NumPy arrays)."""


@dataclass
class RequestArgument:
    hasNoValue: bool = False
    location: DataLocation = field(default_factory=DataLocation)
    dimensions: list[int] = field(default_factory=list)


@dataclass
class Request:
    inputs: list[RequestArgument] = field(default_factory=list)
    outputs: list[RequestArgument] = field(default_factory=list)
    pools: list = field(default_factory=list)
    """Writable buffers for outputs (bytearray, NumPy arrays); inputs may be read-only."""


@dataclass
class PerformanceInfo:
    execTime: float = 1.0
    powerUsage: float = 1.0


@dataclass
class Capabilities:
    float32Performance: PerformanceInfo = field(default_factory=PerformanceInfo)
    quantized8Performance: PerformanceInfo = field(default_factory=PerformanceInfo)


def pool_bytes(pool) -> memoryview:
    """A flat byte view of a memory pool (no copy)."""
    view = memoryview(pool)
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


class PreparedModel:
    """A model lowered onto one verified OpenVX graph, ready to execute requests."""

    def __init__(self, model: Model):
        from .lowering import lower
        self.model = model
        self.lowered = lower(model)
        self.last_error = ""
        self._finalizer = weakref.finalize(self, self.lowered.release)
        self._finalizer.atexit = False  # at exit the context goes with the process

    def execute(self, request: Request) -> ErrorStatus:
        """Copy the inputs in, run the graph, copy the outputs out; ``last_error`` says why on failure."""
        try:
            self.lowered.execute(request)
        except NNAPIError as err:
            self.last_error = str(err)
            return err.status
        except Exception as err:  # noqa: BLE001 - a driver answers with a status, never an exception
            self.last_error = f"internal error {type(err).__name__}: {err}"
            return ErrorStatus.GENERAL_FAILURE
        self.last_error = ""
        return ErrorStatus.NONE

    @property
    def graph(self):
        """The OpenVX graph (``openvx_nn.core.graph.Graph``) the model runs on."""
        return self.lowered.graph

    def operation_timings(self) -> list[tuple[int, str, float]]:
        """(operation index, OpenVX kernel, last run in ms) of every node, in execution order."""
        return self.lowered.timings()

    def release(self) -> None:
        """Release every OpenVX object of this prepared model (also done at garbage collection)."""
        self._finalizer()


class Device:
    """The openvx-nn NNAPI driver."""

    def get_capabilities(self) -> tuple[ErrorStatus, Capabilities]:
        return ErrorStatus.NONE, Capabilities()

    def get_status(self):
        from .enums import DeviceStatus
        return DeviceStatus.AVAILABLE

    def get_supported_operations(self, model: Model) -> list[bool]:
        """For each operation of ``model``: can this driver run it?  Never raises."""
        from .lowering import supported_operations
        try:
            return supported_operations(model)
        except Exception:  # noqa: BLE001 - a malformed model answers "not supported", never an exception
            return [False] * len(getattr(model, "operations", []) or [])

    def prepare_model(self, model: Model) -> PreparedModel:
        """Validate ``model`` and lower it onto a verified OpenVX graph (raises ``NNAPIError``)."""
        return PreparedModel(model)


def constant_bytes(model: Model, operand: Operand) -> bytes:
    """The bytes of a CONSTANT_COPY or CONSTANT_REFERENCE operand."""
    loc = operand.location
    if operand.lifetime == OperandLifeTime.CONSTANT_COPY:
        data = memoryview(model.operandValues)
    else:
        if not 0 <= loc.poolIndex < len(model.pools):
            raise NNAPIError(f"pool {loc.poolIndex} does not exist ({len(model.pools)} pools)")
        data = pool_bytes(model.pools[loc.poolIndex])
    if loc.offset < 0 or loc.length < 0 or loc.offset + loc.length > len(data):
        raise NNAPIError(f"constant at offset {loc.offset}, length {loc.length} lies outside its "
                         f"{len(data)}-byte buffer")
    return bytes(data[loc.offset:loc.offset + loc.length])


def element_count(dimensions: list[int]) -> int:
    return int(np.prod(dimensions, dtype=np.int64)) if dimensions else 1


from .model_file import load_model, save_model  # noqa: F401  (the .nnapi file of a Model)
