"""The NNAPI HAL shapes (1.0, and the fields 1.1 and 1.2 add): the model and request structs as dataclasses, and
reading their bytes."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..enums import OperandLifeTime, OperandType, OperationType
from ..errors import NNAPIError


@dataclass
class DataLocation:
    poolIndex: int = 0
    offset: int = 0
    length: int = 0


@dataclass
class SymmPerChannelQuantParams:
    """HAL 1.2: the scales of a TENSOR_QUANT8_SYMM_PER_CHANNEL operand, one per index of ``channelDim``."""

    scales: list[float] = field(default_factory=list)
    channelDim: int = 0


@dataclass
class Operand:
    type: OperandType
    dimensions: list[int] = field(default_factory=list)
    numberOfConsumers: int = 0
    scale: float = 0.0
    zeroPoint: int = 0
    lifetime: OperandLifeTime = OperandLifeTime.TEMPORARY_VARIABLE
    location: DataLocation = field(default_factory=DataLocation)
    extraParams: SymmPerChannelQuantParams | None = None
    """HAL 1.2: the channel quantization of a TENSOR_QUANT8_SYMM_PER_CHANNEL operand (None for other types)."""


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
    relaxComputationFloat32toFloat16: bool = False
    """HAL 1.1: TENSOR_FLOAT32 may be computed with float16 range and precision. This driver computes float32
    throughout either way (which the relaxed rule allows)."""


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


NO_TIME = 2**64 - 1
"""HAL 1.2's ``UINT64_MAX``: a duration not measured."""


@dataclass
class OutputShape:
    """HAL 1.2: an output's dimensions as the execution computed them, and whether its buffer held them."""

    dimensions: list[int] = field(default_factory=list)
    isSufficient: bool = True


@dataclass
class Timing:
    """HAL 1.2: microseconds an execution spent running the graph (``timeOnDevice``: this CPU device's kernels,
    the inputs copied in) and in the driver in all (plan selection, argument checks, copies); ``NO_TIME``
    where not measured."""

    timeOnDevice: int = NO_TIME
    timeInDriver: int = NO_TIME


@dataclass
class PerformanceInfo:
    execTime: float = 1.0
    powerUsage: float = 1.0


@dataclass
class Capabilities:
    float32Performance: PerformanceInfo = field(default_factory=PerformanceInfo)
    quantized8Performance: PerformanceInfo = field(default_factory=PerformanceInfo)
    relaxedFloat32toFloat16Performance: PerformanceInfo = field(default_factory=PerformanceInfo)
    """HAL 1.1: a relaxed model runs as fast as any float32 one here (it is computed in float32)."""


def pool_bytes(pool) -> memoryview:
    """A flat byte view of a memory pool (no copy)."""
    view = memoryview(pool)
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def constant_bytes(model: Model, operand: Operand) -> memoryview:
    """The bytes of a CONSTANT_COPY or CONSTANT_REFERENCE operand (a view of its pool, no copy)."""
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
    return data[loc.offset:loc.offset + loc.length]


def element_count(dimensions: list[int]) -> int:
    return int(np.prod(dimensions, dtype=np.int64)) if dimensions else 1
