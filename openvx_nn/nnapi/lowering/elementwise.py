"""ADD, MUL, DEQUANTIZE, FLOOR, RELU, RELU1, RELU6, LOGISTIC, TANH.

float32 goes to the standard OpenVX kernels where their arithmetic is
NNAPI's: ADD and MUL to tensor_add / tensor_multiply (scale 1) when the
second input broadcasts onto the first (OpenVX broadcasts only input2),
followed by the activation layer for a fused RELU or RELU6; RELU, RELU6,
LOGISTIC and TANH to the activation layer.  Everything else (uint8, RELU1,
other broadcasts) goes to the NNAPI kernels."""
from __future__ import annotations

import numpy as np

from ...core.enums import ConvertPolicy, NNActivation, RoundPolicy
from ...operations.nnapi.elementwise import broadcast_shape
from ..enums import FusedActivationFunc, OperandType, OperationType
from .context import OpContext
from .registry import lowers

F32T, Q8 = OperandType.TENSOR_FLOAT32, OperandType.TENSOR_QUANT8_ASYMM
T = OperationType
ACTIVATION_LAYER = "org.khronos.nn_extension.activation_layer"
A = NNActivation
STANDARD_ACTIVATIONS = {FusedActivationFunc.RELU: (A.VX_NN_ACTIVATION_RELU, 0.0, 0.0),
                        FusedActivationFunc.RELU6: (A.VX_NN_ACTIVATION_BRELU, 6.0, 0.0)}
SATURATE = ConvertPolicy.VX_CONVERT_POLICY_SATURATE
NEAREST = RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN


def _standard_fits(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """OpenVX's broadcast: input2 has input1's rank and each dim equal or 1 (the kernels of today need
    equal ranks although the validator takes fewer dims)."""
    return len(b) == len(a) and all(y in (1, x) for x, y in zip(reversed(a), reversed(b)))


def activation_node(op: OpContext, source, function: tuple, output) -> None:
    code, a, b = function
    op.standard(ACTIVATION_LAYER, [source, op.vx("enum", code), op.vx("f32", a), op.vx("f32", b), output])


@lowers(T.ADD, T.MUL)
def lower_binary(op: OpContext) -> None:
    op.counts((3,), (1,))
    kind = op.tensor_kinds([0, 1], (F32T, Q8))
    act = op.scalar(2)
    a, b = op.shape(0), op.shape(1)
    name = "add" if op.type == T.ADD else "mul"
    if kind != F32T or not _standard_fits(a, b) or (act != 0 and act not in STANDARD_ACTIVATIONS):
        op.node(name, {"input1": 0, "input2": 1}, {"output": 0}, {"activation": act})
        return
    if broadcast_shape(a, b) is None:
        op.fail(f"shapes {list(a)} and {list(b)} are not compatible")
    op.settle(0, a, np.dtype(np.float32))
    if op.b.dry:
        return
    result = op.vx("out", 0) if act == 0 else op.vx("tmp", a)
    if op.type == T.ADD:
        op.standard("org.khronos.openvx.tensor_add", [op.vx("in", 0), op.vx("in", 1), op.vx("enum", SATURATE),
                                                      result])
    else:
        op.standard("org.khronos.openvx.tensor_multiply",
                    [op.vx("in", 0), op.vx("in", 1), op.vx("f32", 1.0), op.vx("enum", SATURATE),
                     op.vx("enum", NEAREST), result])
    if act != 0:
        activation_node(op, result, STANDARD_ACTIVATIONS[act], op.vx("out", 0))


UNARY = {T.DEQUANTIZE: ("dequantize", (Q8,)), T.FLOOR: ("floor", (F32T,)), T.RELU: ("relu", (F32T, Q8)),
         T.RELU1: ("relu1", (F32T, Q8)), T.RELU6: ("relu6", (F32T, Q8)), T.LOGISTIC: ("logistic", (F32T, Q8)),
         T.TANH: ("tanh", (F32T,))}
FLOAT_LAYER = {T.RELU: (A.VX_NN_ACTIVATION_RELU, 0.0, 0.0), T.RELU6: (A.VX_NN_ACTIVATION_BRELU, 6.0, 0.0),
               T.LOGISTIC: (A.VX_NN_ACTIVATION_LOGISTIC, 0.0, 0.0),
               T.TANH: (A.VX_NN_ACTIVATION_HYPERBOLIC_TAN, 1.0, 1.0)}


@lowers(*UNARY)
def lower_unary(op: OpContext) -> None:
    op.counts((1,), (1,))
    name, kinds = UNARY[op.type]
    kind = op.tensor_kinds([0], kinds)
    if kind == F32T and op.type in FLOAT_LAYER:
        op.settle(0, op.shape(0), np.dtype(np.float32))
        if not op.b.dry:
            activation_node(op, op.vx("in", 0), FLOAT_LAYER[op.type], op.vx("out", 0))
        return
    op.node(name, {"input": 0}, {"output": 0})
