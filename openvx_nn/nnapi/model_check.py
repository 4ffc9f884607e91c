"""Structural checks of a HAL model, shared by the builder's ``finish``, ``load_model`` and the
driver: operand types, dimensions and quantization, lifetimes and locations, model inputs and outputs,
operation types and operand indexes, every operand written once (a model input, a value, or one operation's
output), an execution order (no cycle), and the rules NNAPI fixes per operation (``model_rules``: its
signature first)."""
from __future__ import annotations

import math
from numbers import Integral, Real

from .enums import (
    DTYPES,
    QUANTIZATION,
    SCALAR_TYPES,
    TENSOR_TYPES,
    UNQUANTIZED_SINCE_29,
    ErrorStatus,
    OperandLifeTime,
    OperandType,
    OperationType,
)
from .errors import NNAPIError
from .hal.structs import Model, Operand, constant_bytes
from .model_rules import check_operation

CONSTANT = (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE)
MAX_DIMENSION = 2**31 - 1
"""Dimensions are uint32 in NNAPI's C API and int32 sizes in the kernels: larger is garbage."""
MAX_BYTES = 2**32 - 1
"""An operand's bytes must fit a ``DataLocation.length`` (uint32)."""


def _integer(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_operand(index: int, operand: Operand) -> None:
    """One operand on its own: a known type, rank rules, quantization."""
    where = f"operand {index}"
    try:
        kind = OperandType(operand.type)
    except ValueError:
        raise NNAPIError(f"{where}: type {operand.type} is not an OperandType") from None
    if kind not in SCALAR_TYPES + TENSOR_TYPES:
        raise NNAPIError(f"{where}: type {kind.name} is not supported by this driver")
    if kind in SCALAR_TYPES and operand.dimensions:
        raise NNAPIError(f"{where}: scalar type {kind.name} must have no dimensions, got {operand.dimensions}")
    if not all(_integer(d) and 0 <= d <= MAX_DIMENSION for d in operand.dimensions):
        raise NNAPIError(f"{where}: dimensions {operand.dimensions} must be integers in 0..{MAX_DIMENSION}")
    size = math.prod(int(d) for d in operand.dimensions) * DTYPES[kind].itemsize
    if size > MAX_BYTES:
        raise NNAPIError(f"{where}: dimensions {operand.dimensions} make {size} bytes, more than {MAX_BYTES}")
    loc = operand.location
    fields = (operand.numberOfConsumers, loc.poolIndex, loc.offset, loc.length)
    if not all(_integer(x) and 0 <= x <= MAX_BYTES for x in fields):
        raise NNAPIError(f"{where}: numberOfConsumers {operand.numberOfConsumers} and location {loc} must be "
                         f"integers in 0..{MAX_BYTES} (uint32)")
    if not isinstance(operand.scale, Real) or not _integer(operand.zeroPoint):
        raise NNAPIError(f"{where}: scale {operand.scale!r} must be a number and zero point "
                         f"{operand.zeroPoint!r} an integer")
    _check_quantization(where, kind, operand)
    if kind == OperandType.TENSOR_INT32 and not (math.isfinite(operand.scale) and operand.scale >= 0):
        raise NNAPIError(f"{where}: TENSOR_INT32 needs a finite scale of at least 0, got {operand.scale}")
    try:
        OperandLifeTime(operand.lifetime)
    except ValueError:
        raise NNAPIError(f"{where}: lifetime {operand.lifetime} is not an OperandLifeTime") from None


def _check_quantization(where: str, kind: OperandType, operand: Operand) -> None:
    """The header's scale and zero point rules of ``kind``, and the channel parameters only per-channel has."""
    if kind in QUANTIZATION and QUANTIZATION[kind] is not None:
        low, high = QUANTIZATION[kind]
        if not (math.isfinite(operand.scale) and operand.scale > 0):
            raise NNAPIError(f"{where}: {kind.name} needs a finite positive scale, got {operand.scale}")
        if not low <= operand.zeroPoint <= high:
            allowed = "must be 0 (a symmetric type)" if low == high else f"is outside {low}..{high}"
            raise NNAPIError(f"{where}: {kind.name} zero point {operand.zeroPoint} {allowed}")
    elif (kind in QUANTIZATION or kind in UNQUANTIZED_SINCE_29) and (operand.scale != 0 or operand.zeroPoint != 0):
        why = ("its scales are per channel (set_operand_symm_per_channel_quant_params)" if kind in QUANTIZATION
               else "it is not quantized")
        raise NNAPIError(f"{where}: {kind.name} takes scale 0 and zero point 0, got {operand.scale} and "
                         f"{operand.zeroPoint}: {why}")
    extra = getattr(operand, "extraParams", None)
    if extra is not None and kind != OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        raise NNAPIError(f"{where}: {kind.name} takes no channel quantization parameters (only "
                         "TENSOR_QUANT8_SYMM_PER_CHANNEL does)")


def check_channel_quant(where: str, operand: Operand) -> None:
    """A TENSOR_QUANT8_SYMM_PER_CHANNEL operand's scales: given, one positive finite scale per index of its
    channel dimension, which must be known."""
    extra = operand.extraParams
    if extra is None:
        raise NNAPIError(f"{where}: TENSOR_QUANT8_SYMM_PER_CHANNEL needs its channel quantization parameters "
                         "(set_operand_symm_per_channel_quant_params) before the model is finished")
    dims = list(operand.dimensions)
    channel = extra.channelDim
    if not _integer(channel) or not 0 <= channel < len(dims):
        raise NNAPIError(f"{where}: channel dimension {channel} is not an axis of dimensions {dims}")
    if dims[channel] == 0:
        raise NNAPIError(f"{where}: the channel dimension {channel} of {dims} must be known (not 0)")
    scales = list(extra.scales)
    if len(scales) != dims[channel]:
        raise NNAPIError(f"{where}: {len(scales)} scales for channel dimension {channel} of size {dims[channel]}; "
                         "one per channel")
    bad = [(c, x) for c, x in enumerate(scales) if not (isinstance(x, Real) and math.isfinite(x) and x > 0)]
    if bad:
        raise NNAPIError(f"{where}: scale {bad[0][1]} of channel {bad[0][0]} must be finite and greater than zero")


def check_value(model: Model, index: int, operand: Operand) -> None:
    """A constant operand: fully known dimensions, and a location inside its buffer holding exactly its bytes."""
    where = f"operand {index}"
    kind = OperandType(operand.type)
    if kind in TENSOR_TYPES and (not operand.dimensions or 0 in operand.dimensions):
        raise NNAPIError(f"{where}: a constant tensor needs all its dimensions, got {operand.dimensions}")
    loc = operand.location
    if not all(_integer(x) and x >= 0 for x in (loc.poolIndex, loc.offset, loc.length)):
        raise NNAPIError(f"{where}: location {loc} must hold non-negative integers")
    if operand.lifetime == OperandLifeTime.CONSTANT_COPY and loc.poolIndex != 0:
        raise NNAPIError(f"{where}: a CONSTANT_COPY value lies in operandValues, pool index 0; got {loc.poolIndex}")
    need = math.prod(int(d) for d in operand.dimensions) * DTYPES[kind].itemsize
    if loc.length != need:
        raise NNAPIError(f"{where}: its value has {loc.length} bytes; {kind.name} {operand.dimensions} takes {need}")
    constant_bytes(model, operand)  # inside its buffer


def _check_inputs_outputs(model: Model) -> None:
    """At least one model input and output, each an operand of the matching lifetime, listed once."""
    n = len(model.operands)
    if not model.inputIndexes:
        raise NNAPIError("the model has no inputs; NNAPI requires at least one")
    if not model.outputIndexes:
        raise NNAPIError("the model has no outputs; NNAPI requires at least one")
    lifetimes = {"input": (OperandLifeTime.MODEL_INPUT, OperandLifeTime.NO_VALUE),
                 "output": (OperandLifeTime.MODEL_OUTPUT,)}
    for what, indexes in (("input", model.inputIndexes), ("output", model.outputIndexes)):
        for k in indexes:
            if not _integer(k) or not 0 <= k < n:
                raise NNAPIError(f"model {what} {k} is not an operand index (0..{n - 1})")
            if model.operands[k].lifetime not in lifetimes[what]:
                raise NNAPIError(f"model {what} {k} has lifetime "
                                 f"{OperandLifeTime(model.operands[k].lifetime).name}, expected MODEL_{what.upper()}")
        if len(set(indexes)) != len(indexes):
            raise NNAPIError(f"the model {what}s {list(indexes)} list an operand twice")
    overlap = set(model.inputIndexes) & set(model.outputIndexes)
    if overlap:
        raise NNAPIError(f"operand {min(overlap)} is both a model input and a model output")
    listed = {OperandLifeTime.MODEL_INPUT: set(model.inputIndexes),
              OperandLifeTime.MODEL_OUTPUT: set(model.outputIndexes)}
    for k, operand in enumerate(model.operands):
        if operand.lifetime in listed and k not in listed[operand.lifetime]:
            raise NNAPIError(f"operand {k} has lifetime {OperandLifeTime(operand.lifetime).name} but is not listed "
                             "among the model's inputs or outputs")


def execution_order(model: Model) -> list[int]:
    """Check ``model`` and return its operations in an order that runs every writer first."""
    n = len(model.operands)
    consumers = [0] * n
    for j, op in enumerate(model.operations):
        for k in list(op.inputs) + list(op.outputs):
            if not _integer(k) or not 0 <= k < n:
                raise NNAPIError(f"operand index {k} is out of range (0..{n - 1})", operation=j,
                                 operation_type=op.type)
        for k in op.inputs:
            consumers[k] += 1
    for i, operand in enumerate(model.operands):
        check_operand(i, operand)
        if operand.type == OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
            check_channel_quant(f"operand {i}", operand)
        if operand.lifetime in CONSTANT:
            check_value(model, i, operand)
        elif (operand.location.poolIndex, operand.location.offset, operand.location.length) != (0, 0, 0):
            raise NNAPIError(f"operand {i}: a {OperandLifeTime(operand.lifetime).name} operand has location "
                             f"{operand.location}; NNAPI sets its fields to 0")
        if operand.numberOfConsumers != consumers[i]:
            raise NNAPIError(f"operand {i}: numberOfConsumers is {operand.numberOfConsumers}; "
                             f"{consumers[i]} operation inputs read it")
    _check_inputs_outputs(model)
    writer: dict[int, int] = {}
    for j, op in enumerate(model.operations):
        try:
            OperationType(op.type)
        except ValueError:
            raise NNAPIError(f"type {op.type} is not an OperationType", operation=j, operation_type=op.type) from None
        if op.type == OperationType.OEM_OPERATION:
            raise NNAPIError("OEM operations are not supported", operation=j, operation_type=op.type)
        if not op.outputs:
            raise NNAPIError("has no outputs", operation=j, operation_type=op.type)
        for k in list(op.inputs) + list(op.outputs):
            if not _integer(k) or not 0 <= k < n:
                raise NNAPIError(f"operand index {k} is out of range (0..{n - 1})", operation=j,
                                 operation_type=op.type)
        for k in op.outputs:
            if k in writer:
                raise NNAPIError(f"operand {k} is already written by operation {writer[k]}", operation=j,
                                 operation_type=op.type)
            lifetime = model.operands[k].lifetime
            if k in model.inputIndexes or lifetime in CONSTANT + (OperandLifeTime.NO_VALUE,):
                raise NNAPIError(f"output operand {k} is a model input or has a value", operation=j,
                                 operation_type=op.type)
            writer[k] = j
    for k in model.outputIndexes:
        if k not in writer:
            raise NNAPIError(f"model output {k} is written by no operation")
    given = CONSTANT + (OperandLifeTime.NO_VALUE, OperandLifeTime.MODEL_INPUT)
    for k, operand in enumerate(model.operands):
        if k not in writer and operand.lifetime not in given:
            readers = [f"operation {j} ({OperationType(op.type).name}) reads it as input {op.inputs.index(k)}"
                       for j, op in enumerate(model.operations) if k in op.inputs]
            raise NNAPIError(f"operand {k} is never written: it is no model input, has no value and is no "
                             f"operation's output ({'; '.join(readers) or 'nothing reads it'})")
    for j, op in enumerate(model.operations):
        check_operation(model, j, op)
    return _topological(model, writer)


def _topological(model: Model, writer: dict[int, int]) -> list[int]:
    pending = {j: {writer[k] for k in op.inputs if k in writer} for j, op in enumerate(model.operations)}
    order: list[int] = []
    ready = sorted(j for j, deps in pending.items() if not deps)
    done: set[int] = set()
    while ready:
        j = ready.pop(0)
        order.append(j)
        done.add(j)
        for other, deps in pending.items():
            if other not in done and other not in ready and j in deps and deps <= done:
                ready.append(other)
        ready.sort()
    if len(order) != len(model.operations):
        stuck = min(set(range(len(model.operations))) - done)
        op = model.operations[stuck]
        raise NNAPIError("is part of a cycle (an input depends on its own output)", operation=stuck,
                         operation_type=op.type)
    return order


def status_of(err: Exception) -> ErrorStatus:
    return err.status if isinstance(err, NNAPIError) else ErrorStatus.GENERAL_FAILURE
