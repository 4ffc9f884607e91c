"""Float32 blobs between CoreML's channel-major layout and NHWC, the layout of the NHWC float engines.

A CoreML graph runs its convolution regions on the NHWC engines (``float_convolution``, ``float_depthwise``,
``float_pooling``) and converts only at the edges of a region: once after the input, once before a layer
that needs CoreML's layout. Both directions are one pass over memory; the arrays are the C-contiguous
``[N, C, H, W]`` and ``[N, H, W, C]`` views of the two tensors (``N`` every leading axis: batch, sequence).
"""
from __future__ import annotations

import numpy as np

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .float_sharing import F32, at, block_of, compiled, contiguous_f32


@jit.kernel
def _copy_rows(planes, pixels, into_pixels, r0, r1):
    """Rows ``[r0, r1)`` (row ``n * H + y``) of ``pixels[n, y, x, c] = planes[n, c, y, x]`` (``into_pixels``) or
    back: per row, the channels' rows are walked in step, so the planes side is read or written contiguously (the
    branch is the same on every pass: LLVM takes it out of the loops)."""
    _, channels, height, width = planes.shape
    for r in range(r0, r1):
        n, y = r // height, r % height
        for c in range(channels):
            row = planes[n, c, y]
            if into_pixels:
                for i in range(width):
                    pixels[n, y, i, c] = row[i]
            else:
                for i in range(width):
                    row[i] = pixels[n, y, i, c]


@jit.kernel
def _copy(planes, pixels, into_pixels):
    """Every row (:func:`_copy_rows`)."""
    _copy_rows(planes, pixels, into_pixels, 0, planes.shape[0] * planes.shape[2])


_TYPES = (F32[4, True], F32[4, True], jit.BOOL)


def bind(to_nhwc: bool, x: np.ndarray, out: np.ndarray):
    """A no-argument call copying ``x`` into ``out``: ``[N, C, H, W]`` into ``[N, H, W, C]`` (``to_nhwc``) or
    back; both C-contiguous float32 (the tensors' own arrays, viewed)."""
    if not (contiguous_f32(x) and contiguous_f32(out)):
        raise ValueError("the layout copy takes C-contiguous float32 arrays (gather a strided view first)")
    kernel = compiled(_copy, _TYPES)
    planes, pixels = (x, out) if to_nhwc else (out, x)
    return lambda: kernel(planes, pixels, bool(to_nhwc))


_PLANES, _PIXELS, _COUNTERS = at(0), at(1), at(2)
_INTO_PIXELS, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 4)
COST_PER_VALUE = 8
"""A value's copy in a convolution multiply-add's time (``float_sharing.NATIVE_PARALLEL_WORK`` weighs work in the
latter): a CoreML model's 224x224x3 input, 24-33 us on one thread (72 in ResNet-18's run, caches cold), is
shared with the helpers."""

_copy_shares = chunk_driver(_copy_rows)


@jit.kernel
def _copy_lines(code, block, chunks, wait):
    # ``gang.shared_entry``'s lines: every row serially, or in ``chunks`` chunks claimed with the helpers
    planes, pixels = native.c_array(block, _PLANES, np.float32)[0, 0], native.c_array(block, _PIXELS, np.float32)[0, 0]
    into = block[_INTO_PIXELS] != 0
    rows = planes.shape[0] * planes.shape[2]
    if chunks == 0:
        _copy_rows(planes, pixels, into, 0, rows)
    else:
        _copy_shares((planes, pixels, into), rows, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
                     wait)


_BODIES = gang.shared_entry(_copy_lines, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))

_copy_entry, _copy_helper = gang.makers(_BODIES, __name__, ("_copy_entry", "_copy_helper"))


def native_layout(to_nhwc: bool, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
    """:func:`bind` as a native entry (run from C without the GIL); None unless both are C-contiguous float32."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0:
        return None
    planes, pixels = (x, out) if to_nhwc else (out, x)
    rows = planes.shape[0] * planes.shape[2]
    task = gang.NativeTask(rows, out.size * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(planes, pixels, task.counters, int(bool(to_nhwc)), *task.words())
    return native.Entry(_copy_entry(), words, keep + task.finish(_copy_helper(), words))
