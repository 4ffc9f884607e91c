"""NNAPI TRANSPOSE, PAD, STRIDED_SLICE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND and MEAN as OpenVX kernels.

Their tensor parameters (a permutation, paddings, slice bounds, axes) are constants the lowering reads; it
gives them as INT32 scalars, one per axis of a tensor of rank at most 4 (NNAPI's limit for these operations):
a plain record of what each node does, checked again here so that a node made by name cannot read outside its
input. Data movement copies raw values, so inputs and outputs share a quantization; padding a uint8 tensor
writes its zero point (the real value 0).
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import axis_reduction, nhwc_resampling, rearrange, reduction
from ...kernels.openvx import transpose
from ...kernels.support import native
from .common import F32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

MAX_RANK = 4
AXES = range(MAX_RANK)


def _per_axis(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in AXES)


def _values(args: Args, prefix: str, rank: int) -> list[int]:
    return [int(args[f"{prefix}{i}"]) for i in range(rank)]


def _input(args: Args, ranks=(1, 2, 3, 4)) -> tuple[tuple[int, ...], np.dtype]:
    return rank_in(args, "input", ranks), dtype_in(args, "input", (F32, U8, np.dtype(np.float16)))


def _pad_value(args: Args):
    """The raw value of a real 0: the zero point of a uint8 input, else 0."""
    quant = args.quant("input")
    return 0 if quant is None else quant[1]


# -- TRANSPOSE -------------------------------------------------------------------------------------------------
PERM = _per_axis("perm")


def _infer_transpose(args: Args):
    shape, dtype = _input(args)
    perm = _values(args, "perm", len(shape))
    require(sorted(perm) == list(range(len(shape))), "perm0", f"perm {perm} is not a permutation of the "
            f"{len(shape)} axes", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (tuple(shape[p] for p in perm), dtype)}


def _run_transpose(args: Args) -> None:
    """Output axis i is input axis perm[i]."""
    rearrange.permute(args["input"], args["output"], _values(args, "perm", args["input"].ndim))


nnapi_kernel(NNAPIKernel("transpose", 37, ("input",), ("output",), _infer_transpose, _run_transpose, ints=PERM))


# -- PAD -------------------------------------------------------------------------------------------------------
PADS = _per_axis("before") + _per_axis("after")


def _infer_pad(args: Args):
    shape, dtype = _input(args)
    before, after = _values(args, "before", len(shape)), _values(args, "after", len(shape))
    require(min(before + after) >= 0, "before0", f"paddings {before} before and {after} after must not be "
            "negative", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (tuple(b + d + a for b, d, a in zip(before, shape, after)), dtype)}


def _run_pad(args: Args) -> None:
    """out = input with ``before[i]`` zeros (a uint8 tensor's zero point) ahead of axis i, ``after[i]`` behind."""
    x = args["input"]
    rearrange.pad(x, args["output"], _values(args, "before", x.ndim), "constant", _pad_value(args))


def _native_pad(args: Args):
    """The pad as native copies: the value into each slab of the output around the input's place (each padded
    value written once: BlazeFace's channel pads write a few channels per pixel, not the whole output twice), then
    the input into its place. A pad of the last axis is written with the input, each line once in order
    (``transpose.native_margin_entry``), where its lines are runs."""
    x, out = args["input"], args["output"]
    before = _values(args, "before", x.ndim)
    inside = tuple(slice(b, b + n) for b, n in zip(before, x.shape))
    value = np.full((1,) * out.ndim, _pad_value(args), out.dtype)
    last = out.ndim - 1
    lines = None
    if out.shape[last] != x.shape[last]:
        lines = transpose.native_margin_entry(x, out[inside[:last]], before[last], value.item())
    entries = []
    for axis in range(last if lines is not None else out.ndim):  # slabs: the input's place on the axes before,
        for pad in (slice(0, before[axis]), slice(before[axis] + x.shape[axis], out.shape[axis])):  # a pad here
            slab = out[inside[:axis] + (pad,)]
            if slab.size:
                entries.append(transpose.native_entry(value, slab, 0, 0))
    entries.append(lines if lines is not None else transpose.native_entry(x, out[inside], 0, 0))
    return None if any(e is None for e in entries) else native.sequence(entries)


nnapi_kernel(NNAPIKernel("pad", 32, ("input",), ("output",), _infer_pad, _run_pad, ints=PADS,
                         quantized=("input",), native=_native_pad))


# -- STRIDED_SLICE ---------------------------------------------------------------------------------------------
SLICE = _per_axis("begin") + _per_axis("stride") + _per_axis("size") + ("shrink",)


def _slice_sizes(args: Args) -> tuple[list[int], list[int], list[int]]:
    shape, _ = _input(args)
    rank = len(shape)
    begin, stride, size = (_values(args, p, rank) for p in ("begin", "stride", "size"))
    for i in range(rank):
        last = begin[i] + (size[i] - 1) * stride[i]
        require(size[i] >= 1 and stride[i] != 0 and 0 <= begin[i] < shape[i] and 0 <= last < shape[i],
                f"begin{i}", f"axis {i}: {size[i]} elements from {begin[i]} by {stride[i]} do not lie in "
                f"0..{shape[i] - 1}", Status.VX_ERROR_INVALID_VALUE)
    return begin, stride, size


def _infer_strided_slice(args: Args):
    size = _slice_sizes(args)[2]
    shrink = int(args["shrink"])
    require(0 <= shrink < 1 << len(size), "shrink", f"shrink mask {shrink} names axes beyond the rank "
            f"{len(size)}", Status.VX_ERROR_INVALID_VALUE)
    for i in range(len(size)):
        require(not shrink >> i & 1 or size[i] == 1, "shrink", f"axis {i} is shrunk but its slice has "
                f"{size[i]} elements, expected 1", Status.VX_ERROR_INVALID_VALUE)
    # every axis shrunk: one element of shape [1] (an NNAPI tensor has at least one dimension)
    kept = tuple(s for i, s in enumerate(size) if not shrink >> i & 1) or (1,)
    return {"output": (kept, args["input"].dtype)}


def _run_strided_slice(args: Args) -> None:
    """out[k] = input[begin + k * stride] on every axis; shrunk axes (one element) are dropped."""
    x, out = args["input"], args["output"]
    rank = x.ndim
    sizes = _values(args, "size", rank)
    full = np.empty(sizes, out.dtype)
    rearrange.strided_slice(x, full, _values(args, "begin", rank), _values(args, "stride", rank))
    out[...] = full.reshape(out.shape)


def _native_strided_slice(args: Args):
    """The copy from the input's strided view as a native entry."""
    x, out = args["input"], args["output"]
    rank = x.ndim
    begin, stride, size = (_values(args, p, rank) for p in ("begin", "stride", "size"))
    view = rearrange.strided_view(x, begin, stride, size).reshape(out.shape)
    if not np.may_share_memory(view, x):  # the reshape copied: the entry would read a stale copy
        return None
    return transpose.native_entry(view, out, 0, 0)


nnapi_kernel(NNAPIKernel("strided_slice", 35, ("input",), ("output",), _infer_strided_slice, _run_strided_slice,
                         ints=SLICE, native=_native_strided_slice))


# -- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND ----------------------------------------------------------------------
BLOCK = ("block_height", "block_width")
SPACE_PADS = ("pad_top", "pad_bottom", "pad_left", "pad_right")


def _block(args: Args) -> tuple[int, int]:
    bh, bw = int(args["block_height"]), int(args["block_width"])
    require(bh >= 1 and bw >= 1, "block_height", f"block sizes {[bh, bw]} must be at least 1",
            Status.VX_ERROR_INVALID_VALUE)
    return bh, bw


def _infer_space_to_batch(args: Args):
    (n, h, w, c), dtype = _input(args, (4,))
    bh, bw = _block(args)
    top, bottom, left, right = (int(args[p]) for p in SPACE_PADS)
    require(min(top, bottom, left, right) >= 0, "pad_top", f"paddings {[top, bottom, left, right]} must not be "
            "negative", Status.VX_ERROR_INVALID_VALUE)
    ph, pw = h + top + bottom, w + left + right
    require(ph % bh == 0 and pw % bw == 0, "block_height", f"the padded height {ph} and width {pw} must be "
            f"multiples of the block sizes {[bh, bw]}", Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n * bh * bw, ph // bh, pw // bw, c), dtype)}


def _run_space_to_batch(args: Args) -> None:
    """Blocks of the zero-padded input moved to the batch (``nhwc_resampling.space_to_batch``)."""
    nhwc_resampling.space_to_batch(args["input"], args["output"], _block(args),
                                   tuple(int(args[p]) for p in SPACE_PADS), _pad_value(args))


nnapi_kernel(NNAPIKernel("space_to_batch_nd", 33, ("input",), ("output",), _infer_space_to_batch,
                         _run_space_to_batch, ints=BLOCK + SPACE_PADS, quantized=("input",)))


def _infer_batch_to_space(args: Args):
    (n, h, w, c), dtype = _input(args, (4,))
    bh, bw = _block(args)
    require(n % (bh * bw) == 0, "block_height", f"the batch {n} must be a multiple of the block's {bh} x {bw}",
            Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n // (bh * bw), h * bh, w * bw, c), dtype)}


def _run_batch_to_space(args: Args) -> None:
    """The batch's blocks moved back into space (``nhwc_resampling.batch_to_space``)."""
    nhwc_resampling.batch_to_space(args["input"], args["output"], _block(args))


nnapi_kernel(NNAPIKernel("batch_to_space_nd", 29, ("input",), ("output",), _infer_batch_to_space,
                         _run_batch_to_space, ints=BLOCK))


# -- MEAN ------------------------------------------------------------------------------------------------------
def _reduced(args: Args) -> list[int]:
    mask = int(args["axes"])
    rank = len(args["input"].shape)
    require(0 < mask < 1 << rank, "axes", f"axes mask {mask} must name at least one of the {rank} axes",
            Status.VX_ERROR_INVALID_VALUE)
    return [i for i in range(rank) if mask >> i & 1]


def _infer_mean(args: Args):
    shape, dtype = _input(args)
    axes = _reduced(args)
    if args["keep_dims"]:
        out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:  # every axis reduced: one element of shape [1], as NNAPI's later reductions define it
        out = tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)
    return {"output": (out, dtype)}


def _run_mean(args: Args) -> None:
    """The mean over the axes of ``axes`` (a bit mask): float32 in float64, rounded once; uint8 on the raw
    values (input and output share a quantization), the exact sum divided and rounded once, half to even."""
    x, out = args["input"], args["output"]
    axes = _reduced(args)
    if x.dtype == U8:
        reduction.mean_of_integers(x, out, axes)
    elif x.dtype == F32:
        axis_reduction.reduce(x, out, axes, "mean")
    else:
        reduction.reduce(x, out, axes, "mean")


def _native_mean(args: Args):
    """float32: the compiled reduction's native entry (uint8's exact integer mean stays on the Python path)."""
    if args["input"].dtype != F32:
        return None
    return axis_reduction.native_entry(args["input"], args["output"], _reduced(args), "mean")


nnapi_kernel(NNAPIKernel("mean", 31, ("input",), ("output",), _infer_mean, _run_mean, ints=("axes", "keep_dims"),
                         native=_native_mean))
