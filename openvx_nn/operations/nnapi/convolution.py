"""NNAPI CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pooling layers as
OpenVX kernels (NHWC, explicit padding; float32 or asymmetric uint8; the pools also float16, on the float32
kernels with each output rounded once)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...core import bordered_tensors
from ...core.enums import Status, Type
from ...kernels.frontend import float_convolution as fconv
from ...kernels.frontend import float_depthwise as fdepthwise
from ...kernels.frontend import float_pooling as fpooling
from ...kernels.frontend import nhwc_convolution as conv
from ...kernels.frontend import nhwc_pooling as pooling
from ...kernels.frontend import quant8_convolution, quant8_depthwise, quant8_pooling
from .common import F32, I32, NNAPI_KERNELS, U8, Args, NNAPIKernel, _args, dtype_in, nnapi_kernel, rank_in, require

Runner = Callable[[], None]
VX_F32 = int(Type.VX_TYPE_FLOAT32)

WINDOW = ("pad_left", "pad_right", "pad_top", "pad_bottom", "stride_w", "stride_h")


def window_extent(args: Args, size: int, kernel: int, axis: str) -> int:
    """Output extent along ``axis`` ('w' or 'h'): ``(in + pads - k) // stride + 1``."""
    low, high = ("pad_left", "pad_right") if axis == "w" else ("pad_top", "pad_bottom")
    stride = args[f"stride_{axis}"]
    require(stride >= 1, f"stride_{axis}", f"stride_{axis} is {stride}, expected at least 1",
            Status.VX_ERROR_INVALID_VALUE)
    require(args[low] >= 0 and args[high] >= 0, low, f"padding {args[low]}, {args[high]} must not be negative",
            Status.VX_ERROR_INVALID_VALUE)
    span = size + args[low] + args[high] - kernel
    require(span >= 0 and kernel >= 1, "input", f"a window of {kernel} does not fit an extent of {size} "
            f"padded by {args[low]} + {args[high]}")
    return span // stride + 1


def _activation(args: Args) -> int:
    act = args["activation"]
    require(act in (0, 1, 2, 3), "activation", f"fused activation {act} is not NONE, RELU, RELU1 or RELU6",
            Status.VX_ERROR_INVALID_VALUE)
    return act


def _bias(args: Args, dtype, units: int) -> None:
    bias = args.get("bias")
    if bias is None:
        return
    dtype_in(args, "bias", (I32,) if dtype == U8 else (F32,))
    require(tuple(bias.shape) == (units,), "bias", f"bias has shape {list(bias.shape)}, expected [{units}]")


def _infer_conv(args: Args):
    n, h, w, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F32, U8))
    o, kh, kw, ci = rank_in(args, "filter", (4,))
    dtype_in(args, "filter", (dtype,))
    require(ci == c, "filter", f"filter depth {ci} differs from the input depth {c}")
    _bias(args, dtype, o)
    _activation(args)
    return {"output": ((n, window_extent(args, h, kh, "h"), window_extent(args, w, kw, "w"), o), dtype)}


def _pads(args: Args):
    return tuple(args[p] for p in WINDOW[:4]), (args["stride_w"], args["stride_h"])


def _run_conv(args: Args) -> None:
    """NHWC convolution: out = act(bias + sum input * filter), exact sums, one requantization."""
    pads, strides = _pads(args)
    conv.conv2d(args["input"], args["filter"], args.get("bias"), args["output"], pads, strides, args["activation"],
                args.quant("input"), args.quant("filter"), args.quant("output"))


# -- float32: weights packed once per node (kernels/frontend/float_*) ------------------------------------


class _Bound:
    """A float32 layer's kernel bound once with its filter packed (``pack``), and bound again only after the
    filter tensor is written (its write count moves): no per-call comparison of the weights, no stale packing."""

    def __init__(self, args: Args, pack: Callable[[np.ndarray], np.ndarray],
                 bind: Callable[[np.ndarray], Runner]):
        self._args, self._pack, self._bind = args, pack, bind
        self._root = args.root("filter")
        self._stamp = args.writes("filter")
        self._call = bind(packed_filter(args, pack))

    def __call__(self) -> None:
        if self._root is not None and self._root.writes != self._stamp:
            self._call, self._stamp = self._bind(self._pack(self._args["filter"])), self._root.writes
        self._call()


