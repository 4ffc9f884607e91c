"""Asymmetric 8-bit quantization (real = scale * (q - zero_point)): the one
requantization rule and the fused activation ranges every quantized kernel uses.

Sum-of-products results (an exact integer accumulator ``acc`` at scale
``s_acc``) go to the output scale ``s_out`` by the multiplier
``M = s_acc / s_out`` written as ``m * 2**-shift`` with ``m`` a 31-bit
integer (``2**30 <= m < 2**31``, ``m = round(frac(M) * 2**31)``).  The
product ``acc * m`` is exact in 64 bits for ``|acc| < 2**31`` and is rounded
once, half away from zero, by the right shift; the output zero point is then
added and the result clamped to the activation range.  Everything else
(nonlinear functions, averages, rescaled copies) is computed in float64 from
the exact dequantized values and rounded once, half to even.
"""
from __future__ import annotations

import math

import numpy as np

NO_QUANT = None
ACT_NONE, ACT_RELU, ACT_RELU1, ACT_RELU6 = 0, 1, 2, 3
_ACC_LIMIT = (1 << 31) - 1


def quantized_multiplier(real: float) -> tuple[int, int]:
    """``real`` as ``(m, shift)`` with ``real ~= m * 2**-shift`` and ``2**30 <= m < 2**31``."""
    if not real > 0 or not math.isfinite(real):
        raise ValueError(f"requantization multiplier {real} must be a positive finite number")
    fraction, exponent = math.frexp(real)
    m = round(fraction * (1 << 31))
    if m == 1 << 31:
        m //= 2
        exponent += 1
    return m, 31 - exponent


def rounding_shift(values: np.ndarray, shift: int) -> np.ndarray:
    """``values / 2**shift`` rounded half away from zero (int64 in, int64 out)."""
    if shift <= 0:
        return values << -shift
    if shift > 62:  # |values| < 2**62 <= 2**(shift - 1): everything rounds to zero
        return np.zeros_like(values)
    half = np.int64(1) << np.int64(shift - 1)
    magnitude = (np.abs(values) + half) >> np.int64(shift)
    return np.where(values < 0, -magnitude, magnitude)


def requantize(acc: np.ndarray, multiplier: float, zero_point: int, low: int, high: int) -> np.ndarray:
    """Integer accumulators at scale ``s_acc`` to raw output values (``multiplier = s_acc / s_out``)."""
    m, shift = quantized_multiplier(multiplier)
    product = np.clip(acc.astype(np.int64), -_ACC_LIMIT, _ACC_LIMIT) * np.int64(m)
    if shift < 0:  # a multiplier >= 2**31: keep the left shift far from overflowing
        product = np.clip(product, -(1 << 40), 1 << 40)
    return np.clip(rounding_shift(product, shift) + zero_point, low, high)


def round_away(x: float) -> int:
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)


def quantized_range(activation: int, scale: float, zero_point: int) -> tuple[int, int]:
    """The raw [low, high] a fused activation leaves in a uint8 output of (scale, zero point)."""
    def q(real: float) -> int:
        return zero_point + round_away(real / scale)
    if activation == ACT_RELU:
        return max(0, zero_point), 255
    if activation == ACT_RELU1:
        return max(0, q(-1.0)), min(255, q(1.0))
    if activation == ACT_RELU6:
        return max(0, zero_point), min(255, q(6.0))
    return 0, 255


def real_range(activation: int) -> tuple[float, float]:
    """The [low, high] a fused activation leaves in a float output."""
    return {ACT_RELU: (0.0, math.inf), ACT_RELU1: (-1.0, 1.0), ACT_RELU6: (0.0, 6.0)}.get(
        activation, (-math.inf, math.inf))


def dequantize(q: np.ndarray, quant: tuple[float, int] | None) -> np.ndarray:
    """Exact real values (float64) of raw data: ``scale * (q - zero_point)``, or a float array widened."""
    if quant is None:
        return np.asarray(q, np.float64)
    scale, zero_point = quant
    return (np.asarray(q, np.float64) - zero_point) * np.float64(scale)


def dequantize_per_channel(q: np.ndarray, scales: np.ndarray, axis: int) -> np.ndarray:
    """Exact real values (float64) of symmetric per-channel data: ``q * scales[c]``, ``c`` the index along
    ``axis``."""
    shape = [1] * q.ndim
    shape[axis] = -1
    return np.asarray(q, np.float64) * np.asarray(scales, np.float64).reshape(shape)


def store(real: np.ndarray, out: np.ndarray, quant: tuple[float, int] | None, activation: int = ACT_NONE) -> None:
    """Write float64 results into ``out`` after the fused activation: float32 by a cast,
    uint8 by ``zero_point + real / scale`` rounded half to even and clamped."""
    if quant is None:
        low, high = real_range(activation)
        out[...] = np.clip(real, low, high).astype(out.dtype)
        return
    scale, zero_point = quant
    low, high = quantized_range(activation, scale, zero_point)
    raw = np.rint(np.asarray(real, np.float64) / np.float64(scale)) + zero_point
    out[...] = np.clip(np.nan_to_num(raw, nan=zero_point), low, high).astype(out.dtype)


def quantize_half_away(real: np.ndarray, out: np.ndarray, quant: tuple[float, int]) -> None:
    """``out = clamp(round(real / scale) + zero_point, 0, 255)`` with halves rounded away from zero (NNAPI
    QUANTIZE's ``round``, as C's); NaN gives the zero point."""
    scale, zero_point = quant
    v = np.asarray(real, np.float64) / np.float64(scale)
    rounded = np.where(v < 0, -np.floor(-v + 0.5), np.floor(v + 0.5))
    out[...] = np.clip(np.nan_to_num(rounded + zero_point, nan=zero_point), 0, 255).astype(out.dtype)
