"""NNAPI 1.2's statistics as OpenVX kernels: LOG_SOFTMAX, INSTANCE_NORMALIZATION and REDUCE_MAX, REDUCE_MIN,
REDUCE_PROD, REDUCE_SUM, REDUCE_ALL, REDUCE_ANY.

Whole-array float64 passes (``moments``), stored once; the reductions fold each output's elements in float64
in one compiled loop (``axis_reduction``; a native entry, so graphs holding them run from C), float16 in NumPy
(``reduction``: numba compiles no float16); uint8 REDUCE_MAX and REDUCE_MIN compare
the raw values (input and output share a quantization: the lowering checks it); REDUCE_ALL and REDUCE_ANY are the
minimum and the maximum of booleans' bytes 0 and 1.
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import axis_reduction, moments, reduction
from .common import F32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

MAX_RANK = 6
BOOL, F16 = np.dtype(np.bool_), np.dtype(np.float16)


def _infer_log_softmax(args: Args):
    shape = rank_in(args, "input", tuple(range(1, MAX_RANK + 1)))
    axis = int(args["axis"])
    require(0 <= axis < len(shape), "axis", f"axis {axis} is outside 0..{len(shape) - 1}",
            Status.VX_ERROR_INVALID_VALUE)
    require(args["beta"] > 0, "beta", f"beta {args['beta']} must be positive", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (shape, dtype_in(args, "input", (F16, F32)))}


def _run_log_softmax(args: Args) -> None:
    """out = beta * x - log(sum(exp(beta * x))) along ``axis``."""
    moments.log_softmax(args["input"], args["output"], int(args["axis"]), float(args["beta"]))


nnapi_kernel(NNAPIKernel("log_softmax", 64, ("input",), ("output",), _infer_log_softmax, _run_log_softmax,
                         ints=("axis",), floats=("beta",)))


def _infer_instance(args: Args):
    shape = rank_in(args, "input", (4,))
    require(args["epsilon"] >= 0, "epsilon", f"epsilon {args['epsilon']} is negative", Status.VX_ERROR_INVALID_VALUE)
    return {"output": (shape, dtype_in(args, "input", (F16, F32)))}


def _run_instance(args: Args) -> None:
    """out = (x - mean) * gamma / sqrt(var + epsilon) + beta, mean and (biased) variance per image and channel
    over height and width."""
    axes = (2, 3) if args["nchw"] else (1, 2)
    moments.normalize(args["input"], args["output"], axes, "standardize", float(args["epsilon"]),
                      np.float64(args["gamma"]), np.float64(args["beta"]))


nnapi_kernel(NNAPIKernel("instance_normalization", 57, ("input",), ("output",), _infer_instance, _run_instance,
                         ints=("nchw",), floats=("gamma", "beta", "epsilon")))


def _reduced(args: Args) -> list[int]:
    mask, rank = int(args["axes"]), len(args["input"].shape)
    require(0 < mask < 1 << rank, "axes", f"axes mask {mask} must name at least one of the {rank} axes",
            Status.VX_ERROR_INVALID_VALUE)
    return [i for i in range(rank) if mask >> i & 1]


def _reduce_kernel(op: str, index: int, operation: str, types: tuple[np.dtype, ...]) -> None:
    def infer(args: Args):
        shape = rank_in(args, "input", (1, 2, 3, 4))
        dtype = dtype_in(args, "input", types)
        axes = _reduced(args)
        if args["keep_dims"]:
            out = tuple(1 if i in axes else d for i, d in enumerate(shape))
        else:  # every axis reduced: one element of shape [1] (as MEAN)
            out = tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)
        return {"output": (out, dtype)}

    def run(args: Args) -> None:
        x = args["input"]
        (reduction if x.dtype == F16 else axis_reduction).reduce(x, args["output"], _reduced(args), operation)
    run.__doc__ = f"out = the {operation} over the axes of ``axes`` (a bit mask), float64, stored once."
    nnapi_kernel(NNAPIKernel(op, index, ("input",), ("output",), infer, run, ints=("axes", "keep_dims"),
                             native=lambda args: native_reduction(args, _reduced(args), operation)))


def native_reduction(args: Args, axes: list[int], operation: str):
    """The compiled loop's native entry (float16, which numba does not compile, stays on the Python path)."""
    if args["input"].dtype == F16:
        return None
    return axis_reduction.native_entry(args["input"], args["output"], axes, operation)


_reduce_kernel("reduce_max", 77, "max", (F16, F32, U8))
_reduce_kernel("reduce_min", 78, "min", (F16, F32, U8))
_reduce_kernel("reduce_prod", 79, "prod", (F16, F32))
_reduce_kernel("reduce_sum", 80, "sum", (F16, F32))
_reduce_kernel("reduce_all", 75, "min", (BOOL, U8))
_reduce_kernel("reduce_any", 76, "max", (BOOL, U8))