def packed_filter(args: Args, pack: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """The node's filter packed once for its runner and its native entry."""
    return args.shared("packed", lambda: pack(args["filter"]))


def _float_bias(args: Args) -> np.ndarray:
    # Read by reference: a bias written after bind is seen (a copy only when it is not float32-contiguous).
    return fconv.bias_or_zeros(args.get("bias"), args["output"].shape[-1])


def _conv_packing(args: Args) -> Callable[[np.ndarray], np.ndarray]:
    """``pack_conv`` for the layer's output pixels (one pixel: the one-row tiles)."""
    out = args["output"].shape
    return lambda w: fconv.pack_conv(w, pixels=out[0] * out[1] * out[2])


def _prepare_conv_float(args: Args) -> Runner:
    bias, (pads, strides) = _float_bias(args), _pads(args)
    x, out, act = args["input"], args["output"], args["activation"]
    return _Bound(args, _conv_packing(args), lambda packed: fconv.bind_conv2d(x, packed, bias, out, pads, strides, act))


def _prepare_depthwise_float(args: Args) -> Runner:
    bias, (pads, strides) = _float_bias(args), _pads(args)
    x, out, act, m = args["input"], args["output"], args["activation"], args["depth_multiplier"]
    return _Bound(args, fdepthwise.pack_depthwise,
                  lambda packed: fdepthwise.bind_depthwise_conv2d(x, packed, bias, out, pads, strides, m, act))


def _fc_packing(args: Args) -> Callable[[np.ndarray], np.ndarray]:
    """``pack_fc`` for the layer's number of input rows (one row: the matrix-vector tiles)."""
    rows = args["input"].size // max(1, args["filter"].shape[1])
    return lambda w: fconv.pack_fc(w, rows=rows)


def _prepare_fc_float(args: Args) -> Runner:
    bias, x, out, act = _float_bias(args), args["input"], args["output"], args["activation"]
    return _Bound(args, _fc_packing(args), lambda packed: fconv.bind_fully_connected(x, packed, bias, out, act))


# ---- uint8 (TENSOR_QUANT8_ASYMM): planned once at bind on the integer engine ----------------------------

def _replanned(args: Args, make: Callable[[], quant8_convolution.Prepared],
               packed: tuple[str, ...] = ("filter", "bias")) -> Callable[[], None]:
    """A runner of ``make()``'s layer attached to the node's input and output (``Prepared.attach``), made again
    when one of the ``packed`` tensors (the filter and the bias) has been written since."""
    x, out = args["input"], args["output"]
    roots = [root for root in (args.root(name) for name in packed) if root is not None]

    def stamp() -> tuple[int, ...]:
        return tuple(root.writes for root in roots)
    state = [stamp(), args.shared("plan", make).attach(x, out)]

    def runner() -> None:
        now = stamp()
        if now != state[0]:
            state[:] = [now, make().attach(x, out)]
        state[1]()
    return runner


def _quant8_conv(args: Args) -> Callable[[], None]:
    return _replanned(args, _conv_plan(args))


def _quant8_depthwise(args: Args) -> Callable[[], None]:
    return _replanned(args, _depthwise_plan(args))


def _quant8_fc(args: Args) -> Callable[[], None]:
    return _replanned(args, _fc_plan(args))



def _by_dtype(float_path: Callable[[Args], Runner], quant8_path: Callable[[Args], Runner]):
    def prepare(args: Args) -> Runner:
        return (float_path if np.dtype(args["input"].dtype) == F32 else quant8_path)(args)
    return prepare


# ---- native entries (run from C without the GIL): the same kernels as the runners above, packed once ------

def _native_conv_float(args: Args):
    return fconv.native_conv2d(args["input"], packed_filter(args, _conv_packing(args)), _float_bias(args), args["output"],
                               *_pads(args), args["activation"])


def _native_depthwise_float(args: Args):
    return fdepthwise.native_depthwise_conv2d(args["input"], packed_filter(args, fdepthwise.pack_depthwise),
                                              _float_bias(args), args["output"], *_pads(args),
                                              args["depth_multiplier"], args["activation"])


def _native_fc_float(args: Args):
    return fconv.native_fully_connected(args["input"], packed_filter(args, _fc_packing(args)), _float_bias(args),
                                        args["output"], args["activation"])


def _native_quant8(prepare: Callable[[Args], Callable[[], quant8_convolution.Prepared]]):
    def native(args: Args):
        return args.shared("plan", prepare(args)).native(args["input"], args["output"])
    return native


def _conv_plan(args: Args) -> Callable[[], quant8_convolution.Prepared]:
    pads, strides = _pads(args)
    return lambda: quant8_convolution.prepare_conv(
        args["filter"], args.get("bias"), args["input"].shape, args["output"].shape, pads, strides,
        args["activation"], args.quant("input"), args.quant("filter"), args.quant("output"))


def _depthwise_plan(args: Args) -> Callable[[], quant8_convolution.Prepared]:
    pads, strides = _pads(args)
    return lambda: quant8_depthwise.prepare_depthwise(
        args["filter"], args.get("bias"), args["output"].shape, pads, strides, args["depth_multiplier"],
        args["activation"], args.quant("input"), args.quant("filter"), args.quant("output"))


def _fc_plan(args: Args) -> Callable[[], quant8_convolution.Prepared]:
    return lambda: quant8_convolution.prepare_fully_connected(
        args["filter"], args.get("bias"), args["output"].shape[0], args["activation"], args.quant("input"),
        args.quant("filter"), args.quant("output"))


def _takes_activation(activation_index: int, residual: bool):
    """The hook: (the output, 3, and whether a residual sum may be fused too) when a float32 layer has no fused
    activation, so that an epilogue may compute the one after it (``core/activation_epilogue``); else None."""
    def takes(p, state) -> tuple[int, bool] | None:
        x, out, activation = p[0], p[3], p[activation_index]
        if x.data_type != VX_F32 or out.data_type != VX_F32 or activation.value != 0 or len(out.dims) != 4:
            return None
        return 3, residual
    return takes


def _chained(p, state, native: bool, kernel):
    """CONV_2D's or DEPTHWISE_CONV_2D's call (``native``: its entry) computing the residual sum (CONV_2D) and the
    activation the plan fused into it (``core/activation_epilogue``): the chain's output, the skip added after the
    bias, then the add's own clamp (a sum with no activation after it) or the activation applied."""
    from ...core import activation_epilogue
    from ...kernels.frontend import epilogue_activation
    found = activation_epilogue.epilogue(state)
    if found is None:
        return None
    out_t, skip_t, function, alpha_t, a, b, clamp = found
    args = _args(kernel, p, state)
    out = out_t.array.T
    alpha = None if alpha_t is None else alpha_t.array.T
    epilogue = epilogue_activation.epilogue_of(function, out.shape[-1], alpha, a, b)
    residual = None if skip_t is None else skip_t.array.T
    bias, (pads, strides), x = _float_bias(args), _pads(args), args["input"]
    if skip_t is None and "depth_multiplier" in args.scalars:
        m = args["depth_multiplier"]
        if native:
            return fdepthwise.native_depthwise_conv2d(x, packed_filter(args, fdepthwise.pack_depthwise), bias, out,
                                                      pads, strides, m, 0, epilogue=epilogue)
        return _Bound(args, fdepthwise.pack_depthwise, lambda packed: fdepthwise.bind_depthwise_conv2d(
            x, packed, bias, out, pads, strides, m, 0, epilogue=epilogue))
    x_border, buffer = bordered_tensors.of(state, p[0])  # an input the plan holds in a zero-bordered buffer
    x, borders = (x, (0, 0, 0)) if buffer is None else (buffer, (x_border, 0, 0))
    if native:
        return fconv.native_conv2d(x, packed_filter(args, _conv_packing(args)), bias, out, pads, strides, clamp,
                                   residual, epilogue, borders=borders)
    return _Bound(args, _conv_packing(args), lambda packed: fconv.bind_conv2d(
        x, packed, bias, out, pads, strides, clamp, residual, epilogue, borders=borders))


# ---- zero-bordered buffers (``core/bordered_tensors``): a float32 layer's input, output or residual -------------

def _takes_borders(op: str):
    """The hook: a float32 layer whose filter holds still through a run (its call is bound once) reads its input
    from a zero-bordered buffer with its largest padding (its windows, being whole, reach no further past the
    input: ``window_extent``), writes its own output into one and reads its residual from one; NHWC by definition.
    A layer that computes an activation chain (``core/activation_epilogue``) writes the chain's output, through an
    epilogue a bordered output does not take: it only reads. An unpadded 1x1 layer of stride 1 neither reads nor
    writes one: it runs on the engine's matrix route (a pixel's input and output at fixed strides), which either
    side's border takes away (one thread, CPU time, in turns, load 7.6-7.9 on a 2-core AMD EPYC: 56x56 256->64
    writing a bordered output 468 us against 408 plain, where its 3x3 reader gains 874 -> 855; 56x56 128->128
    reading a bordered input 445 us against 425)."""
    def takes(p, state) -> tuple | None:
        from ...core import activation_epilogue
        k = NNAPI_KERNELS[op]
        names = k.tensor_names
        x, out = p[0], p[len(names) - 1]
        if (x.data_type != VX_F32 or out.data_type != VX_F32 or len(x.dims) != 4 or len(out.dims) != 4
                or not state.get("steady")):
            return None
        window = [p[len(names) + k.ints.index(name)].value for name in WINDOW]
        if tuple(p[1].dims[1:3]) == (1, 1) and window == [0, 0, 0, 0, 1, 1]:
            return None
        residual = names.index("residual") if "residual" in names else None
        return max(window[:4]), activation_epilogue.CHAIN not in state, residual, True
    return takes


def _bordered(op: str):
    """The layer's call (``native``: its entry) on the zero-bordered buffers the plan holds its input, output or
    residual in: the buffer in place of the tensor, its border given to the engine (``bind_conv2d``'s ``borders``)."""
    def call(p, state, native: bool):
        k = NNAPI_KERNELS[op]
        args = _args(k, p, state)
        names = k.tensor_names
        sides = {}
        for name in ("input", "output", "residual"):
            border, buffer = bordered_tensors.of(state, p[names.index(name)] if name in names else None)
            sides[name] = (border, args.get(name) if buffer is None else buffer)
        (xb, x), (ob, out), (rb, residual) = sides["input"], sides["output"], sides["residual"]
        bias, (pads, strides), act = _float_bias(args), _pads(args), args["activation"]
        borders = (xb, ob, rb)
        if native:
            return fconv.native_conv2d(x, packed_filter(args, _conv_packing(args)), bias, out, pads, strides, act,
                                       residual, borders=borders)
        return _Bound(args, _conv_packing(args), lambda packed: fconv.bind_conv2d(
            x, packed, bias, out, pads, strides, act, residual, borders=borders))
    return call


Q3 = ("input", "filter", "output")
nnapi_kernel(NNAPIKernel("conv_2d", 3, ("input", "filter", "bias?"), ("output",), _infer_conv, _run_conv,
                         ints=WINDOW + ("activation",), quantized=Q3,
                         prepare=_by_dtype(_prepare_conv_float, _quant8_conv),
                         native=_by_dtype(_native_conv_float, _native_quant8(_conv_plan)),
                         takes_activation=_takes_activation(4 + len(WINDOW), True),
                         chained=lambda p, state, native: _chained(p, state, native, NNAPI_KERNELS["conv_2d"]),
                         takes_borders=_takes_borders("conv_2d"), bordered=_bordered("conv_2d")))


# ---- CONV_2D with a residual: what a CoreML conv -> add (-> clip) folds into (float32 only) -------------------

def _infer_conv_residual(args: Args):
    dtype_in(args, "input", (F32,))
    inferred = _infer_conv(args)
    shape, _ = inferred["output"]
    dtype_in(args, "residual", (F32,))
    residual = tuple(args["residual"].shape)
    require(residual == shape, "residual", f"residual has shape {list(residual)}, expected the output's {list(shape)}")
    return inferred


def _run_conv_residual(args: Args) -> None:
    """NHWC float32 convolution with a residual added before the fused activation:
    out = act(bias + sum input * filter + residual)."""
    fconv.conv2d(args["input"], _conv_packing(args)(args["filter"]), _float_bias(args), args["output"], *_pads(args),
                 args["activation"], args["residual"])


def _prepare_conv_residual(args: Args) -> Runner:
    bias, (pads, strides) = _float_bias(args), _pads(args)
    x, out, act, residual = args["input"], args["output"], args["activation"], args["residual"]
    return _Bound(args, _conv_packing(args),
                  lambda packed: fconv.bind_conv2d(x, packed, bias, out, pads, strides, act, residual))


def _native_conv_residual(args: Args):
    return fconv.native_conv2d(args["input"], packed_filter(args, _conv_packing(args)), _float_bias(args), args["output"],
                               *_pads(args), args["activation"], args["residual"])


CONV_RESIDUAL_INDEX = 0x800
"""Beyond every NNAPI operation code (0-94, and room for later ones): the kernel is this library's own, not an
NNAPI operation (it had 64, which API level 29 gives LOG_SOFTMAX)."""
nnapi_kernel(NNAPIKernel("conv_2d_residual", CONV_RESIDUAL_INDEX, ("input", "filter", "bias?", "residual"),
                         ("output",), _infer_conv_residual, _run_conv_residual, ints=WINDOW + ("activation",),
                         prepare=_prepare_conv_residual, native=_native_conv_residual,
                         takes_borders=_takes_borders("conv_2d_residual"), bordered=_bordered("conv_2d_residual")))


def _infer_depthwise(args: Args):
    n, h, w, c = rank_in(args, "input", (4,))
    dtype = dtype_in(args, "input", (F32, U8))
    one, kh, kw, o = rank_in(args, "filter", (4,))
    dtype_in(args, "filter", (dtype,))
    m = args["depth_multiplier"]
    require(m >= 1 and one == 1 and o == c * m, "filter",
            f"filter shape {[one, kh, kw, o]} does not fit input depth {c} times depth multiplier {m}")
    _bias(args, dtype, o)
    _activation(args)
    return {"output": ((n, window_extent(args, h, kh, "h"), window_extent(args, w, kw, "w"), o), dtype)}


def _run_depthwise(args: Args) -> None:
    """NHWC depthwise convolution with a depth multiplier."""
    pads, strides = _pads(args)
    conv.depthwise_conv2d(args["input"], args["filter"], args.get("bias"), args["output"], pads, strides,
                          args["depth_multiplier"], args["activation"], args.quant("input"), args.quant("filter"),
                          args.quant("output"))


nnapi_kernel(NNAPIKernel("depthwise_conv_2d", 4, ("input", "filter", "bias?"), ("output",), _infer_depthwise,
                         _run_depthwise, ints=WINDOW + ("depth_multiplier", "activation"), quantized=Q3,
                         prepare=_by_dtype(_prepare_depthwise_float, _quant8_depthwise),
                         native=_by_dtype(_native_depthwise_float, _native_quant8(_depthwise_plan)),
                         takes_activation=_takes_activation(4 + len(WINDOW) + 1, False),
                         chained=lambda p, state, native: _chained(p, state, native,
                                                                   NNAPI_KERNELS["depthwise_conv_2d"])))


def _infer_fc(args: Args):
    shape = rank_in(args, "input", (2, 3, 4))
    dtype = dtype_in(args, "input", (F32, U8))
    units, size = rank_in(args, "filter", (2,))
    dtype_in(args, "filter", (dtype,))
    total = 1
    for d in shape:
        total *= d
    require(size > 0 and total % size == 0, "filter",
            f"input of {total} elements does not split into rows of the weights' input size {size}")
    _bias(args, dtype, units)
    _activation(args)
    return {"output": ((total // size, units), dtype)}


def _run_fc(args: Args) -> None:
    """out = act(input (flattened to [batch, input_size]) * weights' + bias)."""
    conv.fully_connected(args["input"], args["filter"], args.get("bias"), args["output"], args["activation"],
                         args.quant("input"), args.quant("filter"), args.quant("output"))


nnapi_kernel(NNAPIKernel("fully_connected", 9, ("input", "filter", "bias?"), ("output",), _infer_fc, _run_fc,
                         ints=("activation",), quantized=Q3, prepare=_by_dtype(_prepare_fc_float, _quant8_fc),
                         native=_by_dtype(_native_fc_float, _native_quant8(_fc_plan))))


def _pool_kernel(op: str, index: int, mode: int, types: tuple) -> None:
    def infer(args: Args):
        n, h, w, c = rank_in(args, "input", (4,))
        dtype = dtype_in(args, "input", types)
        fw, fh = args["filter_w"], args["filter_h"]
        _activation(args)
        return {"output": ((n, window_extent(args, h, fh, "h"), window_extent(args, w, fw, "w"), c), dtype)}

    def run(args: Args) -> None:
        if np.dtype(args["input"].dtype) in (F32, F16):  # one float arithmetic: the bound kernel's, bound per call
            prepare_any(args)()
            return
        pads, strides = _pads(args)
        pooling.pool2d(args["input"], args["output"], mode, pads, strides, (args["filter_w"], args["filter_h"]),
                       args["activation"], args.quant("input"), args.quant("output"))

    def prepare(args: Args) -> Runner:  # float32 or float16
        pads, strides = _pads(args)
        size = (args["filter_w"], args["filter_h"])
        return fpooling.bind_pool2d(args["input"], args["output"], mode, pads, strides, size, args["activation"])

    run.__doc__ = f"NHWC {op.replace('_', ' ')}: padded positions take no part (float: ``float_pooling``)."

    def quant8(args: Args) -> Callable[[], None]:  # uint8 average and max: integer windows (quant8_pooling)
        if mode == pooling.L2:
            return lambda: run(args)
        pads, strides = _pads(args)
        pool = quant8_pooling.prepare_pool(mode == pooling.MAX, args["output"].shape, pads, strides,
                                           (args["filter_w"], args["filter_h"]), args["activation"],
                                           args.quant("input"), args.quant("output"))
        x, out = args["input"], args["output"]
        return lambda: pool(x, out)

    def native_float(args: Args):
        pads, strides = _pads(args)
        return fpooling.native_pool2d(args["input"], args["output"], mode, pads, strides,
                                      (args["filter_w"], args["filter_h"]), args["activation"])

    def native_quant8(args: Args):
        if mode == pooling.L2:
            return None
        pads, strides = _pads(args)
        return quant8_pooling.native_pool(mode == pooling.MAX, args["input"], args["output"], pads, strides,
                                          (args["filter_w"], args["filter_h"]), args["activation"],
                                          args.quant("input"), args.quant("output"))
    def prepare_any(args: Args) -> Runner:  # float16: the same kernel on the binary16 bits (no float32 copies)
        return (prepare if np.dtype(args["input"].dtype) == F16 else _by_dtype(prepare, quant8))(args)

    def native_any(args: Args):
        return None if np.dtype(args["input"].dtype) == F16 else _by_dtype(native_float, native_quant8)(args)
    nnapi_kernel(NNAPIKernel(op, index, ("input",), ("output",), infer, run,
                             ints=WINDOW + ("filter_w", "filter_h", "activation"), quantized=("input", "output"),
                             prepare=prepare_any, native=native_any))


F16 = np.dtype(np.float16)
_pool_kernel("average_pool_2d", 1, pooling.AVERAGE, (F32, U8, F16))
_pool_kernel("l2_pool_2d", 12, pooling.L2, (F32, U8, F16))
_pool_kernel("max_pool_2d", 17, pooling.MAX, (F32, U8, F16))
