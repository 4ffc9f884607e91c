"""NNAPI 1.2's statistics: LOG_SOFTMAX, INSTANCE_NORMALIZATION and REDUCE_MAX, REDUCE_MIN, REDUCE_PROD,
REDUCE_SUM, REDUCE_ALL, REDUCE_ANY, each one node of its kernel (``operations/nnapi/statistics``); axes are resolved here (negative ones
count from the end, one listed twice is reduced once)."""
from __future__ import annotations

from ..enums import OperationType
from .context import OpContext
from .movement import _axis, _ints
from .registry import lowers
from .reshaping import same_quantization

T = OperationType
REDUCE = {T.REDUCE_MAX: "reduce_max", T.REDUCE_MIN: "reduce_min", T.REDUCE_PROD: "reduce_prod",
          T.REDUCE_SUM: "reduce_sum", T.REDUCE_ALL: "reduce_all", T.REDUCE_ANY: "reduce_any"}


@lowers(T.LOG_SOFTMAX)
def lower_log_softmax(op: OpContext) -> None:
    rank = len(op.shape(0))
    op.node("log_softmax", {"input": 0}, {"output": 0}, {"axis": _axis(op, op.scalar(2), rank, "axis")},
            {"beta": op.scalar(1)})


@lowers(T.INSTANCE_NORMALIZATION)
def lower_instance_normalization(op: OpContext) -> None:
    op.node("instance_normalization", {"input": 0}, {"output": 0}, {"nchw": int(bool(op.scalar(4)))},
            {"gamma": op.scalar(1), "beta": op.scalar(2), "epsilon": op.scalar(3)})


@lowers(*REDUCE)
def lower_reduce(op: OpContext) -> None:
    same_quantization(op)
    rank = len(op.shape(0))
    axes = {_axis(op, a, rank, "axis") for a in _ints(op, 1, "axes")}
    if not axes:
        op.fail("input 1 (axes) is empty; it must name the axes to reduce")
    op.node(REDUCE[op.type], {"input": 0}, {"output": 0},
            {"axes": sum(1 << a for a in axes), "keep_dims": int(bool(op.scalar(2)))})
