"""Tensor transpose (OpenVX 1.2 vxTensorTransposeNode)."""
from __future__ import annotations

import functools

import numpy as np
from numba import types

from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import detach, loop_views


@kernel
def _copy(src, out):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            out[i0, i1, i2, i3, i4, i5] = src[i0, i1, i2, i3, i4, i5]


@kernel
def _copy_bytes(target, source):
    native.copy_bytes(target.ctypes.data, source.ctypes.data, target.size)


_BYTES_IN, _BYTES_OUT = (types.Array(types.uint8, 1, "C", readonly=r) for r in (True, False))


@functools.cache
def _bytes_runner():
    return jit.entry(_copy_bytes, _BYTES_OUT, _BYTES_IN)


RUN_BYTES = 4096
"""Copies of one contiguous run from this size on go through ``native.copy_bytes`` (not NumPy's ``memcpy``)."""


def copy_run(src: np.ndarray, out: np.ndarray) -> bool:
    """``out[...] = src`` as one run of bytes (``native.copy_bytes``) when both are contiguous in one order, of one
    dtype and shape, apart, and at least :data:`RUN_BYTES`; else False, nothing done (NumPy's assignment is
    cheaper below that size: the byte loop's entry costs a few microseconds). Raises ValueError for a read-only
    ``out`` (the compiled loop would write it regardless)."""
    if out.nbytes < RUN_BYTES:  # first: a model's small output is copied right after its run, from cold caches
        return False
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    if src.dtype != out.dtype or src.shape != out.shape:
        return False
    if src.flags.c_contiguous and out.flags.c_contiguous:
        order = "C"
    elif src.flags.f_contiguous and out.flags.f_contiguous:
        order = "F"
    else:
        return False
    if np.may_share_memory(src, out):
        return False
    _bytes_runner()(out.reshape(-1, order=order).view(np.uint8), src.reshape(-1, order=order).view(np.uint8))
    return True


def copy(src: np.ndarray, out: np.ndarray) -> None:
    """``out[...] = src`` for arrays of one dtype, any strides, ``src`` broadcast to ``out.shape``; ValueError for a
    read-only ``out``."""
    if src.dtype != out.dtype:
        raise ValueError(f"copy needs one data type, got {src.dtype} and {out.dtype}")
    if copy_run(src, out):
        return
    if not out.flags.writeable:  # the compiled loop would write it regardless
        raise ValueError("out is read-only")
    views = loop_views(out, detach(out, src, True))
    if views is None:
        return
    o, s = views
    jit.entry(_copy, jit.array_in(s), jit.array_out(o))(s, o)


def transpose(x: np.ndarray, out: np.ndarray, dim1: int, dim2: int) -> None:
    """``out`` = ``x`` with axes ``dim1`` and ``dim2`` swapped (``out.shape`` has them swapped), in place.

    Pure data movement, so every data type and fixed point position is
    carried unchanged; ``dim1 == dim2`` is a copy. ``out`` may overlap ``x``
    (``x`` is then copied first).
    """
    copy(np.swapaxes(detach(out, x), dim1, dim2), out)


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
@native.factory
def _native_copy(dtype: type) -> int:
    def entry(block):
        _copy(native.array(block, 0, dtype), native.array(block, 13, dtype))
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, dim1: int, dim2: int) -> native.Entry | None:
    """:func:`transpose` as a native entry; None when empty or when ``x`` overlaps ``out`` (a copy per run)."""
    if np.may_share_memory(out, x):
        return None
    views = loop_views(out, np.swapaxes(x, dim1, dim2))
    if views is None:
        return None
    o, s = views
    return native.Entry(_native_copy(out.dtype.type), *native.pack(s, o))
