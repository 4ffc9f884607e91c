"""Fast float32 CONV_2D and FULLY_CONNECTED on NHWC data: an implicit GEMM over weights packed once.

The weights [O, kh, kw, I] are packed at bind time into blocks of output channels, each [kh, kw * I, vectors,
lanes]: 2 or 1 vectors of 16 lanes where the CPU has AVX-512 (``isa.float_lanes``) and O is 16 or more, else of 8
(``block_shape``); 3 vectors of 8 for a multiple of 24 channels where 16-lane multiply-adds cost two 8-lane ones
(``conv_block_shape``). For one output pixel and one filter row the inputs are one contiguous run of ``kw * I`` values
of the (padded) input row, so a 1x1 convolution is a GEMM and a 3x3 one an implicit GEMM with no im2col copy:
``float_microkernel`` computes a tile of pixels x a block (8 x 32 or 12 x 16 with AVX-512; 6 x 16 or 12 x 8 with
AVX2) in registers with FMA (12 x 32 for layers of several filter rows, whose weights stream from L2 once per
tile; 10 x 32 for maps of 7x7 and 14x14 otherwise, which 8-row tiles leave a short last tile, 7 x 32 for smaller
maps of sevens; one row
by four vectors for a fully connected layer of one row: ``tile_rows``), and the epilogue adds the bias, applies the
fused activation and stores (through masks for a last block of fewer channels).

Padding. An undilated layer whose windows are cheap to copy one by one (``WINDOWS_SHARE``: ResNet's stride-2 3x3
layers) reads its input in place: a pixel whose window crosses the padding reads a copy of that window alone,
zeros around the input's values, laid out with the input's row pitch so that the tile's tap offsets serve both
(``BORDERS``, ``_fill_window``). Other padded layers copy the input once per call into a zero-bordered buffer --
unless the input comes as one already (``bind_conv2d``'s ``borders``: a tensor the plan holds inside a buffer of
zeros, ``core/bordered_tensors``), which undilated layers padded by at most its border read in place, windows and
all. Either way every tap is summed, zeros included, in the same order: the same bytes. A layer writes into such a
buffer's interior, or adds a residual from one, through per-row offsets: a tile's pixels may cross an image row,
and the wider rows of the buffer put the next row's pixels further on (``float_microkernel``'s output stride 0).

Dilation (DeepLab's atrous convolutions, OpenVX's and NNAPI's dilated layers) changes only the taps' offsets: rows
dilated alone keep a filter row's ``kw * I`` inputs as one run (its taps ``dil_h`` input rows apart); dilated
columns make each of the ``kh * kw`` filter taps a run of ``I`` inputs, ``dil_w`` pixels apart. The packed weights
are the same bytes either way (``[kh, kw * I]`` is ``[kh * kw, I]``), and so is the order of the sums. A dilated
layer's tile skips the taps (or, columns undilated, the ends of each filter row's run) that read only the padding
for every pixel of the tile (``skipped_padding``): at DeepLab's rates most taps of a small map do. The taps kept
run from the first reached (row, column) to the last in the taps' order. Where that sums fewer taps (DeepLab's
atrous branches) and no activation follows the clamp, the tiles go in region order instead (``region_tiles``): the
output cut into the rectangles of pixels that keep one set of taps, each in tiles of its own pixels, so a tile sums
its rectangle's taps (one column of them as taps ``kw`` apart in the packed weights: one stride); each pixel's kept
taps in the same order either way, the same bits. At bind time a dilated layer drops the
filter rows and columns that no output reads inside (``reached_filter``): an atrous rate at or above the map's side
leaves the centre tap, a 1x1 layer read in place.

Sums are float32 with fused multiply-adds, in a fixed order: results differ from the float64 reference
(``nhwc_convolution``) by at most a few float32 roundings of the sum of |products| (docs/nnapi.md states
the bound the tests check).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import gang, isa
from ..engine.atomics import fetch_add, shared_words, take_chunk, wait_for_chunks, wait_for_shares
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .asymmetric import real_range
from .epilogue_activation import NONE, PRELU, activate_span, checked_epilogue, prelu_span
from .float_microkernel import (
    DEEP_TILE,
    LANES,
    NARROW_THREE,
    ODD_TILE,
    ROW_VECTORS,
    ROWS_DEEP,
    ROWS_WIDE,
    ROWS_WIDE_ODD,
    ROWS_WIDE_TEN,
    TEN_TILE,
    TILES,
    WIDE_LANES,
    WIDE_THREE,
    Tile,
)
from .float_sharing import F32, Rows, at, block_of, contiguous_f32, finish, output_target, stage, staged


@jit.jitable
def _tap_offsets(kh, inner, width, depth, dil_h, dil_w):
    """(taps, inputs per tap) of a window of ``kh`` filter rows of ``inner = kw * depth`` weights: a filter row's
    ``kw * depth`` inputs are one contiguous run unless the columns are dilated, when each of the ``kh * kw`` taps
    is a run of ``depth`` (the packed weights ``[kh, kw * depth]`` are those taps in the same order)."""
    if dil_w == 1:
        return kh, inner
    return kh * (inner // depth), depth


@jit.jitable
def _fill_taps(taps, kh, inner, width, depth, dil_h, dil_w):
    """The byte offsets of the taps (``_tap_offsets``) from an output pixel's window origin in the padded input:
    filter row ``ky`` starts ``ky * dil_h`` input rows down; with dilated columns, tap ``(ky, kx)`` also
    ``kx * dil_w`` pixels right."""
    kw = inner // depth
    for ky in range(kh):
        if dil_w == 1:
            taps[ky] = ky * dil_h * width * depth * 4
        else:
            for kx in range(kw):
                taps[ky * kw + kx] = (ky * dil_h * width + kx * dil_w) * depth * 4


@jit.jitable
def _first_tap(start, low, step):
    """The first tap ``k >= 0`` of a window starting at ``start`` with taps ``step`` apart that reaches ``low``."""
    return 0 if start >= low else (low - start + step - 1) // step


@jit.jitable
def _last_tap(start, high, step, last):
    """The last tap ``k <= last`` of such a window that stays at or below ``high`` (-1: none)."""
    return -1 if start > high else min(last, (high - start) // step)


@jit.jitable
def _inside(first, final, stride, step, taps, low, extent):
    """(first, last) tap of a window of ``taps`` taps ``step`` apart that reads inside ``[low, low + extent)`` for
    some output in ``[first, final]`` (windows at ``output * stride``); a window wholly outside keeps one tap."""
    k_lo = min(_first_tap(final * stride, low, step), taps - 1)
    k_hi = _last_tap(first * stride, low + extent - 1, step, taps - 1)
    return k_lo, max(k_lo, k_hi)


@jit.jitable
def _axis_runs(runs, n, stride, step, taps, low, extent):
    """``runs[i] = (first output, outputs, first tap, last tap)`` of the runs of consecutive outputs along one axis
    whose windows keep the same taps (``_inside``, output by output); returns the number of runs."""
    m = 0
    for o in range(n):
        k_lo, k_hi = _inside(o, o, stride, step, taps, low, extent)
        if m > 0 and runs[m - 1, 2] == k_lo and runs[m - 1, 3] == k_hi:
            runs[m - 1, 1] += 1
        else:
            runs[m, 0], runs[m, 1], runs[m, 2], runs[m, 3] = o, 1, k_lo, k_hi
            m += 1
    return m


@jit.jitable
def _kept_taps(ky_lo, ky_hi, kx_lo, kx_hi, kw, dil_w, regions):
    """Taps a tile sums per pixel keeping filter rows ``[ky_lo, ky_hi]`` and columns ``[kx_lo, kx_hi]``: the
    rectangle where the columns are one run (``dil_w`` 1) or one column of a region's tile (its taps ``kw`` apart
    in the packed weights: one stride), else the taps' order from the first to the last."""
    if dil_w == 1 or (regions and kx_lo == kx_hi):
        return (ky_hi - ky_lo + 1) * (kx_hi - kx_lo + 1)
    return (ky_hi - ky_lo) * kw + kx_hi - kx_lo + 1


