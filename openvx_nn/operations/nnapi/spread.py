"""The input of a uint8 TRANSPOSE_CONV_2D spread onto the grid its strides make: the data movement that turns a
transposed convolution into a plain one on the integer engine (``nnapi/lowering/quant8_convolution_1_2``).

Input pixel (y, x) lands at (offset_top + y * stride_h, offset_left + x * stride_w) of an NHWC output of
``out_h`` x ``out_w``; every other position holds the input's zero point (the real value 0, so it adds nothing to
a sum of offsets); pixels that land outside are dropped.
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.openvx import transpose
from ...kernels.support import native
from .common import U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

SPREAD_INDEX = 0x802
"""Beyond every NNAPI operation code: the kernel is this library's own."""
INTS = ("stride_h", "stride_w", "offset_top", "offset_left", "out_h", "out_w")


def _infer(args: Args):
    n, _, _, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (U8,))
    require(min(args["stride_h"], args["stride_w"]) >= 1, "stride_h", f"strides {args['stride_h']}, "
            f"{args['stride_w']} must be at least 1", Status.VX_ERROR_INVALID_VALUE)
    require(min(args["out_h"], args["out_w"]) >= 1, "out_h", f"output extent {args['out_h']} x {args['out_w']} "
            "must be at least 1 x 1", Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n, args["out_h"], args["out_w"], c), dtype)}


def _axis(size: int, stride: int, offset: int, extent: int) -> tuple[slice, slice]:
    """(input rows kept, output rows they land on) along one axis: those with 0 <= offset + i * stride < extent."""
    first = 0 if offset >= 0 else (stride - 1 - offset) // stride
    last = min(size, (extent - 1 - offset) // stride + 1) if offset < extent else 0
    if last <= first:
        return slice(0, 0), slice(0, 0)
    return slice(first, last), slice(offset + first * stride, offset + (last - 1) * stride + 1, stride)


def _views(args: Args) -> tuple[np.ndarray, np.ndarray]:
    x, out = args["input"], args["output"]
    rows_in, rows_out = _axis(x.shape[1], args["stride_h"], args["offset_top"], out.shape[1])
    cols_in, cols_out = _axis(x.shape[2], args["stride_w"], args["offset_left"], out.shape[2])
    return x[:, rows_in, cols_in], out[:, rows_out, cols_out]


def _zero_point(args: Args) -> int:
    return args.quant("input")[1]


def _run(args: Args) -> None:
    """out = the input's zero point everywhere, then input pixel (y, x) at (top + y * sh, left + x * sw)."""
    source, target = _views(args)
    args["output"][...] = _zero_point(args)
    target[...] = source


def _native(args: Args):
    """Two native copies: the zero point over the whole output, then the input onto its grid."""
    out = args["output"]
    source, target = _views(args)
    fill = transpose.native_entry(np.full((1,) * out.ndim, _zero_point(args), out.dtype), out, 0, 0)
    if fill is None or source.size == 0:
        return fill
    copy = transpose.native_entry(source, target, 0, 0)
    return None if copy is None else native.sequence([fill, copy])


nnapi_kernel(NNAPIKernel("spread_2d", SPREAD_INDEX, ("input",), ("output",), _infer, _run, ints=INTS,
                         quantized=("input",), native=_native))
