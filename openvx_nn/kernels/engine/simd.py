"""The integer SIMD engine: an implicit-GEMM correlation on the micro-kernels of ``microkernel.py``.

It computes, exactly, the sums of a :class:`~.correlation.Window` correlation (convolution,
each deconvolution phase, fully connected and matrix multiply as 1x1 correlations of a 1x1
image), then requantizes in the epilogue straight into the output tensor's layout.

Layout. Rows are output pixels ``p = ox + OW * (oy + OH * image)``, lanes are output channels.
Per call the input is packed once as ``xp[image, y, x, c]`` (channels padded to a multiple of
the 4-byte group, zero padding of the window included), so tap ``(mx, my)`` of pixel ``p``
starts at byte ``row(p) + tap(mx, my)`` and the channel groups follow contiguously. The weights
are packed once, by :func:`prepare`, as ``[channel block][my][mx][group][vector][lane][e]``.
Where a kernel row's taps are adjacent pixels and the channels do not fill whole groups (an RGB
input), the pixels are packed dense instead (``depth`` = the channels): a kernel row is then one
run of ``kx * C`` elements, cut into groups across pixel boundaries, and the weights
``[channel block][my][1][group][vector][lane][e]`` are zero past the run. AlexNet's conv1 (3
channels, 11 taps a row) then takes 9 steps a row instead of 11. An input whose pixels hold their channels
side by side (a virtual tensor the plan laid out channels-last) is packed by copying those runs, with no
8x8 block transposes; an output so laid out is stored pixel-major, as the tiles come, with none either
(``output_memory``).

Exactness (the contract's steps 1-2), for each kind of micro-kernel:

- ``u8s8`` (VNNI ``vpdpbusd``): one operand must be unsigned, so a signed value is offset by
  128 through ``xor 0x80``. U8 data: the input becomes ``x - 128`` (s8), the weights stay u8, and
  ``sum x*w = sum (x-128)*w + 128 * sum w``. S8 data: the input becomes ``x + 128`` (u8), the
  weights stay s8, and ``sum x*w = sum (x+128)*w - 128 * sum w``. Padding is the encoded zero on
  both sides of the identity, padded channels have zero weights, so the correction
  ``corr[k] = -/+128 * sum of w[.., k]`` is a per-channel constant computed once.
- ``s16`` (``vpdpwssd``, or ``vpmaddwd`` + ``vpaddd`` on AVX2, which also serves the 8-bit
  formats promoted to int16): plain signed products.

The instructions add modulo ``2**32``, so a partial sum is exact when its true value is within
int32. With ``m`` the largest operand product (from the packed weights' measured maximum and the
input's worst case, or for int16 inputs the maximum measured on the packed input of this call)
and ``E`` products per step, a block of ``(2**31 - 1) // (m * E)`` steps cannot overflow: the K
loop runs in such blocks and their int32 results are added in int64 (exact below ``2**62``, the
bound ``correlation.plan`` enforces). For ``s16`` the blocks are as long as the weights' measured
per-channel sums of |w| allow (``block_bounds``): usually one block, summed and requantized in
registers, where the uniform bound would cut the K loop in many. When even one step could overflow (int16 operands both
reaching -32768) the call reports it and the caller uses the generic int64 route.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numba
import numpy as np
from numba import types

from ..support import jit
from ..support.fixed_point import int_range, requantize_lane, requantize_run
from ..support.native import copy_bytes
from . import isa as isa_module
from . import workers
from .atomics import compare_swap, fetch_add, load, pause, shared_words, take_chunk, wait_for_chunks
from .block_bounds import INT32_MAX, run_steps, weight_sums
from .block_transpose import SIDE, transpose_region
from .microkernel import ELEMENTS, KINDS, LANES, tile_kernel, variant
from .settle_lanes import WIDTH as SETTLE_WIDTH
from .settle_lanes import rounding, settle8
from .tiles import accumulate_blocks, choose_tile

PARALLEL_WORK = 1 << 21  # multiply-adds below which one thread does the whole call
PACK_PARALLEL_BYTES = 1 << 20  # packed input bytes from which packing is shared between threads (measured)
STRIP = 96  # pixels requantized and stored together
SLICE_BYTES = 1 << 20  # a unit's weights past this (half an L2) are read K-block by K-block for all its tiles
AMX_PIXELS = 32  # output pixels (tile rows) from which an 8-bit layer's sums run on AMX tiles, where the CPU has them
AMX_GROUPS = 8  # 4-byte groups a tap's run steps through, from which too (an AMX step takes 16)


@dataclass(frozen=True)
class SimdPlan:
    """Everything a call needs that does not depend on the input values (made once, at verify)."""

    isa: str
    kind: str
    code: int  # the micro-kernel (microkernel.variant)
    rows: int
    vecs: int
    lanes: int
    weights: np.ndarray  # packed, C-ordered
    corr: np.ndarray  # int64: the offset correction of each output channel (zeros past K, to whole blocks)
    taps: np.ndarray  # int64 byte offsets of the taps (or of whole kernel rows) in the packed input
    inner: int  # 4-byte steps from each of those offsets
    w_max: int  # largest |packed weight|
    x_max: int  # largest |packed input| the encoding allows (int16 inputs: measured per call)
    store: np.dtype  # packed input dtype
    flip: int  # xor applied to each packed input value (0x80 for u8s8)
    channels: int
    depth: int  # elements per packed pixel: the channels, padded to whole groups unless packed dense
    k_out: int
    pixels_x: int  # packed input window width and height
    pixels_y: int
    origin: tuple[int, int]  # input coordinates of the packed window's first sample
    strides: tuple[int, int]
    w_total: int = 0  # s16: the largest per-channel sum of |packed weight| (block_bounds.weight_sums)
    w_split: int = 0  # s16: a multi-block length safe for any int16 input (0: only the uniform one)


def _kind(isa: str, dtype: np.dtype) -> str:
    return "u8s8" if dtype.itemsize == 1 and "u8s8" in KINDS[isa] else "s16"


def prepare(w: np.ndarray, window, x_shape: tuple[int, ...], out_shape: tuple[int, ...],
            isa: str) -> SimdPlan:
    """Pack ``w`` (KX, KY, C, K) for correlations of inputs ``x_shape`` into outputs ``out_shape``."""
    kx, ky, channels, k_out = w.shape
    lanes = LANES[isa]
    kind = _kind(isa, w.dtype)
    e = ELEMENTS[kind]
    stride_x, stride_y, step_x, step_y, offset_x, offset_y = window.as_tuple()
    dense = step_x == 1 and channels % e != 0 and kx > 1
    groups = -(-channels // e)
    pixels = int(np.prod(out_shape[:2])) * int(np.prod(out_shape[3:]))
    run_groups = -(-kx * channels // e) if dense else (groups if step_x != 1 else groups * kx)  # a tap's run
    amx = kind == "u8s8" and use_amx(isa, pixels, run_groups)
    rows, vecs = choose_tile(lanes, pixels, k_out, amx=amx)
    block = lanes * vecs
    n_blocks = -(-k_out // block)
    store = np.dtype(np.uint8 if kind == "u8s8" else np.int16)
    w_dtype = w.dtype if kind == "u8s8" else store  # 8-bit data on a 16-bit kernel is widened
    if dense:  # one run of kx * C elements per kernel row: element mx * C + c, zero to whole groups
        wide = np.zeros((ky, run_groups * e, n_blocks * block), w_dtype)
        wide[:, :kx * channels, :k_out] = np.asarray(w).transpose(1, 0, 2, 3).reshape(ky, kx * channels, k_out)
        packed = wide.reshape(ky, 1, run_groups, e, n_blocks, vecs, lanes).transpose(4, 0, 1, 2, 5, 6, 3)
    else:
        wide = np.zeros((kx, ky, groups * e, n_blocks * block), w_dtype)
        wide[:, :, :channels, :k_out] = w
        # [block][my][mx][group][vector][lane][e] from (mx, my, c = group*e + e', k = block*B + vector*L + lane)
        packed = wide.reshape(kx, ky, groups, e, n_blocks, vecs, lanes).transpose(4, 1, 0, 2, 5, 6, 3)
    weights = np.ascontiguousarray(packed)
    sums = w.sum(axis=(0, 1, 2), dtype=np.int64)
    if kind == "u8s8":
        unsigned = w.dtype == np.uint8
        corr = sums * (128 if unsigned else -128)
        x_max = 128 if unsigned else 255
        flip = 0x80
    else:
        corr, flip = np.zeros(k_out, np.int64), 0
        lo, hi = int_range(w.dtype)
        x_max = max(-lo, hi)
    width = (out_shape[0] - 1) * stride_x + (kx - 1) * step_x + 1
    height = (out_shape[1] - 1) * stride_y + (ky - 1) * step_y + 1
    depth = channels if dense else groups * e
    pitch = depth * store.itemsize  # bytes per packed pixel
    if step_x == 1:  # the taps of one kernel row are adjacent pixels: one run of steps
        taps = np.array([my * step_y * width * pitch for my in range(ky)], np.int64)
    else:
        taps = np.array([(my * step_y * width + mx * step_x) * pitch for my in range(ky) for mx in range(kx)],
                        np.int64)
    code = variant("amx" if amx else isa, kind, rows, vecs, weights_unsigned=(kind == "u8s8" and w.dtype == np.uint8))
    corr = np.concatenate([corr.astype(np.int64), np.zeros(n_blocks * block - k_out, np.int64)])
    inner = run_groups  # groups a tap's run steps through
    w_max = max(-int(w.min(initial=0)), int(w.max(initial=0)))
    w_total, w_split = weight_sums(weights, taps.size, inner, w_max, k_out) if kind == "s16" else (0, 0)
    return SimdPlan(isa, kind, code, rows, vecs, lanes, weights, corr, taps, inner, w_max, x_max, store, flip,
                    channels, depth, k_out, width, height, (offset_x, offset_y), (stride_x, stride_y), w_total,
                    w_split)


def use_amx(isa: str, pixels: int, run_groups: int) -> bool:
    """Whether an 8-bit layer planned for ``isa`` runs on the AMX micro-kernel: the CPU has AMX (``isa.amx``,
    asked here the first time, so never for a layer that stays on VNNI), and the layer has the pixels and the
    groups per tap to fill the tiles (``AMX_PIXELS``, ``AMX_GROUPS``). The same sums either way."""
    return isa == "avx512_vnni" and pixels >= AMX_PIXELS and run_groups >= AMX_GROUPS and isa_module.amx()


def packed_input(plan: SimdPlan, images: int) -> np.ndarray:
    """Scratch for the packed input of ``images`` images: ``[image, y, x, depth]``, followed by a group's
    worth of bytes that a dense packing's last run reads (times zero weights) past its last pixel."""
    shape = (images, plan.pixels_y, plan.pixels_x, plan.depth)
    size = math.prod(shape)
    return np.empty(size + ELEMENTS[plan.kind], plan.store)[:size].reshape(shape)


