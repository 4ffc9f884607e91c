"""Fast float32 CONV_2D and FULLY_CONNECTED on NHWC data: an implicit GEMM over weights packed once.

The weights [O, kh, kw, I] are packed at bind time into blocks of 16 (or 8) output channels, each
[kh, kw * I, 16]. For one output pixel and one filter row the inputs are one contiguous run of
``kw * I`` values of the (padded) input row, so a 1x1 convolution is a GEMM and a 3x3 one an implicit
GEMM with no im2col copy: ``float_microkernel`` computes 6 pixels x 16 channels (or 12 x 8) in
registers with FMA, and the epilogue adds the bias, applies the fused activation and stores. An input
with padding is copied once per call into a zero-bordered buffer, so edge pixels take the same path.

Sums are float32 with fused multiply-adds, in a fixed order: results differ from the float64 reference
(``nhwc_convolution``) by at most a few float32 roundings of the sum of |products| (docs/nnapi.md states
the bound the tests check).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang
from ..engine.atomics import fetch_add, wait_for_chunks
from ..support import jit, native
from .asymmetric import real_range
from .float_microkernel import LANES, TILES, tile_6x2, tile_6x2_direct, tile_12x1, tile_12x1_direct
from .float_sharing import F32, PARALLEL_WORK, Rows, at, block_of, contiguous_f32, finish, output_target, stage, staged


@jit.kernel
def _conv_tiles(xp, wp, bias, out, stride_h, stride_w, lo, hi, g0, g1):
    """Tiles ``[g0, g1)`` of output pixels (in NHWC order) of the convolution of the padded input ``xp``."""
    n_batch, height, width, depth = xp.shape
    n_blocks, kh, inner, block = wp.shape
    _, out_h, out_w, units = out.shape
    vecs = block // LANES
    rows = 6 if vecs == 2 else 12
    pixels = n_batch * out_h * out_w
    of = out.reshape(pixels, units)
    low, high = np.float32(lo), np.float32(hi)
    addresses = np.empty(rows, np.int64)
    taps = np.empty(kh, np.int64)
    for ky in range(kh):
        taps[ky] = ky * width * depth * 4
    tile = np.empty(rows * block, np.float32)
    x_at, w_at, tile_at = xp.ctypes.data, wp.ctypes.data, tile.ctypes.data
    out_at, bias_at = out.ctypes.data, bias.ctypes.data
    w_tap_stride, w_block = inner * block * 4, kh * inner * block * 4
    for g in range(g0, g1):
        p0 = g * rows
        line = p0 // out_w  # the tile's first pixel: image b, output row oy, column ox (no division below)
        ox = p0 - line * out_w
        b = line // out_h
        oy = line - b * out_h
        at = x_at + ((b * height + oy * stride_h) * width + ox * stride_w) * depth * 4
        for r in range(rows):
            if p0 + r >= pixels:  # a short last tile repeats its last pixel (computed, not stored)
                addresses[r] = addresses[r - 1]
                continue
            addresses[r] = at
            ox += 1
            at += stride_w * depth * 4
            if ox == out_w:
                ox, oy = 0, oy + 1
                if oy == out_h:
                    oy, b = 0, b + 1
                at = x_at + ((b * height + oy * stride_h) * width) * depth * 4
        for jb in range(n_blocks):
            j0 = jb * block
            if p0 + rows <= pixels and j0 + block <= units:
                at = out_at + 4 * (p0 * units + j0)
                if vecs == 2:
                    tile_6x2_direct(at, addresses.ctypes.data, taps.ctypes.data, kh, inner, w_at + jb * w_block,
                                    w_tap_stride, 4 * units, bias_at + 4 * j0, low, high)
                else:
                    tile_12x1_direct(at, addresses.ctypes.data, taps.ctypes.data, kh, inner, w_at + jb * w_block,
                                     w_tap_stride, 4 * units, bias_at + 4 * j0, low, high)
                continue
            if vecs == 2:
                tile_6x2(tile_at, addresses.ctypes.data, taps.ctypes.data, kh, inner, w_at + jb * w_block,
                         w_tap_stride)
            else:
                tile_12x1(tile_at, addresses.ctypes.data, taps.ctypes.data, kh, inner, w_at + jb * w_block,
                          w_tap_stride)
            cols = min(block, units - j0)
            for r in range(min(rows, pixels - p0)):
                for j in range(cols):  # the epilogue: bias, fused activation (NaN stays NaN)
                    v = tile[r * block + j] + bias[j0 + j]
                    v = max(v, low)
                    v = min(v, high)
                    of[p0 + r, j0 + j] = v


@jit.kernel
def _conv_shared(xp, wp, bias, out, stride_h, stride_w, lo, hi, n_tiles, n_chunks, counters, wait):
    # Chunks claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= n_chunks:
            break
        _conv_tiles(xp, wp, bias, out, stride_h, stride_w, lo, hi, n_tiles * i // n_chunks,
                    n_tiles * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        wait_for_chunks(claim, n_chunks)


_CONV_TYPES = (F32[4, False], F32[4, False], F32[1, False], F32[4, True], jit.INT, jit.INT, jit.FLOAT, jit.FLOAT)


def pack_conv(w: np.ndarray) -> np.ndarray:
    """CONV_2D weights [O, kh, kw, I] as the micro-kernel reads them: [O / B, kh, kw * I, B] float32 with B
    output channels per block (16, or 8 for a layer of 8 or fewer), the last block padded with zeros."""
    o, kh, kw, i = w.shape
    block = LANES * (2 if o > LANES else 1)
    n_blocks = -(-o // block)
    padded = np.zeros((n_blocks * block, kh, kw * i), np.float32)
    padded[:o] = np.asarray(w, np.float32).reshape(o, kh, kw * i)
    return np.ascontiguousarray(padded.reshape(n_blocks, block, kh, kw * i).transpose(0, 2, 3, 1))


def pack_fc(w: np.ndarray) -> np.ndarray:
    """FULLY_CONNECTED weights [units, size] as a 1x1 convolution's (``pack_conv``)."""
    units, size = w.shape
    return pack_conv(np.asarray(w).reshape(units, 1, 1, size))


