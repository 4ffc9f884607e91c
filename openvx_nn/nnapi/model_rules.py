"""What NNAPI fixes about an operation's operands, checked on the whole model before it runs.

The lowering checks shapes when it builds the graph; the rules here need no shapes, so ``Model.finish``,
``load_model`` and the driver's ``prepare_model`` all apply them, and a model that breaks one never reaches a
kernel: the operation's signature (``signatures``: counts, types, known ranks), quantization NNAPI fixes
(SOFTMAX and LOGISTIC outputs, the bias of the convolutions), enum values (fused activation, padding scheme,
projection type) and which inputs may be omitted (``NO_VALUE``).  The operation's position in the message is
its index in the model as given.
"""
from __future__ import annotations

import numpy as np

from .enums import ErrorStatus, OperandLifeTime, OperandType, OperationType
from .errors import NNAPIError
from .hal.structs import Model, Operation, constant_bytes
from .signature_check import check_enum, check_signature

T = OperationType
Q8 = OperandType.TENSOR_QUANT8_ASYMM
CONSTANT = (OperandLifeTime.CONSTANT_COPY, OperandLifeTime.CONSTANT_REFERENCE)

FIXED_OUTPUT = {T.SOFTMAX: (1.0 / 256, 0), T.LOGISTIC: (1.0 / 256, 0)}
"""(scale, zero point) a TENSOR_QUANT8_ASYMM output of these must have."""

WITH_BIAS = (T.CONV_2D, T.DEPTHWISE_CONV_2D, T.FULLY_CONNECTED, T.GROUPED_CONV_2D, T.TRANSPOSE_CONV_2D)
PER_CHANNEL_AXIS = {T.CONV_2D: 0, T.GROUPED_CONV_2D: 0, T.TRANSPOSE_CONV_2D: 0, T.DEPTHWISE_CONV_2D: 3}
"""The channel dimension the header fixes for a TENSOR_QUANT8_SYMM_PER_CHANNEL filter (input 1) of each."""
PC = OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL
BIAS_TOLERANCE = 1e-6
"""|bias scale - input scale * filter scale| <= this * the smaller of the two (the Android runtime's check)."""


def check_operation(model: Model, j: int, op: Operation) -> None:
    """Operation ``j``'s operands fit its signature, its inputs have values where they must, its enums and
    fixed quantization hold."""
    def fail(message: str) -> None:
        raise NNAPIError(message, ErrorStatus.INVALID_ARGUMENT, j, op.type)

    operands = model.operands
    form = check_signature(op.type, [operands[k] for k in op.inputs], [operands[k] for k in op.outputs], j)
    for position, k in enumerate(op.inputs):
        operand = operands[k]
        lifetime = operand.lifetime
        slot = form.input_slot(position, len(op.inputs))
        if lifetime == OperandLifeTime.NO_VALUE and not slot.optional and k not in model.inputIndexes:
            # a model input omitted by an execution is refused by the lowering, which names the input
            fail(f"input {position} (operand {k}) has no value; it is not optional")
        if slot.values and lifetime in CONSTANT:
            check_enum(slot, position, _scalar(model, k, np.int32), j, op.type)
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
    if filt.type == PC:
        axis = PER_CHANNEL_AXIS.get(OperationType(op.type))
        if filt.extraParams is not None and axis is not None and filt.extraParams.channelDim != axis:
            fail(f"input 1 (filter, operand {op.inputs[1]}) is quantized per channel along dimension "
                 f"{filt.extraParams.channelDim}; NNAPI fixes dimension {axis}")
        if bias.scale != 0 or bias.zeroPoint != 0:
            fail(f"input 2 (bias, operand {op.inputs[2]}) has scale {bias.scale}, zero point {bias.zeroPoint}; with a "
                 "per-channel filter NNAPI fixes scale 0 and zero point 0 (each channel's scale is input scale * "
                 "filter scale)")
        return
    if data.type != Q8 or filt.type != Q8:
        return
    want = data.scale * filt.scale
    if not abs(bias.scale - want) <= BIAS_TOLERANCE * min(abs(bias.scale), want) or bias.zeroPoint != 0:
        fail(f"input 2 (bias, operand {op.inputs[2]}) has scale {bias.scale}, zero point {bias.zeroPoint}; "
             f"NNAPI fixes input scale * filter scale = {want} and zero point 0")


def _scalar(model: Model, k: int, dtype) -> float | int:
    data = constant_bytes(model, model.operands[k])
    if len(data) != np.dtype(dtype).itemsize:
        raise NNAPIError(f"operand {k}: a scalar value of {len(data)} bytes; it takes {np.dtype(dtype).itemsize}")
    return np.frombuffer(data, dtype)[0].item()
