"""NNAPI's AVERAGE, MAX and L2 pooling on NHWC data (float32, or binary16 bits on both sides): the rules as
parameters of ``window_runs``' one-pass reductions, here only which runs each call reduces.

Same contract as ``nhwc_pooling.pool2d`` (padded positions take no part; the average and the L2 mean divide by
the number of input positions inside the window; a window with none gives 0; a NaN is passed over by the
maximum), computed in float32 straight into the output. Each output pixel's channels are one run of ``C``
values and its window's taps are runs at fixed byte offsets, so the output pixels of a row whose windows lie
inside the image are one call (``n_rows`` of them, ``stride_w`` pixels apart), the taps in the window's row
order; a window the image cuts is a call of its inside taps alone. Output rows are shared with the engine's
helpers when the layer is large enough (``float_sharing``). Maxima are exact; sums are float32 in tap order
(within docs/nnapi.md's bound of the float64 reference). Binary16 values are widened as loaded and each output
rounded once: the bytes of the float32 pool between an exact widening and one rounding.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang, isa
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .asymmetric import real_range
from .chw_pooling import window_span
from .float_sharing import F32, Rows, at, block_of, contiguous_f32, finish, output_target, staged
from .window_runs import LANES, greater_runs, greater_runs_h, l2_runs, l2_runs_h, mean_runs, mean_runs_h

AVERAGE, MAX, L2 = 0, 1, 2


@jit.kernel
def _runs(mode, half, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, count, low, high):
    """The ``window_runs`` call of ``mode`` (binary16 on both sides: ``half``)."""
    args = (out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, count, low, high)
    if half:
        if mode == MAX:
            greater_runs_h(*args)
        elif mode == L2:
            l2_runs_h(*args)
        else:
            mean_runs_h(*args)
    elif mode == MAX:
        greater_runs(*args)
    elif mode == L2:
        l2_runs(*args)
    else:
        mean_runs(*args)


@jit.kernel
def _pool_rows(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, r0, r1):
    """Output rows ``[r0, r1)`` (image-major: row ``b * out_h + oy``): the pixels whose windows lie inside the
    image in one call a row, the others one call each (module doc)."""
    _pool_units(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, 1, r0, r1)


@jit.kernel
def _pool_units(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, groups, u0, u1):
    """Units ``[u0, u1)`` of the pool: unit ``u`` is output row ``u // groups``'s channels of group ``u % groups``
    (:func:`channel_groups`: whole vectors of ``LANES``). Each output channel is reduced by the same operations
    whichever group holds it (``window_runs`` computes each value of a run alone), so the bits do not depend on
    ``groups``: a layer of few output rows (a global pool: one) is shared over its channels."""
    _, height, width, depth = x.shape
    _, out_h, out_w, _ = out.shape
    half, ex, eo = x.itemsize == 2, x.itemsize, out.itemsize  # constants of each compiled form
    low, high = np.float32(lo), np.float32(hi)
    of = out.reshape(-1)
    c0, c1 = window_span(-pad_left, stride_w, kw, width, out_w)
    offsets, whole = np.empty(max(1, kh * kw), np.int64), np.empty(max(1, kh * kw), np.int64)
    for iy in range(kh):  # a window inside the image: its taps' offsets from its first one, the same for all
        for ix in range(kw):
            whole[iy * kw + ix] = (iy * width + ix) * depth * ex
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    offsets_at, whole_at = np.int64(offsets.ctypes.data), np.int64(whole.ctypes.data)
    vectors = (depth + LANES - 1) // LANES
    for unit in range(u0, u1):
        row = unit // groups
        group = unit - row * groups
        ch0 = min(depth, LANES * (vectors * group // groups))
        ch1 = min(depth, LANES * (vectors * (group + 1) // groups))
        nc = ch1 - ch0
        if nc <= 0:
            continue
        b = row // out_h
        oy = row - b * out_h
        y0 = oy * stride_h - pad_top
        ya, yb = max(y0, 0), min(y0 + kh, height)
        inside = y0 >= 0 and y0 + kh <= height
        o_row = row * out_w * depth + ch0
        if inside and c1 > c0:
            _runs(mode, half, out_at + eo * (o_row + c0 * depth),
                  x_at + ex * (((b * height + y0) * width + c0 * stride_w - pad_left) * depth + ch0), whole_at,
                  kh * kw, nc, c1 - c0, eo * depth, ex * stride_w * depth, np.float32(kh * kw), low, high)
        for ox in range(out_w):
            if inside and c0 <= ox < c1:
                continue
            x0 = ox * stride_w - pad_left
            xa, xb = max(x0, 0), min(x0 + kw, width)
            n = 0  # the offsets of the taps inside the image, from the image's start, in the window's row order
            for iy in range(ya, yb):
                for ix in range(xa, xb):
                    offsets[n] = ((b * height + iy) * width + ix) * depth * ex
                    n += 1
            o = o_row + ox * depth
            if n == 0:  # no input position: 0 (+0.0 in either width)
                for c in range(nc):
                    of[o + c] = 0
            else:
                _runs(mode, half, out_at + eo * o, x_at + ex * ch0, offsets_at, n, nc, 1, 0, 0, np.float32(n), low,
                      high)


_UNIT_CHUNKS = chunk_driver(_pool_units)


def channel_groups(n_rows: int, depth: int, shared: bool) -> int:
    """Channel groups (of whole vectors) each output row is cut into: enough for ``GROUP_UNITS`` units where the
    rows are fewer and the layer is ``shared``, else 1."""
    if not shared or n_rows >= GROUP_UNITS:
        return 1
    return max(1, min(-(-depth // LANES), -(-GROUP_UNITS // n_rows)))


GROUP_UNITS = 8
"""Units a shared layer of few output rows is cut into at least, over its channels (a chunk each for two threads'
four: ``workers.CHUNKS_PER_THREAD``): EfficientNet's squeeze-and-excitation global pools (one output row of
32-1152 channels) had run on the calling thread alone."""


_ROW_CHUNKS = chunk_driver(_pool_rows)


@jit.kernel
def _pool_shared(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi, n_rows, n_chunks, counters,
                 wait):
    """The rows of ``Rows``'s shared call, in chunks claimed with the helpers (``chunk_loop``)."""
    _ROW_CHUNKS((x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi), n_rows, n_chunks, counters,
                wait)


