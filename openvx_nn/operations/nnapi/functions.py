"""NNAPI 1.2's element-wise operations as OpenVX kernels: ABS, EXP, LOG, NEG, RSQRT, SIN, SQRT, LOGICAL_NOT (one
tensor), POW, MAXIMUM, MINIMUM, PRELU, the comparisons and LOGICAL_AND, LOGICAL_OR (two, broadcasting), SELECT,
CAST and QUANTIZE (between types).

A TENSOR_BOOL8 is a uint8 tensor of bytes 0 and 1 (``common.VX_TYPES``): a comparison stores its 1.0 or 0.0 there,
and a boolean read as a real value is that 0 or 1.

float32 MAXIMUM, MINIMUM and PRELU of rank at most 4 are bound once per node to the float engine's broadcast
loop (``float_elementwise``, as ADD and MUL), and have its native entry (a graph of them runs from C); the
comparisons and SELECT (of operands of one quantization) of float32, int32, uint8 and boolean tensors run on
``comparison``'s compiled loops, with their native entries; everything else (float16 among it) is a float64
expression of the exact inputs (uint8 dequantized) stored once (``elementwise_real``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...kernels.frontend import asymmetric, comparison
from ...kernels.frontend import elementwise_real as ew
from ...kernels.frontend import float_elementwise as few
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, require
from .elementwise import VX_F32, broadcast_shape, per_channel

MAX_RANK = 6
BOOL, F16 = np.dtype(np.bool_), np.dtype(np.float16)
"""A TENSOR_BOOL8 as the lowering sees it (the OpenVX validator sees its uint8 tensor)."""


def _one(types: tuple[np.dtype, ...]):
    def infer(args: Args):
        return {"output": (tuple(args["input"].shape), dtype_in(args, "input", types))}
    return infer


def _unary(op: str, index: int, function: str, types: tuple[np.dtype, ...]) -> None:
    def run(args: Args) -> None:
        ew.function(function, args["input"], args["output"])
    run.__doc__ = f"out = {function}(input), element-wise (float64, stored once)."
    nnapi_kernel(NNAPIKernel(op, index, ("input",), ("output",), _one(types), run))


for _op, _index, _function in (("abs", 38, "abs"), ("exp", 49, "exp"), ("log", 60, "log"), ("rsqrt", 83, "rsqrt"),
                               ("sin", 85, "sin"), ("sqrt", 88, "sqrt")):
    _unary(_op, _index, _function, (F16, F32))
_unary("neg", 67, "negative", (F16, F32, I32))
_unary("logical_not", 62, "logical_not", (BOOL, U8))


def _infer_pair(types: tuple[np.dtype, ...], result: np.dtype | None = None):
    def infer(args: Args):
        dtype = dtype_in(args, "input1", types)
        dtype_in(args, "input2", (dtype,))
        shape = broadcast_shape(args["input1"].shape, args["input2"].shape)
        require(shape is not None, "input2", f"shapes {list(args['input1'].shape)} and "
                f"{list(args['input2'].shape)} are not compatible (each trailing dimension equal or 1)")
        require(len(shape) <= MAX_RANK, "input1", f"the result has rank {len(shape)}, at most {MAX_RANK} is allowed")
        return {"output": (shape, result or dtype)}
    return infer


def _prelu_epilogue(p, state):
    """("prelu", alpha, 1, 1) when a float32 PRELU's alpha is one value or one per channel of the input (NNAPI's
    last axis, OpenVX's first), so that the convolution before it may compute it (``core/activation_epilogue``)."""
    x, alpha, out = p[0], p[1], p[2]
    if any(t.data_type != VX_F32 for t in (x, alpha, out)) or tuple(x.dims) != tuple(out.dims) or not x.dims:
        return None
    dims = tuple(alpha.dims)
    if dims[0] not in (1, x.dims[0]) or any(d != 1 for d in dims[1:]) or len(dims) > len(x.dims):
        return None
    return "prelu", alpha, 1.0, 1.0


def _prelu_step(p, state):
    """("prelu", 0, 1, 2) when a float32 PRELU's alpha holds one value per channel of its input (the hook of
    ``core/channel_chains``)."""
    x, alpha, out = p[0], p[1], p[2]
    if any(t.data_type != VX_F32 or t.parent is not None for t in (x, alpha, out)) or tuple(x.dims) != tuple(out.dims):
        return None
    return ("prelu", 0, 1, 2) if per_channel(alpha.dims, tuple(out.dims)) else None


