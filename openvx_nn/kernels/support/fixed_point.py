"""Exact fixed-point steps shared by all kernels: rounding shifts and divisions, and fitting into a type.

The jitted helpers work on int64 values ``v`` with ``|v| < 2**62`` and target
integer types of at most 32 bits described by their range ``lo .. hi``
(``int_range``). Within that domain every step is exact: no intermediate
value overflows int64. The NN layers reuse them for the contract's steps 4
(one rounding right shift) and 5 (saturate or wrap).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .jit import kernel


@kernel
def round_shift(v, shift, nearest_even):
    """``v / 2**shift`` for ``shift >= 0``, rounded to zero or to nearest with ties to even."""
    if shift <= 0:
        return v
    if shift >= 63:  # |v| < 2**62 <= 2**(shift - 1): below one half, so both policies give 0
        return v * 0
    q = v >> shift  # arithmetic shift: floor
    r = v - (q << shift)  # 0 <= r < 2**shift
    if nearest_even:
        half = np.int64(1) << (shift - 1)
        if r > half or (r == half and (q & 1) == 1):
            q += 1
    elif q < 0 and r != 0:
        q += 1
    return q


@kernel
def round_div(v, divisor, nearest_even):
    """``v / divisor`` for ``divisor > 0``, rounded to zero or to nearest with ties to even."""
    q = v // divisor  # floor
    r = v - q * divisor  # 0 <= r < divisor
    if nearest_even:
        if 2 * r > divisor or (2 * r == divisor and (q & 1) == 1):
            q += 1
    elif q < 0 and r != 0:
        q += 1
    return q


@kernel
def wrap(v, lo, hi):
    """The low bits of ``v`` as a value of the two's-complement type ``lo .. hi``."""
    span = hi - lo + 1
    u = v & (span - 1)
    if u > hi:
        u -= span
    return u


@kernel
def fit(v, lo, hi, saturate):
    """``v`` clamped to ``lo .. hi`` (saturate) or wrapped into it."""
    if saturate:
        if v > hi:
            return hi
        if v < lo:
            return lo
        return v
    return wrap(v, lo, hi)


@kernel
def left_shift_fit(v, shift, lo, hi, saturate):
    """``v * 2**shift`` (``shift >= 0``, exact) fitted into ``lo .. hi`` without overflowing int64."""
    if saturate:
        shift = min(shift, 61)  # any nonzero v times 2**61 is beyond every 32-bit range already
        if v > (hi >> shift):
            return hi
        if v < -((-lo) >> shift):  # v * 2**shift < lo  <=>  v < ceil(lo / 2**shift)
            return lo
        return v << shift
    span = hi - lo + 1
    if shift >= 32:  # span <= 2**32: the low bits that remain are all zero
        return v * 0
    return wrap((v & (span - 1)) << shift, lo, hi)


@kernel
def requantize(v, shift, nearest_even, saturate, lo, hi):
    """``v / 2**shift`` rounded once, then fitted: the contract's steps 4 and 5. A negative shift is exact."""
    if shift >= 0:
        return fit(round_shift(v, shift, nearest_even), lo, hi, saturate)
    return left_shift_fit(v, -shift, lo, hi, saturate)


@kernel
def requantize_lane(v, shift, nearest_even, saturate, lo, hi):
    """:func:`requantize` for ``0 <= shift < 62`` without data-dependent branches, so that a loop of it
    vectorizes (the policy tests do not depend on ``v``: LLVM hoists them out of the loop; :func:`fit`'s
    comparisons become selects).

    For ``0 < shift < 62`` and ``|v| < 2**62``: adding ``2**(shift-1) - 1`` plus the bit that lands in
    the last kept place rounds half to even; adding ``2**shift - 1`` to negatives rounds toward zero.
    The additions stay below ``2**63``, so they are exact.
    """
    if shift > 0:
        if nearest_even:
            v = (v + ((np.int64(1) << (shift - 1)) - 1) + ((v >> shift) & 1)) >> shift
        else:
            v = (v + ((v >> 63) & ((np.int64(1) << shift) - 1))) >> shift
    return fit(v, lo, hi, saturate)


@kernel
def requantize_run(values, n, shift, nearest_even, saturate, lo, hi):
    """:func:`requantize` of ``values[:n]`` (int64, in place), in a flat loop LLVM vectorizes
    (:func:`requantize_lane`) when ``0 <= shift < 62``; other shifts take the scalar path."""
    if 0 <= shift < 62:
        for i in range(n):
            values[i] = requantize_lane(values[i], shift, nearest_even, saturate, lo, hi)
        return
    for i in range(n):
        values[i] = requantize(values[i], shift, nearest_even, saturate, lo, hi)


@kernel
def requantize_ratio(v, shift, divisor, nearest_even, saturate, lo, hi):
    """``v / (divisor * 2**shift)`` rounded once, then fitted (``divisor > 0``, ``divisor << shift < 2**62``)."""
    if divisor == 1:
        return requantize(v, shift, nearest_even, saturate, lo, hi)
    if shift >= 0:
        return fit(round_div(v, divisor << shift, nearest_even), lo, hi, saturate)
    return fit(round_div(v << -shift, divisor, nearest_even), lo, hi, saturate)


@kernel
def float_to_int(x, lo, hi, saturate):
    """A float64 rounded to nearest, ties to even, then saturated or wrapped into ``lo .. hi``.

    Saturation sends +inf to ``hi`` and -inf to ``lo``; NaN gives 0, and so does
    any non-finite value when wrapping. Wrapping a huge finite value is exact
    (``fmod`` by the type's span is exact in IEEE arithmetic).
    """
    r = np.rint(x)
    if saturate:
        if math.isnan(r):
            return np.int64(0)
        if r >= hi:
            return np.int64(hi)
        if r <= lo:
            return np.int64(lo)
        return np.int64(r)
    if not math.isfinite(r):
        return np.int64(0)
    return wrap(np.int64(np.fmod(r, np.float64(hi - lo + 1))), lo, hi)


# ---- Python-side helpers for dispatchers ----------------------------------------------------------

def int_range(dtype: np.dtype) -> tuple[int, int]:
    """``(lo, hi)`` of an integer dtype of at most 32 bits."""
    info = np.iinfo(dtype)
    if info.bits > 32:
        raise ValueError(f"integer tensors of {info.bits} bits are not supported; expected at most 32")
    return int(info.min), int(info.max)


def float32_value(x: float) -> float:
    """``x`` rounded to float32 (as OpenVX's vx_float32 scalars hold it); too large gives +-inf."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


ONE_255 = float32_value(1 / 255)


def dyadic(scale: float) -> tuple[int, int]:
    """``(m, e)`` with ``float32(scale) == m * 2**e`` exactly and ``m`` odd (or zero) and ``|m| < 2**24``."""
    value = float32_value(scale)
    if not math.isfinite(value):
        raise ValueError(f"scale {scale!r} is not a finite float32 value")
    if value == 0.0:
        return 0, 0
    ratio = Fraction(value)
    m, den = ratio.numerator, ratio.denominator
    e = -(den.bit_length() - 1)  # den is a power of two
    while m % 2 == 0:
        m //= 2
        e += 1
    return m, e