@jit.jitable
def region_tiles(out_h, out_w, rows, stride_h, stride_w, dil_h, dil_w, kh, kw, top, left, in_h, in_w, ys,
                 xs):
    """(tiles per image in region order, runs along the height in ``ys``, along the width in ``xs``) of a dilated
    layer whose tiles skip padding (``skipped_padding``), or 0 tiles where the row walk's tiles sum fewer taps.
    Region order: the output's rectangles of pixels that keep one set of taps (a run of rows by a run of columns,
    ``_axis_runs``), each in tiles of its own pixels, row by row, so that a tile sums only its rectangle's taps
    (at DeepLab's rate 18 on 28x28, 2,904 taps x pixels against the row walk's 3,636; the short last tile of each
    rectangle repeats its last pixel, so on small maps the row walk can sum fewer)."""
    n_y = _axis_runs(ys, out_h, stride_h, dil_h, kh, top, in_h)
    n_x = _axis_runs(xs, out_w, stride_w, dil_w, kw, left, in_w)
    tiles, summed = 0, 0
    for i in range(n_y):
        for j in range(n_x):
            t = -(-(ys[i, 1] * xs[j, 1]) // rows)
            tiles += t
            summed += t * _kept_taps(ys[i, 2], ys[i, 3], xs[j, 2], xs[j, 3], kw, dil_w, True)
    pixels = out_h * out_w
    walked = 0  # the row walk's, over one image (its tiles may cross into the next: counted as the first image's)
    for t in range(-(-pixels // rows)):
        p_a, p_z = t * rows, min(pixels, (t + 1) * rows) - 1
        oy_a, oy_z = p_a // out_w, p_z // out_w
        ky_lo, ky_hi = _inside(oy_a, oy_z, stride_h, dil_h, kh, top, in_h)
        one_row = oy_a == oy_z
        kx_lo, kx_hi = _inside(p_a - oy_a * out_w if one_row else 0, p_z - oy_z * out_w if one_row else out_w - 1,
                               stride_w, dil_w, kw, left, in_w)
        walked += rows * _kept_taps(ky_lo, ky_hi, kx_lo, kx_hi, kw, dil_w, False)
    return (tiles if summed < walked else 0), n_y, n_x


def regions_wanted() -> bool:
    """Whether bound dilated layers may take region order (``region_tiles``): ``OPENVX_NN_DILATED_REGIONS=0``
    keeps the row walk, for measuring one against the other (native entries always may)."""
    return os.environ.get("OPENVX_NN_DILATED_REGIONS", "1") != "0"


BORDERS = -1
"""``in_h`` of the tiles telling them that ``xp`` is the unpadded input and ``(top, left)`` its padding: a pixel
whose window leaves the input reads a copy of it with zeros for the padding (``_fill_window``); all others read the
input in place."""


@jit.jitable
def _border_windows(borders, rows, kh, kw, width, depth):
    """(values of scratch for a tile's windows that cross the padding, windows side by side in one slab of ``kh``
    input rows): a window is laid out as in the input (filter row ``ky`` at ``ky`` input rows of ``width * depth``
    values), so the tile's tap offsets serve it as they serve the pixels read in place; ``width // kw`` windows fit
    a slab."""
    if not borders:
        return 0, 1
    per_slab = width // kw
    slabs = (rows + per_slab - 1) // per_slab
    return slabs * kh * width * depth, per_slab


@jit.jitable
def _floats_at(words, at, n):
    """``n`` float32 values of the int64 scratch ``words`` from word ``at`` on, moved up to the next 64-byte line
    (``words`` has 8 spare words there for it)."""
    at += (-(words.ctypes.data + 8 * at) % 64) // 8
    return words[at:at + (n + 1) // 2].view(np.float32)[:n]


@jit.jitable
def _fill_window(x, windows, r, per_slab, kh, kw, b, iy, ix):
    """The byte address of row ``r``'s window in ``windows``, filled with the ``kh x kw`` pixels of image ``b``
    from ``(iy, ix)`` (zeros outside the input): the same values a zero-bordered copy of the input holds there."""
    _, height, width, depth = x.shape
    x_at, w_at = x.ctypes.data, windows.ctypes.data
    run = kw * depth
    start = ((r // per_slab) * kh * width + (r % per_slab) * kw) * depth
    x0, x1 = max(ix, 0), min(ix + kw, width)
    for ky in range(kh):
        dst = start + ky * width * depth
        y = iy + ky
        if y < 0 or y >= height or x1 <= x0:
            windows[dst:dst + run] = 0.0
            continue
        inside = (x1 - x0) * depth
        head = (x0 - ix) * depth
        windows[dst:dst + head] = 0.0
        src = ((b * height + y) * width + x0) * depth
        native.copy_bytes(w_at + 4 * (dst + head), x_at + 4 * src, 4 * inside)
        windows[dst + head + inside:dst + run] = 0.0
    return w_at + 4 * start


K_CHUNK = 256
"""Input channels a deep 1x1 layer's tiles take at a time (``K_CHUNK_ABOVE``): a block's weights for them (32 KiB
for two vectors of 16 lanes) stay in L1 while every pixel tile of the panel passes over them, where a block of
all its inputs (128 KiB at 1024) streamed from L2 once per tile of 7-10 pixels. The tiles but the last store
their sums and the next resume them (``Tile.resumed``): each pixel's sum in the same order, the same bits."""
K_CHUNK_ABOVE = 384
"""Input channels above which an unpadded stride-1 1x1 layer of at most ``K_CHUNK_PIXELS`` output pixels, on tiles
with resumed variants (two 16-lane vectors), is chunked."""
K_CHUNK_PIXELS = 256
"""Output pixels up to which a deep 1x1 layer is chunked: the chunks take the blocks one by one (a block's chunk of
weights in L1 for every tile), so each block reads the tiles' inputs again, from L2; on maps up to 16x16 that cost
less than the weights' streaming saved (one thread, both routes in turns in one process, four runs, load 5.7-6.3:
0.94-0.97 of the time at 16x16 512->512, 14x14 672->112 and 7x7 1024->1024, 0.95-1.02 at 7x7 2048->512, 14x14
1024->256 and 512->512, 1.0 at 7x7 1152->192), at 28x28 512->128 more (1.07-1.09)."""


def _tiles(shape: Tile, with_res: bool) -> Callable:
    """The tile loop of one tile shape (``shape.rows`` pixels by a block of channels), with or without a
    residual, as a function of its own: one loop serving every shape and both epilogues kept the addresses of all
    four paths in memory around every tile (2-7 % of a 1x1 layer's time with 8-32 input channels, interleaved).
    ``full``: the tile with its epilogue, straight to the output (``shape.direct``, or ``shape.residual`` with the
    residual's address before ``lo``); ``full_partial``: the same for a last block of fewer channels (through
    masks). A short last tile of pixels repeats its last pixel, whose values its extra rows store again at that
    pixel's place (the rows' output offsets listed, an output stride of 0): the same bytes, through the same
    epilogue in registers (a scalar epilogue over a scratch tile had cost 2x2 maps more than their sums)."""

    rows = shape.rows
    full = shape.residual if with_res else shape.direct
    full_partial = shape.residual_partial if with_res else shape.direct_partial
    chunked = shape.resumed is not None  # (the shape's own tiles stand in for a shape without resumed ones)
    resumed = shape.resumed if chunked else shape
    bare, bare_on = shape.bare, resumed.bare
    full_on = resumed.residual if with_res else resumed.direct
    partial_on = resumed.residual_partial if with_res else resumed.direct_partial

    @jit.jitable
    def block_end(last, out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, res_tile, valid,
                  low, high):
        # one block of a tile, with the epilogue: the whole window's sums (``last`` False), or the last chunk of a
        # chunked layer's, continuing the sums stored (``resumed``)
        if valid >= 0:
            if last:
                if with_res:
                    full_on(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, res_tile, low,
                            high)
                else:
                    full_on(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, low, high)
            elif with_res:
                full(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, res_tile, low, high)
            else:
                full(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, low, high)
        elif last:  # a last block of fewer channels (``-valid`` of them): written through masks
            if with_res:
                partial_on(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, res_tile, -valid,
                           low, high)
            else:
                partial_on(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, -valid, low,
                           high)
        elif with_res:
            full_partial(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, res_tile, -valid,
                         low, high)
        else:
            full_partial(out_at, rows_at, taps_at, tap_n, run_n, w_jb, w_tap_stride, step, bias_at, -valid, low, high)

    @jit.jitable
    def tiles(xp, wp, bias, res, out, stride_h, stride_w, dil_h, dil_w, top, left, in_h, in_w, lo, hi, panel, code,
              alpha, ea, eb, out_border, res_border, channel0, units, g0, g1):
        n_batch, height, width, depth = xp.shape
        n_blocks, kh, inner, vecs, lanes = wp.shape
        block = vecs * lanes
        _, full_h, full_w, pitch = out.shape  # the layer's ``units`` channels from ``channel0`` of pixels ``pitch`` wide
        out_h, out_w = full_h - 2 * out_border, full_w - 2 * out_border  # the output: the interior of ``out``
        res_h, res_w = out_h + 2 * res_border, out_w + 2 * res_border
        pixels = n_batch * out_h * out_w
        if rows == 1 and not with_res and code == NONE and kh == 1 and inner == depth and stride_h == 1 \
                and stride_w == 1 and in_h == 0 and out_border == 0 and height == out_h and width == out_w:
            # A matrix-vector product (one-row tiles, an unpadded 1x1 layer: a recurrent step's, a classifier's):
            # each pixel's blocks straight from its row, the same tile calls without the walk's tables, whose
            # setup cost more than the product of 64 outputs of 16 inputs (0.4 us a call)
            lean = np.zeros(2, np.int64)  # [the row's input address, the one tap's offset]
            w_at, w_block = wp.ctypes.data, inner * block * 4
            out_at, bias_at = out.ctypes.data + 4 * channel0, bias.ctypes.data
            low, high = np.float32(lo), np.float32(hi)
            for u in range(g0, g1):
                first = u // pixels
                p = u - first * pixels
                lean[0] = xp.ctypes.data + p * depth * 4
                for jb in range(first * panel, min(n_blocks, (first + 1) * panel)):
                    j0 = jb * block
                    block_end(False, out_at + 4 * (p * pitch + j0), lean.ctypes.data, lean.ctypes.data + 8, 1, depth,
                              w_at + jb * w_block, w_block, 4 * pitch, bias_at + 4 * j0, res.ctypes.data,
                              block if j0 + block <= units else j0 - units, low, high)
            return
        n_tiles = (pixels + rows - 1) // rows
        of, flat = native.as_rows(out, pitch), native.flat(out)
        low, high = np.float32(lo), np.float32(hi)
        # (a residual, ``units`` wide, beside a channel slice of wider pixels also: the two strides differ)
        listed = out_border > 0 or res_border > 0 or (with_res and pitch != units)
        out_step = 0 if listed else 4 * pitch
        n_taps, n_inner = _tap_offsets(kh, inner, width, depth, dil_h, dil_w)
        kw = inner // depth
        borders = in_h == BORDERS  # ``xp`` is the input itself: window origins may lie in the padding around it
        window_n, per_slab = _border_windows(borders, rows, kh, kw, width, depth)
        gemm = (kh == 1 and n_taps == 1 and n_inner == depth and stride_h == 1 and stride_w == 1 and not borders
                and in_h == 0 and height == out_h and width == out_w and not listed)  # an unpadded 1x1 stride-1 layer
        # (into a plain output: a bordered one takes its pixels' places from the row walk)
        n_chunks = -(-depth // K_CHUNK) if chunked and gemm and depth > K_CHUNK_ABOVE and pixels <= K_CHUNK_PIXELS \
            else 1
        sums_n = min(n_tiles, g1 - g0) * rows * block if n_chunks > 1 else 0
        # The walk's tables and scratch in two allocations (a chunk of a shared layer sets them up again: nine
        # allocations had cost 0.15 us a chunk): the rows' input addresses, then (a bordered output or residual)
        # their byte offsets from the tile's first pixel in the output, then in the residual (``float_microkernel``:
        # an output stride of 0 reads them), then a chunked layer's sums so far (``Tile.resumed``); the rows' pixels
        # in ``out`` and ``res``; the taps' offsets, by rows and by columns; the windows crossing the padding or a
        # chunked layer's sums. Then the regions' rows and columns (``region_tiles``)
        h_n, w_n = max(1, out_h), max(1, out_w)
        words = np.empty(5 * rows + 1 + 2 * n_taps + 8 + (window_n + sums_n + 1) // 2, np.int64)
        regions = np.empty((h_n + w_n, 4), np.int64)
        addresses = words[:3 * rows + 1]
        out_px, res_px = words[3 * rows + 1:4 * rows + 1], words[4 * rows + 1:5 * rows + 1]
        at = 5 * rows + 1
        taps, at = words[at:at + n_taps], at + n_taps
        _fill_taps(taps, kh, inner, width, depth, dil_h, dil_w)
        x_at, w_at = xp.ctypes.data, wp.ctypes.data
        rows_at, taps_at = addresses.ctypes.data, taps.ctypes.data
        out_at, bias_at, res_at = out.ctypes.data + 4 * channel0, bias.ctypes.data, res.ctypes.data
        w_tap_stride, w_block = n_inner * block * 4, kh * inner * block * 4
        tap0, tap_n, run_n, w_off, shift = 0, n_taps, n_inner, 0, 0  # the whole window (no padding skipped)
        tap_base, w_step = taps_at, w_tap_stride  # (a region's one column: its taps' offsets column by column)
        ky_lo, ky_hi, kx_lo, kx_hi = 0, kh - 1, 0, kw - 1
        columns, at = words[at:at + n_taps], at + n_taps
        ys, xs = regions[:h_n], regions[h_n:]
        per_image, _, n_x = region_tiles(out_h, out_w, rows, stride_h, stride_w, dil_h, dil_w, kh, kw, top, left,
                                           in_h, in_w, ys, xs) if in_h > 0 and in_w > 0 and code == NONE else (0, 0, 0)
        if not (per_image > 0 and dil_w > 1):
            columns = columns[:0]  # tap (ky, kx) at kx * kh + ky where a region's one column reads them
        for k in range(columns.size):
            columns[(k % kw) * kh + k // kw] = taps[k]
        if per_image > 0:
            n_tiles = n_batch * per_image
        in_w = abs(in_w)  # (negative: the row walk asked for, ``regions_wanted``)
        # BORDERS: the window grid starts (top, left) before the input; undilated and not BORDERS: (top, left)
        # inside ``xp`` (0 unless ``xp`` is a zero-bordered buffer wider than the layer's padding: ``x_border``)
        origin = x_at - (top * width + left) * depth * 4 if borders else \
            x_at + (top * width + left) * depth * 4 if in_h == 0 else x_at
        windows = _floats_at(words, at, window_n)  # (one of the two is empty: a chunked layer has no padding)
        sums_at = _floats_at(words, at, sums_n).ctypes.data
        u = g0
        while u < g1:  # the units of one panel at a time: its blocks' range stays fixed over the pixel tiles
            first = u // n_tiles
            g = u - first * n_tiles
            g_end = min(n_tiles, g + g1 - u)
            u += g_end - g
            j_lo, j_hi = first * panel, min(n_blocks, (first + 1) * panel)
            if n_chunks > 1:  # a deep 1x1 layer: each block's weights a chunk of inputs at a time (``K_CHUNK``)
                for jb in range(j_lo, j_hi):
                    j0 = jb * block
                    for c in range(n_chunks):
                        k0 = c * K_CHUNK
                        last = c == n_chunks - 1
                        w_jb = w_at + jb * w_block + k0 * block * 4
                        for t in range(g, g_end):
                            p0 = t * rows
                            for r in range(rows):
                                addresses[r] = x_at + (min(p0 + r, pixels - 1) * depth + k0) * 4
                            addresses[3 * rows] = sums_at + (t - g) * rows * block * 4
                            if not last:
                                if c == 0:
                                    bare(addresses[3 * rows], rows_at, taps_at, 1, K_CHUNK, w_jb, w_tap_stride)
                                else:
                                    bare_on(addresses[3 * rows], rows_at, taps_at, 1, K_CHUNK, w_jb, w_tap_stride)
                                continue
                            step = out_step
                            if p0 + rows > pixels:  # a short last tile, as below
                                step = 0
                                for r in range(rows):
                                    addresses[rows + r] = min(r, pixels - 1 - p0) * pitch * 4
                                    addresses[2 * rows + r] = min(r, pixels - 1 - p0) * units * 4
                            block_end(True, out_at + 4 * (p0 * pitch + j0), rows_at, taps_at, 1, depth - k0, w_jb,
                                      w_tap_stride, step, bias_at + 4 * j0, res_at + 4 * (p0 * units + j0),
                                      block if j0 + block <= units else j0 - units, low, high)
                _after_clamp(code, out_at, alpha, ea, eb, of, flat, pitch, rows, pixels, g, g_end, channel0,
                             j_lo * block, min(j_hi * block, units))
                continue
            line = g * rows // out_w  # the first pixel (image b, output row oy, column ox); the next tiles' follow
            ox = g * rows - line * out_w  # without a division (the row walk below ends on them)
            b = line // out_h
            oy = line - b * out_h
            for t in range(g, g_end):
                p0 = t * rows
                if per_image > 0:  # region order (``region_tiles``): the tile's pixels share one set of taps
                    b_r = t // per_image
                    k = t - b_r * per_image
                    region = 0
                    while True:
                        region_n = ys[region // n_x, 1] * xs[region % n_x, 1]
                        if k * rows < region_n:
                            break
                        k -= -(-region_n // rows)
                        region += 1
                    y0, x0 = ys[region // n_x, 0], xs[region % n_x, 0]
                    across = xs[region % n_x, 1]
                    for r in range(rows):
                        q = min(k * rows + r, region_n - 1)
                        oy_r = y0 + q // across
                        ox_r = x0 + q - (q // across) * across
                        addresses[r] = origin + ((b_r * height + oy_r * stride_h) * width + ox_r * stride_w) * depth * 4
                        out_px[r] = (b_r * full_h + oy_r + out_border) * full_w + ox_r + out_border
                        res_px[r] = (b_r * res_h + oy_r + res_border) * res_w + ox_r + res_border
                    ky_lo, ky_hi = ys[region // n_x, 2], ys[region // n_x, 3]
                    kx_lo, kx_hi = xs[region % n_x, 2], xs[region % n_x, 3]
                if gemm:  # pixel p's input at x + p * depth: no walk over images, rows and columns
                    for r in range(rows):
                        addresses[r] = x_at + min(p0 + r, pixels - 1) * depth * 4
                at = origin + ((b * height + oy * stride_h) * width + ox * stride_w) * depth * 4
                b_a, oy_a, ox_a = b, oy, ox
                b_z, oy_z, ox_z = b, oy, ox
                for r in range(0 if gemm or per_image > 0 else rows):
                    if p0 + r >= pixels:  # a short last tile repeats its last pixel (stored again in its place)
                        addresses[r] = addresses[r - 1]
                        out_px[r], res_px[r] = out_px[r - 1], res_px[r - 1]
                        continue
                    addresses[r] = at
                    if listed:
                        out_px[r] = (b * full_h + oy + out_border) * full_w + ox + out_border
                        res_px[r] = (b * res_h + oy + res_border) * res_w + ox + res_border
                    if borders:
                        iy, ix = oy * stride_h - top, ox * stride_w - left
                        if iy < 0 or ix < 0 or iy + kh > height or ix + kw > width:
                            addresses[r] = _fill_window(xp, windows, r, per_slab, kh, kw, b, iy, ix)
                    b_z, oy_z, ox_z = b, oy, ox
                    ox += 1
                    at += stride_w * depth * 4
                    if ox == out_w:
                        ox, oy = 0, oy + 1
                        if oy == out_h:
                            oy, b = 0, b + 1
                        at = origin + ((b * height + oy * stride_h) * width) * depth * 4
                if in_h > 0:  # a dilated layer: taps that read only padding for every pixel of the tile are skipped
                    if per_image == 0:
                        one_image = b_z == b_a
                        ky_lo, ky_hi = _inside(oy_a if one_image else 0, oy_z if one_image else out_h - 1, stride_h,
                                               dil_h, kh, top, in_h)
                        one_row = one_image and oy_z == oy_a
                        kx_lo, kx_hi = _inside(ox_a if one_row else 0, ox_z if one_row else out_w - 1, stride_w,
                                               dil_w, kw, left, in_w)
                    tap_base, w_step = taps_at, w_tap_stride
                    if dil_w == 1:  # a filter row's columns are one run: shortened at both ends
                        tap0, tap_n = ky_lo, ky_hi - ky_lo + 1
                        run_n, shift = (kx_hi - kx_lo + 1) * depth, kx_lo * depth * 4
                        w_off = ky_lo * w_tap_stride + kx_lo * depth * block * 4
                    else:  # one tap per (ky, kx): from (ky_lo, kx_lo) to (ky_hi, kx_hi) in the taps' order (the
                        # taps between outside the columns' range read only padding too: summed, as zeros)
                        tap0 = ky_lo * kw + kx_lo
                        tap_n = (ky_hi - ky_lo) * kw + kx_hi - kx_lo + 1
                        w_off = tap0 * w_tap_stride
                        if per_image > 0 and kx_lo == kx_hi:  # a region's one column: its taps, ``kw`` apart in
                            # the packed weights (one stride), listed column by column in ``columns``
                            tap_base, tap0, tap_n = columns.ctypes.data, kx_lo * kh + ky_lo, ky_hi - ky_lo + 1
                            w_step = kw * w_tap_stride
                    if shift != 0:
                        for r in range(rows):
                            addresses[r] += shift
                q0, s0 = p0, p0  # the tile's first pixel in ``out`` and in ``res``
                step = out_step
                if listed or per_image > 0:
                    q0, s0, step = out_px[0], res_px[0], 0
                    for r in range(rows):
                        addresses[rows + r] = (out_px[r] - q0) * pitch * 4
                        addresses[2 * rows + r] = (res_px[r] - s0) * units * 4
                elif p0 + rows > pixels:  # a short last tile: its repeated rows store the last pixel's values again
                    step = 0
                    for r in range(rows):
                        addresses[rows + r] = min(r, pixels - 1 - p0) * pitch * 4
                        addresses[2 * rows + r] = min(r, pixels - 1 - p0) * units * 4
                for jb in range(j_lo, j_hi):
                    j0 = jb * block
                    at, res_tile = 4 * (q0 * pitch + j0), res_at + 4 * (s0 * units + j0)
                    block_end(False, out_at + at, rows_at, tap_base + 8 * tap0, tap_n, run_n,
                              w_at + jb * w_block + w_off, w_step, step, bias_at + 4 * j0, res_tile,
                              block if j0 + block <= units else j0 - units, low, high)
                # the activation after the clamp, over the tile's pixels by the panel's channels (in L1 still;
                # an output with a border of its own takes none: ``_epilogue``)
                _after_clamp(code, out_at, alpha, ea, eb, of, flat, pitch, rows, pixels, t, t + 1, channel0,
                             j_lo * block, min(j_hi * block, units))
    return tiles


@jit.jitable
def _after_clamp(code, out_at, alpha, ea, eb, of, flat, pitch, rows, pixels, t0, t1, channel0, c0, c1):
    """The activation after the clamp (``code``, ``epilogue_activation``) over the pixels of tiles ``[t0, t1)`` of
    ``rows`` pixels by the layer's channels ``[c0, c1)`` (in L1 still after their tiles; an output with a border of
    its own takes none: ``_epilogue``)."""
    for t in range(t0, t1):
        p0 = t * rows
        if code == PRELU:  # inlined on addresses: no call, no reference counts (some 40 ns a tile)
            prelu_span(out_at, alpha.ctypes.data, pitch, p0, min(rows, pixels - p0), c0, c1)
        elif code != NONE:
            activate_span(of, flat, p0, min(rows, pixels - p0), channel0 + c0, channel0 + c1, code, alpha, ea, eb)


_NARROW_2, _NARROW_1 = _tiles(TILES[2, LANES], False), _tiles(TILES[1, LANES], False)
_WIDE_2, _WIDE_1 = _tiles(TILES[2, WIDE_LANES], False), _tiles(TILES[1, WIDE_LANES], False)
_NARROW_2_RES, _NARROW_1_RES = _tiles(TILES[2, LANES], True), _tiles(TILES[1, LANES], True)
_WIDE_2_RES, _WIDE_1_RES = _tiles(TILES[2, WIDE_LANES], True), _tiles(TILES[1, WIDE_LANES], True)
_NARROW_ROW, _WIDE_ROW = _tiles(TILES[ROW_VECTORS, LANES], False), _tiles(TILES[ROW_VECTORS, WIDE_LANES], False)
_NARROW_ROW_RES = _tiles(TILES[ROW_VECTORS, LANES], True)
_WIDE_ROW_RES = _tiles(TILES[ROW_VECTORS, WIDE_LANES], True)
_WIDE_ODD, _WIDE_ODD_RES = _tiles(ODD_TILE, False), _tiles(ODD_TILE, True)
_WIDE_3, _WIDE_3_RES = _tiles(TILES[WIDE_THREE, WIDE_LANES], False), _tiles(TILES[WIDE_THREE, WIDE_LANES], True)
_WIDE_DEEP, _WIDE_DEEP_RES = _tiles(DEEP_TILE, False), _tiles(DEEP_TILE, True)
_WIDE_TEN, _WIDE_TEN_RES = _tiles(TEN_TILE, False), _tiles(TEN_TILE, True)
_NARROW_3, _NARROW_3_RES = _tiles(TILES[NARROW_THREE, LANES], False), _tiles(TILES[NARROW_THREE, LANES], True)


@jit.jitable
def _padded_rows(pixels, rows):
    return (pixels + rows - 1) // rows * rows


@jit.jitable
def _deep_rows(vecs, lanes, pixels, kh):
    """Whether a layer of ``kh`` filter rows takes the 12-row tiles (``DEEP_TILE``): two 16-lane vectors, more than
    one filter row, and unless 7-row tiles pad its pixels much less (a 7x7 map: 49 rows against 60)."""
    if vecs != 2 or lanes != WIDE_LANES or kh < 2:
        return False
    return _padded_rows(pixels, ROWS_DEEP) - pixels <= pixels // 20 or pixels % ROWS_WIDE_ODD != 0


@jit.jitable
def _odd_rows(vecs, lanes, pixels):
    """Whether a layer of ``pixels`` output pixels on blocks of ``vecs`` vectors of ``lanes`` takes the 7-row tiles
    (``ODD_TILE``): two 16-lane vectors, and 7 leaves no short last tile where 8 would (7x7 and 14x14 maps)."""
    return vecs == 2 and lanes == WIDE_LANES and pixels % ROWS_WIDE != 0 and pixels % ROWS_WIDE_ODD == 0


@jit.jitable
def _ten_rows(vecs, lanes, pixels):
    """Whether a layer that would take the 7-row tiles (``_odd_rows``) takes the 10-row ones (``TEN_TILE``): where
    they pad its pixels by a twentieth or less (7x7 and 14x14 maps, not 5x7 or 3x7)."""
    return _odd_rows(vecs, lanes, pixels) and _padded_rows(pixels, ROWS_WIDE_TEN) - pixels <= pixels // 20


def tile_rows(vecs: int, lanes: int, pixels: int, kh: int = 1) -> int:
    """Rows of the tiles a layer of ``pixels`` output pixels and ``kh`` filter rows runs on, for blocks of ``vecs``
    vectors of ``lanes``: 12 (``_deep_rows``), 10 (``_ten_rows``), 7 (``_odd_rows``), else the shape's own
    (``TILES``)."""
    if _deep_rows(vecs, lanes, pixels, kh):
        return ROWS_DEEP
    if _ten_rows(vecs, lanes, pixels):
        return ROWS_WIDE_TEN
    return ROWS_WIDE_ODD if _odd_rows(vecs, lanes, pixels) else TILES[vecs, lanes].rows


_VARIANTS = (_NARROW_1, _NARROW_1_RES, _NARROW_2, _NARROW_2_RES, _WIDE_1, _WIDE_1_RES, _WIDE_2, _WIDE_2_RES,
             _WIDE_3, _WIDE_3_RES, _WIDE_ODD, _WIDE_ODD_RES, _WIDE_TEN, _WIDE_TEN_RES, _WIDE_DEEP, _WIDE_DEEP_RES,
             _NARROW_ROW, _NARROW_ROW_RES, _WIDE_ROW, _WIDE_ROW_RES, _NARROW_3, _NARROW_3_RES)
"""Every tile loop, by :func:`tile_variant`'s code (each without a residual, then with one)."""
_NARROW_1_AT, _NARROW_2_AT, _WIDE_1_AT, _WIDE_2_AT, _WIDE_3_AT, _WIDE_ODD_AT, _WIDE_TEN_AT, _WIDE_DEEP_AT, \
    _NARROW_ROW_AT, _WIDE_ROW_AT, _NARROW_3_AT = range(0, len(_VARIANTS), 2)
_tiles_of = jit.switch(_VARIANTS)


@jit.jitable
def tile_variant(vecs, lanes, kh, pixels, adding):
    """The code of the tile loop (``_VARIANTS``) of a layer packed in blocks of ``vecs`` vectors of ``lanes``
    with ``kh`` filter rows, ``pixels`` output pixels, and a residual or not (``adding``). Known when the layer
    is bound: :func:`_conv_tiles` takes it as a compile-time literal and so compiles that one loop alone."""
    two, wide = vecs == 2, lanes == WIDE_LANES
    if vecs == ROW_VECTORS:  # one row (pack_fc, or pack_conv for one output pixel)
        at = _WIDE_ROW_AT if wide else _NARROW_ROW_AT
    elif wide and two and _deep_rows(2, WIDE_LANES, pixels, kh):
        at = _WIDE_DEEP_AT
    elif wide and two and _ten_rows(2, WIDE_LANES, pixels):
        at = _WIDE_TEN_AT
    elif wide and two and _odd_rows(2, WIDE_LANES, pixels):
        at = _WIDE_ODD_AT
    elif wide and vecs == WIDE_THREE:
        at = _WIDE_3_AT
    elif vecs == NARROW_THREE:
        at = _NARROW_3_AT
    elif wide and two:
        at = _WIDE_2_AT
    elif wide:
        at = _WIDE_1_AT
    else:
        at = _NARROW_2_AT if two else _NARROW_1_AT
    return at + 1 if adding else at


@jit.jitable
def _variant_of(wp, out, out_border, res):
    """:func:`tile_variant` of the layer whose packed weights are ``wp`` and output ``out`` (its interior inside
    ``out_border``), with the residual ``res`` (empty: none)."""
    pixels = out.shape[0] * (out.shape[1] - 2 * out_border) * (out.shape[2] - 2 * out_border)
    return tile_variant(wp.shape[3], wp.shape[4], wp.shape[1], pixels, res.size > 0)


@jit.kernel
def _conv_tiles(variant, xp, wp, bias, res, out, stride_h, stride_w, dil_h, dil_w, top, left, in_h, in_w, lo, hi,
                panel, code, alpha, ea, eb, out_border, res_border, first, units, g0, g1):
    """Tile loop ``variant`` (:func:`tile_variant`, a compile-time literal: that loop alone is compiled) over work
    units ``[g0, g1)`` of the convolution of the padded input ``xp``: unit ``u`` is the tile of output pixels
    ``u % n_tiles`` (in NHWC order) times the ``panel`` blocks of output channels ``u // n_tiles`` (a
    panel's packed weights stay in L2 while every pixel tile passes over them). ``res``: a residual laid out as
    ``out``, added before the activation (empty: none); ``(code, alpha, ea, eb)`` the activation after the clamp
    (``epilogue_activation``); ``(dil_h, dil_w)`` the dilation (1: adjacent taps); ``in_h`` > 0: the input's
    ``in_h x in_w`` pixels lie at ``(top, left)`` of ``xp`` and a tile skips the taps that read only the padding
    around them (dilated layers: ``skipped_padding``); ``in_h`` 0: the windows start at ``(top, left)`` of ``xp``.
    ``out_border``, ``res_border``: ``out`` and ``res`` are zero-bordered buffers, the layer's output and residual
    their interiors (``bind_conv2d``'s ``out_border``). The layer's ``units`` output channels are channels
    ``[first, first + units)`` of ``out``'s pixels (a concatenation's slice: ``out.shape[3]`` wider), the others
    never written."""
    _tiles_of(variant, (xp, wp, bias, res, out, stride_h, stride_w, dil_h, dil_w, top, left, in_h, in_w, lo, hi, panel,
                        code, alpha, ea, eb, out_border, res_border, first, units, g0, g1))


@jit.kernel
def _conv_shared(variant, xp, wp, bias, res, out, stride_h, stride_w, dil_h, dil_w, top, left, in_h, in_w, lo, hi,
                 panel, code, alpha, ea, eb, out_border, res_border, first, units, n_units, n_chunks, counters, wait):
    _conv_chunks(variant, (xp, wp, bias, res, out, stride_h, stride_w, dil_h, dil_w, top, left, in_h, in_w, lo, hi,
                           panel, code, alpha, ea, eb, out_border, res_border, first, units),
                 n_units, n_chunks, counters, wait)


def _chunks_of(tiles: Callable) -> Callable:
    """The chunk loop over ``tiles(variant, args + (g0, g1))``: ``_tiles_of`` (a literal ``variant``) or
    ``_loop_at`` (``variant`` a tile loop's entry address)."""
    def chunks(variant, args, n_units, n_chunks, counters, wait):
        # Chunks claimed from counters[0]; counters[1] counts finished ones (float_sharing.py). ``variant`` is
        # passed on by itself: inside a tuple (or a call's ``*args``) it would lose its literal type.
        claim = np.int64(counters.ctypes.data)
        while True:
            i = take_chunk(claim, n_chunks, not wait)
            if i < 0:
                break
            tiles(variant, args + (n_units * i // n_chunks, n_units * (i + 1) // n_chunks))
            fetch_add(claim + 8, 1)
        if wait:
            wait_for_chunks(claim, n_chunks)
    return jit.kernel(chunks)


_conv_chunks = _chunks_of(_tiles_of)


PANEL_BYTES = 192 * 1024
"""Packed weights one panel of output-channel blocks holds at most (one block at least): every pixel tile passes
over a panel before the next, so a deep layer's weights come from L2 (512 KiB here, with the input rows beside
them), not once per pixel tile from L3 or memory."""
PANELS_ABOVE = 1024 * 1024
"""Packed weights above which a layer is cut into panels (about a core's L2); below, each pixel tile passes over all
of them (the input rows stay in L1 across the blocks). Whole models with two threads, interleaved, on a machine
with 1 MB of L2 a core: ResNet-18 8.96 ms with 6 MB here against 8.75 with 1 MB (its 2.4 MB 3x3 layers at 14x14
had streamed every block from L3 for each tile: 16-20 % slower than ORT's in the model), MobileNet v2 2.13 against
2.09; 512 and 256 KB the same as 1 MB. Earlier, one thread on a machine with 512 KB of L2: 9.4 MB at 7x7 4.3 ms
in panels against 8.4 without, 2.4 MB at 14x14 3.4 against 3.25."""
NO_RESIDUAL = np.empty((0, 0, 0, 0), np.float32)


MIN_UNITS = 32
"""Work units a layer is cut into at least, where it has the blocks: a layer of few pixel tiles (7x7 maps, a fully
connected layer's one row) has its blocks cut into more panels, so that the threads sharing it have chunks to
balance (MobileNet v2's 7x7 layers had 5-7 units, its classifier one, which one thread ran alone: the model took
2.39 ms with two threads against 2.20 cut so, interleaved; 16 units gave 2.25, 64 the same as 32)."""


def work_units(wp: np.ndarray, pixels: int, tiles: int = 0) -> tuple[int, int]:
    """(blocks per panel, work units) of a layer of packed weights ``wp`` over ``pixels`` output pixels, in
    ``tiles`` pixel tiles (0: the pixels in order, ``tile_rows`` at a time)."""
    n_blocks, kh, inner, vecs, lanes = wp.shape
    block_bytes = kh * inner * vecs * lanes * 4
    panel = n_blocks if wp.nbytes <= PANELS_ABOVE else min(n_blocks, max(1, PANEL_BYTES // block_bytes))
    tiles = tiles or -(-pixels // tile_rows(vecs, lanes, pixels, kh))
    panels = -(-n_blocks // panel)
    if panels * tiles < MIN_UNITS:
        panel = max(1, n_blocks // -(-MIN_UNITS // tiles))
    return panel, -(-n_blocks // panel) * tiles


_CONV_TYPES = (F32[4, False], F32[5, False], F32[1, False], F32[4, False], F32[4, True], jit.INT, jit.INT, jit.INT,
               jit.INT, jit.INT, jit.INT, jit.INT, jit.INT, jit.FLOAT, jit.FLOAT, jit.INT, jit.INT, F32[1, False], jit.FLOAT, jit.FLOAT,
               jit.INT, jit.INT, jit.INT, jit.INT)
_CONV_TYPES_OF = tuple((types.literal(v), *_CONV_TYPES) for v in range(len(_VARIANTS)))
"""``_conv_tiles``'s argument types for each tile loop (one constant tuple each: ``float_sharing.compiled``)."""


def _padded(o: int, size: int) -> int:
    return -(-o // size) * size


def block_shape(o: int, lanes: int | None = None) -> tuple[int, int]:
    """(vectors, lanes) of the blocks ``pack_conv`` packs ``o`` output channels in, for vectors of ``lanes`` (default:
    the CPU's, ``isa.float_lanes``): of 16 for more than 16 channels or exactly 16, else of 8. Of 8 lanes: two
    vectors a block unless ``o`` leaves one vector's worth or less over a multiple of two (8, 24, 40...), so that no
    block is half padding. Of 16: three vectors where they pad fewer channels than two (40, 48, 144, 240); else two,
    unless one vector's blocks pad so much less that their slower tiles (12 x 1: 0.72 of the 8 x 2 tiles' rate) still
    win (16 alone). A last block of fewer channels is written through masks (``tile_*_partial``): MobileNet v2's 1x1
    layers to 24 channels ran 2.0-2.3x faster on one block of 2 x 16 lanes than on three of 8, one thread."""
    wide = (isa.float_lanes() if lanes is None else lanes) == WIDE_LANES
    if wide and (o > WIDE_LANES or o == WIDE_LANES):
        two = _padded(o, 2 * WIDE_LANES)
        if _padded(o, WIDE_THREE * WIDE_LANES) < two:
            return WIDE_THREE, WIDE_LANES
        return (1 if _padded(o, WIDE_LANES) < 0.72 * two else 2), WIDE_LANES
    return (1 if 0 < o % (2 * LANES) <= LANES else 2), LANES


def conv_block_shape(o: int) -> tuple[int, int]:
    """:func:`block_shape` of a convolution's ``o`` output channels, but blocks of ``NARROW_THREE`` 8-lane vectors
    for a multiple of 24 that is not one of 16 on a CPU whose 512-bit multiply-adds take two halves
    (``isa.split_wide_fma``): there 24 lanes cost three quarters of 32, and no lane is padding."""
    if o % (NARROW_THREE * LANES) == 0 and o % WIDE_LANES and isa.float_lanes() == WIDE_LANES and isa.split_wide_fma():
        return NARROW_THREE, LANES
    return block_shape(o)


def pack_conv(w: np.ndarray, block: tuple[int, int] | None = None, pixels: int = 0) -> np.ndarray:
    """CONV_2D weights [O, kh, kw, I] as the micro-kernel reads them: [O / B, kh, kw * I, vectors, lanes] float32
    with B = vectors * lanes output channels per block (``conv_block_shape``, or ``block`` given), the last block
    padded with zeros. ``pixels``: the layer's output pixels where known; a layer of one (squeeze-and-excitation's
    1x1 convolutions on a pooled map) takes the one-row tiles of ``ROW_VECTORS`` vectors, as ``pack_fc`` packs a
    matrix-vector product (576 -> 144 channels: 1.4 us against 5.6 on 8 x 3 tiles computing one row eight times,
    one thread)."""
    o, kh, kw, i = w.shape
    if block is None and pixels == 1 and o > block_shape(o)[1]:
        block = ROW_VECTORS, block_shape(o)[1]
    vecs, lanes = conv_block_shape(o) if block is None else block
    size = vecs * lanes
    n_blocks = -(-o // size)
    padded = np.zeros((n_blocks * size, kh, kw * i), np.float32)
    padded[:o] = np.asarray(w, np.float32).reshape(o, kh, kw * i)
    packed = padded.reshape(n_blocks, size, kh, kw * i).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(packed).reshape(n_blocks, kh, kw * i, vecs, lanes)


def pack_fc(w: np.ndarray, lanes: int | None = None, rows: int = 0) -> np.ndarray:
    """FULLY_CONNECTED weights [units, size] as a 1x1 convolution's (``pack_conv``). For ``rows`` = 1 input row (a
    matrix-vector product), blocks of ``ROW_VECTORS`` vectors for the one-row tiles, where there are more units than
    one vector: MobileNet v2's classifier (1280 -> 1000) took 44 us on 8-row tiles, 27 on these (two threads, weights
    warm). Else blocks of two
    vectors unless there is one vector's worth of units or less: a batch of one row fills a tile of 6 rows better
    than one of 12."""
    units, size = w.shape
    lanes = block_shape(units, lanes)[1]
    vecs = 1 if units <= lanes else ROW_VECTORS if rows == 1 else 2
    return pack_conv(np.asarray(w).reshape(units, 1, 1, size), (vecs, lanes))


WINDOWS_SHARE = 0.5
"""A padded undilated layer reads its input in place (``BORDERS``) when the windows its tiles fill, counted once per
panel of output channels (a tile's windows are filled again for each panel), come to at most this share of the
zero-bordered copy's bytes; else the copy. One thread, CPU time, the same entry both ways in turns (a loaded
machine): 3x3 stride 2 64->128 from 56x56 (windows 0.15 of the copy) 1.02-1.07 times as fast in place; 3x3
64->64 at 56x56 (0.59) and 128->128 at 28x28 (1.08) the same either way; 3x3 256->256 at 14x14 (8 panels:
14.6) 0.95-0.98, 512->512 at 7x7 (42) 0.92-0.94, ResNet's 7x7 stride-2 stem on 224x224x3 (0.81, windows of
21-value runs) 0.95-0.98."""


def _window_bytes(x_shape, pads, strides, out_hw, kernel_hw, panels):
    """(bytes of the windows the ``BORDERS`` route fills per call, bytes of the zero-bordered copy)."""
    n, h, w, c = x_shape
    left, _, top, _ = pads
    inside_h = sum(0 <= oy * strides[1] - top <= h - kernel_hw[0] for oy in range(out_hw[0]))
    inside_w = sum(0 <= ox * strides[0] - left <= w - kernel_hw[1] for ox in range(out_hw[1]))
    border = out_hw[0] * out_hw[1] - inside_h * inside_w
    need_h = max(top + h, (out_hw[0] - 1) * strides[1] + kernel_hw[0])
    need_w = max(left + w, (out_hw[1] - 1) * strides[0] + kernel_hw[1])
    return 4 * n * border * kernel_hw[0] * kernel_hw[1] * c * panels, 4 * n * need_h * need_w * c


def _staged_input(x: np.ndarray, pads: tuple[int, int, int, int], strides: tuple[int, int],
                  out_hw: tuple[int, int], kernel_hw: tuple[int, int], dilations: tuple[int, int] = (1, 1),
                  panels: int = 1):
    """(what the tiles read, its per-call copy or None, the tiles' ``(top, left, in_h, in_w)``): ``x`` itself
    when every window lies inside it (zeros); an undilated layer's padded input also, the tiles reading a window
    that crosses the padding from a zero-bordered copy of that window alone (``BORDERS``), where a filter row fits
    in an input row and those windows cost less than a copy of the input (``WINDOWS_SHARE``; ``panels``: the
    layer's panels of output channels); else a zero-bordered buffer (allocated once) that ``x`` is copied into
    before each call (the dilated layers' tiles then skip taps over padding: ``skipped_padding``). ``dilations``
    (width, height): a window spans ``(k - 1) * d + 1`` inputs."""
    n, h, w, c = x.shape
    left, _, top, _ = pads
    span_h = (kernel_hw[0] - 1) * dilations[1] + 1
    span_w = (kernel_hw[1] - 1) * dilations[0] + 1
    need_h = max(top + h, (out_hw[0] - 1) * strides[1] + span_h)
    need_w = max(left + w, (out_hw[1] - 1) * strides[0] + span_w)
    if top == left == 0 and need_h == h and need_w == w:
        return (*staged(x), (0, 0, 0, 0))
    if tuple(dilations) == (1, 1) and span_w <= w:
        windows, copied = _window_bytes(x.shape, pads, strides, out_hw, kernel_hw, panels)
        if windows <= WINDOWS_SHARE * copied:
            return (*staged(x), (int(top), int(left), BORDERS, 0))
    xp, copy = staged(x, (n, need_h, need_w, c), (slice(None), slice(top, top + h), slice(left, left + w)))
    return xp, copy, skipped_padding(x, pads, dilations, True)


def interior(shape: tuple[int, ...], border: int) -> tuple[int, ...]:
    """The ``[N, H, W, C]`` shape inside a zero-bordered buffer of ``shape`` with ``border`` pixels each side."""
    n, h, w, c = shape
    return n, h - 2 * border, w - 2 * border, c


def _bordered_input(x: np.ndarray, border: int, pads: tuple[int, int, int, int], strides: tuple[int, int],
                    out_hw: tuple[int, int], kernel_hw: tuple[int, int], dilations: tuple[int, int]):
    """``_staged_input``'s triple for an input given as a zero-bordered buffer (``border`` zeros each side, kept
    so by whoever writes its interior): read in place, no copy, the windows starting ``border - pad`` inside it."""
    _, h, w, _ = interior(x.shape, border)
    left, _, top, _ = (int(p) for p in pads)
    if tuple(dilations) != (1, 1) or max(left, top) > border or min(h, w) <= 0:
        raise ValueError(f"an input bordered by {border} takes undilated layers padded by at most as much")
    y0, x0 = border - top, border - left
    if (y0 + (out_hw[0] - 1) * strides[1] + kernel_hw[0] > x.shape[1]
            or x0 + (out_hw[1] - 1) * strides[0] + kernel_hw[1] > x.shape[2]):
        raise ValueError(f"the layer's windows reach past the input's border of {border}")
    return x, None, (y0, x0, 0, 0)


def channel_slice(out: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(a C-contiguous float32 ``[N, H, W, P]`` array, ``first``) whose channels ``[first, first + C)`` are the
    ``[N, H, W, C]`` output ``out``: ``(out, 0)`` when ``out`` is C-contiguous float32; for a channel slice of wider
    pixels (a concatenation's slice, pixel stride ``P > C``), an array over the same memory, so that the tiles
    write the layer's channels in place and no others (:func:`_conv_tiles`); None for any other layout (copied
    per call). The slice's first channel in its own buffer is not known from the view, so ``first`` is one that
    keeps the array inside the memory the view's owner holds: the layer's own channels are the same bytes."""
    if out.dtype != np.float32 or out.ndim != 4:
        return None
    if out.flags.c_contiguous:
        return out, 0
    n, h, w, c = out.shape
    # the pixel stride, from the outermost of the axes W, H, N longer than 1 to tell it (a length-1 axis's stride
    # says nothing); the others must agree with it
    step = out.strides[2] if w > 1 else out.strides[1] // w if h > 1 else out.strides[0] // (w * h)
    if out.size == 0 or (c > 1 and out.strides[3] != 4) or step % 4 or step // 4 <= c or \
            (n > 1 and out.strides[0] != step * w * h) or (h > 1 and out.strides[1] != step * w):
        return None
    root = out
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):  # (a tensor's storage is Fortran-ordered)
        return None
    pitch, nbytes = step // 4, n * h * w * step
    start, low = out.__array_interface__["data"][0], root.__array_interface__["data"][0]
    first = max(0, -(-(start + nbytes - low - root.nbytes) // 4))  # the fewest that end the array inside the owner
    if first > min(pitch - c, (start - low) // 4):
        return None
    whole = root.ravel(order="K").view(np.uint8)[start - 4 * first - low:start - 4 * first - low + nbytes]
    return whole.view(np.float32).reshape(n, h, w, pitch), first


def _output_border(out: np.ndarray, border: int) -> tuple[int, ...]:
    """The output's shape: ``out`` itself, or its interior when it is a zero-bordered buffer."""
    if border < 0 or min(interior(out.shape, border)[1:3]) <= 0:
        raise ValueError(f"an output of shape {list(out.shape)} has no interior inside a border of {border}")
    return interior(out.shape, border)


def clamp_range(activation: int | tuple[float, float]) -> tuple[float, float]:
    """The [low, high] of a fused activation: NNAPI's code (``real_range``), or the clamp itself (an OpenVX
    activation layer the plan fused into the layer: ``relu``, ``brelu`` with its bound)."""
    return tuple(activation) if isinstance(activation, tuple) else real_range(activation)


def bias_or_zeros(bias: np.ndarray | None, units: int) -> np.ndarray:
    """The bias as a contiguous float32 vector (zeros when the layer has none)."""
    if bias is None:
        return np.zeros(units, np.float32)
    return np.ascontiguousarray(bias, np.float32)


def _epilogue(epilogue: tuple | None, out: np.ndarray, out_border: int = 0) -> tuple[int, np.ndarray, float, float]:
    """``epilogue`` (``epilogue_activation.epilogue_of``'s) checked against the layer (an activation after the
    clamp runs over whole output rows: none into a bordered output)."""
    if epilogue is not None and epilogue[0] != NONE and out_border:
        raise ValueError("a bordered output takes no activation epilogue")
    return checked_epilogue(epilogue, out.shape[-1])


def _residual_input(residual: np.ndarray | None, out: np.ndarray, out_shape: tuple | None = None,
                    res_border: int = 0):
    """(what the tiles read as the residual, its per-call copy or None): :data:`NO_RESIDUAL` when there is none,
    else ``residual`` itself when C-contiguous float32 and apart from ``out``, else a buffer it is copied into.
    ``out_shape``: the output's (``out``'s own by default); ``res_border``: ``residual`` is a zero-bordered buffer
    (its interior of that shape)."""
    if residual is None:
        return NO_RESIDUAL, None
    want = tuple(out.shape if out_shape is None else out_shape)
    if res_border < 0 or interior(residual.shape, res_border) != want:
        raise ValueError(f"residual has shape {list(residual.shape)} (border {res_border}), expected the output's "
                         f"{list(want)}")
    if res_border and not (contiguous_f32(residual) and not np.may_share_memory(residual, out)):
        raise ValueError("a bordered residual must be C-contiguous float32, apart from the output")
    if contiguous_f32(residual) and not np.may_share_memory(residual, out):
        return residual, None
    return staged(residual, residual.shape)


def _dilations(dilations: tuple[int, int]) -> tuple[int, int]:
    """(width, height) dilations checked: whole numbers, at least 1."""
    dw, dh = (int(d) for d in dilations)
    if min(dw, dh) < 1:
        raise ValueError(f"dilations {list(dilations)} must be at least 1")
    return dw, dh


def skipped_padding(x: np.ndarray, pads: tuple[int, int, int, int], dilations: tuple[int, int],
                    staged_copy: bool) -> tuple[int, int, int, int]:
    """(top, left, height, width) of the input inside the padded buffer where the tiles skip the taps that read
    only its padding, else zeros. Only dilated layers skip (an atrous layer at rate 18 on a 28x28 map reads padding
    with two taps of three, on most pixels); the zeros skipped add nothing to a sum begun at +0.0, so only an
    infinite or NaN weight over the padding would have changed the result (NaN). Undilated layers keep every tap."""
    if not staged_copy or tuple(dilations) == (1, 1):
        return 0, 0, 0, 0
    return int(pads[2]), int(pads[0]), int(x.shape[1]), int(x.shape[2])


def reached_filter(x_shape: tuple[int, ...], wp: np.ndarray, pads: tuple[int, int, int, int],
                   strides: tuple[int, int], dilations: tuple[int, int], out_hw: tuple[int, int]):
    """(packed weights, pads, dilations) of the filter rows and columns that read inside the input for some output
    pixel. A dilated layer whose outer taps read only its padding (an atrous rate at or above the map's side: the
    centre tap alone, a 1x1 layer read in place, no padded copy) is that smaller layer: its kept taps summed in
    the same order, the zeros dropped as the tiles drop them (``skipped_padding``). Undilated layers, and those
    whose kept window would start inside the input (a negative pad), come back as they are."""
    dw, dh = dilations
    if (dw, dh) == (1, 1):
        return wp, pads, dilations
    _, h, w, c = x_shape
    kh, kw = wp.shape[1], wp.shape[2] // c
    left, right, top, bottom = (int(p) for p in pads)
    ky_lo, ky_hi = _inside(0, out_hw[0] - 1, int(strides[1]), dh, kh, top, h)
    kx_lo, kx_hi = _inside(0, out_hw[1] - 1, int(strides[0]), dw, kw, left, w)
    left, top = left - kx_lo * dw, top - ky_lo * dh
    if (ky_lo, ky_hi, kx_lo, kx_hi) == (0, kh - 1, 0, kw - 1) or min(left, top) < 0:
        return wp, pads, dilations
    kept = np.ascontiguousarray(wp[:, ky_lo:ky_hi + 1, kx_lo * c:(kx_hi + 1) * c])
    pads = (left, max(0, right - (kw - 1 - kx_hi) * dw), top, max(0, bottom - (kh - 1 - ky_hi) * dh))
    return kept, pads, (1 if kx_lo == kx_hi else dw, 1 if ky_lo == ky_hi else dh)


def bind_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                pads: tuple[int, int, int, int], strides: tuple[int, int], activation: int,
                residual: np.ndarray | None = None, epilogue: tuple | None = None,
                dilations: tuple[int, int] = (1, 1), borders: tuple[int, int, int] = (0, 0, 0)) -> Callable[[], None]:
    """A no-argument call computing ``out = f(act(bias + conv(x, w) [+ residual]))`` from the arrays' current
    values, with ``wp = pack_conv(w)``; ``activation`` NNAPI's code or a (low, high) clamp (``clamp_range``);
    ``epilogue`` the activation ``f`` as ``epilogue_activation.epilogue_of`` gives it (None: none);
    ``pads`` (left, right, top, bottom), ``strides`` and ``dilations`` (width, height; a dilation ``d`` puts
    ``d - 1`` inputs between taps); ``out``'s shape fixes the extent (``nhwc_convolution.conv2d``'s contract),
    ``residual`` has it too. ``borders`` (input, output, residual): those arrays given as zero-bordered buffers of
    that many pixels each side, the layer's tensors their interiors (0: the array itself): a bordered input is read
    in place as already padded (a layer padded by at most its border, undilated), a bordered output or residual
    written or read in its interior alone (``core/bordered_tensors``); their borders are never written. ``out`` may
    be a channel slice of wider pixels (a concatenation's: :func:`channel_slice`), written in place. Everything
    but the arithmetic (and the copy of a padded input) is settled here, once."""
    lo, hi = clamp_range(activation)
    dw, dh = _dilations(dilations)
    x_border, out_border, res_border = (int(b) for b in borders)
    sliced = channel_slice(out)
    target, first = sliced if sliced is not None else (output_target(out), 0)
    out_shape = _output_border(out, out_border)
    if float_winograd().chosen(x.shape, x_border, wp, strides, (dw, dh), out_shape):
        xs, x_copy = staged(x)
        res, res_copy = _residual_input(residual, target if sliced is None else out, out_shape, res_border)
        rows = float_winograd().bind(xs, x_border, wp, pads, bias, res, res_border, target, first, out_shape,
                                     out_border, (lo, hi), _epilogue(epilogue, out, out_border))
        return finish(rows, [x_copy, res_copy], out if sliced is not None else target, out)
    code, alpha, ea, eb = _epilogue(epilogue, out, out_border)
    wp, pads, (dw, dh), (panel, n_units, work), (xp, copy, window) = _planned(x, x_border, wp, pads, strides,
                                                                              (dw, dh), out_shape, out.shape[3],
                                                                              code == NONE and regions_wanted())
    res, res_copy = _residual_input(residual, target if sliced is None else out, out_shape, res_border)
    variant = _variant_of(wp, target, out_border, res)
    args = (variant, xp, wp, np.ascontiguousarray(bias, np.float32), res, target, int(strides[1]), int(strides[0]),
            dh, dw, *window, float(lo), float(hi), panel, code, alpha, ea, eb, out_border,
            res_border if res.size else 0, first, out.shape[3])
    rows = Rows(_conv_tiles, _conv_shared, args, _CONV_TYPES_OF[variant], n_units, work)
    return finish(rows, [copy, res_copy], out if sliced is not None else target, out)


_winograd = None
"""The Winograd route (``float_winograd``): it builds on this module's tiles, so this module cannot import it;
it hands itself over (:func:`use_winograd`) when the package imports it."""


def use_winograd(route) -> None:
    """Take ``route`` (the ``float_winograd`` module) for the layers its ``chosen`` picks."""
    global _winograd  # set once, by the route's module as the package loads it
    _winograd = route


def float_winograd():
    """The Winograd route's module (``float_winograd``, handed over when the package loaded it)."""
    return _winograd


def _planned(x: np.ndarray, x_border: int, wp: np.ndarray, pads, strides, dilations: tuple[int, int], out_shape,
             channels: int, regions: bool):
    """(packed weights, pads, dilations, (blocks per panel, work units, multiply-adds), ``_input_of``'s triple) of
    a layer of ``channels`` output channels whose output has ``out_shape``: a dilated layer on the filter rows and
    columns it reaches (``reached_filter``), its tiles in region order where they sum fewer taps so and
    ``regions`` (no activation after the clamp: ``region_tiles``; else the window's width negative, the row
    walk's mark)."""
    if not x_border:
        wp, pads, dilations = reached_filter(x.shape, wp, pads, strides, dilations, out_shape[1:3])
    kh, inner = wp.shape[1:3]
    pixels = out_shape[0] * out_shape[1] * out_shape[2]
    panel, n_units = work_units(wp, pixels)
    xp, copy, window = _input_of(x, x_border, pads, strides, out_shape[1:3], (kh, inner // x.shape[3]), dilations,
                                 -(-wp.shape[0] // panel))
    if window[2] > 0:  # a dilated layer skipping padding (``skipped_padding``)
        top, left, in_h, in_w = window
        per_image = 0
        if regions:
            rows = tile_rows(wp.shape[3], wp.shape[4], pixels, kh)
            ys, xs = np.empty((out_shape[1], 4), np.int64), np.empty((out_shape[2], 4), np.int64)
            per_image = region_tiles(out_shape[1], out_shape[2], rows, int(strides[1]), int(strides[0]),
                                     int(dilations[1]), int(dilations[0]), kh, inner // x.shape[3], top, left, in_h,
                                     in_w, ys, xs)[0]
            panel, n_units = work_units(wp, pixels, out_shape[0] * per_image)
        else:
            window = (top, left, in_h, -in_w)
    return wp, pads, dilations, (panel, n_units, pixels * channels * kh * inner), (xp, copy, window)


def _input_of(x: np.ndarray, x_border: int, pads, strides, out_hw, kernel_hw, dilations, panels: int):
    """``_staged_input``'s triple, or ``_bordered_input``'s for an input bordered by ``x_border`` pixels."""
    if x_border:
        return _bordered_input(x, x_border, pads, strides, out_hw, kernel_hw, dilations)
    return _staged_input(x, pads, strides, out_hw, kernel_hw, dilations, panels)


def conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
           strides: tuple[int, int], activation: int, residual: np.ndarray | None = None,
           epilogue: tuple | None = None, dilations: tuple[int, int] = (1, 1)) -> None:
    """``bind_conv2d(...)()``: one call."""
    bind_conv2d(x, wp, bias, out, pads, strides, activation, residual, epilogue, dilations)()


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
_X, _XP, _W, _BIAS, _RES, _OUT, _COUNTERS, _STAGING, _ALPHA = (at(k) for k in range(9))
_SH, _SW, _DH, _DW, _LO, _HI, _PANEL, _UNITS, _STAGED, _TOP, _LEFT, _CODE, _EA, _EB, _OB, _RB, _FIRST, _CHANNELS, \
    _MAILBOX, _TASK, _CHUNKS, _LOOP = range(at(9), at(9) + 22)
_PADDED, _WINDOWS, _BORDERED = 1, 2, 3  # block[_STAGED]: the input copied into a zero-bordered buffer, read in place
# (BORDERS), or given as a zero-bordered buffer (the windows starting (_TOP, _LEFT) inside it)


@jit.jitable
def _block_args(block):
    """The tile loop's arguments but the work units, from the layer packed in ``block``."""
    x = native.c_array(block, _X, np.float32)[0, 0]
    skip = block[_STAGED] == _PADDED and (block[_DH] > 1 or block[_DW] > 1)  # skipped_padding's rule
    windows = block[_STAGED] == _WINDOWS
    shifted = skip or windows or block[_STAGED] == _BORDERED
    return (native.c_array(block, _XP, np.float32)[0, 0], native.c_array(block, _W, np.float32)[0],
            native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0], native.c_array(block, _RES, np.float32)[0, 0],
            native.c_array(block, _OUT, np.float32)[0, 0], block[_SH], block[_SW], block[_DH], block[_DW],
            block[_TOP] if shifted else 0, block[_LEFT] if shifted else 0,
            x.shape[1] if skip else BORDERS if windows else 0, x.shape[2] if skip else 0, native.real(block, _LO),
            native.real(block, _HI), block[_PANEL], block[_CODE], native.c_array(block, _ALPHA, np.float32)[0, 0, 0, 0, 0],
            native.real(block, _EA), native.real(block, _EB), block[_OB], block[_RB], block[_FIRST], block[_CHANNELS])


def _loop_body(variant: int) -> Callable:
    """The native entry of tile loop ``variant`` alone (:func:`_conv_loop`), on ``words = [block, u0, u1]``: work
    units ``[u0, u1)`` of the layer packed at address ``block``. A layer's entry calls it by address, so the entry
    and its helper compile no tile loop and the loop compiles once (one function around it), for the variants
    used alone."""
    def loop(words):
        block = native.words_at(words[0])
        args = _block_args(block)
        if _variant_of(args[1], args[4], block[_OB], args[3]) != variant:  # bound for another layer: never runs
            return jit.RAISED
        _tiles_of(variant, args + (words[1], words[2]))
        return 0
    return loop


_LOOPS = tuple(_loop_body(v) for v in range(len(_VARIANTS)))


@native.factory
def _conv_loop(variant: int) -> int:
    """Tile loop ``variant`` (:func:`tile_variant`) as a native entry (:func:`_loop_body`)."""
    return jit.native(_LOOPS[variant])


@jit.jitable
def _loop_at(loop, args):
    """The tile loop whose entry is at address ``loop`` over units ``[args[1], args[2])`` of the layer packed at
    address ``args[0]`` (the chunk loop's ``tiles``)."""
    words = np.empty(3, np.int64)
    words[0], words[1], words[2] = args
    if native.call(loop, words.ctypes.data) != 0:
        raise RuntimeError("a tile loop failed")


_loop_chunks = _chunks_of(_loop_at)


_FC_BLOCK = _LOOP + 1
"""Words of :func:`fc_block`'s layer block; the three words after it are the loop's call: the block's address and
the units ``[0, n_units)``."""
_NO_LOW, _NO_HIGH, _ONE = (int(np.float64(v).view(np.int64)) for v in (-np.inf, np.inf, 1.0))


@jit.jitable
def _put(block, at, a):
    """Array ``a`` (C-contiguous) packed at ``block[at:]`` as :func:`native.c_array` reads it (its extents behind
    leading 1s; the strides are not read)."""
    block[at] = a.ctypes.data
    lead = native.RANK - a.ndim
    for i in range(lead):
        block[at + 1 + i] = 1
    for i in range(a.ndim):
        block[at + 1 + lead + i] = a.shape[i]


@jit.jitable
def fc_block(x, wp, bias, out, panel, n_units):
    """The block of :func:`fc_run`: ``out[0, 0, r] = bias + w @ x[0, 0, r]`` for every row, with
    ``wp = pack_fc(w)`` and ``(panel, n_units) = work_units(wp, rows)``, laid out as a convolution's block for its
    tile loop's entry. It holds the arrays' addresses: valid while they live, and for every run over them (a
    recurrent layer builds one per product before its steps)."""
    block = np.zeros(_FC_BLOCK + 3, np.int64)
    _put(block, _X, x)
    _put(block, _XP, x)
    _put(block, _W, wp)
    _put(block, _BIAS, bias)
    _put(block, _ALPHA, bias)
    _put(block, _OUT, out)
    for i in range(native.RANK):  # an empty residual: [1, 1, 0, 0, 0, 0]
        block[_RES + 1 + i] = 1 if i < 2 else 0
    block[_SH], block[_SW], block[_DH], block[_DW] = 1, 1, 1, 1
    block[_LO], block[_HI], block[_EA], block[_EB] = _NO_LOW, _NO_HIGH, _ONE, _ONE
    block[_PANEL], block[_UNITS], block[_CODE], block[_CHANNELS] = panel, n_units, NONE, out.shape[3]
    block[_FC_BLOCK], block[_FC_BLOCK + 1], block[_FC_BLOCK + 2] = block.ctypes.data, 0, n_units
    return block


@jit.jitable
def fc_run(loop, block):
    """The product of :func:`fc_block`'s ``block`` on the calling thread, by the tile loop whose entry is at
    ``loop`` (:func:`fc_loop`): compiled once for every caller, not inlined into each (20 loops, minutes of
    compile each)."""
    if native.call(loop, np.int64(block.ctypes.data) + 8 * _FC_BLOCK) != 0:
        raise RuntimeError("a tile loop failed")


@jit.jitable
def fc_rows(loop, x, wp, bias, out, panel, n_units):
    """:func:`fc_run` of :func:`fc_block` (a product run once)."""
    fc_run(loop, fc_block(x, wp, bias, out, panel, n_units))


def fc_loop(wp: np.ndarray, rows: int) -> int:
    """The address of the tile loop :func:`fc_run` runs for weights ``wp`` (``pack_fc``) over ``rows`` rows."""
    return _conv_loop(int(tile_variant(wp.shape[3], wp.shape[4], wp.shape[1], rows, False)))


@jit.kernel
def _conv_block(block, r0, r1, chunks, wait):
    """Work units ``[r0, r1)`` of the layer packed in ``block`` (``chunks`` > 0: all of them, in that many chunks
    claimed with the helpers; ``wait``: until every claimed one is done), by its tile loop's entry
    (``block[_LOOP]``)."""
    at = native.address_of(block)
    if chunks == 0:
        _loop_at(block[_LOOP], (at, r0, r1))
    else:
        _loop_chunks(block[_LOOP], (at,), block[_UNITS], chunks,
                     native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


@jit.kernel
def _stage_block(block):
    """Before the layer's task is posted: the staging's share counters reset (the last run's helpers are gone)."""
    staging = native.c_array(block, _STAGING, np.int64)[0, 0, 0, 0, 0]
    staging[0] = 0
    staging[1] = 0


_stage_shares = chunk_driver(stage)
"""``stage`` over the input's rows in shares claimed by every thread of the layer (each waits for all)."""


@jit.kernel
def _stage_parts(block, parts):
    """The padded input's copy (``stage``) where the layer has one: serially (``parts`` 0), or in ``parts`` shares
    claimed with the helpers, each thread going on once every share is copied (no tile reads a row before)."""
    if block[_STAGED] != _PADDED:
        return
    x, xp = native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _XP, np.float32)[0, 0]
    lines = x.shape[0] * x.shape[1]
    if parts == 0:
        stage(x, xp, block[_TOP], block[_LEFT], 0, lines)
    else:
        staging = native.c_array(block, _STAGING, np.int64)[0, 0, 0, 0, 0]
        _stage_shares((x, xp, block[_TOP], block[_LEFT]), lines, parts, staging, False)
        task = native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0]  # its failure ends the wait too
        wait_for_shares(np.int64(staging.ctypes.data), parts, np.int64(task.ctypes.data))


@jit.kernel
def _conv_lines(code, block, chunks, wait):
    # ``gang.shared_entry``'s lines: the staging, then serially every tile, or the shared chunks
    _stage_parts(block, chunks)
    _conv_block(block, 0, block[_UNITS] if chunks == 0 else 0, chunks, wait)


_BODIES = gang.shared_entry(_conv_lines, _stage_block, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _conv_entry() -> int:
    """The layer: the padded input's copy where there is one, then every tile, shared with the gang's spinning
    helpers when the layer is large enough (``gang.shared_entry``), else serially. One entry for every layer; the
    tiles run by their loop's own entry (:func:`_conv_loop`, its address in the block): numba re-optimises a
    callee in every function it is linked into, and the 20 loops inlined here had compiled in the entry, in its
    helper and in each function around them (an entry per loop, inlined, cost more still)."""
    return jit.native(_BODIES[0])


@native.factory
def _conv_helper() -> int:
    """A helper's part of a shared layer: chunks while any is left."""
    return jit.native(_BODIES[1])


def native_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
                  strides: tuple[int, int], activation: int, residual: np.ndarray | None = None,
                  epilogue: tuple | None = None, dilations: tuple[int, int] = (1, 1),
                  borders: tuple[int, int, int] = (0, 0, 0)) -> native.Entry | None:
    """:func:`bind_conv2d` as a native entry (the same tiles; shared with helper threads as the bound call
    shares them); None when ``x`` or ``residual`` is not C-contiguous float32, ``out`` neither that nor a
    channel slice of wider pixels (:func:`channel_slice`; the bound call copies those per run), or ``out``
    overlaps another."""
    sliced = channel_slice(out) if contiguous_f32(x) and out.size else None
    if sliced is None or np.may_share_memory(x, out):
        return None
    x_border, out_border, res_border = (int(b) for b in borders)
    out_shape = _output_border(out, out_border)
    res, res_copy = _residual_input(residual, out, out_shape, res_border)
    if res_copy is not None:
        return None
    if float_winograd().chosen(x.shape, x_border, wp, strides, _dilations(dilations), out_shape):
        return float_winograd().native_entry(x, x_border, wp, pads, bias, res, res_border, sliced[0], sliced[1],
                                             out_shape, out_border, clamp_range(activation),
                                             _epilogue(epilogue, out, out_border))
    lo, hi = clamp_range(activation)
    code, alpha, ea, eb = _epilogue(epilogue, out, out_border)
    wp, pads, (dw, dh), (panel, n_units, work), (xp, copy, window) = _planned(x, x_border, wp, pads, strides,
                                                                              _dilations(dilations), out_shape,
                                                                              out.shape[3], code == NONE)
    staging = _BORDERED if x_border else _PADDED if copy is not None else _WINDOWS if window[2] == BORDERS else 0
    top, left = (window[0], window[1]) if x_border else (int(pads[2]), int(pads[0]))
    bias = np.ascontiguousarray(bias, np.float32)
    task = gang.NativeTask(n_units, work >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(x, xp, wp, bias, res, sliced[0], task.counters, shared_words(2), alpha,
                           int(strides[1]), int(strides[0]), dh, dw, float(lo), float(hi), panel, n_units, staging,
                           top, left, code, float(ea), float(eb), out_border, res_border if res.size else 0,
                           sliced[1], out.shape[3], *task.words(), _conv_loop(_variant_of(wp, sliced[0], out_border, res)))
    return native.Entry(_conv_entry(), words, keep + task.finish(_conv_helper(), words))


def native_fully_connected(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                           activation: int) -> native.Entry | None:
    """:func:`bind_fully_connected` as a native entry (a 1x1 convolution of the flattened rows)."""
    if not (contiguous_f32(x) and contiguous_f32(out)):
        return None
    size, units = wp.shape[2], out.shape[-1]
    return native_conv2d(x.reshape(1, 1, -1, size), wp, bias, out.reshape(1, 1, -1, units), (0, 0, 0, 0), (1, 1),
                         activation)
