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
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit, native
from ..support.layout import loop_views


@intrinsic
def _as_float(typingctx, bits):
    """The float32 whose bits the uint32 ``bits`` hold."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


@intrinsic
def _as_bits(typingctx, value):
    """The uint32 bits of the float32 ``value``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


_U = np.uint32
_MAGIC_SMALL = np.float32(2.0 ** -14)  # the smallest normal half: a subnormal's implicit scale
_MAGIC_ROUND = np.float32(0.5)  # bits (126 << 23): adding it to a value below 2**-14 rounds to a 2**-24 multiple


@jit.jitable
def widen_bits(h):
    """The float32 bits of the binary16 bits ``h`` (exact); selects, not branches, so the loops vectorize."""
    h32 = _U(h)
    o = (h32 & _U(0x7FFF)) << _U(13)
    exponent = o & _U(0x0F800000)
    o += _U(0x38000000)  # the exponent bias, 127 - 15
    o = o + _U(0x38000000) if exponent == _U(0x0F800000) else o  # infinity and NaN keep an all-ones exponent
    # a subnormal or zero: as the normal number 2**-14 * (1 + m/1024), less 2**-14, exactly m * 2**-24
    small = _as_bits(_as_float(o + _U(0x00800000)) - _MAGIC_SMALL)
    o = small if exponent == _U(0) else o
    return o | ((h32 & _U(0x8000)) << _U(16))


@jit.jitable
def narrow_bits(f):
    """The binary16 bits nearest the float32 bits ``f``, ties to even (from 65520 on: infinity; NaN keeps its
    payload's high bits, at least one set), as NumPy rounds; selects, not branches, so the loops vectorize."""
    sign = f & _U(0x80000000)
    a = f ^ sign
    significand = a & _U(0x007FFFFF)
    high = significand >> _U(13)
    nan = _U(0x7C00) + high + (_U(1) if high == _U(0) else _U(0))
    huge = nan if a > _U(0x7F800000) else _U(0x7C00)  # 65536 and more (and infinity): infinity
    # below 2**-14: the float addition rounds to a multiple of 2**-24 (nearest-even), the sum's low bits are it
    tiny = _as_bits(_as_float(a) + _MAGIC_ROUND) - _U(0x3F000000)
    # normal: rebias, then round half to even on the 13 dropped bits (a carry steps the exponent, up to infinity)
    normal = (a + _U(0xC8000FFF) + ((a >> _U(13)) & _U(1))) >> _U(13)
    o = huge if a >= _U(0x47800000) else (tiny if a < _U(0x38800000) else normal)
    return np.uint16(o | (sign >> _U(16)))


@jit.kernel
def _convert(src, dst, widen):
    """``dst`` from ``src`` on 6-D loop views: uint16 bits of binary16 into uint32 bits of float32 (``widen``) or
    back."""
    n0, n1, n2, n3, n4, n5 = dst.shape
    for a in range(n0):
        for b in range(n1):
            for c in range(n2):
                for d in range(n3):
                    for e in range(n4):
                        for i in range(n5):
                            v = src[a, b, c, d, e, i]
                            dst[a, b, c, d, e, i] = widen_bits(v) if widen else narrow_bits(v)


@jit.kernel
def _widen_flat(src, dst):
    """:func:`_convert`, widening, on contiguous runs (1-D): the loop LLVM vectorizes."""
    for i in range(dst.size):
        dst[i] = widen_bits(src[i])


@jit.kernel
def _narrow_flat(src, dst):
    """:func:`_convert`, narrowing, on contiguous runs (1-D)."""
    for i in range(dst.size):
        dst[i] = narrow_bits(src[i])


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


def _flat(views: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """Both 6-D views as 1-D contiguous arrays when they are one run each (packed tensors alike), else None."""
    for v in views:
        if any(n != 1 for n in v.shape[:-1]) or v.strides[-1] != v.itemsize:
            return None
    return tuple(np.lib.stride_tricks.as_strided(v, (v.shape[-1],), (v.itemsize,), writeable=k == 1)
                 for k, v in enumerate(views))


def _nothing() -> None:
    pass


def bind(src: np.ndarray, dst: np.ndarray, widen: bool) -> Callable[[], None]:
    """A no-argument call converting ``src`` into ``dst`` (float16 into float32 when ``widen``, else back);
    same shape, any strides, not overlapping."""
    views = _views(src, dst, widen)
    if views is None:
        return _nothing
    flat = _flat(views)
    if flat is not None:
        s, d = flat
        kernel = jit.entry(_widen_flat if widen else _narrow_flat, jit.array_in(s, "C"), jit.array_out(d, "C"))
    else:
        s, d = views
        general = jit.entry(_convert, jit.array_in(s), jit.array_out(d), jit.BOOL)
        return lambda: general(s, d, widen)
    return lambda: kernel(s, d)


def convert(src: np.ndarray, dst: np.ndarray, widen: bool) -> None:
    """:func:`bind`'s call, once."""
    bind(src, dst, widen)()


@native.factory
def _native_convert(widen: bool, flat: bool) -> int:
    source, target = (np.uint16, np.uint32) if widen else (np.uint32, np.uint16)
    runs = _widen_flat if widen else _narrow_flat
    if flat:
        def entry(block):
            n = block[6]
            runs(native.c_array(block, 0, source).reshape(n), native.c_array(block, 13, target).reshape(n))
            return 0
    else:
        def entry(block):
            _convert(native.array(block, 0, source), native.array(block, 13, target), widen)
            return 0
    return jit.native(entry)


def native_entry(src: np.ndarray, dst: np.ndarray, widen: bool) -> native.Entry | None:
    """:func:`bind` as a native entry; None when empty (nothing to run)."""
    views = _views(src, dst, widen)
    if views is None:
        return None
    flat = _flat(views) is not None
    return native.Entry(_native_convert(bool(widen), flat), *native.pack(*views))
