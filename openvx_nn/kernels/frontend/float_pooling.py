"""Fast float32 AVERAGE, MAX and L2 pooling on NHWC data, vectorized over the channels.

Same contract as ``nhwc_pooling.pool2d`` (padded positions take no part; the average and the L2 mean
divide by the number of input positions inside the window), computed in float32 straight into the
output: the loop over the channels is innermost (contiguous), so LLVM vectorizes it. Output rows are shared
with the engine's helpers when the layer is large enough (``float_sharing``). Maxima are exact; sums are
float32 (within docs/nnapi.md's bound of the float64 reference).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang
from ..engine.atomics import fetch_add, take_chunk, wait_for_chunks
from ..support import jit, native
from . import float_sharing
from .asymmetric import real_range
from .float_microkernel import (
    LANES,
    WIDE_LANES,
    l2_taps,
    l2_taps_wide,
    max_taps,
    max_taps_wide,
    mean_taps,
    mean_taps_wide,
)
from .float_sharing import F32, Rows, at, block_of, contiguous_f32, finish, output_target, staged

AVERAGE, MAX, L2 = 0, 1, 2


@jit.kernel
def _pool_rows(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, r0, r1):
    """Output rows ``[r0, r1)`` (image-major: row ``b * out_h + oy``) on flat views, the channel loop innermost;
    whole vectors of 8 channels on ``max_taps``, ``mean_taps`` or ``l2_taps`` (16 at a time on their ``_wide``
    forms while as many are left; the window's taps as byte offsets, the sum in a register: the scalar loop,
    adding into the output tap by tap, took 37 us for MobileNet v2's global average of 7x7x1280, the vectors 4);
    channels past the last whole vector by one more vector ending at the last channel (BlazeFace's 2x2 max pool of
    64x64x28: 33 us with its last 4 channels on the scalar loop, 12 so); fewer than 8 channels on that loop."""
    _, height, width, depth = x.shape
    _, out_h, out_w, _ = out.shape
    low, high = np.float32(lo), np.float32(hi)
    xf, of = x.reshape(-1), out.reshape(-1)
    start = np.float32(-np.inf) if mode == MAX else np.float32(0.0)
    vectors = depth // LANES
    offsets, whole = np.empty(max(1, kh * kw), np.int64), np.empty(max(1, kh * kw), np.int64)
    for iy in range(kh):  # a window inside the image: its taps' offsets from its first one, the same for all
        for ix in range(kw):
            whole[iy * kw + ix] = (iy * width + ix) * depth * 4
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    offsets_at, whole_at = np.int64(offsets.ctypes.data), np.int64(whole.ctypes.data)
    for row in range(r0, r1):
        b = row // out_h
        oy = row - b * out_h
        y0 = oy * stride_h - pad_top
        ya, yb = max(y0, 0), min(y0 + kh, height)
        for ox in range(out_w):
            x0 = ox * stride_w - pad_left
            xa, xb = max(x0, 0), min(x0 + kw, width)
            count = max(0, yb - ya) * max(0, xb - xa)
            o = ((b * out_h + oy) * out_w + ox) * depth
            head = vectors * LANES if count > 0 else 0  # channels max_taps does (an empty window: none, 0 below)
            if head > 0:
                n, taps_at, x_from = kh * kw, whole_at, x_at + ((b * height + y0) * width + x0) * depth * 4
                if count < n:  # a window the image cuts: the offsets of its taps inside, from the image's start
                    n, taps_at, x_from = 0, offsets_at, x_at
                    for iy in range(ya, yb):
                        for ix in range(xa, xb):
                            offsets[n] = ((b * height + iy) * width + ix) * depth * 4
                            n += 1
                c = 0
                while c < head:  # 16 channels a call while as many are left (two AVX2 vectors' work without AVX-512)
                    at, x_c = out_at + 4 * (o + c), x_from + 4 * c
                    if c + WIDE_LANES <= head:
                        if mode == MAX:
                            max_taps_wide(at, x_c, n, taps_at, low, high)
                        elif mode == L2:
                            l2_taps_wide(at, x_c, n, taps_at, np.float32(count), low, high)
                        else:
                            mean_taps_wide(at, x_c, n, taps_at, np.float32(count), low, high)
                        c += WIDE_LANES
                        continue
                    if mode == MAX:
                        max_taps(at, x_c, n, taps_at, low, high)
                    elif mode == L2:
                        l2_taps(at, x_c, n, taps_at, np.float32(count), low, high)
                    else:
                        mean_taps(at, x_c, n, taps_at, np.float32(count), low, high)
                    c += LANES
                if head < depth:  # the last channels: a vector ending at the last one, over some channels done
                    at, x_c = out_at + 4 * (o + depth - LANES), x_from + 4 * (depth - LANES)  # (the same values
                    if mode == MAX:  # again: the same taps in the same order)
                        max_taps(at, x_c, n, taps_at, low, high)
                    elif mode == L2:
                        l2_taps(at, x_c, n, taps_at, np.float32(count), low, high)
                    else:
                        mean_taps(at, x_c, n, taps_at, np.float32(count), low, high)
                    head = depth
            if head == depth:
                continue
            for c in range(head, depth):
                of[o + c] = start
            for iy in range(ya, yb):
                for ix in range(xa, xb):
                    i = ((b * height + iy) * width + ix) * depth
                    if mode == MAX:
                        for c in range(head, depth):  # as max_taps: a NaN input fails the test, passed over
                            v, m = xf[i + c], of[o + c]
                            of[o + c] = max(m, v)
                    elif mode == L2:
                        for c in range(head, depth):
                            of[o + c] += xf[i + c] * xf[i + c]
                    else:
                        for c in range(head, depth):
                            of[o + c] += xf[i + c]
            for c in range(head, depth):
                v = of[o + c]
                if count == 0:
                    v = np.float32(0.0)
                elif mode == L2:
                    v = np.sqrt(v / np.float32(count))
                elif mode == AVERAGE:
                    v = v / np.float32(count)
                v = max(v, low)
                v = min(v, high)
                of[o + c] = v


@jit.kernel
def _pool_shared(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, n_rows, n_chunks, counters,
                 wait):
    # Chunks claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    while True:
        i = take_chunk(claim, n_chunks, not wait)
        if i < 0:
            break
        _pool_rows(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, n_rows * i // n_chunks,
                   n_rows * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        wait_for_chunks(claim, n_chunks)


COST_PER_VALUE = 4
"""A window value's time in a convolution multiply-add's (``Rows`` weighs work in the latter), as
``float_depthwise.COST_PER_MAC``: ResNet's 3x3/2 max pool of 112x112x64 (1.8 million values) is shared."""
_POOL_TYPES = (F32[4, False], F32[4, True], *(jit.INT,) * 7, jit.FLOAT, jit.FLOAT)


def bind_pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int],
                strides: tuple[int, int], filter_size: tuple[int, int], activation: int) -> Callable[[], None]:
    """A no-argument call pooling float32 ``x`` into ``out`` (``mode`` AVERAGE, MAX or L2) from their current
    values; ``pads`` (left, right, top, bottom), ``strides`` and ``filter_size`` (width, height)."""
    lo, hi = real_range(activation)
    target = output_target(out)
    xs, copy = staged(x)
    args = (xs, target, int(mode), int(pads[2]), int(pads[0]), int(strides[1]), int(strides[0]),
            int(filter_size[1]), int(filter_size[0]), float(lo), float(hi))
    rows = Rows(_pool_rows, _pool_shared, args, _POOL_TYPES, out.shape[0] * out.shape[1],
                out.size * filter_size[0] * filter_size[1] * COST_PER_VALUE)
    return finish(rows, [copy], target, out)


def pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int], strides: tuple[int, int],
           filter_size: tuple[int, int], activation: int) -> None:
    """``bind_pool2d(...)()``: one call."""
    bind_pool2d(x, out, mode, pads, strides, filter_size, activation)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _COUNTERS = at(0), at(1), at(2)
_MODE, _TOP, _LEFT, _SH, _SW, _KH, _KW, _LO, _HI, _ROWS, _MAILBOX, _TASK, _CHUNKS = range(at(3), at(3) + 13)


@jit.kernel
def _pool_block(code, block, chunks, wait):
    """Every output row of the layer packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks
    claimed with the helpers (``wait``: until every claimed one is done)."""
    args = (native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _OUT, np.float32)[0, 0],
            block[_MODE], block[_TOP], block[_LEFT], block[_SH], block[_SW], block[_KH], block[_KW],
            native.real(block, _LO), native.real(block, _HI))
    if chunks == 0:
        _pool_rows(*args, 0, block[_ROWS])
    else:
        _pool_shared(*args, block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(_pool_block, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _pool_entry() -> int:
    """Every output row, shared with the gang's spinning helpers when the layer is large enough, else serially."""
    return jit.native(_BODIES[0])


@native.factory
def _pool_helper() -> int:
    return jit.native(_BODIES[1])


def native_pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int],
                  strides: tuple[int, int], filter_size: tuple[int, int], activation: int) -> native.Entry | None:
    """:func:`bind_pool2d` as a native entry (the same rows, shared as the bound call shares them); None when
    ``x`` or ``out`` is not C-contiguous float32 or they overlap."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0 or np.may_share_memory(x, out):
        return None
    lo, hi = real_range(activation)
    n_rows = out.shape[0] * out.shape[1]
    task = gang.NativeTask(n_rows, out.size * filter_size[0] * filter_size[1] * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(x, out, task.counters, int(mode), int(pads[2]), int(pads[0]), int(strides[1]),
                           int(strides[0]), int(filter_size[1]), int(filter_size[0]), float(lo), float(hi), n_rows,
                           *task.words())
    return native.Entry(_pool_entry(), words, keep + task.finish(_pool_helper(), words))
