"""Structural checks of a HAL model, shared by the builder's ``finish`` and the
driver: operand types and quantization, lifetimes and locations, operation
types and operand indexes, single writers, and an execution order (no cycle)."""
from __future__ import annotations

import math

from .enums import SCALAR_TYPES, TENSOR_TYPES, ErrorStatus, OperandLifeTime, OperandType, OperationType
from .errors import NNAPIError
from .hal.structs import Model, Operand

CONSTANT = (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE)


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
    if any(int(d) < 0 for d in operand.dimensions):
        raise NNAPIError(f"{where}: dimensions {operand.dimensions} must not be negative")
    if kind == OperandType.TENSOR_QUANT8_ASYMM:
        if not (math.isfinite(operand.scale) and operand.scale > 0):
            raise NNAPIError(f"{where}: TENSOR_QUANT8_ASYMM needs a positive scale, got {operand.scale}")
        if not 0 <= operand.zeroPoint <= 255:
            raise NNAPIError(f"{where}: zero point {operand.zeroPoint} is outside 0..255")
    try:
        OperandLifeTime(operand.lifetime)
    except ValueError:
        raise NNAPIError(f"{where}: lifetime {operand.lifetime} is not an OperandLifeTime") from None


def execution_order(model: Model) -> list[int]:
    """Check ``model`` and return its operations in an order that runs every writer first."""
    n = len(model.operands)
    for i, operand in enumerate(model.operands):
        check_operand(i, operand)
    for what, indexes in (("input", model.inputIndexes), ("output", model.outputIndexes)):
        for k in indexes:
            if not 0 <= k < n:
                raise NNAPIError(f"model {what} {k} is not an operand index (0..{n - 1})")
    overlap = set(model.inputIndexes) & set(model.outputIndexes)
    if overlap:
        raise NNAPIError(f"operand {min(overlap)} is both a model input and a model output")
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
            if not 0 <= k < n:
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
