"""EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and LSH_PROJECTION."""
from __future__ import annotations

from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

Q8 = OperandType.TENSOR_QUANT8_ASYMM
T = OperationType


def _same_quantization(op: OpContext, k: int) -> None:
    a, out = op.operand(k), op.operand(0, output=True)
    if a.type == Q8 and (a.scale != out.scale or a.zeroPoint != out.zeroPoint):
        op.fail(f"output quantization ({out.scale}, {out.zeroPoint}) differs from the values' "
                f"({a.scale}, {a.zeroPoint}); the lookup copies raw values")


@lowers(T.EMBEDDING_LOOKUP)
def lower_embedding(op: OpContext) -> None:
    _same_quantization(op, 1)
    op.node("embedding_lookup", {"lookups": 0, "values": 1}, {"output": 0})


@lowers(T.HASHTABLE_LOOKUP)
def lower_hashtable(op: OpContext) -> None:
    _same_quantization(op, 2)
    op.node("hashtable_lookup", {"lookups": 0, "keys": 1, "values": 2}, {"output": 0, "hits": 1})


@lowers(T.LSH_PROJECTION)
def lower_lsh(op: OpContext) -> None:
    op.node("lsh_projection", {"hash": 0, "input": 1, "weight": 2}, {"output": 0}, {"type": op.scalar(3)})
