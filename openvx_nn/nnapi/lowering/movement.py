"""NNAPI 1.1's data movement and reduction: TRANSPOSE, PAD, STRIDED_SLICE, SQUEEZE, SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND and MEAN.

Their parameter tensors (permutation, paddings, slice bounds, block sizes, axes) are read here, as constants
or a request's values, and resolved into the per-axis INT32 scalars of the kernels (``operations/nnapi/
movement``): STRIDED_SLICE's masks and negative indices become a start, a stride and a count per axis. SQUEEZE
is a reshape (the ``reshape`` kernel). Each output is quantized like its input (raw values are moved).
"""
from __future__ import annotations

import numpy as np

from ...operations.nnapi.movement import MAX_RANK
from ..enums import DTYPES, OperationType
from .context import OpContext
from .registry import lowers
from .reshaping import same_quantization

T = OperationType


def _data(op: OpContext, ranks=range(1, MAX_RANK + 1)) -> tuple[int, ...]:
    """Input 0's shape, of a rank in ``ranks`` (the signature checks it where the model declares it), the
    output quantized like it."""
    same_quantization(op)
    shape = op.shape(0)
    if len(shape) not in ranks:
        op.fail(f"input 0 has rank {len(shape)}, expected {' or '.join(map(str, ranks))}")
    return shape


def _ints(op: OpContext, k: int, name: str, shape: tuple[int, ...] | None = None) -> list[int]:
    """Parameter tensor ``k`` (TENSOR_INT32) as a flat list, its shape checked against ``shape``."""
    value = np.asarray(op.constant(k))
    if shape is not None and value.shape != shape:
        op.fail(f"input {k} ({name}) has shape {list(value.shape)}, expected {list(shape)}")
    return [int(v) for v in value.reshape(-1)]


def _axis(op: OpContext, axis: int, rank: int, name: str) -> int:
    if not -rank <= axis < rank:
        op.fail(f"{name} {axis} is outside [-{rank}, {rank}) for input 0 of rank {rank}")
    return axis % rank


@lowers(T.TRANSPOSE)
def lower_transpose(op: OpContext) -> None:
    shape = _data(op)
    rank = len(shape)
    perm = _ints(op, 1, "perm", (rank,)) if op.present(1) else list(range(rank - 1, -1, -1))
    if sorted(perm) != list(range(rank)):
        op.fail(f"input 1 (perm) is {perm}, not a permutation of 0..{rank - 1}")
    perm += list(range(rank, MAX_RANK))
    op.node("transpose", {"input": 0}, {"output": 0}, {f"perm{i}": p for i, p in enumerate(perm)})


@lowers(T.PAD)
def lower_pad(op: OpContext) -> None:
    rank = len(_data(op))
    pads = _ints(op, 1, "paddings", (rank, 2))
    if min(pads) < 0:
        op.fail(f"input 1 (paddings) holds {pads}; paddings must not be negative")
    before, after = pads[0::2] + [0] * (MAX_RANK - rank), pads[1::2] + [0] * (MAX_RANK - rank)
    op.node("pad", {"input": 0}, {"output": 0},
            {**{f"before{i}": b for i, b in enumerate(before)}, **{f"after{i}": a for i, a in enumerate(after)}})


def _index(index: int, dim: int, forward: bool) -> int:
    """A begin or end index as a slice takes it: negative counts from the end, then clamped to the range
    a step of this direction can start or stop at ([0, dim] forward, [-1, dim - 1] backward)."""
    if index < 0:
        index += dim
    return min(max(index, 0), dim) if forward else min(max(index, -1), dim - 1)


