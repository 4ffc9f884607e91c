"""NNAPI's float convolutions that the NHWC float engine does not take directly: GROUPED_CONV_2D, and CONV_2D and
DEPTHWISE_CONV_2D when API level 29 gives them dilation, the NCHW layout or float16, on
``kernels/frontend/grouped_convolution`` (the float32 grouped convolution CoreML's layers run on); and
TRANSPOSE_CONV_2D, on ``kernels/frontend/transposed_phases`` (the float engine's convolutions of its output
phases, the route of the standard vxDeconvolutionLayer).

A float32 NHWC ``grouped_conv_2d`` of one group with a dense filter -- a dilated CONV_2D, and the dilated
convolutions CoreML's NHWC route lowers here (DeepLab's atrous layers) -- runs instead on the NHWC float engine
(``float_convolution``, which takes dilation), filter packed once, with its native entry; one with a depthwise
filter of one group per input channel (a dilated DEPTHWISE_CONV_2D, a dilated depthwise CoreML layer) on the
depthwise kernel (``float_depthwise``, which takes dilation too).

The grouped kernel works on channel-major planes: an NCHW tensor is its input as it is; an NHWC one is read through
a transposed view (the kernel copies a strided input per call, and writes a strided output through a scratch).
Filters are rearranged once at bind: ``[O, kh, kw, C/groups]`` (CONV_2D, GROUPED_CONV_2D) or ``[1, kh, kw, O]``
(DEPTHWISE_CONV_2D: one group per input channel). TRANSPOSE_CONV_2D's ``[O, kh, kw, C]`` is split into its phases'
sub-kernels at bind; its NHWC tensors are the engine's own order, an NCHW input is copied channels-last per call.

float16: inputs, filter and bias widened to float32 (exactly), computed in float32 as the float32 path is, each
output rounded once to float16.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import float_convolution as fconv
from ...kernels.frontend import float_depthwise as fdepthwise
from ...kernels.frontend import grouped_convolution as grouped
from ...kernels.frontend import transposed_phases as phases
from .common import F32, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require
from .convolution import _Bound, _float_bias, packed_filter

F16 = np.dtype(np.float16)
FLOATS = (F32, F16)
Runner = Callable[[], None]

CONV, DEPTHWISE = 0, 1
"""``filter_kind``: ``[O, kh, kw, C/groups]`` or ``[1, kh, kw, O]``."""
CLIPS = {0: None, 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}
"""Fused activation -> the (low, high) the result is clipped to."""
GROUPED_INTS = ("pad_left", "pad_right", "pad_top", "pad_bottom", "stride_w", "stride_h", "dilation_w",
                "dilation_h", "groups", "filter_kind", "activation", "nchw")
TRANSPOSED_INTS = ("pad_left", "pad_top", "stride_w", "stride_h", "out_w", "out_h", "activation", "nchw")


def _planes(shape: tuple[int, ...], nchw: int) -> tuple[int, int, int, int]:
    """(batches, channels, height, width) of an NNAPI shape in its layout."""
    n, a, b, c = shape
    return (n, a, b, c) if nchw else (n, c, a, b)


def _shaped(n: int, c: int, h: int, w: int, nchw: int) -> tuple[int, int, int, int]:
    return (n, c, h, w) if nchw else (n, h, w, c)


def _openvx_order(a: np.ndarray, nchw: int) -> np.ndarray:
    """``a`` (NNAPI-shaped) as the kernel's ``[W, H, C, N]`` view."""
    return a.T if nchw else a.transpose(0, 3, 1, 2).T


def _check_common(args: Args, units: int) -> np.dtype:
    dtype = dtype_in(args, "input", FLOATS)
    dtype_in(args, "filter", (dtype,))
    bias = args.get("bias")
    if bias is not None:
        dtype_in(args, "bias", (dtype,))
        require(tuple(bias.shape) == (units,), "bias", f"bias has shape {list(bias.shape)}, expected [{units}]")
    require(args["activation"] in CLIPS, "activation", f"fused activation {args['activation']} is not NONE, RELU, "
            "RELU1 or RELU6", Status.VX_ERROR_INVALID_VALUE)
    return dtype


def _at_least(args: Args, names: tuple[str, ...], low: int) -> None:
    for name in names:
        require(args[name] >= low, name, f"{name} is {args[name]}, expected at least {low}", Status.VX_ERROR_INVALID_VALUE)


