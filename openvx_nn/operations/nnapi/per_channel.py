"""NNAPI's uint8 CONV_2D and DEPTHWISE_CONV_2D with a TENSOR_QUANT8_SYMM_PER_CHANNEL filter (API level 29): int8
weights with one scale per output channel, handed to the kernel as a float32 tensor the lowering makes.

Each channel is requantized by NNAPI's multiplier and shift of ``s_in * s_filter[o] / s_out``. Planned at bind
on the uint8 layers' engines (a convolution on ``engine/nhwc``, a depthwise one on ``quant8_depthwise``, each
with a multiplier and shift per channel); the unplanned run is ``kernels/frontend/nhwc_convolution``'s exact
loop, which those engines match bit for bit.
"""
from __future__ import annotations

import numpy as np

from ...kernels.frontend import nhwc_convolution as conv
from ...kernels.frontend import quant8_convolution, quant8_depthwise
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require
from .convolution import WINDOW, _activation, _native_quant8, _pads, _replanned, window_extent

I8 = np.dtype(np.int8)
PER_CHANNEL_INDEX = 0x801
"""Beyond every NNAPI operation code: the kernel is this library's own (CONV_2D's and DEPTHWISE_CONV_2D's
per-channel form)."""


def _infer(args: Args):
    n, h, w, c = rank_in(args, "input", (4,))
    dtype_in(args, "input", (U8,))
    dtype_in(args, "filter", (I8,))
    first, kh, kw, last = rank_in(args, "filter", (4,))
    m = args["depth_multiplier"]
    if m:
        require(first == 1 and last == c * m, "filter", f"filter shape {[first, kh, kw, last]} does not fit input "
                f"depth {c} times depth multiplier {m}")
        units = last
    else:
        require(last == c, "filter", f"filter depth {last} differs from the input depth {c}")
        units = first
    dtype_in(args, "scales", (F32,))
    require(tuple(args["scales"].shape) == (units,), "scales", f"{args['scales'].shape[0]} scales for {units} "
            "output channels")
    if args.get("bias") is not None:
        dtype_in(args, "bias", (I32,))
        require(tuple(args["bias"].shape) == (units,), "bias", f"bias has shape {list(args['bias'].shape)}, "
                f"expected [{units}]")
    _activation(args)
    return {"output": ((n, window_extent(args, h, kh, "h"), window_extent(args, w, kw, "w"), units), U8)}


def _run(args: Args) -> None:
    """out[b, y, x, o] = requantize_o(bias[o] + sum (x - zero point) * filter), one multiplier per channel."""
    pads, strides = _pads(args)
    conv.conv2d_per_channel(args["input"], args["filter"], args.get("bias"), args["output"], pads, strides,
                            args["depth_multiplier"], args["activation"], args.quant("input"), args["scales"],
                            args.quant("output"))


def _plan(args: Args):
    """The layer's planner: the integer engine (convolution) or the depthwise kernel, per-channel."""
    (pads, strides), m, act = _pads(args), args["depth_multiplier"], args["activation"]
    x, out, q_in, q_out = args["input"], args["output"], args.quant("input"), args.quant("output")
    if m:
        return lambda: quant8_depthwise.prepare_depthwise(args["filter"], args.get("bias"), out.shape, pads, strides,
                                                          m, act, q_in, None, q_out, scales=args["scales"])
    return lambda: quant8_convolution.prepare_conv_per_channel(args["filter"], args.get("bias"), x.shape, out.shape,
                                                               pads, strides, act, q_in, args["scales"], q_out)


def _prepare(args: Args):
    return _replanned(args, _plan(args), ("filter", "bias", "scales"))


nnapi_kernel(NNAPIKernel("conv_2d_per_channel", PER_CHANNEL_INDEX, ("input", "filter", "bias?", "scales"),
                         ("output",), _infer, _run, ints=WINDOW + ("depth_multiplier", "activation"),
                         quantized=("input", "output"), prepare=_prepare, native=_native_quant8(_plan)))
