"""NNAPI 1.2's data movement and selection as OpenVX kernels: ARGMAX, ARGMIN, GATHER, SLICE (SPLIT is one per
part), TILE, TOPK_V2, PAD_V2, CHANNEL_SHUFFLE and RESIZE_NEAREST_NEIGHBOR.

Parameter tensors (slice bounds, multiples, paddings) are constants the lowering reads and gives as INT32
scalars, one per axis (rank at most 6); raw values are moved, so a uint8 output shares its input's
quantization (the lowering checks it). GATHER's indices are data: read at run time, checked against the axis.
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import axis_reduction, gather, nhwc_resampling, ordering, rearrange, reduction
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require
from .movement import PADS, _infer_pad, _values

MAX_RANK = 6
RANKS = tuple(range(1, MAX_RANK + 1))
F16 = np.dtype(np.float16)
TYPES = (F16, F32, I32, U8)


def per_axis(prefix: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(MAX_RANK))


def _axis(args: Args, rank: int, name: str = "axis") -> int:
    axis = int(args[name])
    require(0 <= axis < rank, name, f"{name} {axis} is outside 0..{rank - 1}", Status.VX_ERROR_INVALID_VALUE)
    return axis


# -- ARGMAX, ARGMIN ----------------------------------------------------------------------------------------------
def _infer_arg(args: Args):
    shape = rank_in(args, "input", RANKS)
    dtype_in(args, "input", TYPES)
    axis = _axis(args, len(shape))
    require(shape[axis] >= 1, "input", "input is empty along the axis")
    return {"output": (tuple(d for i, d in enumerate(shape) if i != axis) or (1,), I32)}


def _arg(operation: str):
    def run(args: Args) -> None:
        # the compiled reduction loop (float16, which numba does not compile, in NumPy: the same positions)
        kernel = reduction if args["input"].dtype == F16 else axis_reduction
        kernel.reduce(args["input"], args["output"], [int(args["axis"])], operation)
    run.__doc__ = f"out = the index of the first {operation[3:]}imum along ``axis`` (raw values compared)."
    return run


def _native_arg(operation: str):
    def native(args: Args):
        if args["input"].dtype == F16:
            return None
        return axis_reduction.native_entry(args["input"], args["output"], [int(args["axis"])], operation)
    return native


nnapi_kernel(NNAPIKernel("argmax", 39, ("input",), ("output",), _infer_arg, _arg("argmax"), ints=("axis",),
                         native=_native_arg("argmax")))
nnapi_kernel(NNAPIKernel("argmin", 40, ("input",), ("output",), _infer_arg, _arg("argmin"), ints=("axis",),
                         native=_native_arg("argmin")))


# -- GATHER ------------------------------------------------------------------------------------------------------
def _infer_gather(args: Args):
    shape = rank_in(args, "input", RANKS)
    dtype = dtype_in(args, "input", TYPES)
    dtype_in(args, "indices", (I32,))
    axis = _axis(args, len(shape))
    out = shape[:axis] + tuple(args["indices"].shape) + shape[axis + 1:]
    require(len(out) <= MAX_RANK, "indices", f"the result has rank {len(out)}, at most {MAX_RANK} is allowed")
    return {"output": (out, dtype)}


def _run_gather(args: Args) -> None:
    """out = input indexed along ``axis`` by every index; an index outside 0..n-1 fails the run."""
    gather.gather_axis(args["input"], args["indices"], args["output"], int(args["axis"]))


def _native_gather(args: Args):
    """The gather loop's entry: an index out of range fails the native run (VX_ERROR_INVALID_VALUE), and the
    graph's next run takes the Python path, which names the index."""
    return gather.native_gather_axis(args["input"], args["indices"], args["output"], int(args["axis"]),
                                     Status.VX_ERROR_INVALID_VALUE)


nnapi_kernel(NNAPIKernel("gather", 51, ("input", "indices"), ("output",), _infer_gather, _run_gather,
                         ints=("axis",), native=_native_gather))


# -- SLICE -------------------------------------------------------------------------------------------------------
def _infer_slice(args: Args):
    shape = rank_in(args, "input", RANKS)
    dtype = dtype_in(args, "input", TYPES)
    begin, size = _values(args, "begin", len(shape)), _values(args, "size", len(shape))
    for i, d in enumerate(shape):
        require(size[i] >= 1 and 0 <= begin[i] and begin[i] + size[i] <= d, f"begin{i}",
                f"axis {i}: {size[i]} elements from {begin[i]} do not lie in 0..{d - 1}", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (tuple(size), dtype)}


def _run_slice(args: Args) -> None:
    """out = input[begin : begin + size] on every axis."""
    x = args["input"]
    rearrange.strided_slice(x, args["output"], _values(args, "begin", x.ndim), [1] * x.ndim)