def _infer_grouped(args: Args):
    n, c, h, w = _planes(rank_in(args, "input", (4,)), args["nchw"])
    filt = rank_in(args, "filter", (4,))
    _at_least(args, ("stride_w", "stride_h", "dilation_w", "dilation_h", "groups"), 1)
    _at_least(args, ("pad_left", "pad_right", "pad_top", "pad_bottom"), 0)
    groups = args["groups"]
    if args["filter_kind"] == DEPTHWISE:
        one, kh, kw, o = filt
        require(one == 1 and o % c == 0 and groups == c, "filter",
                f"filter shape {list(filt)} does not fit a depthwise convolution of {c} channels")
    else:
        o, kh, kw, cg = filt
        require(c % groups == 0 and o % groups == 0 and cg * groups == c, "filter",
                f"filter shape {list(filt)} does not fit {c} input channels in {groups} groups")
    dtype = _check_common(args, o)
    out = []
    for size, k, axis in ((h, kh, "h"), (w, kw, "w")):
        before, after = (args["pad_top"], args["pad_bottom"]) if axis == "h" else (args["pad_left"], args["pad_right"])
        extent = size + before + after - ((k - 1) * args[f"dilation_{axis}"] + 1)
        require(extent >= 0 and k >= 1, "input", f"a dilated window of {k} does not fit an extent of {size} "
                f"padded by {before} + {after}")
        out.append(extent // args[f"stride_{axis}"] + 1)
    return {"output": (_shaped(n, o, out[0], out[1], args["nchw"]), dtype)}


def _infer_transposed(args: Args):
    n, c, _, _ = _planes(rank_in(args, "input", (4,)), args["nchw"])
    o, _, _, ci = rank_in(args, "filter", (4,))
    require(ci == c, "filter", f"filter depth {ci} differs from the input depth {c}")
    _at_least(args, ("stride_w", "stride_h", "out_w", "out_h"), 1)
    _at_least(args, ("pad_left", "pad_top"), 0)
    dtype = _check_common(args, o)
    return {"output": (_shaped(n, o, args["out_h"], args["out_w"], args["nchw"]), dtype)}


def _grouped_weights(args: Args, filt: np.ndarray) -> np.ndarray:
    """The kernel's ``[kw, kh, C/groups, O]`` from NNAPI's filter, float32."""
    arranged = filt.transpose(3, 0, 1, 2) if args["filter_kind"] == DEPTHWISE else filt.transpose(0, 3, 1, 2)
    return np.ascontiguousarray(arranged, np.float32).T  # [O, C/groups, kh, kw] reversed


def _bind(args: Args, plan: Callable[[np.ndarray, np.ndarray, np.ndarray | None], Runner]) -> Runner:
    """A runner of ``plan(x, out, bias)`` on the node's arrays (float16: float32 copies in, rounded out), planned
    again when the filter or the bias has been written since."""
    x, out, nchw = args["input"], args["output"], args["nchw"]
    half = np.dtype(x.dtype) == F16
    x32 = np.empty(x.shape, np.float32) if half else x
    out32 = np.empty(out.shape, np.float32) if half else out
    roots = [r for r in (args.root("filter"), args.root("bias")) if r is not None]

    def make() -> Runner:
        bias = args.get("bias")
        bias = None if bias is None else np.asarray(bias, np.float32)
        return plan(_openvx_order(x32, nchw), _openvx_order(out32, nchw), bias)

    state = [tuple(r.writes for r in roots), make()]

    def run() -> None:
        stamp = tuple(r.writes for r in roots)
        if stamp != state[0]:
            state[:] = [stamp, make()]
        if half:
            x32[...] = x
        state[1]()
        if half:
            out[...] = out32  # each float32 result rounded once, to nearest even
    return run


def on_engine(args: Args) -> bool:
    """Whether a ``grouped_conv_2d`` node runs on the NHWC float engines (module doc): float32, NHWC, one group
    and a dense filter, or a depthwise filter of one group per input channel."""
    if np.dtype(args["input"].dtype) != F32 or args["nchw"]:
        return False
    return (args["groups"] == 1 and args["filter_kind"] == CONV) or _depthwise(args)


def _depthwise(args: Args) -> bool:
    """A depthwise filter ``[1, kh, kw, C * m]`` of one group per input channel (``float_depthwise``)."""
    return args["filter_kind"] == DEPTHWISE and args["groups"] == args["input"].shape[-1]


def _engine_window(args: Args) -> tuple:
    """(pads (left, right, top, bottom), strides (width, height), dilations (width, height)) for the engine."""
    return ((args["pad_left"], args["pad_right"], args["pad_top"], args["pad_bottom"]),
            (args["stride_w"], args["stride_h"]), (args["dilation_w"], args["dilation_h"]))


def _prepare_engine(args: Args) -> Runner:
    bias, (pads, strides, dilations) = _float_bias(args), _engine_window(args)
    x, out, act = args["input"], args["output"], args["activation"]
    if _depthwise(args):
        m = out.shape[-1] // x.shape[-1]
        return _Bound(args, fdepthwise.pack_depthwise, lambda packed: fdepthwise.bind_depthwise_conv2d(
            x, packed, bias, out, pads, strides, m, act, dilations=dilations))
    return _Bound(args, fconv.pack_conv, lambda packed: fconv.bind_conv2d(x, packed, bias, out, pads, strides, act,
                                                                          dilations=dilations))


def _native_grouped(args: Args):
    """The engine's native entry of a node :func:`on_engine` takes; None for the others (they run from Python)."""
    if not on_engine(args):
        return None
    pads, strides, dilations = _engine_window(args)
    if _depthwise(args):
        return fdepthwise.native_depthwise_conv2d(args["input"], packed_filter(args, fdepthwise.pack_depthwise),
                                                  _float_bias(args), args["output"], pads, strides,
                                                  args["output"].shape[-1] // args["input"].shape[-1],
                                                  args["activation"], dilations=dilations)
    return fconv.native_conv2d(args["input"], packed_filter(args, fconv.pack_conv), _float_bias(args),
                               args["output"], pads, strides, args["activation"], dilations=dilations)


def _prepare_grouped(args: Args) -> Runner:
    if on_engine(args):
        return _prepare_engine(args)
    geo = grouped.Geometry(args["groups"], (args["stride_h"], args["stride_w"]),
                           (args["dilation_h"], args["dilation_w"]), (args["pad_top"], args["pad_left"]))
    clip = CLIPS[args["activation"]]
    return _bind(args, lambda x, out, bias: grouped.prepare(x, _grouped_weights(args, args["filter"]), bias, out,
                                                            geo, clip))


def _prepare_transposed(args: Args) -> Runner:
    """TRANSPOSE_CONV_2D on ``transposed_phases`` (the float engine, as vxDeconvolutionLayer): NHWC read and
    written in place, NCHW through a channels-last copy of the input and a planar output; float16 through float32
    copies, each output rounded once. Planned again when the filter or the bias has been written since."""
    x, out, nchw = args["input"], args["output"], args["nchw"]
    n, c, h, w = _planes(x.shape, nchw)
    _, _, out_h, out_w = _planes(out.shape, nchw)
    half = np.dtype(x.dtype) == F16
    x32 = x if not half and not nchw and x.flags.c_contiguous else np.empty((n, h, w, c), np.float32)
    out32 = out if not half and out.flags.c_contiguous else np.empty(out.shape, np.float32)
    clamp = fconv.clamp_range(args["activation"])
    roots = [r for r in (args.root("filter"), args.root("bias")) if r is not None]

    def make() -> Runner:
        bias = args.get("bias")
        plan = phases.TransposedPhases(np.asarray(args["filter"], np.float32), (args["pad_top"], args["pad_left"]),
                                       (args["stride_h"], args["stride_w"]), (h, w), (out_h, out_w))
        return plan.bind(x32, None if bias is None else np.asarray(bias, np.float32), out32, not nchw, clamp)

    state = [tuple(r.writes for r in roots), make()]

    def run() -> None:
        stamp = tuple(r.writes for r in roots)
        if stamp != state[0]:
            state[:] = [stamp, make()]
        if x32 is not x:
            x32[...] = x.transpose(0, 2, 3, 1) if nchw else x
        state[1]()
        if out32 is not out:
            out[...] = out32  # float16: each float32 result rounded once, to nearest even
    return run


def _unprepared(prepare: Callable[[Args], Runner]) -> Callable[[Args], None]:
    def run(args: Args) -> None:
        prepare(args)()
    run.__doc__ = prepare.__doc__
    return run


GROUPED_INDEX = 55
TRANSPOSED_INDEX = 91
nnapi_kernel(NNAPIKernel("grouped_conv_2d", GROUPED_INDEX, ("input", "filter", "bias?"), ("output",),
                         _infer_grouped, _unprepared(_prepare_grouped), ints=GROUPED_INTS, prepare=_prepare_grouped,
                         native=_native_grouped))
nnapi_kernel(NNAPIKernel("transpose_conv_2d", TRANSPOSED_INDEX, ("input", "filter", "bias?"), ("output",),
                         _infer_transposed, _unprepared(_prepare_transposed), ints=TRANSPOSED_INTS,
                         prepare=_prepare_transposed))
