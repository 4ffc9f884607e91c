"""The float64 round trip of the nonlinear layers: exact dequantization in, one rounding and saturation out.

A raw integer ``r`` of a tensor with fixed point position ``p`` is the real
``r / 2**p``, exact in float64 for every integer of at most 32 bits. A real
``v`` goes back as ``v * 2**p`` (exact: a power of two) rounded to nearest
with ties to even, then saturated to the type (``fixed_point.float_to_int``:
NaN gives 0, +-inf the type's limits). float32 tensors have no fixed point
position: their value is ``float64(x)``, and a result goes back as
``float32(v)``, one round-to-nearest-even cast (overflow gives +-inf), except
that every NaN is stored as the one canonical quiet NaN ``0x7FC00000``, so
results are reproducible bit for bit whatever NaN payload or sign the
arithmetic produced.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..support.fixed_point import float_to_int, int_range
from ..support.jit import kernel

DTYPES = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.float32))


@kernel
def quantize(v, scale, lo, hi, to_int):
    """The float64 ``v`` as the value to store: a raw integer (``to_int``) or a float to cast to float32."""
    if to_int:
        return np.float64(float_to_int(v * scale, lo, hi, True))
    if math.isnan(v):
        return np.nan
    return v


@dataclass(frozen=True)
class Quantization:
    """The scalars the kernels take for one input and one output tensor (see :func:`plan`)."""

    in_unit: float  # 2**fpp_in: real = raw / in_unit
    scale: float  # 2**fpp_out: raw = real * scale, rounded and saturated
    lo: int
    hi: int
    to_int: bool  # False: float32 output

    def args(self) -> tuple[float, float, int, int, bool]:
        return self.in_unit, self.scale, self.lo, self.hi, self.to_int


def check_pair(x: np.ndarray, out: np.ndarray) -> None:
    """ValueError unless ``x`` and ``out`` have one supported dtype and the same shape."""
    if x.dtype != out.dtype:
        raise ValueError(f"input dtype {x.dtype} and output dtype {out.dtype} differ; expected the same")
    if x.dtype not in DTYPES:
        raise ValueError(f"dtype {x.dtype} is not supported; expected one of uint8, int8, int16, float32")
    if x.shape != out.shape:
        raise ValueError(f"input shape {x.shape} and output shape {out.shape} differ; expected the same")
    if not 1 <= x.ndim <= 6:
        raise ValueError(f"tensor of rank {x.ndim} is not supported; expected 1 to 6")


def plan(dtype: np.dtype, fpp_in: int, fpp_out: int) -> Quantization:
    """How to dequantize ``dtype`` at ``fpp_in`` and quantize back at ``fpp_out`` (float32 ignores both)."""
    if dtype.kind == "f":
        return Quantization(1.0, 1.0, 0, 0, False)
    lo, hi = int_range(dtype)
    return Quantization(2.0 ** int(fpp_in), 2.0 ** int(fpp_out), lo, hi, True)
