"""Tensor add, subtract and multiply (OpenVX 1.2 vxTensorAdd/Subtract/MultiplyNode).

Integer tensors are computed exactly in int64 and rounded (multiply only)
and fitted once. Both inputs broadcast NumPy-style against the output's shape
(OpenVX itself only broadcasts ``in2``, along dims of length 1).

Multiply, integers. ``float32(scale)`` is a dyadic rational ``m * 2**e``
(``|m| < 2**24``, see ``fixed_point.dyadic``), so the exact result in units of
the output's LSB is ``in1 * in2 * m / 2**t`` with ``t = p1 + p2 - p_out - e``.
When the scale is ``float32(1/255)`` the exact rational 1/255 is used instead
(``m = 1``, divisor 255), as OpenVX requires 1/255 to be exact: e.g.
``255 * 255 * (1/255) == 255`` where the float32 value would give 254.99...
Int64 cannot overflow: ``|in1|, |in2| <= 2**15`` for 16-bit data, so
``|in1 * in2| <= 2**30`` and ``|in1 * in2 * m| < 2**54``, inside the helpers'
``|v| < 2**62`` domain; the 1/255 divisor ``255 << t`` stays below ``2**62``
for ``t <= 53``, and a left shift is fitted by comparison before shifting.
"""
from __future__ import annotations

import numpy as np

from ..support import jit
from ..support.fixed_point import ONE_255, dyadic, fit, float32_value, int_range, requantize_ratio
from ..support.jit import kernel
from ..support.layout import detach, loop_views


@kernel
def _add_sub_int(a, b, out, subtract, saturate, lo, hi):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            x = np.int64(a[i0, i1, i2, i3, i4, i5])
                            y = np.int64(b[i0, i1, i2, i3, i4, i5])
                            v = x - y if subtract else x + y
                            out[i0, i1, i2, i3, i4, i5] = fit(v, lo, hi, saturate)


@kernel
def _add_sub_float(a, b, out, subtract):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            x = a[i0, i1, i2, i3, i4, i5]
                            y = b[i0, i1, i2, i3, i4, i5]
                            out[i0, i1, i2, i3, i4, i5] = x - y if subtract else x + y


@kernel
def _multiply_int(a, b, out, m, shift, divisor, nearest_even, saturate, lo, hi):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            v = np.int64(a[i0, i1, i2, i3, i4, i5]) * np.int64(b[i0, i1, i2, i3, i4, i5]) * m
                            out[i0, i1, i2, i3, i4, i5] = requantize_ratio(
                                v, shift, divisor, nearest_even, saturate, lo, hi)


@kernel
def _multiply_float(a, b, out, scale):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            v = np.float64(a[i0, i1, i2, i3, i4, i5]) * np.float64(b[i0, i1, i2, i3, i4, i5])
                            out[i0, i1, i2, i3, i4, i5] = np.float32(v * scale)


def _is_float(*arrays: np.ndarray) -> bool:
    kinds = {x.dtype.kind for x in arrays}
    if kinds == {"f"}:
        if any(x.dtype != np.float32 for x in arrays):
            raise ValueError(f"float tensors must be float32, got {[str(x.dtype) for x in arrays]}")
        return True
    if "f" in kinds:
        raise ValueError(f"cannot mix float and integer tensors: {[str(x.dtype) for x in arrays]}")
    return False


def _add_sub(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool, subtract: bool) -> None:
    views = loop_views(out, detach(out, in1, True), detach(out, in2, True))
    if views is None:
        return
    o, a, b = views
    types = (jit.array_in(a), jit.array_in(b), jit.array_out(o), jit.BOOL)
    if _is_float(in1, in2, out):
        jit.entry(_add_sub_float, *types)(a, b, o, subtract)
        return
    lo, hi = int_range(out.dtype)
    jit.entry(_add_sub_int, *types, jit.BOOL, jit.INT, jit.INT)(a, b, o, subtract, bool(saturate), lo, hi)


def add(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool) -> None:
    """``out = in1 + in2`` element-wise, in place.

    Integers: the raw values (all three tensors share one fixed point
    position, so it plays no part) are added exactly, then saturated to
    ``out``'s range (``saturate``) or wrapped two's-complement. float32: plain
    float32 addition; ``saturate`` is ignored. ``in1`` and ``in2`` broadcast
    against ``out.shape``.
    """
    _add_sub(in1, in2, out, saturate, subtract=False)


def subtract(in1: np.ndarray, in2: np.ndarray, out: np.ndarray, saturate: bool) -> None:
    """``out = in1 - in2`` element-wise, in place; otherwise exactly as :func:`add`."""
    _add_sub(in1, in2, out, saturate, subtract=True)


def multiply(in1: np.ndarray, in2: np.ndarray, scale: float, out: np.ndarray, saturate: bool,
             nearest_even: bool, *, fpp1: int = 0, fpp2: int = 0, fpp_out: int = 0) -> None:
    """``out = in1 * in2 * scale`` element-wise, in place, rounded once and fitted once.

    Integers: the exact value in units of ``out``'s LSB is
    ``in1_raw * in2_raw * scale / 2**(fpp1 + fpp2 - fpp_out)``; it is rounded
    toward zero or to nearest with ties to even (``nearest_even``), then
    saturated or wrapped. ``scale`` is taken as its float32 value exactly,
    except that ``float32(1/255)`` means exactly 1/255; a scale that is not a
    finite float32 raises ValueError. float32 tensors: ``float32(float64(in1)
    * float64(in2) * float64(float32(scale)))`` (IEEE, no special 1/255 rule);
    the policies and positions are ignored.
    """
    views = loop_views(out, detach(out, in1, True), detach(out, in2, True))
    if views is None:
        return
    o, a, b = views
    arrays = (jit.array_in(a), jit.array_in(b), jit.array_out(o))
    if _is_float(in1, in2, out):
        jit.entry(_multiply_float, *arrays, jit.FLOAT)(a, b, o, float32_value(scale))
        return
    if float32_value(scale) == ONE_255:
        m, e, divisor = 1, 0, 255
    else:
        (m, e), divisor = dyadic(scale), 1
    lo, hi = int_range(out.dtype)
    shift = fpp1 + fpp2 - fpp_out - e
    function = jit.entry(_multiply_int, *arrays, jit.INT, jit.INT, jit.INT, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    function(a, b, o, m, shift, divisor, bool(nearest_even), bool(saturate), lo, hi)
