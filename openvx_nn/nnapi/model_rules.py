"""What NNAPI 1.0 fixes about an operation's operands, checked on the whole model before it runs.

The lowering checks types and shapes when it builds the graph; the rules here need no shapes, so
``Model.finish``, ``load_model`` and the driver's ``prepare_model`` all apply them, and a model that breaks
one never reaches a kernel: quantization NNAPI fixes (SOFTMAX and LOGISTIC outputs, the bias of the
convolutions), enum operands (fused activation, padding scheme, projection type) and which inputs may be
omitted (``NO_VALUE``).  The operation's position in the message is its index in the model as given.
"""
from __future__ import annotations

import numpy as np

from ..operations.nnapi.recurrent import ACTIVATIONS as LSTM_ACTIVATIONS
from .enums import ErrorStatus, FusedActivationFunc, OperandLifeTime, OperandType, OperationType, PaddingScheme
from .errors import NNAPIError
from .hal.structs import Model, Operation, constant_bytes

T = OperationType
Q8 = OperandType.TENSOR_QUANT8_ASYMM
CONSTANT = (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE)

ACTIVATION = ("fused activation", tuple(int(a) for a in FusedActivationFunc))
PADDING = ("padding scheme", tuple(int(p) for p in PaddingScheme))
LSH_TYPE = ("projection type (SPARSE 1, DENSE 2)", (1, 2))
LSTM_ACTIVATION = ("LSTM activation", tuple(int(a) for a in LSTM_ACTIVATIONS))

POOL_ENUMS = {10: {9: ACTIVATION}, 7: {1: PADDING, 6: ACTIVATION}}
ENUMS: dict[int, dict[int, dict[int, tuple[str, tuple[int, ...]]]]] = {
    T.ADD: {3: {2: ACTIVATION}},
    T.MUL: {3: {2: ACTIVATION}},
    T.CONV_2D: {10: {9: ACTIVATION}, 7: {3: PADDING, 6: ACTIVATION}},
    T.DEPTHWISE_CONV_2D: {11: {10: ACTIVATION}, 8: {3: PADDING, 7: ACTIVATION}},
    T.FULLY_CONNECTED: {4: {3: ACTIVATION}},
    T.AVERAGE_POOL_2D: POOL_ENUMS, T.MAX_POOL_2D: POOL_ENUMS, T.L2_POOL_2D: POOL_ENUMS,
    T.LSH_PROJECTION: {4: {3: LSH_TYPE}},
    T.RNN: {5: {4: ACTIVATION}},
    T.SVDF: {6: {5: ACTIVATION}, 7: {6: ACTIVATION}},
    T.LSTM: {21: {18: LSTM_ACTIVATION}, 23: {20: LSTM_ACTIVATION}},
}
"""operation -> number of inputs -> input position -> (what it is, its defined values)."""

OPTIONAL: dict[int, frozenset[int]] = {
    T.LSTM: frozenset({1, 5, 9, 10, 11, 12, 16, 17}),
    T.LSH_PROJECTION: frozenset({2}),
    T.SVDF: frozenset({3}),
}
"""The inputs NNAPI 1.0 lets an operation omit (``NO_VALUE``); every other input must have a value."""

FIXED_OUTPUT = {T.SOFTMAX: (1.0 / 256, 0), T.LOGISTIC: (1.0 / 256, 0)}
"""(scale, zero point) a TENSOR_QUANT8_ASYMM output of these must have."""

WITH_BIAS = (T.CONV_2D, T.DEPTHWISE_CONV_2D, T.FULLY_CONNECTED)
BIAS_TOLERANCE = 1e-6
"""|bias scale - input scale * filter scale| <= this * the smaller of the two (the Android runtime's check)."""


def may_omit(op_type: int, position: int) -> bool:
    """Whether NNAPI 1.0 lets input ``position`` of the operation be omitted."""
    return position in OPTIONAL.get(op_type, ())


