"""IEEE binary16 (``VX_TYPE_FLOAT16``) at the edges of the float32 kernels: widen to float32, narrow back.

A float16 layer computes nothing of its own: its inputs are widened to float32 (exact: every binary16 value is a
float32), the float32 kernel runs, and each output is narrowed once to binary16, rounded to nearest with ties to
even (NumPy's ``astype(np.float16)``): values past the largest half (65504) round to infinity, tiny ones to
subnormals or a signed zero, NaN stays NaN with its payload's high bits. numba has no float16 type, so both
directions work on the bit patterns (``uint16`` and ``uint32`` views of the arrays).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..support import jit, native
from ..support.layout import loop_views


@jit.jitable
def widen_bits(h):
    """The float32 bits of the binary16 bits ``h`` (exact)."""
    sign = np.uint32(h & 0x8000) << np.uint32(16)
    exponent = (h >> 10) & 0x1F
    mantissa = np.uint32(h & 0x3FF)
    if exponent == 0x1F:  # infinity or NaN (payload kept)
        return sign | np.uint32(0x7F800000) | (mantissa << np.uint32(13))
    if exponent == 0:
        if mantissa == 0:
            return sign
        shift = 0  # a subnormal: normalize the mantissa to a leading bit 10
        while (mantissa & 0x400) == 0:
            mantissa <<= np.uint32(1)
            shift += 1
        return sign | (np.uint32(113 - shift) << np.uint32(23)) | ((mantissa & np.uint32(0x3FF)) << np.uint32(13))
    return sign | (np.uint32(exponent + 112) << np.uint32(23)) | (mantissa << np.uint32(13))


@jit.jitable
def narrow_bits(f):
    """The binary16 bits nearest the float32 bits ``f``, ties to even (overflow gives infinity)."""
    sign = np.uint16((f >> np.uint32(16)) & np.uint32(0x8000))
    exponent = f & np.uint32(0x7F800000)
    if exponent >= np.uint32(0x47800000):  # 65536 or more, infinity, NaN
        significand = f & np.uint32(0x007FFFFF)
        if exponent == np.uint32(0x7F800000) and significand != 0:
            bits = np.uint32(0x7C00) + (significand >> np.uint32(13))
            if bits == np.uint32(0x7C00):  # a payload only in the low bits must still be a NaN
                bits += np.uint32(1)
            return sign | np.uint16(bits)
        return sign | np.uint16(0x7C00)
    if exponent <= np.uint32(0x38000000):  # below the smallest normal half: subnormal or zero
        if exponent < np.uint32(0x33000000):  # under half the smallest subnormal: a signed zero
            return sign
        e = exponent >> np.uint32(23)
        significand = np.uint32(0x00800000) + (f & np.uint32(0x007FFFFF))
        shifted = significand >> (np.uint32(113) - e)
        # round half to even: the bits shifted out (both shifts) decide
        if (shifted & np.uint32(0x3FFF)) != np.uint32(0x1000) or (f & np.uint32(0x7FF)) != 0:
            shifted += np.uint32(0x1000)
        return sign | np.uint16(shifted >> np.uint32(13))
    half_exponent = (exponent - np.uint32(0x38000000)) >> np.uint32(13)
    significand = f & np.uint32(0x007FFFFF)
    if (significand & np.uint32(0x3FFF)) != np.uint32(0x1000):
        significand += np.uint32(0x1000)
    # a carry out of the significand steps the exponent (up to infinity): the right result
    return sign | np.uint16((significand >> np.uint32(13)) + half_exponent)


@jit.kernel
def _widen(src, dst):
    """``dst`` (uint32 bits of float32) from ``src`` (uint16 bits of binary16), 6-D loop views."""
    n0, n1, n2, n3, n4, n5 = dst.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                for d in range(n3):
                    for e in range(n4):
                        for i in range(n5):
                            dst[a, b, c, d, e, i] = widen_bits(src[a, b, c, d, e, i])


@jit.kernel
def _narrow(src, dst):
    """``dst`` (uint16 bits of binary16) from ``src`` (uint32 bits of float32), 6-D loop views."""
    n0, n1, n2, n3, n4, n5 = dst.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                for d in range(n3):
                    for e in range(n4):
                        for i in range(n5):
                            dst[a, b, c, d, e, i] = narrow_bits(src[a, b, c, d, e, i])


def _views(src: np.ndarray, dst: np.ndarray, widen: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The bit views (``src``, ``dst``) as 6-D loop views; None when empty."""
    want = (np.float16, np.float32) if widen else (np.float32, np.float16)
    if (src.dtype, dst.dtype) != tuple(np.dtype(t) for t in want):
        raise ValueError(f"{'widening' if widen else 'narrowing'} takes {want[0].__name__} into "
                         f"{want[1].__name__}, got {src.dtype} into {dst.dtype}")
    if src.shape != dst.shape:
        raise ValueError(f"shapes differ: {src.shape} and {dst.shape}")
    if np.may_share_memory(src, dst):
        raise ValueError("the source and the target of a float16 conversion overlap")
    bits_src = src.view(np.uint16 if widen else np.uint32)
    bits_dst = dst.view(np.uint32 if widen else np.uint16)
    views = loop_views(bits_dst, bits_src)
    return None if views is None else (views[1], views[0])


def _nothing() -> None:
    pass


def bind(src: np.ndarray, dst: np.ndarray, widen: bool) -> Callable[[], None]:
    """A no-argument call converting ``src`` into ``dst`` (float16 into float32 when ``widen``, else back);
    same shape, any strides, not overlapping."""
    views = _views(src, dst, widen)
    if views is None:
        return _nothing
    s, d = views
    kernel = jit.entry(_widen if widen else _narrow, jit.array_in(s), jit.array_out(d))
    return lambda: kernel(s, d)


def convert(src: np.ndarray, dst: np.ndarray, widen: bool) -> None:
    """:func:`bind`'s call, once."""
    bind(src, dst, widen)()


@native.factory
def _native_widen() -> int:
    def entry(block):
        _widen(native.array(block, 0, np.uint16), native.array(block, 13, np.uint32))
        return 0
    return jit.native(entry)


@native.factory
def _native_narrow() -> int:
    def entry(block):
        _narrow(native.array(block, 0, np.uint32), native.array(block, 13, np.uint16))
        return 0
    return jit.native(entry)


def native_entry(src: np.ndarray, dst: np.ndarray, widen: bool) -> native.Entry | None:
    """:func:`bind` as a native entry; None when empty (nothing to run)."""
    views = _views(src, dst, widen)
    if views is None:
        return None
    return native.Entry(_native_widen() if widen else _native_narrow(), *native.pack(*views))
