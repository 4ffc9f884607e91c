"""NNAPI SOFTMAX, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION as OpenVX
kernels: all along the last (depth) axis, in float64 from the exact inputs (float32, float16 or uint8), rounded
once to the output's type."""
from __future__ import annotations

import math

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import depth_normalization as dn
from .common import F32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

Q = ("input", "output")
F16 = np.dtype(np.float16)
RANKS = (1, 2, 3, 4)
"""API level 29's ranks (1.0's were 2 or 4 for SOFTMAX, 4 for the others): the kernels normalize along the last axis
whatever the rank."""


def _same(ranks: tuple[int, ...]):
    def infer(args: Args):
        shape = rank_in(args, "input", ranks)
        dtype = dtype_in(args, "input", (F32, U8, F16))
        # The seed says LRN's bias "must not be zero", but NNAPI's own tests use 0.0 and Android's
        # reference driver runs them: bias 0 is accepted and gives what the formula gives.
        for name, low, what in (("beta", 0.0, "positive"), ("bias", None, "non-negative"),
                                ("alpha", -math.inf, "finite")):
            if name in args.scalars:
                value = args.scalars[name]
                ok = math.isfinite(value) and (value >= 0 if low is None else value > low)
                require(ok, name, f"{name} is {value}, expected a {what} number", Status.VX_ERROR_INVALID_VALUE)
        if "radius" in args.scalars:
            require(args["radius"] >= 0, "radius", f"radius {args['radius']} is negative",
                    Status.VX_ERROR_INVALID_VALUE)
        return {"output": (shape, dtype)}
    return infer


def _run_softmax(args: Args) -> None:
    """exp((x - max) * beta) / sum over the last axis."""
    dn.softmax_last_axis(args["input"], args["output"], args["beta"], args.quant("input"), args.quant("output"))


def _run_l2(args: Args) -> None:
    """x / sqrt(sum x^2) over the last axis (zeros stay zeros)."""
    dn.l2_normalization(args["input"], args["output"], args.quant("input"), args.quant("output"))


def _run_lrn(args: Args) -> None:
    """x / (bias + alpha * windowed sum of squares over depth) ** beta."""
    dn.local_response_normalization(args["input"], args["output"], args["radius"], args["bias"], args["alpha"],
                                    args["beta"], args.quant("input"), args.quant("output"))


nnapi_kernel(NNAPIKernel("softmax", 25, ("input",), ("output",), _same(RANKS), _run_softmax, floats=("beta",),
                         quantized=Q))
nnapi_kernel(NNAPIKernel("l2_normalization", 11, ("input",), ("output",), _same(RANKS), _run_l2, quantized=Q))
nnapi_kernel(NNAPIKernel("local_response_normalization", 13, ("input",), ("output",), _same(RANKS), _run_lrn,
                         ints=("radius",), floats=("bias", "alpha", "beta"), quantized=Q))
