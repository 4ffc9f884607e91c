"""Tensor transpose (OpenVX 1.2 vxTensorTransposeNode)."""
from __future__ import annotations

import functools

import numpy as np
from numba import types

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..frontend.float_sharing import at, six
from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import detach, loop_views


@jit.jitable
def _copy_rows(src, out, r0, r1):
    """``out[...] = src`` over rows ``[r0, r1)`` of 6-D views (``loop_views``), a row being one index of the first
    five axes. Where both innermost axes are contiguous, each row is one ``native.copy_bytes``: a concatenation's
    copy into a channel slice of an NHWC tensor (a pixel's channels a run, the next pixel's a row further) went at
    13-16 GB/s element by element, 30-80 so (one thread, 7x7 to 56x56 maps of 32 to 992 channels, in cache)."""
    _, n1, n2, n3, n4, n5 = out.shape
    size = out.itemsize
    runs = n5 > 1 and out.strides[5] == size and src.strides[5] == size
    out_at, src_at = out.ctypes.data, src.ctypes.data
    o0, o1, o2, o3, o4, _ = out.strides
    s0, s1, s2, s3, s4, _ = src.strides
    q, i4 = divmod(r0, n4)  # the first row's indices; the next rows' follow without a division
    q, i3 = divmod(q, n3)
    q, i2 = divmod(q, n2)
    i0, i1 = divmod(q, n1)
    for _ in range(r0, r1):
        if runs:
            native.copy_bytes(out_at + i0 * o0 + i1 * o1 + i2 * o2 + i3 * o3 + i4 * o4,
                              src_at + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4, n5 * size)
        else:
            for i5 in range(n5):
                out[i0, i1, i2, i3, i4, i5] = src[i0, i1, i2, i3, i4, i5]
        i4 += 1
        if i4 == n4:
            i4, i3 = 0, i3 + 1
            if i3 == n3:
                i3, i2 = 0, i2 + 1
                if i2 == n2:
                    i2, i1 = 0, i1 + 1
                    if i1 == n1:
                        i1, i0 = 0, i0 + 1


@kernel
def _copy(src, out):
    _copy_rows(src, out, 0, out.shape[0] * out.shape[1] * out.shape[2] * out.shape[3] * out.shape[4])


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


SHARED_BYTES = 128 * 1024
"""Copies from this size on are shared with the engine's spinning helpers (``gang``): a copy waits on memory, and
the second core's loads and stores add to it. DenseNet-121's concatenations (a dense block's maps copied into the
next, 117 copies, 3 ms of a 29 ms run on one thread) had run on one thread while the other waited."""
_SRC, _OUT, _COUNTERS = at(0), at(1), at(2)
_ROWS, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 4)
_share_rows = chunk_driver(_copy_rows)