def enum_rule(op_type: int, n_inputs: int, position: int) -> tuple[str, tuple[int, ...]] | None:
    """(what, allowed values) when input ``position`` of the operation is an enum operand, else None."""
    return ENUMS.get(op_type, {}).get(n_inputs, {}).get(position)


def check_enum(op_type: int, n_inputs: int, position: int, value: int, operation: int) -> None:
    """Refuse an enum input whose value is not one NNAPI defines (a value read at execution too)."""
    rule = enum_rule(op_type, n_inputs, position)
    if rule is not None and int(value) not in rule[1]:
        raise NNAPIError(f"input {position} ({rule[0]}) is {value}; NNAPI defines {list(rule[1])}",
                         ErrorStatus.INVALID_ARGUMENT, operation, op_type)


def check_operation(model: Model, j: int, op: Operation, writers: set[int]) -> None:
    """Operation ``j``'s inputs have values where they must, its enums and fixed quantization hold."""
    def fail(message: str) -> None:
        raise NNAPIError(message, ErrorStatus.INVALID_ARGUMENT, j, op.type)

    operands = model.operands
    for position, k in enumerate(op.inputs):
        operand = operands[k]
        lifetime = operand.lifetime
        if lifetime == OperandLifeTime.NO_VALUE and not may_omit(op.type, position) and k not in model.inputIndexes:
            # a model input omitted by an execution is refused by the lowering, which names the input
            fail(f"input {position} (operand {k}) has no value; it is not optional")
        if lifetime == OperandLifeTime.TEMPORARY_VARIABLE and k not in writers:
            fail(f"input {position} (operand {k}) has no value: it was never given one, is not a model input "
                 "and no operation writes it")
        rule = enum_rule(op.type, len(op.inputs), position)
        if rule is not None and lifetime in CONSTANT and operand.type == OperandType.INT32:
            check_enum(op.type, len(op.inputs), position, _scalar(model, k, np.int32), j)
    if op.type in FIXED_OUTPUT and op.outputs and operands[op.outputs[0]].type == Q8:
        out = operands[op.outputs[0]]
        scale, zero = FIXED_OUTPUT[op.type]
        if np.float32(out.scale) != np.float32(scale) or out.zeroPoint != zero:
            fail(f"output 0 (operand {op.outputs[0]}) is quantized with scale {out.scale}, zero point "
                 f"{out.zeroPoint}; NNAPI fixes scale 1/256 ({scale}) and zero point {zero}")
    if op.type == T.SOFTMAX and len(op.inputs) > 1:
        beta_operand = operands[op.inputs[1]]
        if beta_operand.lifetime in CONSTANT and beta_operand.type == OperandType.FLOAT32:
            beta = _scalar(model, op.inputs[1], np.float32)
            if not (np.isfinite(beta) and beta > 0):
                fail(f"input 1 (beta) is {beta}; it must be positive")
    if op.type in WITH_BIAS and len(op.inputs) > 2:
        _check_bias(operands, op, fail)


def _check_bias(operands, op: Operation, fail) -> None:
    data, filt, bias = (operands[k] for k in op.inputs[:3])
    if data.type != Q8 or filt.type != Q8:
        return
    if bias.type != OperandType.TENSOR_INT32:
        fail(f"input 2 (bias, operand {op.inputs[2]}) is {OperandType(bias.type).name}; quantized data takes a "
             "TENSOR_INT32 bias")
    want = data.scale * filt.scale
    if not abs(bias.scale - want) <= BIAS_TOLERANCE * min(abs(bias.scale), want) or bias.zeroPoint != 0:
        fail(f"input 2 (bias, operand {op.inputs[2]}) has scale {bias.scale}, zero point {bias.zeroPoint}; "
             f"NNAPI fixes input scale * filter scale = {want} and zero point 0")


def _scalar(model: Model, k: int, dtype) -> float | int:
    data = constant_bytes(model, model.operands[k])
    if len(data) != np.dtype(dtype).itemsize:
        raise NNAPIError(f"operand {k}: a scalar value of {len(data)} bytes; it takes {np.dtype(dtype).itemsize}")
    return np.frombuffer(data, dtype)[0].item()
