"""IEEE binary16 (``VX_TYPE_FLOAT16``) at the edges of the float32 kernels: widen to float32, narrow back.

A float16 layer computes nothing of its own: its inputs are widened to float32 (exact: every binary16 value is a
float32), the float32 kernel runs, and each output is narrowed once to binary16, rounded to nearest with ties to
even (NumPy's ``astype(np.float16)``): values past the largest half (65504) round to infinity, tiny ones to
subnormals or a signed zero, NaN stays NaN with its payload's high bits. numba has no float16 type, so both
directions work on the bit patterns (``uint16`` and ``uint32`` views of the arrays), with ``support/binary16``'s
conversions (the one definition, which the pooling window passes also run on vectors).

Packed tensors convert in units of ``UNIT`` values that the engine's helpers share (``float_sharing``, and the
gang for native entries) from ``SHARED_VALUES`` values on: a conversion reads and writes memory at the rate one
core gives, a pooling or an activation layer a fraction of it. Kernels that read or write binary16 themselves
call :func:`widen` and :func:`narrow` per value.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..frontend import float_sharing
from ..support import jit, native
from ..support.binary16 import narrow_bits, widen_bits
from ..support.bit_casts import bits_of_float, float_of_bits
from ..support.layout import each_element, loop_views


@jit.jitable
def widen(h):
    """The float32 value of the binary16 bits ``h`` (uint16), exactly."""
    return float_of_bits(widen_bits(h))


@jit.jitable
def narrow(value):
    """The binary16 bits (uint16) nearest the float32 ``value``, ties to even (:func:`narrow_bits`)."""
    return narrow_bits(bits_of_float(value))


_EACH_WIDENED, _EACH_NARROWED = each_element(widen_bits), each_element(narrow_bits)


@jit.kernel
def _convert(src, dst, widen):
    """``dst`` from ``src`` on 6-D loop views: uint16 bits of binary16 into uint32 bits of float32 (``widen``) or
    back."""
    if widen:
        _EACH_WIDENED(dst, (src,), ())
    else:
        _EACH_NARROWED(dst, (src,), ())


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


UNIT = 16384
"""Values a unit of a shared flat conversion (64 KiB of float32)."""
SHARED_VALUES = 1 << 17
"""Values from which a bound conversion shares its units with the helpers (about 40 us on one core); a native
entry shares from ``float_sharing.NATIVE_PARALLEL_WORK`` values on, its helpers already spinning."""


@jit.kernel
def _widen_units(src, dst, u0, u1):
    """Units ``[u0, u1)`` of :func:`_widen_flat` (on slices: a loop indexed from a variable start would not
    vectorize, numba cannot tell its index is never negative)."""
    lo, hi = u0 * UNIT, min(u1 * UNIT, dst.size)
    s, d = src[lo:hi], dst[lo:hi]
    for i in range(d.size):
        d[i] = widen_bits(s[i])


@jit.kernel
def _narrow_units(src, dst, u0, u1):
    """Units ``[u0, u1)`` of :func:`_narrow_flat`."""
    lo, hi = u0 * UNIT, min(u1 * UNIT, dst.size)
    s, d = src[lo:hi], dst[lo:hi]
    for i in range(d.size):
        d[i] = narrow_bits(s[i])


_widen_shares, _narrow_shares = chunk_driver(_widen_units), chunk_driver(_narrow_units)


@jit.kernel
def _widen_shared(src, dst, n_units, n_chunks, counters, wait):
    _widen_shares((src, dst), n_units, n_chunks, counters, wait)


@jit.kernel
def _narrow_shared(src, dst, n_units, n_chunks, counters, wait):
    _narrow_shares((src, dst), n_units, n_chunks, counters, wait)


_U16, _U32 = (types.Array(t, 1, "C", readonly=r) for t, r in ((types.uint16, True), (types.uint32, False)))
_TYPES = {True: (_U16, _U32), False: (types.Array(types.uint32, 1, "C", readonly=True),
                                      types.Array(types.uint16, 1, "C"))}


def _units(n: int) -> int:
    return (n + UNIT - 1) // UNIT


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
        if d.size >= SHARED_VALUES:
            s = s.view()
            s.flags.writeable = False
            shared = (_widen_shared, _narrow_shared)[not widen]
            return float_sharing.Rows((_widen_units, _narrow_units)[not widen], shared, (s, d), _TYPES[widen],
                                      _units(d.size), float_sharing.PARALLEL_WORK)
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


_SRC, _DST, _COUNTERS = float_sharing.at(0), float_sharing.at(1), float_sharing.at(2)
_MAILBOX, _TASK, _CHUNKS = range(float_sharing.at(3), float_sharing.at(3) + 3)


@functools.cache
def _shared_bodies(widen: bool):
    """``gang.shared_entry``'s bodies of a flat conversion whose units the helpers may share."""
    source, target = (np.uint16, np.uint32) if widen else (np.uint32, np.uint16)
    units, shares = (_widen_units, _widen_shares) if widen else (_narrow_units, _narrow_shares)

    def lines(code, block, chunks, wait):
        src = native.c_array(block, _SRC, source)[0, 0, 0, 0, 0]
        dst = native.c_array(block, _DST, target)[0, 0, 0, 0, 0]
        n_units = (dst.size + UNIT - 1) // UNIT
        if chunks == 0:
            units(src, dst, 0, n_units)
        else:
            shares((src, dst), n_units, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)
    return gang.shared_entry(jit.jitable(lines), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _native_shared(widen: bool, helper: bool) -> int:
    return jit.native(_shared_bodies(widen)[int(helper)])


def native_entry(src: np.ndarray, dst: np.ndarray, widen: bool) -> native.Entry | None:
    """:func:`bind` as a native entry; None when empty (nothing to run)."""
    views = _views(src, dst, widen)
    if views is None:
        return None
    flat = _flat(views)
    if flat is not None and flat[1].size >= float_sharing.NATIVE_PARALLEL_WORK:
        s, d = flat
        task = gang.NativeTask(_units(d.size), True)
        words, keep = float_sharing.block_of(s, d, task.counters, *task.words())
        return native.Entry(_native_shared(bool(widen), False), words,
                            keep + task.finish(_native_shared(bool(widen), True), words))
    return native.Entry(_native_convert(bool(widen), flat is not None), *native.pack(*views))
