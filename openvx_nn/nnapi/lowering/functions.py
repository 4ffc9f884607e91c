"""NNAPI 1.2's element-wise operations: ABS, EXP, LOG, NEG, RSQRT, SIN, SQRT, POW, MAXIMUM, MINIMUM, PRELU, CAST
and QUANTIZE, each one node of its own kernel (``operations/nnapi/functions``)."""
from __future__ import annotations

from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

T = OperationType
ONE = {T.ABS: "abs", T.EXP: "exp", T.LOG: "log", T.NEG: "neg", T.RSQRT: "rsqrt", T.SIN: "sin", T.SQRT: "sqrt",
       T.QUANTIZE: "quantize"}
TWO = {T.POW: "pow", T.MAXIMUM: "maximum", T.MINIMUM: "minimum", T.PRELU: "prelu"}
CAST_TO = {OperandType.TENSOR_FLOAT32: 0, OperandType.TENSOR_INT32: 1, OperandType.TENSOR_QUANT8_ASYMM: 2}


@lowers(*ONE)
def lower_one(op: OpContext) -> None:
    op.node(ONE[op.type], {"input": 0}, {"output": 0})


@lowers(*TWO)
def lower_two(op: OpContext) -> None:
    op.node(TWO[op.type], {"input1": 0, "input2": 1}, {"output": 0})


@lowers(T.CAST)
def lower_cast(op: OpContext) -> None:
    op.node("cast", {"input": 0}, {"output": 0}, {"to": CAST_TO[OperandType(op.operand(0, output=True).type)]})
