"""ADD, SUB, MUL, DIV, DEQUANTIZE, FLOOR, RELU, RELU1, RELU6, LOGISTIC, TANH.

DEQUANTIZE takes API level 29's symmetric types (one scale, or a scale per channel) and float16 output.

ADD, SUB, MUL and DIV run on the NNAPI kernels (float32: broadcast, operation
and fused activation in one pass; SUB and DIV are float32 only, as API level 28
defines them). float32 RELU, RELU6, LOGISTIC and TANH go to the standard
activation layer; everything else (uint8, RELU1) to the NNAPI kernels."""
from __future__ import annotations

import numpy as np

from ...core.enums import NNActivation
from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

F32T, Q8 = OperandType.TENSOR_FLOAT32, OperandType.TENSOR_QUANT8_ASYMM
T = OperationType
ACTIVATION_LAYER = "org.khronos.nn_extension.activation_layer"
A = NNActivation


def activation_node(op: OpContext, source, function: tuple, output) -> None:
    code, a, b = function
    op.standard(ACTIVATION_LAYER, [source, op.vx("enum", code), op.vx("f32", a), op.vx("f32", b), output])


BINARY = {T.ADD: "add", T.SUB: "sub", T.MUL: "mul", T.DIV: "div"}


@lowers(*BINARY)
def lower_binary(op: OpContext) -> None:
    # One own kernel per operation: float32 runs broadcast, operation and fused activation in one pass.
    op.node(BINARY[op.type], {"input1": 0, "input2": 1}, {"output": 0}, {"activation": op.scalar(2)})


UNARY = {T.FLOOR: "floor", T.RELU: "relu", T.RELU1: "relu1", T.RELU6: "relu6",
         T.LOGISTIC: "logistic", T.TANH: "tanh"}
FLOAT_LAYER = {T.RELU: (A.VX_NN_ACTIVATION_RELU, 0.0, 0.0), T.RELU6: (A.VX_NN_ACTIVATION_BRELU, 6.0, 0.0),
               T.LOGISTIC: (A.VX_NN_ACTIVATION_LOGISTIC, 0.0, 0.0),
               T.TANH: (A.VX_NN_ACTIVATION_HYPERBOLIC_TAN, 1.0, 1.0)}


@lowers(*UNARY)
def lower_unary(op: OpContext) -> None:
    if op.kind(0) == F32T and op.type in FLOAT_LAYER:
        op.settle(0, op.shape(0), np.dtype(np.float32))
        if not op.b.dry:
            activation_node(op, op.vx("in", 0), FLOAT_LAYER[op.type], op.vx("out", 0))
        return
    op.node(UNARY[op.type], {"input": 0}, {"output": 0})


@lowers(T.DEQUANTIZE)
def lower_dequantize(op: OpContext) -> None:
    """TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_SYMM (one scale), or TENSOR_QUANT8_SYMM_PER_CHANNEL (its scales
    become a constant input of the kernel) to TENSOR_FLOAT32 or TENSOR_FLOAT16."""
    op.shape(0)  # known, or the execution's (Deferred)
    scales, channel = None, 0
    if op.kind(0) == OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL:
        values, channel = op.channel_quant(0)
        scales = op.b.constant_operand(values, F32T)
    half = int(op.operand(0, output=True).type == OperandType.TENSOR_FLOAT16)
    op.node_on("dequantize", {"input": op.inputs[0], "scales": scales}, {"output": op.outputs[0]},
               {"channel": channel, "half": half})