COST_PER_VALUE = 4
"""A window value's time in a convolution multiply-add's (``Rows`` weighs work in the latter), as
``float_depthwise.COST_PER_MAC``: ResNet's 3x3/2 max pool of 112x112x64 (1.8 million values) is shared."""
_POOL_TYPES = (F32[4, False], F32[4, True], *(jit.INT,) * 7, jit.FLOAT, jit.FLOAT)
_HALF_TYPES = (jit.types.Array(jit.types.uint16, 4, "C", readonly=True), jit.types.Array(jit.types.uint16, 4, "C"),
               *_POOL_TYPES[2:])


def _bits(a: np.ndarray) -> np.ndarray:
    """A C-contiguous binary16 array's bits as uint16 (the kernel's binary16 form), else ``a`` itself."""
    return a.view(np.uint16) if a.dtype == np.float16 and a.flags.c_contiguous else a


def bind_pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int],
                strides: tuple[int, int], filter_size: tuple[int, int], activation: int) -> Callable[[], None]:
    """A no-argument call pooling ``x`` into ``out`` (``mode`` AVERAGE, MAX or L2) from their current values,
    both float32 or both float16 (no float32 copy of either); ``pads`` (left, right, top, bottom), ``strides``
    and ``filter_size`` (width, height)."""
    lo, hi = real_range(activation)
    half = np.dtype(x.dtype) == np.float16
    if half != (np.dtype(out.dtype) == np.float16):
        raise ValueError(f"x ({x.dtype}) and out ({out.dtype}) must both be float32 or both float16")
    if half:  # the bits, C-contiguous (other layouts through buffers, copied per call as float32's are)
        target = np.empty(out.shape, np.uint16) if not out.flags.c_contiguous else out.view(np.uint16)
        written = out if out.flags.c_contiguous else target.view(np.float16)  # what finish copies into out
        xs = x.view(np.uint16) if x.flags.c_contiguous else np.empty(x.shape, np.uint16)
        copy = None if x.flags.c_contiguous else lambda: xs.view(np.float16).__setitem__(Ellipsis, x)
    else:
        target = written = output_target(out)
        xs, copy = staged(x)
    args = (xs, target, int(mode), int(pads[2]), int(pads[0]), int(strides[1]), int(strides[0]),
            int(filter_size[1]), int(filter_size[0]), float(lo), float(hi))
    rows = Rows(_pool_rows, _pool_shared, args, _HALF_TYPES if half else _POOL_TYPES, out.shape[0] * out.shape[1],
                out.size * filter_size[0] * filter_size[1] * COST_PER_VALUE)
    return finish(rows, [copy], written, out)


def pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int], strides: tuple[int, int],
           filter_size: tuple[int, int], activation: int) -> None:
    """``bind_pool2d(...)()``: one call."""
    bind_pool2d(x, out, mode, pads, strides, filter_size, activation)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT, _COUNTERS = at(0), at(1), at(2)
_MODE, _TOP, _LEFT, _SH, _SW, _KH, _KW, _LO, _HI, _ROWS, _MAILBOX, _TASK, _CHUNKS, _GROUPS = range(at(3), at(3) + 14)


@jit.kernel
def _pool_block(code, block, chunks, wait):
    """Every unit (``_ROWS`` output rows times ``_GROUPS`` channel groups) of the layer packed in ``block``:
    serially (``chunks`` 0), or in ``chunks`` chunks claimed with the helpers (``wait``: until every claimed one
    is done)."""
    args = (native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _OUT, np.float32)[0, 0],
            block[_MODE], block[_TOP], block[_LEFT], block[_SH], block[_SW], block[_KH], block[_KW],
            native.real(block, _LO), native.real(block, _HI), block[_GROUPS])
    n_units = block[_ROWS] * block[_GROUPS]
    if chunks == 0:
        _pool_units(*args, 0, n_units)
    else:
        _UNIT_CHUNKS(args, n_units, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


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
    shared = out.size * filter_size[0] * filter_size[1] * COST_PER_VALUE >= float_sharing.NATIVE_PARALLEL_WORK
    groups = channel_groups(n_rows, out.shape[3], shared and isa.threads() > 1)
    task = gang.NativeTask(n_rows * groups, shared)
    words, keep = block_of(x, out, task.counters, int(mode), int(pads[2]), int(pads[0]), int(strides[1]),
                           int(strides[0]), int(filter_size[1]), int(filter_size[0]), float(lo), float(hi), n_rows,
                           *task.words(), groups)
    return native.Entry(_pool_entry(), words, keep + task.finish(_pool_helper(), words))