nnapi_kernel(NNAPIKernel("slice", 86, ("input",), ("output",), _infer_slice, _run_slice,
                         ints=per_axis("begin") + per_axis("size")))


# -- TILE --------------------------------------------------------------------------------------------------------
def _infer_tile(args: Args):
    shape = rank_in(args, "input", RANKS)
    dtype = dtype_in(args, "input", TYPES)
    multiples = _values(args, "multiple", len(shape))
    require(min(multiples) >= 1, "multiple0", f"multiples {multiples} must be at least 1",
            Status.VX_ERROR_INVALID_VALUE)
    return {"output": (tuple(d * m for d, m in zip(shape, multiples)), dtype)}


def _run_tile(args: Args) -> None:
    """out = input repeated ``multiple[i]`` times along axis i."""
    rearrange.tile(args["input"], args["output"])


nnapi_kernel(NNAPIKernel("tile", 89, ("input",), ("output",), _infer_tile, _run_tile, ints=per_axis("multiple")))


# -- TOPK_V2 -----------------------------------------------------------------------------------------------------
def _infer_topk(args: Args):
    shape = rank_in(args, "input", RANKS)
    dtype = dtype_in(args, "input", TYPES)
    k = int(args["k"])
    require(1 <= k <= shape[-1], "k", f"k {k} is outside 1..{shape[-1]} (the last axis)",
            Status.VX_ERROR_INVALID_VALUE)
    out = shape[:-1] + (k,)
    return {"values": (out, dtype), "indices": (out, I32)}


def _run_topk(args: Args) -> None:
    """The k largest of each last-axis line, in descending order; of equal values the larger index first."""
    x = args["input"]
    n = x.shape[-1]
    # the stable sort keeps equal values in input order: sorting the reversed line puts the larger index first
    ordering.sort_first(x[..., ::-1], int(args["k"]), x.ndim - 1, True, args["values"], args["indices"])
    args["indices"][...] = n - 1 - args["indices"]


nnapi_kernel(NNAPIKernel("topk_v2", 90, ("input",), ("values", "indices"), _infer_topk, _run_topk, ints=("k",)))


# -- PAD_V2 ------------------------------------------------------------------------------------------------------
def _run_pad_v2(args: Args) -> None:
    """out = input with ``before[i]`` values ``value`` ahead of axis i and ``after[i]`` behind (uint8: ``value``
    is the raw quantized value)."""
    x = args["input"]
    rearrange.pad(x, args["output"], _values(args, "before", x.ndim), "constant", args["value"])


nnapi_kernel(NNAPIKernel("pad_v2", 69, ("input",), ("output",), _infer_pad, _run_pad_v2, ints=PADS,
                         floats=("value",)))


# -- CHANNEL_SHUFFLE ---------------------------------------------------------------------------------------------
def _infer_shuffle(args: Args):
    shape = rank_in(args, "input", (1, 2, 3, 4))
    dtype = dtype_in(args, "input", (F16, F32, U8))
    axis, groups = _axis(args, len(shape)), int(args["groups"])
    require(groups >= 1 and shape[axis] % groups == 0, "groups", f"{groups} groups do not divide the "
            f"{shape[axis]} channels of axis {axis}", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (shape, dtype)}


def _run_shuffle(args: Args) -> None:
    """out channel k * groups + g = input channel g * (n / groups) + k along ``axis``."""
    rearrange.channel_shuffle(args["input"], args["output"], int(args["groups"]), int(args["axis"]))


nnapi_kernel(NNAPIKernel("channel_shuffle", 46, ("input",), ("output",), _infer_shuffle, _run_shuffle,
                         ints=("groups", "axis")))


# -- RESIZE_NEAREST_NEIGHBOR -------------------------------------------------------------------------------------
def _infer_nearest(args: Args):
    shape = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F16, F32, U8))
    ow, oh = int(args["width"]), int(args["height"])
    require(ow >= 1 and oh >= 1, "width", f"output size {ow} x {oh} must be positive", Status.VX_ERROR_INVALID_VALUE)
    n, c = (shape[0], shape[1]) if args["nchw"] else (shape[0], shape[3])
    return {"output": ((n, c, oh, ow) if args["nchw"] else (n, oh, ow, c), dtype)}


def _run_nearest(args: Args) -> None:
    """out = the input pixel at floor(destination * in / out), clamped (NHWC, or NCHW when ``nchw``)."""
    x, out = args["input"], args["output"]
    if args["nchw"]:
        x, out = x.transpose(0, 2, 3, 1), out.transpose(0, 2, 3, 1)
    nhwc_resampling.resize_nearest(x, out)


nnapi_kernel(NNAPIKernel("resize_nearest_neighbor", 94, ("input",), ("output",), _infer_nearest, _run_nearest,
                         ints=("width", "height", "nchw")))