@lowers(T.STRIDED_SLICE)
def lower_strided_slice(op: OpContext) -> None:
    shape = _data(op)
    rank = len(shape)
    begin, end, strides = (_ints(op, k, name, (rank,)) for k, name in ((1, "begin"), (2, "end"), (3, "strides")))
    begin_mask, end_mask, shrink = (op.scalar(k) for k in (4, 5, 6))
    if not 0 <= shrink < 1 << rank:
        op.fail(f"input 6 (shrink_axis_mask) is {shrink}; input 0 has {rank} axes")
    starts, counts = [], []
    for i, dim in enumerate(shape):
        step = strides[i]
        if step == 0:
            op.fail(f"input 3 (strides) is {strides}; a stride must not be 0")
        forward = step > 0
        start = (0 if forward else dim - 1) if begin_mask >> i & 1 else _index(begin[i], dim, forward)
        stop = (dim if forward else -1) if end_mask >> i & 1 else _index(end[i], dim, forward)
        count = max(0, -(-(stop - start) // step))  # ceil((stop - start) / step)
        if shrink >> i & 1 and count != 1:
            op.fail(f"axis {i} is in shrink_axis_mask but its slice (begin {begin[i]}, end {end[i]}, stride "
                    f"{step}, masks applied) has {count} elements; it must have 1")
        if count == 0:
            op.fail(f"the slice of axis {i} (begin {begin[i]}, end {end[i]}, stride {step}) is empty; an NNAPI "
                    "1.1 tensor has no empty dimension")
        starts.append(start)
        counts.append(count)
    pad = MAX_RANK - rank
    ints = {f"begin{i}": v for i, v in enumerate(starts + [0] * pad)}
    ints.update({f"stride{i}": v for i, v in enumerate(strides + [1] * pad)})
    ints.update({f"size{i}": v for i, v in enumerate(counts + [1] * pad)})
    ints["shrink"] = shrink
    op.node("strided_slice", {"input": 0}, {"output": 0}, ints)


@lowers(T.SQUEEZE)
def lower_squeeze(op: OpContext) -> None:
    shape = _data(op)
    rank = len(shape)
    if op.present(1):
        axes = {_axis(op, a, rank, "axis") for a in _ints(op, 1, "squeeze_dims")}
        wide = [a for a in sorted(axes) if shape[a] != 1]
        if wide:
            op.fail(f"input 1 (squeeze_dims) names axis {wide[0]} of size {shape[wide[0]]}; only axes of size 1 "
                    "can be squeezed")
    else:
        axes = {a for a, d in enumerate(shape) if d == 1}
    # every axis squeezed: one element of shape [1] (an NNAPI tensor has at least one dimension)
    op.settle(0, tuple(d for a, d in enumerate(shape) if a not in axes) or (1,), DTYPES[op.kind(0)])
    op.node("reshape", {"input": 0}, {"output": 0})


@lowers(T.SPACE_TO_BATCH_ND)
def lower_space_to_batch(op: OpContext) -> None:
    _data(op, (4,))
    bh, bw = _ints(op, 1, "block_shape", (2,))
    top, bottom, left, right = _ints(op, 2, "paddings", (2, 2))
    op.node("space_to_batch_nd", {"input": 0}, {"output": 0},
            {"block_height": bh, "block_width": bw, "pad_top": top, "pad_bottom": bottom, "pad_left": left,
             "pad_right": right})


@lowers(T.BATCH_TO_SPACE_ND)
def lower_batch_to_space(op: OpContext) -> None:
    _data(op, (4,))
    bh, bw = _ints(op, 1, "block_shape", (2,))
    op.node("batch_to_space_nd", {"input": 0}, {"output": 0}, {"block_height": bh, "block_width": bw})


@lowers(T.MEAN)
def lower_mean(op: OpContext) -> None:
    rank = len(_data(op))
    axes = {_axis(op, a, rank, "axis") for a in _ints(op, 1, "axis")}  # an axis listed twice is reduced once
    if not axes:
        op.fail("input 1 (axis) is empty; it must name the axes to reduce")
    op.node("mean", {"input": 0}, {"output": 0},
            {"axes": sum(1 << a for a in axes), "keep_dims": int(op.scalar(2) > 0)})