def block_steps(plan: SimdPlan, x_max: int) -> int:
    """Steps per K-block whose int32 partial sums cannot overflow (0: not even one step): for s16, from the
    weights' measured sums (``block_bounds``); for u8s8, from the largest weight."""
    if plan.kind == "s16":
        return run_steps(x_max, plan.w_max, ELEMENTS[plan.kind], plan.w_total, plan.w_split,
                         plan.taps.size * plan.inner)
    worst = x_max * plan.w_max * ELEMENTS[plan.kind]
    return INT32_MAX // worst if worst else 1 << 40


# ---- the numba side ---------------------------------------------------------------------------------

def _pack_input(x6, xp, lo_x, lo_y, flip, mask, measure, part, parts):
    # xp[image, y, x, group-padded channel] = (x ^ flip) & mask, the encoded zero outside the input and in
    # padded channels, for the rows y of share ``part`` of ``parts``. Returns the largest |x| read when
    # ``measure`` (else 0).
    width, height, channels = x6.shape[0], x6.shape[1], x6.shape[2]
    n1, n2 = x6.shape[3], x6.shape[4]
    images, hp, wp, _ = xp.shape
    zero = np.int64(0) ^ flip
    first = min(max(-lo_x, 0), wp)  # packed columns i with 0 <= lo_x + i < width: first .. last - 1
    last = max(min(width - lo_x, wp), first)
    biggest = np.int64(0)
    # Channel planes with contiguous rows and elements of the packed size: 8x8 block transposes.
    transposing = x6.strides[0] == x6.itemsize and x6.itemsize == xp.itemsize and x6.shape[2] >= SIDE
    adjacent = x6.strides[2] == x6.itemsize and channels > 1
    # Each pixel's channels one run of the packed size (a channels-last tensor, or a 1x1 image): copied as bytes.
    runs = adjacent and x6.itemsize == xp.itemsize
    for image in range(images):
        b1 = image % n1
        b2 = (image // n1) % n2
        b3 = image // (n1 * n2)
        plane = xp[image]
        for j in range(hp * part // parts, hp * (part + 1) // parts):
            iy = lo_y + j
            row = plane[j]
            if iy < 0 or iy >= height:
                row[:, :] = zero
                continue
            row[:first, :] = zero
            row[last:, :] = zero
            row[first:last, channels:] = zero
            if runs or transposing:
                if runs:
                    _COPY_PIXELS(x6, row, lo_x + first, iy, b1, b2, b3, first, last, channels)
                else:
                    _COPY_PLANES(x6, row, lo_x + first, iy, b1, b2, b3, first, last, channels)
                # in place, no view per pixel (its reference counting costs more than the pixel)
                if measure:
                    for i in range(first, last):
                        for c in range(channels):
                            biggest = max(biggest, abs(np.int64(row[i, c])))
                if flip:
                    for i in range(first, last):
                        for c in range(channels):
                            row[i, c] ^= flip
                continue
            if adjacent:  # each pixel's channels are one run, of another element size
                for i in range(first, last):
                    source = x6[lo_x + i, iy, :, b1, b2, b3]
                    packed = row[i, :channels]
                    for c in range(channels):
                        packed[c] = (np.int64(source[c]) ^ flip) & mask
                    if measure:
                        for c in range(channels):
                            biggest = max(biggest, abs(np.int64(source[c])))
                continue
            for c in range(channels):
                source = x6[lo_x + first:lo_x + last, iy, c, b1, b2, b3]
                column = row[first:last, c]
                for i in range(last - first):
                    column[i] = (np.int64(source[i]) ^ flip) & mask
                if measure:
                    for i in range(last - first):
                        biggest = max(biggest, abs(np.int64(source[i])))
    return biggest


def _copy_planes(x6, row, ix, iy, b1, b2, b3, first, last, channels):
    # row[first + i, c] = x6[ix + i, iy, c, b1, b2, b3] for i < last - first, c < channels (raw bits).
    size = x6.itemsize
    plane = x6.strides[2]
    src = (np.int64(x6.ctypes.data) + ix * x6.strides[0] + iy * x6.strides[1] + b1 * x6.strides[3]
           + b2 * x6.strides[4] + b3 * x6.strides[5])
    pitch = row.strides[0]
    dst = np.int64(row.ctypes.data) + first * pitch
    n = last - first
    if n < SIDE:
        for c in range(channels):
            source = x6[ix:ix + n, iy, c, b1, b2, b3]
            for i in range(n):
                row[first + i, c] = source[i]
        return
    transpose_region(src, plane, dst, pitch, channels, n, size)


_COPY_PLANES = jit.kernel(_copy_planes)


def _copy_pixels(x6, row, ix, iy, b1, b2, b3, first, last, channels):
    # row[first + i, :channels] = x6[ix + i, iy, :, b1, b2, b3] for i < last - first (raw bits), each pixel's
    # channels one run: a channels-last input's row of pixels is one run of bytes when the packed pixels are as
    # wide, else a run per pixel.
    size = x6.itemsize
    src = (np.int64(x6.ctypes.data) + ix * x6.strides[0] + iy * x6.strides[1] + b1 * x6.strides[3]
           + b2 * x6.strides[4] + b3 * x6.strides[5])
    pitch = row.strides[0]
    dst = np.int64(row.ctypes.data) + first * pitch
    run = channels * size
    n = last - first
    if pitch == run and x6.strides[0] == run:
        copy_bytes(dst, src, n * run)
        return
    for i in range(n):
        copy_bytes(dst + i * pitch, src + i * x6.strides[0], run)


_COPY_PIXELS = jit.kernel(_copy_pixels)


def _correlate_units(code, xp, taps, weights, corr, bias1, bias4, bias_kind, out, shape, u0, u1, rows, block,
                     n_strips, strip, stride_x, stride_y, inner, tap_stride, block_steps, sum_shift, bias_shift,
                     shift, nearest_even, saturate, lo, hi):
    # Work units u0 .. u1-1: unit u is strip (u % n_strips), ``strip`` tiles of ``rows`` consecutive pixels,
    # of output-channel block (u // n_strips). Tiles land pixel-major in ``stage[pixel, lane]``, as they
    # come out of the micro-kernel, and are requantized there in flat loops LLVM vectorizes; only the
    # final narrow values are transposed into the output, one channel (a run of pixels) at a time.
    # out: the flat memory of a Fortran-ordered (OW, OH, K, images) array, or (shape[4] != 0) of a pixel-major
    # one (channels-last: [images, OH, OW, K], K fastest); shape: those four extents, then that flag.
    ow, oh = shape[0], shape[1]
    plane = ow * oh
    pixels = plane * shape[3]
    _, hp, wp, cp = xp.shape
    pitch = cp * xp.itemsize
    n_taps = taps.shape[0]
    width = strip * rows  # pixels per strip
    tile = np.empty(rows * block, np.int32)
    acc = np.empty(rows * block, np.int64)
    stage = np.empty(width * block, np.int64)
    narrow = np.empty(width * block, out.dtype)
    aligned = np.empty(block, np.int64)
    addr = np.empty(rows, np.int64)
    base = np.int64(xp.ctypes.data)
    tile_at, addr_at = np.int64(tile.ctypes.data), np.int64(addr.ctypes.data)
    taps_at = np.int64(taps.ctypes.data)
    w_blocks = np.int64(weights.ctypes.data)
    block_bytes = n_taps * tap_stride
    taps_per_block = max(1, block_steps // inner)
    inner_per_block = min(inner, block_steps)
    single = taps_per_block >= n_taps and inner_per_block >= inner
    # Each tile requantized as it comes (no int64 stage) where requantize_lane applies: from its int32 sums, or
    # from the int64 sums of its K-blocks (an int16 layer whose sums may leave int32: staging those and
    # requantizing the stage in a second pass cost ResNet's 3x3 Q7.8 layer some 20 %); in int32 lanes
    # (settle_lanes) for a unit of one K-block whose values provably stay within int32 (``_fits_int32``).
    settle = bias_kind != 2 and 0 <= shift < 62
    c, s1, m = rounding(min(max(shift, 0), 30), nearest_even)
    lanes32 = (single and settle and out.itemsize <= 2 and shift < 31 and sum_shift < 31
               and block % SETTLE_WIDTH == 0)
    aligned32 = np.empty(block, np.int32)
    # A weight block too large for L2 (a wide fully connected layer of several rows: 1.77 MB of int16 weights
    # for each 96 output maps of 9216 inputs), cut into K-blocks: each block's slice is read from memory once
    # for all the strip's tiles (kept in L2 for them) instead of once per tile; the strip's int64 sums wait
    # in ``sums``. The same exact additions in another order: the same bits.
    sliced = not single and block_bytes > SLICE_BYTES and width > rows
    sums = np.empty(width * block if sliced else 0, np.int64)
    addrs = np.empty(width if sliced else 0, np.int64)
    for u in range(u0, u1):
        ob = u // n_strips
        s0 = (u % n_strips) * width
        n_pix = min(width, pixels - s0)
        w0 = w_blocks + ob * block_bytes
        k0 = ob * block
        for lane in range(block):  # the offset correction, and a bias shared by all pixels, aligned
            aligned[lane] = corr[k0 + lane] << sum_shift
        if bias_kind == 1:
            for lane in range(min(block, shape[2] - k0)):
                aligned[lane] += np.int64(bias1[k0 + lane]) << bias_shift
        narrow32 = lanes32 and _fits_int32(aligned, n_taps * inner, block_steps, sum_shift, c + m)
        if narrow32:
            for lane in range(block):
                aligned32[lane] = aligned[lane]
        strip_sums = sliced and n_pix > rows
        if strip_sums:  # every tile's int64 sums at once, K-block by K-block
            n_rows = -(-n_pix // rows) * rows
            _row_addresses(addrs, s0, n_rows, pixels, base, ow, oh, hp, wp, pitch, stride_x, stride_y)
            accumulate_blocks(code, tile, sums[:n_rows * block], addrs[:n_rows], taps_at, n_taps, inner, w0,
                              tap_stride, taps_per_block, inner_per_block)
        for t in range(0, n_pix, rows):
            done = stage[t * block: (t + min(rows, n_pix - t)) * block]
            if strip_sums:
                tile_sums = sums[t * block: (t + rows) * block]
            else:
                _row_addresses(addr, s0 + t, rows, pixels, base, ow, oh, hp, wp, pitch, stride_x, stride_y)
                if single:
                    tile_kernel(code, tile_at, addr_at, taps_at, n_taps, inner, w0, tap_stride)
                    if narrow32:
                        _SETTLE32(narrow, t * block, done.size, tile, aligned32, sum_shift, c, s1, m, shift, saturate,
                                  lo, hi)
                    elif settle:  # straight to the output's values
                        _SETTLE(narrow[t * block: t * block + done.size], tile, aligned, sum_shift, shift,
                                nearest_even, saturate, lo, hi)
                    else:
                        _land(done, tile, aligned, sum_shift)
                    continue
                accumulate_blocks(code, tile, acc, addr, taps_at, n_taps, inner, w0, tap_stride, taps_per_block,
                                  inner_per_block)
                tile_sums = acc
            if settle:
                _SETTLE(narrow[t * block: t * block + done.size], tile_sums, aligned, sum_shift, shift, nearest_even,
                        saturate, lo, hi)
            else:
                _land(done, tile_sums, aligned, sum_shift)
        _STORE(stage, narrow, settle, bias4, bias_kind, out, shape, s0, n_pix, k0, block, bias_shift, shift,
               nearest_even, saturate, lo, hi)


def _row_addresses(addr, p, count, pixels, base, ow, oh, hp, wp, pitch, stride_x, stride_y):
    # addr[r] for r < count: the packed input's byte address of output pixel p + r's first tap; rows past the
    # last pixel repeat it (a short last tile). The pixels step from the first (no division per row).
    q = p // ow
    ox = p - q * ow
    image = q // oh
    oy = q - image * oh
    for r in range(count):
        if p + r >= pixels:
            addr[r] = addr[r - 1]
            continue
        addr[r] = base + ((image * hp + oy * stride_y) * wp + ox * stride_x) * pitch
        ox += 1
        if ox == ow:
            ox, oy = 0, oy + 1
            if oy == oh:
                oy, image = 0, image + 1


def _land(done, sums, aligned, sum_shift):
    # done[r, lane] = (sums[r, lane] << sum_shift) + aligned[lane], rows of len(aligned) lanes.
    block = aligned.size
    for r in range(done.size // block):
        target = done[r * block: (r + 1) * block]
        source = sums[r * block: (r + 1) * block]
        for lane in range(block):
            target[lane] = (np.int64(source[lane]) << sum_shift) + aligned[lane]


def _settle(narrow, sums, aligned, sum_shift, shift, nearest_even, saturate, lo, hi):
    # narrow[r, lane] = requantized (sums[r, lane] << sum_shift) + aligned[lane], rows of len(aligned) lanes.
    block = aligned.size
    for r in range(narrow.size // block):
        target = narrow[r * block: (r + 1) * block]
        source = sums[r * block: (r + 1) * block]
        for lane in range(block):
            target[lane] = requantize_lane((np.int64(source[lane]) << sum_shift) + aligned[lane], shift,
                                           nearest_even, saturate, lo, hi)


def _fits_int32(aligned, steps, block_steps, sum_shift, rounding_add):
    # True when every (sum << sum_shift) + aligned[lane] of a unit, rounded, stays within int32: a step's
    # products are at most worst = x_max * w_max * E, and block_steps = INT32_MAX // worst, so worst <=
    # INT32_MAX // block_steps and |sum| <= steps * that.
    biggest = 0
    for lane in range(aligned.size):
        biggest = max(biggest, abs(aligned[lane]))
    bound = steps * (INT32_MAX // block_steps)
    return bound <= INT32_MAX and (bound << sum_shift) + biggest + rounding_add <= INT32_MAX


def _settle32(narrow, at, n, sums, aligned32, sum_shift, c, s1, m, shift, saturate, lo, hi):
    # narrow[at + i] for i < n (whole rows of len(aligned32) lanes): _settle in int32 lanes (settle_lanes).
    block = aligned32.size
    for r in range(n // block):
        for lane in range(0, block, SETTLE_WIDTH):
            settle8(narrow, at + r * block + lane, sums, r * block + lane, aligned32, lane, sum_shift, c, s1, m, shift,
                    saturate, lo, hi)


def _requantize_stage(stage, narrow, bias4, bias_kind, ow, oh, s0, n_pix, k0, block, valid, bias_shift, shift,
                      nearest_even, saturate, lo, hi):
    if bias_kind == 2:
        for j in range(n_pix):
            p = s0 + j
            q = p // ow
            for lane in range(valid):
                stage[j * block + lane] += np.int64(bias4[p % ow, q % oh, k0 + lane, q // oh]) << bias_shift
    n_values = n_pix * block
    requantize_run(stage, n_values, shift, nearest_even, saturate, lo, hi)
    for i in range(n_values):
        narrow[i] = stage[i]


def _store_unit(stage, narrow, settled, bias4, bias_kind, out, shape, s0, n_pix, k0, block, bias_shift, shift,
                nearest_even, saturate, lo, hi):
    # The epilogue of one unit, whose pixel s0 + j, channel k0 + lane is at [j * block + lane] of
    # ``narrow`` (``settled``: requantized already) or of ``stage`` (the aligned sums, bias_kind 1: bias
    # included). Adds a bias per location (bias_kind 2), requantizes in flat loops, narrows, then
    # writes channel-planar output: out[p + plane * (k + k_out * image)] for pixel p of its image, or, for a
    # pixel-major output (shape[4]: a tensor the plan laid out channels-last), out[p * k_out + k].
    ow, oh, k_out = shape[0], shape[1], shape[2]
    plane = ow * oh
    valid = min(block, k_out - k0)
    if not settled:
        _requantize_stage(stage, narrow, bias4, bias_kind, ow, oh, s0, n_pix, k0, block, valid, bias_shift, shift,
                          nearest_even, saturate, lo, hi)

    if plane == 1 or shape[4] != 0:  # 1x1 images (fully connected) or channels-last: pixel-major, no transpose
        # byte copies between addresses: a slice view per pixel costs reference counting, more than its run
        size = out.itemsize
        target = np.int64(out.ctypes.data) + (s0 * k_out + k0) * size
        source = np.int64(narrow.ctypes.data)
        if valid == k_out and valid == block:  # whole pixels on both sides: one run
            copy_bytes(target, source, n_pix * block * size)
            return
        for j in range(n_pix):
            copy_bytes(target + j * k_out * size, source + j * block * size, valid * size)
        return
    image, first = s0 // plane, s0 % plane
    if first + n_pix > plane:  # the strip crosses images
        for j in range(n_pix):
            p = s0 + j
            at = p % plane + plane * (k0 + k_out * (p // plane))
            for lane in range(valid):
                out[at + plane * lane] = narrow[j * block + lane]
        return
    at = first + plane * (k0 + k_out * image)  # pixel s0, channel k0; pixels follow, channels are planes
    size = out.itemsize
    if n_pix < SIDE or valid < SIDE:
        for lane in range(valid):
            for j in range(n_pix):
                out[at + lane * plane + j] = narrow[j * block + lane]
        return
    transpose_region(np.int64(narrow.ctypes.data), block * size, np.int64(out.ctypes.data) + at * size, plane * size,
                     n_pix, valid, size)


_land = jit.kernel(_land)
_row_addresses = jit.kernel(_row_addresses)
_SETTLE = jit.kernel(_settle)
_fits_int32 = jit.kernel(_fits_int32)
_SETTLE32 = jit.kernel(_settle32)
_requantize_stage = jit.kernel(_requantize_stage)
_STORE = jit.kernel(_store_unit)
_PACK = jit.kernel(_pack_input)
_UNITS = jit.kernel(_correlate_units)


def _claim_units(code, xp, taps, weights, corr, bias1, bias4, bias_kind, out, shape, n_units, n_chunks, counters,
                 wait,
                 rows, block, n_strips, strip, stride_x, stride_y, inner, tap_stride, block_steps, sum_shift,
                 bias_shift, shift, nearest_even, saturate, lo, hi):
    # Chunks of units claimed one at a time from counters[0] by the caller and its helpers (atomics.take_chunk),
    # in order, or where counters[2] is nonzero the caller from the front and the helpers from the back; counters[1]
    # counts finished chunks, and the caller (``wait``) returns once all are finished. A helper lent the task before
    # the input is packed waits for counters[3]: 1 go, 2 nothing to do.
    claim = np.int64(counters.ctypes.data)
    while load(claim + 24) == 0:
        pause()
    if load(claim + 24) == 2:
        return
    back = not wait and load(claim + 16) != 0
    while True:
        i = take_chunk(claim, n_chunks, back)
        if i < 0:
            break
        _UNITS(code, xp, taps, weights, corr, bias1, bias4, bias_kind, out, shape, n_units * i // n_chunks,
               n_units * (i + 1) // n_chunks, rows, block, n_strips, strip, stride_x, stride_y, inner, tap_stride,
               block_steps, sum_shift, bias_shift, shift, nearest_even, saturate, lo, hi)
        fetch_add(claim + 8, 1)
    if wait:
        wait_for_chunks(claim, n_chunks)


def _claim_pack(x6, xp, lo_x, lo_y, flip, mask, measure, parts, counters, wait):
    # Packing shared the same way; counters[2] keeps the largest |x| measured.
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= parts:
            break
        biggest = _PACK(x6, xp, lo_x, lo_y, flip, mask, measure, i, parts)
        while True:  # counters[2] = max(counters[2], biggest), atomically
            seen = load(claim + 16)
            if seen >= biggest or compare_swap(claim + 16, seen, biggest):
                break
        fetch_add(claim + 8, 1)
    if wait:
        wait_for_chunks(claim, parts)
    return load(claim + 16)


_UNITS_SHARED = jit.kernel(_claim_units)
_PACK_SHARED = jit.kernel(_claim_pack)


def _array(dtype, ndim: int, layout: str, readonly: bool = False) -> types.Array:
    return types.Array(numba.from_dtype(np.dtype(dtype)), ndim, layout, readonly=readonly)


def _compiled(plan: SimdPlan, x_dtype, bias_dtype, out_dtype, shared: bool):
    """(pack, units) for these types: for the calling thread alone, or (``shared``) chunks claimed by it
    and its helpers (``workers.py``)."""
    key = (plan.code, plan.store, plan.weights.dtype, np.dtype(x_dtype), np.dtype(bias_dtype), np.dtype(out_dtype),
           shared)
    found = _functions.get(key)
    if found is None:
        arrays = (_array(plan.store, 4, "C", True), _array(np.int64, 1, "C", True),
                  _array(plan.weights.dtype, 7, "C", True), _array(np.int64, 1, "C", True),
                  _array(bias_dtype, 1, "A", True), _array(bias_dtype, 4, "A", True), jit.INT,
                  _array(out_dtype, 1, "C"), types.UniTuple(jit.INT, 5))
        tail = (*(jit.INT,) * 12, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
        head = (_array(x_dtype, 6, "A", True), _array(plan.store, 4, "C"), *(jit.INT,) * 4, jit.BOOL)
        if shared:
            claims = (_array(np.int64, 1, "C"), jit.BOOL)
            pack = jit.entry(_PACK_SHARED, *head, jit.INT, *claims)
            units = jit.entry(_UNITS_SHARED, types.literal(plan.code), *arrays, jit.INT, jit.INT, *claims, *tail)
        else:
            pack = jit.entry(_PACK, *head, jit.INT, jit.INT)
            units = jit.entry(_UNITS, types.literal(plan.code), *arrays, jit.INT, jit.INT, *tail)
        found = _functions[key] = (pack, units)
    return found


_functions: dict[tuple, tuple] = {}
_int_range = functools.cache(int_range)
def correlate(plan: SimdPlan, x6: np.ndarray, bias: np.ndarray | None, out6: np.ndarray, steps, saturate: bool,
              nearest_even: bool) -> bool:
    """Fill ``out6`` (6-D) from ``x6`` (6-D) and ``bias``: None, ``(K,)`` or ``(OW, OH, K, images)``
    (broadcast views allowed).

    ``steps`` is ``correlation.plan``'s shifts. Returns False, having written nothing, when this
    call's input values allow no overflow-free K-block (the caller then uses the int64 route).
    """
    images = math.prod(x6.shape[3:])
    xp = packed_input(plan, images)
    work = out6.size * plan.taps.size * plan.channels
    helpers = workers.helpers() if work >= PARALLEL_WORK else 0
    bias_dtype = out6.dtype if bias is None else bias.dtype
    bias1, bias4, bias_kind = _bias_views(bias, bias_dtype)
    pack, units = _compiled(plan, x6.dtype, bias_dtype, out6.dtype, helpers > 0)
    mask = 0xFF if plan.kind == "u8s8" else -1
    packing = (x6, xp, plan.origin[0], plan.origin[1], plan.flip, mask, plan.kind != "u8s8")
    unit_args = _unit_args(plan, x6, bias1, bias4, bias_kind, xp, out6, steps, saturate, nearest_even)
    if helpers and plan.kind == "u8s8" and xp.nbytes < PACK_PARALLEL_BYTES:
        # The input's range is known: lend the units now, so that helpers wake while this thread packs.
        counters = shared_words(4)
        lent = _lend(units, unit_args, counters, helpers)
        try:
            pack(*packing, 1, np.zeros(3, np.int64), True)
        except BaseException:
            counters[3] = 2  # nothing to do
            raise
        counters[3] = 1  # go (x86 keeps the packed input's stores before this one)
        lent()
        return _finish_output(unit_args, out6)
    if helpers and xp.nbytes >= PACK_PARALLEL_BYTES:  # below, packing (a copy) is done before a helper wakes
        measured = _lend(pack, (packing, (), ()), shared_words(4), helpers, ready=1)()
    elif helpers:
        measured = pack(*packing, 1, np.zeros(3, np.int64), True)
    else:
        measured = pack(*packing, 0, 1)
    x_max = plan.x_max if plan.kind == "u8s8" else int(measured)
    steps_per_block = block_steps(plan, x_max)
    if steps_per_block == 0:
        return False
    head, sizes, tail = unit_args
    tail = tail[:8] + (min(steps_per_block, 1 << 40),) + tail[9:]
    if helpers:
        _lend(units, (head, sizes, tail), shared_words(4), helpers, ready=1)()
    else:
        units(*head, 0, sizes[0], *tail)
    return _finish_output(unit_args, out6)


def _unit_args(plan, x6, bias1, bias4, bias_kind, xp, out6, steps, saturate, nearest_even) -> tuple:
    """(head, sizes, tail): the units' arguments around the chunking ones (K-block length: the widest
    the encoding allows; the caller narrows it for int16 inputs once it has measured them)."""
    pixels = out6.size // out6.shape[2]
    strip = max(1, STRIP // plan.rows)
    n_strips = -(-pixels // (strip * plan.rows))
    block = plan.vecs * plan.lanes
    n_units = n_strips * (-(-plan.k_out // block))
    lo, hi = _int_range(out6.dtype)
    tap_stride = plan.inner * 4 * block  # weight bytes per entry of plan.taps
    tail = (plan.rows, block, n_strips, strip, plan.strides[0], plan.strides[1], plan.inner, tap_stride,
            min(block_steps(plan, plan.x_max), 1 << 40), steps.sum_shift, steps.bias_shift, steps.shift,
            bool(nearest_even), bool(saturate), lo, hi)
    flat, pixel_major = output_memory(out6)
    shape = (out6.shape[0], out6.shape[1], out6.shape[2], xp.shape[0], int(pixel_major))
    head = (plan.code, xp, plan.taps, plan.weights, plan.corr, bias1, bias4, bias_kind, flat, shape)
    return head, (n_units,), tail


def pixel_major(a6: np.ndarray) -> np.ndarray | None:
    """The flat memory of a 6-D ``(W, H, C, *batch)`` view whose bytes are channels-last (``[batch..., H, W,
    C]``, C fastest, contiguous: a tensor the plan laid out so), else None."""
    nhwc = a6.transpose(5, 4, 3, 1, 0, 2)
    return nhwc.reshape(-1) if nhwc.flags.c_contiguous else None


def output_memory(out6: np.ndarray) -> tuple[np.ndarray, bool]:
    """(flat memory the epilogue writes, whether pixel-major): ``out6``'s own in OpenVX's natural layout or
    channels-last (:func:`pixel_major`), else a Fortran-ordered temporary copied into ``out6`` at the end."""
    if out6.flags.f_contiguous:
        return out6.ravel(order="F"), False
    flat = pixel_major(out6)
    if flat is not None:
        return flat, True
    return np.empty(out6.shape, out6.dtype, order="F").ravel(order="F"), False


def _finish_output(unit_args, out6: np.ndarray) -> bool:
    flat = unit_args[0][8]
    if not out6.flags.f_contiguous and not unit_args[0][9][4]:
        out6[...] = flat.reshape(out6.shape, order="F")
    return True


@functools.cache
def _no_bias(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, dtype), np.zeros((1, 1, 1, 1), dtype)


def _bias_views(bias: np.ndarray | None, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, int]:
    """(bias1, bias4, kind) for the epilogue: kind 0 none, 1 one value per channel, 2 per location."""
    none1, none4 = _no_bias(dtype)
    if bias is None:
        return none1, none4, 0
    if bias.ndim == 1:
        return bias, none4, 1
    if not (bias.strides[0] or bias.strides[1] or bias.strides[3]):  # a broadcast (K,)
        return bias[0, 0, :, 0], none4, 1
    return none1, bias, 2


def _lend(function, args: tuple, counters: np.ndarray, helpers: int, ready: int = 0):
    """Lend ``function`` to helpers; returns this thread's own call (its result; it raises when a helper's
    chunk raised: ``workers.Share``).

    ``args`` is (head, sizes, tail); the call is ``function(*head, *sizes, n_chunks, counters, wait, *tail)``
    with ``n_chunks`` from the first size (the units) or the helpers (packing). ``ready`` 0: helpers wait
    until the caller sets ``counters[3]`` (1 go, 2 nothing to do).
    """
    head, sizes, tail = args
    units = sizes[0] if sizes else workers.CHUNKS_PER_THREAD * (helpers + 1)  # no sizes (packing): as many as can be
    n_chunks = workers.chunk_count(units, helpers + 1)
    counters[3] = ready

    def call(wait: bool) -> tuple:
        return (*head, *sizes, n_chunks, counters, wait, *tail)

    share = workers.Share(counters)
    share.lend(lambda: function(*call(False)), helpers)
    return lambda: share.run(function, *call(True))
