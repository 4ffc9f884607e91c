"""NNAPI 1.2's element-wise operations: ABS, EXP, LOG, NEG, RSQRT, SIN, SQRT, POW, MAXIMUM, MINIMUM, PRELU, CAST,
QUANTIZE, the comparisons (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL), LOGICAL_AND, LOGICAL_OR,
LOGICAL_NOT and SELECT, each one node of its own kernel (``operations/nnapi/functions``)."""
from __future__ import annotations

from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

T = OperationType
ONE = {T.ABS: "abs", T.EXP: "exp", T.LOG: "log", T.NEG: "neg", T.RSQRT: "rsqrt", T.SIN: "sin", T.SQRT: "sqrt",
       T.QUANTIZE: "quantize", T.LOGICAL_NOT: "logical_not"}
TWO = {T.POW: "pow", T.MAXIMUM: "maximum", T.MINIMUM: "minimum", T.PRELU: "prelu", T.EQUAL: "equal",
       T.NOT_EQUAL: "not_equal", T.GREATER: "greater", T.GREATER_EQUAL: "greater_equal", T.LESS: "less",
       T.LESS_EQUAL: "less_equal", T.LOGICAL_AND: "logical_and", T.LOGICAL_OR: "logical_or"}
CAST_TO = {OperandType.TENSOR_FLOAT32: 0, OperandType.TENSOR_INT32: 1, OperandType.TENSOR_QUANT8_ASYMM: 2,
           OperandType.TENSOR_FLOAT16: 3}


@lowers(*ONE)
def lower_one(op: OpContext) -> None:
    op.node(ONE[op.type], {"input": 0}, {"output": 0})


@lowers(*TWO)
def lower_two(op: OpContext) -> None:
    op.node(TWO[op.type], {"input1": 0, "input2": 1}, {"output": 0})


@lowers(T.CAST)
def lower_cast(op: OpContext) -> None:
    op.node("cast", {"input": 0}, {"output": 0}, {"to": CAST_TO[OperandType(op.operand(0, output=True).type)]})


@lowers(T.SELECT)
def lower_select(op: OpContext) -> None:
    op.node("select", {"condition": 0, "input1": 1, "input2": 2}, {"output": 0})