@functools.cache
def _shared_bodies(dtype: type):
    """(entry, helper) bodies of a copy shared with the gang (``gang.shared_entry``): rows in chunks."""
    @jit.jitable
    def lines(code, block, chunks, wait):
        src, out = native.array(block, _SRC, dtype), native.array(block, _OUT, dtype)
        if chunks == 0:
            _copy_rows(src, out, 0, block[_ROWS])
        else:
            _share_rows((src, out), block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
                        wait)
    return gang.shared_entry(lines, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _shared_copy(dtype: type) -> int:
    return jit.native(_shared_bodies(dtype)[0])


@native.factory
def _copy_helper(dtype: type) -> int:
    return jit.native(_shared_bodies(dtype)[1])


def native_entry(x: np.ndarray, out: np.ndarray, dim1: int, dim2: int) -> native.Entry | None:
    """:func:`transpose` as a native entry, shared with the engine's helpers from :data:`SHARED_BYTES` on; None
    when empty or when ``x`` overlaps ``out`` (a copy per run)."""
    if np.may_share_memory(out, x):
        return None
    views = loop_views(out, np.swapaxes(x, dim1, dim2))
    if views is None:
        return None
    o, s = views
    rows = o.size // o.shape[5]
    task = gang.NativeTask(rows, o.nbytes >= SHARED_BYTES)
    if task.chunks == 0:
        return native.Entry(_native_copy(out.dtype.type), *native.pack(s, o))
    words, keep = native.pack(s, o, six(task.counters), rows, *task.words())
    return native.Entry(_shared_copy(out.dtype.type), words, keep + task.finish(_copy_helper(out.dtype.type), words))


# -- a copy into the middle of each output line, the line's margins filled (a pad of the last axis) ----------------
@jit.jitable
def _margin_rows(src, out, before, after, fill, r0, r1):
    """Rows ``[r0, r1)`` of ``out[...] = src`` (6-D views, both innermost axes contiguous), each output run with
    ``before`` values of ``fill`` ahead of it and ``after`` behind it on the same line of memory: a pad of the last
    axis written in one pass, every byte once and in order. Runs and margins are ``native.copy_bytes``: BlazeFace's
    channel pad of 64x64x24 into 28 took 37 us as a slab of four values a pixel then the input into its place, 24
    in one pass (one thread, in cache); a typed loop over the line took 47."""
    _, n1, n2, n3, n4, n5 = out.shape
    size = out.itemsize
    out_at, src_at, fill_at = out.ctypes.data, src.ctypes.data, fill.ctypes.data
    o0, o1, o2, o3, o4, _ = out.strides
    s0, s1, s2, s3, s4, _ = src.strides
    q, i4 = divmod(r0, n4)
    q, i3 = divmod(q, n3)
    q, i2 = divmod(q, n2)
    i0, i1 = divmod(q, n1)
    for _ in range(r0, r1):
        line = out_at + i0 * o0 + i1 * o1 + i2 * o2 + i3 * o3 + i4 * o4
        native.copy_bytes(line - before * size, fill_at, before * size)
        native.copy_bytes(line, src_at + i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4, n5 * size)
        native.copy_bytes(line + n5 * size, fill_at, after * size)
        i4 += 1
        if i4 == n4:
            i4, i3 = 0, i3 + 1
            if i3 == n3:
                i3, i2 = 0, i2 + 1
                if i2 == n2:
                    i2, i1 = 0, i1 + 1
                    if i1 == n1:
                        i1, i0 = 0, i0 + 1


@jit.jitable
def _dense_margin_rows(src, out, before, fill, r0, r1):
    """Rows ``[r0, r1)`` of :func:`_margin_rows` where both arrays are whole and C-contiguous (``src`` [rows, n],
    ``out`` [rows, before + n + after]: a pad of the last axis alone): typed loops over known-contiguous lines,
    which LLVM vectorizes. BlazeFace's channel pad of 64x64x24 into 28 took 13 us so against 26 as byte moves per
    run and margin (one thread, in cache): runs of 96 and 16 bytes spent their time in ``copy_bytes``' byte tail."""
    n = src.shape[1]
    for r in range(r0, r1):
        line, values = out[r], src[r]
        head, body, tail = line[:before], line[before:before + n], line[before + n:]
        for j in range(head.size):  # indices from 0 in each part: an offset index would be wrapped if negative,
            head[j] = fill  # which keeps LLVM from vectorizing (45 us, not 12)
        for j in range(n):
            body[j] = values[j]
        for j in range(tail.size):
            tail[j] = fill


_FILL, _MCOUNTERS = at(2), at(3)
_MROWS, _BEFORE, _AFTER, _DENSE, _MMAILBOX, _MTASK, _MCHUNKS = range(at(4), at(4) + 7)
_share_margins = chunk_driver(_margin_rows)
_share_dense_margins = chunk_driver(_dense_margin_rows)


@functools.cache
def _margin_bodies(dtype: type):
    """(entry, helper) bodies of a margin copy shared with the gang: rows in chunks; whole C-contiguous arrays
    (``block[_DENSE]``, packed as [rows, line]) through :func:`_dense_margin_rows`."""
    @jit.jitable
    def lines(code, block, chunks, wait):
        fill = native.c_array(block, _FILL, dtype)[0, 0, 0, 0, 0]
        before, after, rows = block[_BEFORE], block[_AFTER], block[_MROWS]
        counters = native.c_array(block, _MCOUNTERS, np.int64)[0, 0, 0, 0, 0]
        if block[_DENSE]:
            src = native.c_array(block, _SRC, dtype)
            out = native.c_array(block, _OUT, dtype)
            src2, out2 = src.reshape((rows, src.shape[5])), out.reshape((rows, out.shape[5]))
            if chunks == 0:
                _dense_margin_rows(src2, out2, before, fill[0], 0, rows)
            else:
                _share_dense_margins((src2, out2, before, fill[0]), rows, chunks, counters, wait)
            return
        src, out = native.array(block, _SRC, dtype), native.array(block, _OUT, dtype)
        if chunks == 0:
            _margin_rows(src, out, before, after, fill, 0, rows)
        else:
            _share_margins((src, out, before, after, fill), rows, chunks, counters, wait)
    return gang.shared_entry(lines, gang.nothing_first, (_MMAILBOX, _MTASK, _MCHUNKS, _MCOUNTERS))


@native.factory
def _margin_copy(dtype: type) -> int:
    return jit.native(_margin_bodies(dtype)[0])


@native.factory
def _margin_helper(dtype: type) -> int:
    return jit.native(_margin_bodies(dtype)[1])


def native_margin_entry(x: np.ndarray, out: np.ndarray, before: int, value) -> native.Entry | None:
    """``out[..., before:before + x.shape[-1]] = x`` and every other value of ``out`` along its last axis set to
    ``value``, each line of ``out`` written once (a pad of the last axis), as a native entry shared with the gang
    from :data:`SHARED_BYTES` on; None when the lines are not contiguous runs of both arrays, ``x`` overlaps
    ``out``, or a shape does not fit (the caller then copies otherwise)."""
    n = x.shape[-1] if x.ndim else 0
    if (x.ndim == 0 or x.ndim != out.ndim or x.dtype != out.dtype or n < 2 or before < 0
            or before + n > out.shape[-1] or x.shape[:-1] != out.shape[:-1] or x.size == 0
            or np.may_share_memory(out, x)):
        return None
    size = out.itemsize
    bits = _UNSIGNED.get(size)
    if bits is None or out.strides[-1] != size or x.strides[-1] != size:
        return None
    after = out.shape[-1] - before - n
    fill = np.full(max(before, after, 1), value, out.dtype).view(bits)  # bytes are copied: any dtype of the size
    rows = x.size // n
    dense = x.flags.c_contiguous and out.flags.c_contiguous
    if dense:
        o, s = six(out.view(bits).reshape(rows, out.shape[-1])), six(x.view(bits).reshape(rows, n))
    else:
        views = loop_views(out.view(bits)[..., before:before + n], x.view(bits))
        if views is None:
            return None
        o, s = views
        if o.shape[5] != n or o.strides[5] != size or s.strides[5] != size:
            return None
    task = gang.NativeTask(rows, out.nbytes >= SHARED_BYTES)
    words, keep = native.pack(s, o, six(fill), six(task.counters), rows, before, after, int(dense), *task.words())
    return native.Entry(_margin_copy(bits.type), words, keep + (fill,) + task.finish(_margin_helper(bits.type), words))


_UNSIGNED = {k: np.dtype(f"u{k}") for k in (1, 2, 4, 8)}
"""The unsigned integer type of each item size: a margin copy moves bytes, so float16 (which numba lacks) and
float32 run the same loop as uint16 and uint32."""
