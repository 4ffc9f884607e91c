"""NNAPI ADD, SUB, MUL, DIV (broadcasting), DEQUANTIZE and the element-wise functions
(FLOOR, RELU, RELU1, RELU6, LOGISTIC, TANH) as OpenVX kernels."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...core.enums import Status, Type
from ...kernels.frontend import channel_gate
from ...kernels.frontend import elementwise_real as ew
from ...kernels.frontend import float_activation as fa
from ...kernels.frontend import float_elementwise as few
from ...kernels.frontend import quant8_lookup as lookup
from ...kernels.frontend.asymmetric import dequantize, dequantize_per_channel, store
from .common import F32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, require

F16, I8 = np.dtype(np.float16), np.dtype(np.int8)
VX_F32 = int(Type.VX_TYPE_FLOAT32)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """NNAPI's broadcast (trailing dimensions aligned, equal or 1), None when incompatible."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return tuple(max(x, y) for x, y in zip(a, b))


def _infer_binary(args: Args, types: tuple = (F32, U8)):
    dtype = dtype_in(args, "input1", types)
    dtype_in(args, "input2", (dtype,))
    shape = broadcast_shape(args["input1"].shape, args["input2"].shape)
    require(shape is not None, "input2", f"shapes {list(args['input1'].shape)} and {list(args['input2'].shape)} "
            "are not compatible (each trailing dimension equal or 1)")
    act = args["activation"]
    require(act in (0, 1, 2, 3), "activation", f"fused activation {act} is not NONE, RELU, RELU1 or RELU6",
            Status.VX_ERROR_INVALID_VALUE)
    return {"output": (shape, dtype)}


def _run_add(args: Args) -> None:
    """out = act(input1 + input2), broadcasting."""
    ew.add(args["input1"], args["input2"], args["output"], args["activation"], args.quant("input1"),
           args.quant("input2"), args.quant("output"))


def _run_sub(args: Args) -> None:
    """out = act(input1 - input2), broadcasting; float32 only (API level 28)."""
    ew.subtract(args["input1"], args["input2"], args["output"], args["activation"])


def _run_div(args: Args) -> None:
    """out = act(input1 / input2), broadcasting; float32 only (IEEE: a zero divisor gives inf or NaN)."""
    ew.divide(args["input1"], args["input2"], args["output"], args["activation"])


def _run_mul(args: Args) -> None:
    """out = act(input1 * input2), broadcasting."""
    ew.multiply(args["input1"], args["input2"], args["output"], args["activation"], args.quant("input1"),
                args.quant("input2"), args.quant("output"))


def _prepare_binary(op: int, run: Callable[[Args], None]) -> Callable[[Args], Callable[[], None]]:
    """float32: one pass (broadcast, operation and fused activation); uint8: today's path per call."""
    def prepare(args: Args) -> Callable[[], None]:
        if np.dtype(args["input1"].dtype) != F32:
            return lambda: run(args)
        return few.bind_binary(op, args["input1"], args["input2"], args["output"], args["activation"])
    return prepare


def _native_binary(op: int) -> Callable[[Args], object]:
    """float32: the broadcast loop's native entry (a graph of them runs from C, no Python between nodes)."""
    def native(args: Args):
        if np.dtype(args["input1"].dtype) != F32:
            return None
        return few.native_binary(op, args["input1"], args["input2"], args["output"], args["activation"])
    return native


def _mul_takes_gate(p, state) -> tuple[int, ...]:
    """The inputs a float32 MUL without fused activation can read as a gate computed in its own pass
    (``core.gated_products``): one that broadcasts over the other as ``channel_gate.split`` takes it (NNAPI aligns
    trailing dimensions: OpenVX's first), the other of the output's dims."""
    tensors = (p[0], p[1], p[2])
    if any(t.data_type != VX_F32 or t.parent is not None for t in tensors) or p[3].value != 0:
        return ()
    out = tuple(p[2].dims)
    dims = [tuple(t.dims) + (1,) * (len(out) - len(t.dims)) for t in (p[0], p[1])]
    return tuple(g for g in (1, 0) if dims[1 - g] == out and channel_gate.split(out, dims[g]) is not None)


def _mul_gated(p, state, native: bool):
    """The MUL's call (``native``: its entry) computing the gate fused into it, or None while none is."""
    from ...core import gated_products
    found = gated_products.gate(state)
    if found is None:
        return None
    index, source, function, a, b = found
    x, out = p[1 - index].array, p[2].array
    g = source.array.reshape(source.array.shape + (1,) * (out.ndim - source.array.ndim))
    return (channel_gate.native_entry if native else channel_gate.bind)(x, g, out, function, a, b)


def _add_residual_sum(p, state) -> int | None:
    """The fused activation (0 none, 1 RELU, 2 RELU1, 3 RELU6) of an ADD that is a residual sum a convolution's
    epilogue can compute (``core/activation_epilogue``: float32, no broadcast, the clamp after the sum as the
    engine's tiles clamp after a residual); None when it is not one."""
    tensors = (p[0], p[1], p[2])
    if (all(t.data_type == VX_F32 for t in tensors) and p[3].value in (0, 1, 2, 3)
            and tuple(p[0].dims) == tuple(p[1].dims) == tuple(p[2].dims)):
        return int(p[3].value)
    return None


def _channel_step(name: str):
    """The hook (``core/channel_chains``): a float32 MUL or ADD with no fused activation, one input of the output's
    dims and the other one value per channel (NNAPI's last axis, OpenVX's first): (name, data, vector, 2)."""
    def step(p, state) -> tuple[str, int, int, int] | None:
        if any(t.data_type != VX_F32 or t.parent is not None for t in (p[0], p[1], p[2])) or p[3].value != 0:
            return None
        out = tuple(p[2].dims)
        for data in (0, 1):
            if tuple(p[data].dims) == out and per_channel(p[1 - data].dims, out):
                return name, data, 1 - data, 2
        return None
    return step