def _pair(op: str, index: int, rule: str, types: tuple[np.dtype, ...], fast: int | None = None,
          result: np.dtype | None = None, epilogue: Callable | None = None, step: Callable | None = None) -> None:
    compares = rule in comparison.RULES

    def run(args: Args) -> None:
        if compares and comparison.takes(args["input1"], args["input2"]):
            comparison.compare(rule, args["input1"], args["input2"], args["output"], args.quant("input1"),
                               args.quant("input2"))
            return
        ew.binary(rule, args["input1"], args["input2"], args["output"], args.quant("input1"),
                  args.quant("input2"), args.quant("output"))
    run.__doc__ = f"out = {rule}(input1, input2), broadcasting (float64 on real values, stored once)."

    def prepare(args: Args) -> Callable[[], None]:
        a, b, out = args["input1"], args["input2"], args["output"]
        if fast is None or np.dtype(a.dtype) != F32 or out.ndim > 4:
            return lambda: run(args)
        return few.bind_binary(fast, a, b, out, 0)

    def native(args: Args):
        if compares:
            return comparison.native_compare(rule, args["input1"], args["input2"], args["output"],
                                             args.quant("input1"), args.quant("input2"))
        if fast is None:
            return None
        return few.native_binary(fast, args["input1"], args["input2"], args["output"], 0)
    nnapi_kernel(NNAPIKernel(op, index, ("input1", "input2"), ("output",), _infer_pair(types, result), run,
                             quantized=("input1", "input2", "output"), prepare=prepare, native=native,
                             activation_epilogue=epilogue, channel_step=step))


_pair("pow", 70, "pow", (F16, F32), None)
_pair("maximum", 65, "max", (F16, F32, I32, U8), few.MAX)
_pair("minimum", 66, "min", (F16, F32, I32, U8), few.MIN)
_pair("prelu", 71, "prelu", (F16, F32, U8), few.PRELU, epilogue=_prelu_epilogue, step=_prelu_step)
for _op, _index, _rule in (("equal", 48, "equal"), ("not_equal", 68, "not_equal"), ("greater", 53, "greater"),
                           ("greater_equal", 54, "greater_equal"), ("less", 58, "less"),
                           ("less_equal", 59, "less_equal")):
    _pair(_op, _index, _rule, (F16, F32, I32, U8, BOOL), result=BOOL)
_pair("logical_and", 61, "logical_and", (BOOL, U8), result=BOOL)
_pair("logical_or", 63, "logical_or", (BOOL, U8), result=BOOL)


# -- SELECT ------------------------------------------------------------------------------------------------------
def _infer_select(args: Args):
    dtype_in(args, "condition", (BOOL, U8))
    dtype = dtype_in(args, "input1", (F16, F32, I32, U8))
    dtype_in(args, "input2", (dtype,))
    shape = tuple(args["input1"].shape)
    for name in ("condition", "input2"):
        require(tuple(args[name].shape) == shape, name, f"{name} has shape {list(args[name].shape)}, input1 "
                f"{list(shape)}: they must be the same")
    return {"output": (shape, dtype)}


def _raw_select(args: Args) -> bool:
    """Whether SELECT moves raw values on the compiled loop: one quantization, element types it takes."""
    return args.quant("input1") == args.quant("input2") == args.quant("output") and \
        comparison.takes(args["condition"], args["input1"], args["input2"])


def _run_select(args: Args) -> None:
    """out = input1 where condition, else input2 (uint8 of different quantizations: the real value, stored once)."""
    if _raw_select(args):
        comparison.select(args["condition"], args["input1"], args["input2"], args["output"])
        return
    ew.select(args["condition"], args["input1"], args["input2"], args["output"], args.quant("input1"),
              args.quant("input2"), args.quant("output"))


def _native_select(args: Args):
    if not _raw_select(args):
        return None
    return comparison.native_select(args["condition"], args["input1"], args["input2"], args["output"])


nnapi_kernel(NNAPIKernel("select", 84, ("condition", "input1", "input2"), ("output",), _infer_select, _run_select,
                         quantized=("input1", "input2", "output"), native=_native_select))


# -- CAST, QUANTIZE ----------------------------------------------------------------------------------------------
KINDS = {0: F32, 1: I32, 2: U8, 3: F16}
"""CAST's ``to`` scalar: the output's element type."""


def _infer_cast(args: Args):
    dtype_in(args, "input", (F16, F32, I32, U8))
    to = int(args["to"])
    require(to in KINDS, "to", f"to is {to}; expected one of {sorted(KINDS)} (float32, int32, uint8, float16)")
    return {"output": (tuple(args["input"].shape), KINDS[to])}


def _run_cast(args: Args) -> None:
    """out = input's values in the output's type (quantization ignored; floats truncated, saturated)."""
    ew.convert(args["input"], args["output"])


nnapi_kernel(NNAPIKernel("cast", 45, ("input",), ("output",), _infer_cast, _run_cast, ints=("to",)))


def _infer_quantize(args: Args):
    dtype_in(args, "input", (F16, F32))
    return {"output": (tuple(args["input"].shape), U8)}


def _run_quantize(args: Args) -> None:
    """out = clamp(round(input / scale) + zero_point, 0, 255), halves away from zero."""
    asymmetric.quantize_half_away(args["input"], args["output"], args.quant("output"))


nnapi_kernel(NNAPIKernel("quantize", 72, ("input",), ("output",), _infer_quantize, _run_quantize,
                         quantized=("output",)))
