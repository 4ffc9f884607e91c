"""Operands whose rows the data decides, and the operations that may read them.

BOX_WITH_NMS_LIMIT and GENERATE_PROPOSALS keep as many boxes as their data lets through (``OpContext.rows_counted``):
each of their outputs is a tensor holding the most rows that can come, and the kernel writes how many lead into a
count operand (``GraphBuilder.counted``). This module lets that count travel: an operation reading such an operand
either takes the count as its kernel's ``rows`` input (the region operations: only the leading rows are read, and a
count of 0 is the header's empty ROIs), or computes each row of its output from the same row of its inputs, so that
its outputs lead with as many valid rows (their tensors' other rows are computed and never reported). Every output
so reached is counted by the same operand: a model output reports that many rows
(``ANeuralNetworksExecution_getOutputOperandDimensions``), 0 included. Any other operation (one mixing rows: a
reduction, a concatenation, a reshape) refuses such an input with an error naming it.
"""
from __future__ import annotations

import math

from ..enums import OperationType
from .context import OpContext

T = OperationType

COUNT_TAKERS: dict[int, tuple[int, ...]] = {
    T.ROI_ALIGN: (1, 2), T.ROI_POOLING: (1, 2), T.AXIS_ALIGNED_BBOX_TRANSFORM: (0, 1, 2),
    T.BOX_WITH_NMS_LIMIT: (0, 1, 2), T.HEATMAP_MAX_KEYPOINT: (0, 1)}
"""Operations whose kernel takes the count (``rows``), and the inputs whose rows it counts: all of them come with
the same count."""

_UNARY = (T.ABS, T.EXP, T.LOG, T.NEG, T.SQRT, T.RSQRT, T.SIN, T.LOGISTIC, T.TANH, T.RELU, T.RELU1, T.RELU6, T.FLOOR,
          T.DEQUANTIZE, T.QUANTIZE, T.CAST, T.LOGICAL_NOT)
_BINARY = (T.ADD, T.SUB, T.MUL, T.DIV, T.MAXIMUM, T.MINIMUM, T.POW, T.PRELU, T.EQUAL, T.NOT_EQUAL, T.GREATER,
           T.GREATER_EQUAL, T.LESS, T.LESS_EQUAL, T.LOGICAL_AND, T.LOGICAL_OR)
_BATCHED = (T.CONV_2D, T.DEPTHWISE_CONV_2D, T.GROUPED_CONV_2D, T.TRANSPOSE_CONV_2D, T.AVERAGE_POOL_2D, T.MAX_POOL_2D,
            T.L2_POOL_2D, T.RESIZE_BILINEAR, T.RESIZE_NEAREST_NEIGHBOR, T.INSTANCE_NORMALIZATION, T.DEPTH_TO_SPACE,
            T.SPACE_TO_DEPTH, T.FULLY_CONNECTED)
ROW_WISE: dict[int, tuple[int, ...]] = {**{t: (0,) for t in _UNARY + _BATCHED}, **{t: (0, 1) for t in _BINARY},
                                        T.SOFTMAX: (0,), T.LOG_SOFTMAX: (0,), T.L2_NORMALIZATION: (0,),
                                        T.LOCAL_RESPONSE_NORMALIZATION: (0,), T.CHANNEL_SHUFFLE: (0,)}
"""Operations whose output row ``r`` (axis 0: the batch of the windowed layers in either layout) is computed from
row ``r`` of the inputs listed; a binary operation's other input broadcasts over the rows."""

AXIS_INPUT = {T.SOFTMAX: 2, T.LOG_SOFTMAX: 2, T.L2_NORMALIZATION: 1, T.LOCAL_RESPONSE_NORMALIZATION: 5,
              T.CHANNEL_SHUFFLE: 2}
"""Where the operations that work along one axis take it (default: the last): it must not be the rows'."""


def settle(op: OpContext) -> None:
    """Before ``op`` is lowered: if it reads operands whose rows the data decides, check that it may, count its
    outputs by the same operand and give a count taker the count (``op.rows_count``)."""
    counted = op.b.counted
    read = {j: counted[k] for j, k in enumerate(op.inputs) if k in counted}
    if not read:
        return
    name = op.type.name
    if op.type not in COUNT_TAKERS and op.type not in ROW_WISE:
        j = min(read)
        op.fail(f"input {j} (operand {op.inputs[j]}) has as many rows as the data decides; {name} mixes rows, so "
                "it cannot read it")
    positions = COUNT_TAKERS.get(op.type) or ROW_WISE[op.type]
    stray = [j for j in read if j not in positions]
    if stray:
        op.fail(f"input {stray[0]} (operand {op.inputs[stray[0]]}) has as many rows as the data decides; {name} "
                f"takes such rows only as input {' or '.join(map(str, positions))}")
    if len(set(read.values())) > 1:
        op.fail(f"inputs {sorted(read)} have as many rows as the data decides, decided by different operations; "
                f"{name} needs the same rows in each")
    count = next(iter(read.values()))
    if op.type in COUNT_TAKERS:
        fixed = [j for j in positions if j < len(op.inputs) and j not in read]
        if fixed:
            op.fail(f"input {fixed[0]} (operand {op.inputs[fixed[0]]}) has fixed rows while input {min(read)}'s "
                    f"rows the data decides; {name} needs them to come together")
        op.rows_count = count
    else:
        _row_wise(op, read, positions)
    if op.type != T.BOX_WITH_NMS_LIMIT:  # its outputs have rows of their own (``rows_counted``)
        for k in op.outputs:
            counted[k] = count


def _row_wise(op: OpContext, read: dict[int, int], positions: tuple[int, ...]) -> None:
    """Checks that a row-wise operation keeps the rows on axis 0: FULLY_CONNECTED's batch is the rows, an axis other
    than the rows', the other input of a binary operation broadcast over them."""
    shape = op.shape(min(read))
    rank = len(shape)
    if op.type == T.FULLY_CONNECTED and (len(op.shape(1)) != 2 or op.shape(1)[1] != math.prod(shape[1:])):
        op.fail(f"input 0 has shape {list(shape)} and as many rows as the data decides; FULLY_CONNECTED keeps "
                "those rows only when its weights' input size is the product of the other dimensions")
    if op.type in AXIS_INPUT:
        k = AXIS_INPUT[op.type]
        axis = op.scalar(k) if op.present(k) else -1
        if axis % rank == 0:
            op.fail(f"input {k} (axis) is {axis}: the axis of the rows the data decides; {op.type.name} would mix "
                    "them")
    for j in positions:
        if j in read or j >= len(op.inputs):
            continue
        shape = op.shape(j)
        if len(shape) > rank or (len(shape) == rank and shape[0] != 1):
            op.fail(f"input {j} has shape {list(shape)} while input {min(read)}'s rows the data decides; it must "
                    "broadcast over them (a first dimension of 1, or a lower rank)")
