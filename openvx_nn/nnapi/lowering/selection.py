"""NNAPI 1.2's data movement and selection: ARGMAX, ARGMIN, EXPAND_DIMS, GATHER, SLICE, SPLIT, TILE, TOPK_V2,
PAD_V2, CHANNEL_SHUFFLE and RESIZE_NEAREST_NEIGHBOR.

Axes (negative ones count from the end), slice bounds, multiples and paddings are read here, as constants or a
request's values, and given to the kernels (``operations/nnapi/selection``) as per-axis INT32 scalars. EXPAND_DIMS
is a reshape; SPLIT is one SLICE node per part. Raw values move, so every data output is quantized like the input.
"""
from __future__ import annotations

import math

import numpy as np

from ...operations.nnapi.movement import MAX_RANK as PAD_RANK
from ...operations.nnapi.selection import MAX_RANK
from ..enums import DTYPES, OperandType, OperationType
from .context import OpContext
from .movement import _axis, _ints
from .registry import lowers
from .reshaping import same_quantization

T = OperationType
Q8 = OperandType.TENSOR_QUANT8_ASYMM


def _quantized_like_input(op: OpContext, outputs: range) -> None:
    a = op.operand(0)
    for j in outputs:
        out = op.operand(j, output=True)
        if a.type == Q8 and (a.scale != out.scale or a.zeroPoint != out.zeroPoint):
            op.fail(f"output {j}'s quantization ({out.scale}, {out.zeroPoint}) differs from the input's "
                    f"({a.scale}, {a.zeroPoint})")


def _padded(values: list[int], fill: int, prefix: str, size: int = MAX_RANK) -> dict[str, int]:
    return {f"{prefix}{i}": v for i, v in enumerate(values + [fill] * (size - len(values)))}


@lowers(T.ARGMAX, T.ARGMIN)
def lower_arg(op: OpContext) -> None:
    rank = len(op.shape(0))
    op.node(op.type.name.lower(), {"input": 0}, {"output": 0}, {"axis": _axis(op, op.scalar(1), rank, "axis")})


@lowers(T.EXPAND_DIMS)
def lower_expand_dims(op: OpContext) -> None:
    same_quantization(op)
    shape = op.shape(0)
    rank = len(shape)
    axis = op.scalar(1)
    if not -(rank + 1) <= axis <= rank:
        op.fail(f"axis {axis} is outside [-{rank + 1}, {rank + 1}) for input 0 of rank {rank}")
    if rank + 1 > MAX_RANK:
        op.fail(f"input 0 has rank {rank}; the result would exceed rank {MAX_RANK}")
    axis %= rank + 1
    op.settle(0, shape[:axis] + (1,) + shape[axis:], DTYPES[op.kind(0)])
    op.node("reshape", {"input": 0}, {"output": 0})


@lowers(T.GATHER)
def lower_gather(op: OpContext) -> None:
    same_quantization(op)
    rank = len(op.shape(0))
    op.node("gather", {"input": 0, "indices": 2}, {"output": 0}, {"axis": _axis(op, op.scalar(1), rank, "axis")})


def _slice(op: OpContext, output: int, begin: list[int], size: list[int]) -> None:
    op.node_on("slice", {"input": op.inputs[0]}, {"output": op.outputs[output]},
               {**_padded(begin, 0, "begin"), **_padded(size, 1, "size")})


@lowers(T.SLICE)
def lower_slice(op: OpContext) -> None:
    same_quantization(op)
    shape = op.shape(0)
    begin, size = _ints(op, 1, "begin", (len(shape),)), _ints(op, 2, "size", (len(shape),))
    for i, d in enumerate(shape):
        if size[i] == -1:
            size[i] = d - begin[i]
        if not (0 <= begin[i] < d and 1 <= size[i] and begin[i] + size[i] <= d):
            op.fail(f"axis {i}: begin {begin[i]} and size {size[i]} leave the input's 0..{d - 1}")
    _slice(op, 0, begin, size)


@lowers(T.SPLIT)
def lower_split(op: OpContext) -> None:
    _quantized_like_input(op, range(len(op.outputs)))
    shape = op.shape(0)
    axis, parts = _axis(op, op.scalar(1), len(shape), "axis"), op.scalar(2)
    if parts != len(op.outputs):
        op.fail(f"input 2 (number of splits) is {parts}, but the operation has {len(op.outputs)} outputs")
    if parts < 1 or shape[axis] % parts:
        op.fail(f"{parts} splits do not divide axis {axis} of {shape[axis]}")
    step = shape[axis] // parts
    for j in range(parts):
        begin = [j * step if i == axis else 0 for i in range(len(shape))]
        _slice(op, j, begin, [step if i == axis else d for i, d in enumerate(shape)])


@lowers(T.TILE)
def lower_tile(op: OpContext) -> None:
    same_quantization(op)
    rank = len(op.shape(0))
    op.node("tile", {"input": 0}, {"output": 0}, _padded(_ints(op, 1, "multiples", (rank,)), 1, "multiple"))


@lowers(T.TOPK_V2)
def lower_topk(op: OpContext) -> None:
    same_quantization(op)
    op.node("topk_v2", {"input": 0}, {"values": 0, "indices": 1}, {"k": op.scalar(1)})


@lowers(T.PAD_V2)
def lower_pad_v2(op: OpContext) -> None:
    same_quantization(op)
    rank = len(op.shape(0))
    pads = _ints(op, 1, "paddings", (rank, 2))
    if min(pads) < 0:
        op.fail(f"input 1 (paddings) holds {pads}; paddings must not be negative")
    value = op.scalar(2)
    if op.kind(0) == Q8 and not 0 <= value <= 255:
        op.fail(f"input 2 (pad value) is {value}; a quantized value of TENSOR_QUANT8_ASYMM is 0..255")
    op.node("pad_v2", {"input": 0}, {"output": 0},
            {**_padded(pads[0::2], 0, "before", PAD_RANK), **_padded(pads[1::2], 0, "after", PAD_RANK)},
            {"value": float(value)})


@lowers(T.CHANNEL_SHUFFLE)
def lower_channel_shuffle(op: OpContext) -> None:
    same_quantization(op)
    rank = len(op.shape(0))
    op.node("channel_shuffle", {"input": 0}, {"output": 0},
            {"groups": op.scalar(1), "axis": _axis(op, op.scalar(2), rank, "axis")})


@lowers(T.RESIZE_NEAREST_NEIGHBOR)
def lower_resize_nearest(op: OpContext) -> None:
    same_quantization(op)
    nchw = bool(op.scalar(3))
    _, *spatial = op.shape(0)
    height, width = spatial[1:3] if nchw else spatial[0:2]
    if op.kind(1) == OperandType.INT32:
        out_w, out_h = op.scalar(1), op.scalar(2)
    else:  # by scale: floor(extent * scale), the product in float32 (as Android's reference computes it)
        out_w, out_h = (math.floor(np.float32(extent) * np.float32(op.scalar(k)))
                        for extent, k in ((width, 1), (height, 2)))
    op.node("resize_nearest_neighbor", {"input": 0}, {"output": 0}, {"width": out_w, "height": out_h, "nchw": int(nchw)})
