"""NNAPI CONCATENATION, DEPTH_TO_SPACE, SPACE_TO_DEPTH, RESHAPE and
RESIZE_BILINEAR as OpenVX kernels."""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import gather, nhwc_resampling
from ...kernels.openvx import transpose
from ...kernels.support import native
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

F16 = np.dtype(np.float16)
MAX_CONCAT = 16
CONCAT_INPUTS = tuple(f"input{i}" + ("?" if i else "") for i in range(MAX_CONCAT))


def _concat_inputs(args: Args) -> list[str]:
    return [n.rstrip("?") for n in CONCAT_INPUTS if args.get(n.rstrip("?")) is not None]


def _infer_concat(args: Args):
    names = _concat_inputs(args)
    first = args["input0"]
    dtype = dtype_in(args, "input0", (F32, U8, I32))
    axis = args["axis"]
    rank = len(first.shape)
    require(0 <= axis < rank, "axis", f"axis {axis} is out of range for rank {rank}", Status.VX_ERROR_INVALID_VALUE)
    total = 0
    for name in names:
        dtype_in(args, name, (dtype,))
        shape = tuple(args[name].shape)
        same = len(shape) == rank and all(s == f for i, (s, f) in enumerate(zip(shape, first.shape)) if i != axis)
        require(same, name, f"{name} has shape {list(shape)}, which differs from input0's "
                f"{list(first.shape)} outside axis {axis}")
        total += shape[axis]
    out = list(first.shape)
    out[axis] = total
    return {"output": (tuple(out), dtype)}


def _run_concat(args: Args) -> None:
    """out = the inputs joined along ``axis`` (rescaled where a quantization differs)."""
    names = _concat_inputs(args)
    gather.concatenate([args[n] for n in names], args["output"], args["axis"],
                       [args.quant(n) for n in names], args.quant("output"))


def _native_concat(args: Args):
    """One native copy per input into its slice of the output, where no input needs rescaling."""
    names = _concat_inputs(args)
    out, axis = args["output"], args["axis"]
    if any(args.quant(n) != args.quant("output") for n in names):
        return None
    copies, start = [], 0
    for name in names:
        x = args[name]
        place = [slice(None)] * out.ndim
        place[axis] = slice(start, start + x.shape[axis])
        copies.append(transpose.native_entry(x, out[tuple(place)], 0, 0))
        start += x.shape[axis]
    return None if any(c is None for c in copies) else native.sequence(copies)


nnapi_kernel(NNAPIKernel("concatenation", 2, CONCAT_INPUTS, ("output",), _infer_concat, _run_concat,
                         ints=("axis",), quantized=tuple(n.rstrip("?") for n in CONCAT_INPUTS) + ("output",),
                         native=_native_concat))


def _infer_depth_to_space(args: Args):
    n, h, w, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F32, U8, F16))
    bs = args["block_size"]
    require(bs >= 1 and c % (bs * bs) == 0, "block_size",
            f"block_size {bs}: its square must divide the depth {c}", Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n, h * bs, w * bs, c // (bs * bs)), dtype)}


def _infer_space_to_depth(args: Args):
    n, h, w, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F32, U8, F16))
    bs = args["block_size"]
    require(bs >= 1 and h % bs == 0 and w % bs == 0, "block_size",
            f"block_size {bs} must divide the height {h} and width {w}", Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n, h // bs, w // bs, c * bs * bs), dtype)}


def _run_depth_to_space(args: Args) -> None:
    """Depth moved into block_size x block_size spatial blocks."""
    nhwc_resampling.depth_to_space(args["input"], args["output"], args["block_size"])


def _run_space_to_depth(args: Args) -> None:
    """block_size x block_size spatial blocks moved into depth."""
    nhwc_resampling.space_to_depth(args["input"], args["output"], args["block_size"])


def _native_depth_to_space(args: Args):
    """The rearrangement as one native copy (the transpose kernel's) of the input seen as
    ``[n, h, w, bs, bs, c]``, its two block axes moved beside the rows and columns they index, so a graph with a
    transposed convolution written as a 1 x 1 convolution and this node still runs from C; None where either side
    cannot be seen in those six axes without a copy."""
    x, out, bs = args["input"], args["output"], args["block_size"]
    n, h, w, c = x.shape
    depth = c // (bs * bs)
    try:
        source = np.reshape(x, (n, h, w, bs, bs, depth), copy=False).transpose(0, 1, 3, 2, 4, 5)
        target = np.reshape(out, (n, h, bs, w, bs, depth), copy=False)
    except ValueError:
        return None
    return transpose.native_entry(source, target, 0, 0)


nnapi_kernel(NNAPIKernel("depth_to_space", 5, ("input",), ("output",), _infer_depth_to_space, _run_depth_to_space,
                         ints=("block_size",), native=_native_depth_to_space))
nnapi_kernel(NNAPIKernel("space_to_depth", 26, ("input",), ("output",), _infer_space_to_depth, _run_space_to_depth,
                         ints=("block_size",)))


def _infer_reshape(args: Args):
    """The output's shape is the one declared for it (the lowering resolves a -1); the sizes must agree."""
    dtype = dtype_in(args, "input", (F32, U8, I32, F16))
    out = args.get("output")
    require(out is not None and all(out.shape), "output", "reshape needs an output of known shape")
    size_in = size_out = 1
    for d in args["input"].shape:
        size_in *= d
    for d in out.shape:
        size_out *= d
    require(size_in == size_out, "output", f"output shape {list(out.shape)} holds {size_out} elements, "
            f"the input {size_in}")
    return {"output": (tuple(out.shape), dtype)}


def _run_reshape(args: Args) -> None:
    """out = input's elements in row-major order under the output's shape."""
    gather.flat_copy(args["input"], args["output"])


def _native_reshape(args: Args):
    """The copy as a native entry (a contiguous input read under the output's shape)."""
    x, out = args["input"], args["output"]
    if not x.flags.c_contiguous:
        return None
    return transpose.native_entry(x.reshape(out.shape), out, 0, 0)


nnapi_kernel(NNAPIKernel("reshape", 22, ("input",), ("output",), _infer_reshape, _run_reshape,
                         native=_native_reshape))


def _infer_resize(args: Args):
    n, _h, _w, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F32, U8, F16))
    ow, oh = args["width"], args["height"]
    require(ow >= 1 and oh >= 1, "width", f"output size {ow} x {oh} must be positive", Status.VX_ERROR_INVALID_VALUE)
    return {"output": ((n, oh, ow, c), dtype)}


def _run_resize(args: Args) -> None:
    """Bilinear resize to width x height (source = destination * in / out), interpolated in float64 and stored
    once (float16: each output rounded once). uint8 quantized alike in and out is interpolated on the raw values
    and rounded to nearest, halves to even (no scale/unscale round trip to blur a tie)."""
    quant_in, quant_out = args.quant("input"), args.quant("output")
    if quant_in is not None and quant_in == quant_out:
        quant_in = quant_out = (1.0, 0)
    nhwc_resampling.resize_bilinear(args["input"], args["output"], quant_in, quant_out)


nnapi_kernel(NNAPIKernel("resize_bilinear", 23, ("input",), ("output",), _infer_resize, _run_resize,
                         ints=("width", "height"), quantized=("input", "output")))