def _staged_input(x: np.ndarray, pads: tuple[int, int, int, int], strides: tuple[int, int],
                  out_hw: tuple[int, int], kernel_hw: tuple[int, int]):
    """(what the tiles read, its per-call copy or None): ``x`` itself when every window lies inside it, else a
    zero-bordered buffer (allocated once) that ``x`` is copied into before each call; the micro-kernel then
    reads whole filter rows for every pixel, edges included."""
    n, h, w, c = x.shape
    left, _, top, _ = pads
    need_h = max(top + h, (out_hw[0] - 1) * strides[1] + kernel_hw[0])
    need_w = max(left + w, (out_hw[1] - 1) * strides[0] + kernel_hw[1])
    if top == left == 0 and need_h == h and need_w == w:
        return staged(x)
    return staged(x, (n, need_h, need_w, c), (slice(None), slice(top, top + h), slice(left, left + w)))


def bias_or_zeros(bias: np.ndarray | None, units: int) -> np.ndarray:
    """The bias as a contiguous float32 vector (zeros when the layer has none)."""
    if bias is None:
        return np.zeros(units, np.float32)
    return np.ascontiguousarray(bias, np.float32)


def bind_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                pads: tuple[int, int, int, int], strides: tuple[int, int], activation: int) -> Callable[[], None]:
    """A no-argument call computing ``out = act(bias + conv(x, w))`` from the arrays' current values, with
    ``wp = pack_conv(w)``; ``pads`` (left, right, top, bottom), ``strides`` (width, height); ``out``'s shape
    fixes the extent (``nhwc_convolution.conv2d``'s contract). Everything but the arithmetic (and the copy of
    a padded input) is settled here, once."""
    lo, hi = real_range(activation)
    target = output_target(out)
    _, kh, inner, block = wp.shape
    xp, copy = _staged_input(x, pads, strides, out.shape[1:3], (kh, inner // x.shape[3]))
    args = (xp, wp, np.ascontiguousarray(bias, np.float32), target, int(strides[1]), int(strides[0]), float(lo),
            float(hi))
    pixels = out.shape[0] * out.shape[1] * out.shape[2]
    rows = Rows(_conv_tiles, _conv_shared, args, _CONV_TYPES, -(-pixels // TILES[block // LANES]),
                out.size * kh * inner)
    return finish(rows, [copy], target, out)


def conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
           strides: tuple[int, int], activation: int) -> None:
    """``bind_conv2d(...)()``: one call."""
    bind_conv2d(x, wp, bias, out, pads, strides, activation)()


def bind_fully_connected(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                         activation: int) -> Callable[[], None]:
    """A no-argument call computing ``out[b] = act(bias + w @ x[b])`` with ``wp = pack_fc(w)``; ``x`` is
    flattened to [batch, size]."""
    size, units = wp.shape[2], out.shape[-1]
    rows, copy = staged(x)
    target = output_target(out)
    run = bind_conv2d(rows.reshape(1, 1, -1, size), wp, bias, target.reshape(1, 1, -1, units), (0, 0, 0, 0),
                      (1, 1), activation)
    return finish(run, [copy], target, out)


def fully_connected(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, activation: int) -> None:
    """``bind_fully_connected(...)()``: one call."""
    bind_fully_connected(x, wp, bias, out, activation)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _XP, _W, _BIAS, _OUT, _COUNTERS = (at(k) for k in range(6))
_SH, _SW, _LO, _HI, _TILES, _STAGED, _TOP, _LEFT, _MAILBOX, _TASK, _CHUNKS = range(at(6), at(6) + 11)


@jit.kernel
def _conv_block(block, r0, r1, chunks, wait):
    """Tiles ``[r0, r1)`` of the layer packed in ``block`` (``chunks`` > 0: all of them, in that many chunks
    claimed with the helpers; ``wait``: until every claimed one is done)."""
    args = (native.c_array(block, _XP, np.float32)[0, 0], native.c_array(block, _W, np.float32)[0, 0],
            native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0], native.c_array(block, _OUT, np.float32)[0, 0],
            block[_SH], block[_SW], native.real(block, _LO), native.real(block, _HI))
    if chunks == 0:
        _conv_tiles(*args, r0, r1)
    else:
        _conv_shared(*args, block[_TILES], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


@jit.kernel
def _stage_block(block):
    """The padded input's copy (``stage``) where the layer has one."""
    if block[_STAGED] != 0:
        stage(native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _XP, np.float32)[0, 0],
              block[_TOP], block[_LEFT])


@jit.kernel
def _conv_lines(code, block, chunks, wait):
    # ``gang.shared_entry``'s lines: serially every tile, or the shared chunks
    _conv_block(block, 0, block[_TILES] if chunks == 0 else 0, chunks, wait)


_BODIES = gang.shared_entry(_conv_lines, _stage_block, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _conv_entry() -> int:
    """The layer: the padded input's copy where there is one, then every tile, shared with the gang's spinning
    helpers when the layer is large enough (``gang.shared_entry``), else serially."""
    return jit.native(_BODIES[0])


@native.factory
def _conv_helper() -> int:
    """A helper's part of a shared layer: chunks while any is left."""
    return jit.native(_BODIES[1])


def native_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
                  strides: tuple[int, int], activation: int) -> native.Entry | None:
    """:func:`bind_conv2d` as a native entry (the same tiles; shared with helper threads as the bound call
    shares them); None when ``x`` or ``out`` is not C-contiguous float32 (the bound call copies those per run)
    or they overlap."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0 or np.may_share_memory(x, out):
        return None
    lo, hi = real_range(activation)
    _, kh, inner, block = wp.shape
    xp, copy = _staged_input(x, pads, strides, out.shape[1:3], (kh, inner // x.shape[3]))
    bias = np.ascontiguousarray(bias, np.float32)
    pixels = out.shape[0] * out.shape[1] * out.shape[2]
    n_tiles = -(-pixels // TILES[block // LANES])
    task = gang.NativeTask(n_tiles, out.size * kh * inner >= PARALLEL_WORK)
    words, keep = block_of(x, xp, wp, bias, out, task.counters, int(strides[1]), int(strides[0]), float(lo), float(hi),
                           n_tiles, int(copy is not None), int(pads[2]), int(pads[0]), *task.words())
    return native.Entry(_conv_entry(), words, keep + task.finish(_conv_helper(), words))


def native_fully_connected(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                           activation: int) -> native.Entry | None:
    """:func:`bind_fully_connected` as a native entry (a 1x1 convolution of the flattened rows)."""
    if not (contiguous_f32(x) and contiguous_f32(out)):
        return None
    size, units = wp.shape[2], out.shape[-1]
    return native_conv2d(x.reshape(1, 1, -1, size), wp, bias, out.reshape(1, 1, -1, units), (0, 0, 0, 0), (1, 1),
                         activation)
