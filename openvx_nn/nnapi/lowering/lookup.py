"""EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and LSH_PROJECTION."""
from __future__ import annotations

from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

F32T, I32T, Q8 = OperandType.TENSOR_FLOAT32, OperandType.TENSOR_INT32, OperandType.TENSOR_QUANT8_ASYMM
ANY = (F32T, I32T, Q8)
T = OperationType


def _same_quantization(op: OpContext, k: int) -> None:
    a, out = op.operand(k), op.operand(0, output=True)
    if a.type == Q8 and (a.scale != out.scale or a.zeroPoint != out.zeroPoint):
        op.fail(f"output quantization ({out.scale}, {out.zeroPoint}) differs from the values' "
                f"({a.scale}, {a.zeroPoint}); the lookup copies raw values")


@lowers(T.EMBEDDING_LOOKUP)
def lower_embedding(op: OpContext) -> None:
    op.counts((2,), (1,))
    op.tensor_kinds([0], (I32T,))
    op.tensor_kinds([1], ANY)
    _same_quantization(op, 1)
    op.node("embedding_lookup", {"lookups": 0, "values": 1}, {"output": 0})


@lowers(T.HASHTABLE_LOOKUP)
def lower_hashtable(op: OpContext) -> None:
    op.counts((3,), (2,))
    op.tensor_kinds([0, 1], (I32T,))
    op.tensor_kinds([2], ANY)
    _same_quantization(op, 2)
    if op.operand(1, output=True).type != Q8:
        op.fail("output 1 (hits) must be TENSOR_QUANT8_ASYMM")
    op.node("hashtable_lookup", {"lookups": 0, "keys": 1, "values": 2}, {"output": 0, "hits": 1})


@lowers(T.LSH_PROJECTION)
def lower_lsh(op: OpContext) -> None:
    op.counts((4,), (1,))
    op.tensor_kinds([0], (F32T,))
    op.tensor_kinds([1], ANY)
    if op.present(2):
        op.tensor_kinds([2], (F32T,))
    op.node("lsh_projection", {"hash": 0, "input": 1, "weight": 2}, {"output": 0}, {"type": op.scalar(3)})