def per_channel(dims: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Whether a tensor of OpenVX ``dims`` holds one value per channel of ``out`` (NNAPI's ``[C]``,
    ``[1, 1, C]``...: the first dim the channels', the others 1, no more dims than ``out``)."""
    dims = tuple(dims)
    return (0 < len(dims) <= len(out) and len(out) > 0 and dims[0] == out[0]
            and all(d == 1 for d in dims[1:]))


QB = ("input1", "input2", "output")
nnapi_kernel(NNAPIKernel("add", 0, ("input1", "input2"), ("output",), _infer_binary, _run_add,
                         ints=("activation",), quantized=QB, prepare=_prepare_binary(few.ADD, _run_add),
                         native=_native_binary(few.ADD), residual_sum=_add_residual_sum,
                         channel_step=_channel_step("add")))
nnapi_kernel(NNAPIKernel("sub", 36, ("input1", "input2"), ("output",), lambda args: _infer_binary(args, (F32,)),
                         _run_sub, ints=("activation",), prepare=_prepare_binary(few.SUB, _run_sub),
                         native=_native_binary(few.SUB)))
nnapi_kernel(NNAPIKernel("div", 30, ("input1", "input2"), ("output",), lambda args: _infer_binary(args, (F32,)),
                         _run_div, ints=("activation",), prepare=_prepare_binary(few.DIV, _run_div),
                         native=_native_binary(few.DIV)))
nnapi_kernel(NNAPIKernel("mul", 18, ("input1", "input2"), ("output",), _infer_binary, _run_mul,
                         ints=("activation",), quantized=QB, prepare=_prepare_binary(few.MUL, _run_mul),
                         native=_native_binary(few.MUL), takes_gate=_mul_takes_gate, gated=_mul_gated,
                         channel_step=_channel_step("mul")))


FLOAT32_ACTIVATIONS = ("logistic", "tanh")
"""The unary operations whose float32 tensors run on ``frontend/float_activation`` (within its stated ulps of the
float64 reference; uint8 keeps the reference's exact table)."""


def _unary_kernel(op: str, index: int, function: str, types: tuple, out_dtype=None) -> None:
    def infer(args: Args):
        dtype = dtype_in(args, "input", types)
        return {"output": (tuple(args["input"].shape), out_dtype or dtype)}

    def fast(args: Args) -> bool:
        """Whether the float32 activation kernel computes it (LOGISTIC and TANH of float32 tensors)."""
        return function in FLOAT32_ACTIVATIONS and np.dtype(args["input"].dtype) == F32

    def run(args: Args) -> None:
        if fast(args):
            fa.apply(args["input"], args["output"], function)
        else:
            ew.unary(function, args["input"], args["output"], args.quant("input"), args.quant("output"))
    run.__doc__ = f"out = {function}(input), element-wise."

    def table(args: Args):
        """uint8 to uint8: the reference's 256 results, looked up (``quant8_lookup``); else None."""
        if np.dtype(args["input"].dtype) != U8 or np.dtype(args["output"].dtype) != U8:
            return None
        return lookup.table(function, args.quant("input"), args.quant("output"))

    def prepare(args: Args) -> Callable[[], None]:
        values = table(args)
        if values is not None:
            return lookup.bind_lookup(values, args["input"], args["output"])
        if fast(args):
            return fa.bind(args["input"], args["output"], function)
        return lambda: run(args)

    def native(args: Args):
        values = table(args)
        if values is not None:
            return lookup.native_lookup(values, args["input"], args["output"])
        return fa.native_entry(args["input"], args["output"], function) if fast(args) else None
    nnapi_kernel(NNAPIKernel(op, index, ("input",), ("output",), infer, run, quantized=("input", "output"),
                             prepare=prepare, native=native))


def _infer_dequantize(args: Args):
    """uint8 or int8 in; float16 out with ``half``, else float32; per-channel ``scales``: one per index of the
    ``channel`` axis."""
    dtype_in(args, "input", (U8, I8))
    shape = tuple(args["input"].shape)
    scales = args.get("scales")
    if scales is not None:
        axis = int(args["channel"])
        require(0 <= axis < len(shape), "channel", f"channel axis {axis} is not an axis of {list(shape)}")
        require(tuple(scales.shape) == (shape[axis],), "scales", f"scales have shape {list(scales.shape)}, "
                f"expected [{shape[axis]}] (axis {axis} of {list(shape)})")
    return {"output": (shape, F16 if args["half"] else F32)}


def _run_dequantize(args: Args) -> None:
    """out = scale * (input - zero point), per channel ``scales[c] * input`` (stored once, float16 or float32)."""
    x, scales = args["input"], args.get("scales")
    if scales is None:
        real = dequantize(x, (float(args["input_scale"]), int(args["input_zero_point"])))
    else:
        real = dequantize_per_channel(x, scales, int(args["channel"]))
    with np.errstate(over="ignore"):  # beyond float16's range: an infinity, as IEEE rounding gives
        store(real, args["output"], None)


nnapi_kernel(NNAPIKernel("dequantize", 6, ("input", "scales?"), ("output",), _infer_dequantize, _run_dequantize,
                         ints=("channel", "half"), quantized=("input",)))
_unary_kernel("floor", 8, "floor", (F32,))
_unary_kernel("logistic", 14, "logistic", (F32, U8))
_unary_kernel("relu", 19, "relu", (F32, U8))
_unary_kernel("relu1", 20, "relu1", (F32, U8))
_unary_kernel("relu6", 21, "relu6", (F32, U8))
_unary_kernel("tanh", 28, "tanh", (F32, U8))
