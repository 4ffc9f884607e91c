"""The integer engine's NHWC entry: asymmetric 8-bit sums on the s16 micro-kernels, requantized by a
fixed-point multiplier and shift in the epilogue.

Asymmetric data (``real = scale * (q - zero_point)``) needs ``sum (x - zx) * (w - zw)``. Each offset
fits int16 (``|q - z| <= 255``), so both operands are packed as their offsets and multiplied on the
``s16`` micro-kernels (``vpmaddwd`` + ``vpaddd`` on AVX2, ``vpdpwssd`` with VNNI): the sums come out
exact with no zero-point correction, and the window's padding, packed as 0, is the real zero NNAPI pads
with. (The ``u8s8`` kernels would need every pixel's window sum of the input to correct a non-zero
weight zero point; 16-bit products need none, at half of VNNI's 8-bit rate.)

Layout. Rows are output pixels ``p = ox + OW * (oy + OH * image)`` and lanes output channels, which is
NHWC's own order: the epilogue writes a pixel's channels side by side (``out[p * K + k]``) and the
input is packed once per call as ``xp[image, y, x, c]`` (int16, channels padded to even, the window's
padding included) by copying pixel rows. Weights are packed once, by :func:`prepare`, as the engine's
``[channel block][my][mx][group][vector][lane][e]``.

Exactness. A product is at most ``x_max * w_max <= 255 * 255`` in magnitude and a step adds two per
lane, so a block of ``(2**31 - 1) // (2 * x_max * w_max)`` steps cannot leave int32 (with MobileNet's
largest layer, 1024 channels, one block); longer sums add their blocks in int64.

Epilogue (the gemmlowp rule NNAPI's reference uses, ``frontend/asymmetric.requantize``): ``v = sum +
bias[k]``, clamped to ``±(2**31 - 1)``, times the 31-bit multiplier ``m``, divided by ``2**shift``
rounded half away from zero (a negative shift: clamped to ``±2**40``, then shifted left), plus the
output zero point, clamped to ``[lo, hi]`` (the fused activation's range). Where the plan bounds
``|sum + bias|`` below ``2**31`` and ``32 <= shift <= 62`` (every layer of a calibrated MobileNet), the
same rule runs on 32-bit lanes: in the micro-kernel's registers, stored as uint8 straight to each row's
pixel (``microkernel.tile_kernel_requantized``: no int32 tile in memory), where the channel blocks divide
``K`` (every MobileNet layer but 256-channel ones on the 24-lane tile; measured 10-30% faster per 1x1
layer than the next route); else over the whole int32 tile (:func:`scale_run`), straight into ``out``
when a tile's rows are whole output pixels (``K`` equal to the tile's lanes), or into a staging tile whose
rows are then copied to their pixels.

Per-channel layers (a filter with a scale per output channel: NNAPI's TENSOR_QUANT8_SYMM_PER_CHANNEL) keep
each channel's ``m`` and ``shift`` beside its bias in the plan's bias array (``[bias | m | shift]``, each
the padded channel count long) and set the ``PER_CHANNEL`` parameter: their rows go through the general
epilogue (:func:`_store_rows_per_channel`, the same rule with a multiplier and shift per lane), never the
32-bit routes, whose multiplier is one per layer.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import types

from ..support import jit, native
from ..support.jit import kernel
from . import gang, workers
from .atomics import fetch_add, shared_words, take_chunk, wait_for_chunks, wait_for_shares
from .microkernel import LANES, tile_kernel, tile_kernel_requantized, variant
from .requantize_lanes import WIDTH, requantize8, requantize16
from .simd import INT32_MAX, PARALLEL_WORK, STRIP
from .tiles import accumulate_blocks, choose_tile

NATIVE_PARALLEL_WORK = 1 << 18
"""Multiply-adds from which a native entry's layer is shared (``PARALLEL_WORK`` for the Python calls): run from C
while the helpers spin in a held gang (``gang.held``), the hand-over is an atomic store a spinning helper sees
within a microsecond, so MobileNet's 1.6-million multiply-add layers (20-40 us) are worth sharing too."""

ACC_LIMIT = (1 << 31) - 1
ELEMENTS = 2  # int16 elements per 4-byte group


@kernel
def scale_lane(v, m, shift, zero_point, lo, hi):
    """One accumulator (bias included) to its output value: the module's epilogue rule, branch-free in
    ``v`` so that a loop of it vectorizes (the tests on ``shift`` are loop-invariant). The clamped sum and
    ``m`` both fit int32, so their product is one 32x32->64 multiply. Half away from zero is
    ``(p + half - (p < 0)) >> shift`` with an arithmetic shift: for negative ``p`` that is
    ``-floor((-p + half) / 2**shift)``, since ``2**shift - half = half``."""
    product = np.int64(np.int32(min(max(v, -ACC_LIMIT), ACC_LIMIT))) * np.int64(np.int32(m))
    if shift < 0:
        product = min(max(product, -(1 << 40)), 1 << 40) << -shift
    elif shift > 62:
        product = product * 0
    elif shift > 0:
        product = (product + (np.int64(1) << (shift - 1)) - (product < 0)) >> shift
    return min(max(product + zero_point, lo), hi)


@kernel
def scale_run(target, sums, bias, n, m, half, shift_hi, zero_point, lo, hi):
    """``target[i] = scale_lane(sums[i] + bias[i], ...)`` for ``i < n``, in 32-bit lanes where the plan allows
    it: ``|sums + bias| < 2**31`` (so the rule's clamp does nothing and the sum is exact in int32) and
    ``32 <= shift <= 62`` (``half = 2**(shift - 1)``, ``shift_hi = shift - 32``). Then the rounded quotient
    ``floor((p + half - (p < 0)) / 2**shift)`` is ``floor(floor(.. / 2**32) / 2**shift_hi)``: the high
    half of a 64-bit lane (``vpmuldq``'s product plus the rounding term) shifted as int32 (``vpsrad``),
    with no 64-bit arithmetic shift, which AVX2 lacks. Sixteen or eight lanes at a time in vector IR
    (``requantize_lanes``: numba's own loop vectorized only in part), the rest one by one;
    ``target`` uint8, ``sums`` and ``bias`` int32."""
    pairs = n - n % (2 * WIDTH)  # 16 lanes a step where there are (measured ~15% faster than 8 on AVX2)
    for i in range(0, pairs, 2 * WIDTH):
        requantize16(target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi)
    whole = n - n % WIDTH
    if whole > pairs:
        requantize8(target, sums, bias, pairs, m, half, shift_hi, zero_point, lo, hi)
    mm = np.int64(np.int32(m))
    zp, low, high = np.int32(zero_point), np.int32(lo), np.int32(hi)
    for i in range(whole, n):
        v = sums[i] + bias[i]
        quotient = np.int32((np.int64(np.int32(v)) * mm + half - np.int64(v < 0)) >> 32) >> shift_hi
        target[i] = min(max(np.int32(quotient) + zp, low), high)


@dataclass(frozen=True)
class NhwcPlan:
    """A layer's weights packed and its geometry fixed (made once, when the node is bound)."""

    code: int  # the micro-kernel (microkernel.variant)
    rows: int
    vecs: int
    lanes: int
    weights: np.ndarray  # int16 offsets, packed, flat
    bias: np.ndarray  # int64 per output channel, zeros to whole blocks
    taps: np.ndarray  # int64 byte offsets of whole kernel rows in the packed input
    inner: int  # 4-byte steps from each of those offsets
    block_steps: int  # steps whose int32 sums cannot overflow
    channels: int
    k_out: int
    pixels_x: int  # the packed window's width and height
    pixels_y: int
    pads: tuple[int, int]  # (left, top)
    strides: tuple[int, int]  # (x, y)
    bound: int  # the largest |sum + bias| the operands allow
    per_channel: bool = False  # ``bias`` holds [bias | m | shift] (see the module's docstring)


def prepare(w_offsets: np.ndarray, bias: np.ndarray | None, x_max: int, out_hw: tuple[int, int],
            pads: tuple[int, int], strides: tuple[int, int], images: int, isa: str,
            per_channel: tuple[np.ndarray, np.ndarray] | None = None) -> NhwcPlan:
    """Pack ``w_offsets`` (int16 ``w - zw``, NNAPI's [K, KY, KX, C]) for a correlation into ``images``
    outputs of ``out_hw`` pixels; ``x_max`` bounds ``|x - zx|``; ``pads`` (left, top), ``strides`` (x, y);
    ``isa`` one with an s16 micro-kernel; ``per_channel`` the channels' own (m, shift), K of each."""
    k_out, ky, kx, channels = w_offsets.shape
    lanes = LANES[isa]
    groups = -(-channels // ELEMENTS)
    rows, vecs = choose_tile(lanes, out_hw[0] * out_hw[1] * images, k_out, whole_blocks=True)
    block = lanes * vecs
    n_blocks = -(-k_out // block)
    wide = np.zeros((kx, ky, groups * ELEMENTS, n_blocks * block), np.int16)
    wide[:, :, :channels, :k_out] = w_offsets.transpose(2, 1, 3, 0)
    packed = wide.reshape(kx, ky, groups, ELEMENTS, n_blocks, vecs, lanes).transpose(4, 1, 0, 2, 5, 6, 3)
    width = (out_hw[1] - 1) * strides[0] + kx
    height = (out_hw[0] - 1) * strides[1] + ky
    pitch = groups * 4
    taps = np.array([my * width * pitch for my in range(ky)], np.int64)  # a kernel row is one run
    padded_bias = np.zeros(n_blocks * block, np.int64)
    if bias is not None:
        padded_bias[:k_out] = bias
    w_max = int(np.abs(w_offsets.astype(np.int64)).max(initial=0))
    worst = ELEMENTS * max(x_max, 1) * max(w_max, 1)
    bound = kx * ky * channels * x_max * w_max + int(np.abs(padded_bias).max(initial=0))
    if per_channel is not None:  # padded lanes: m 0, shift 0 (never stored)
        rule = np.zeros((2, n_blocks * block), np.int64)
        rule[:, :k_out] = per_channel
        padded_bias = np.concatenate([padded_bias, rule.ravel()])
    return NhwcPlan(variant(isa, "s16", rows, vecs), rows, vecs, lanes, np.ascontiguousarray(packed).ravel(),
                    padded_bias, taps, groups * kx, INT32_MAX // worst, channels, k_out, width, height, pads,
                    strides, bound, per_channel is not None)


# ---- the numba side ---------------------------------------------------------------------------------

@kernel
def _pack(x, xp, zero_point, pad_left, pad_top, part, parts):
    # xp[image, j, i, c] = x[image, j - top, i - left, c] - zero_point inside the input, else 0, for the
    # rows (image, j) of share ``part`` of ``parts``. Both C-ordered, so a row's pixels inside the input
    # are one run in each: copied in one flat loop when the channel counts match, else pixel by pixel
    # (three channels, every network's first layer, unrolled).
    _, height, width, channels = x.shape
    images, hp, wp, cp = xp.shape
    first = min(max(pad_left, 0), wp)  # packed columns over the input: first .. last - 1
    last = max(min(width + pad_left, wp), first)
    n = last - first
    zero = np.int16(zero_point)
    source, target = x.reshape(-1), xp.reshape(-1)
    for line in range(images * hp * part // parts, images * hp * (part + 1) // parts):
        image, j = line // hp, line % hp
        row = xp[image, j]
        iy = j - pad_top
        if iy < 0 or iy >= height:
            row[:, :] = 0
            continue
        row[:first, :] = 0
        row[last:, :] = 0
        if cp == channels:  # slices first: indexes from 0 keep the loop free of negative-index tests
            src = ((image * height + iy) * width + first - pad_left) * channels
            dst = (line * wp + first) * cp
            run, into = source[src: src + n * channels], target[dst: dst + n * channels]
            for t in range(n * channels):
                into[t] = np.int16(run[t]) - zero
            continue
        pixels, into = x[image, iy, first - pad_left: last - pad_left], row[first:last]
        if channels == 3:
            for i in range(n):
                pixel, packed = pixels[i], into[i]
                packed[0] = np.int16(pixel[0]) - zero
                packed[1] = np.int16(pixel[1]) - zero
                packed[2] = np.int16(pixel[2]) - zero
                packed[3] = 0
            continue
        for i in range(n):
            pixel, packed = pixels[i], into[i]
            for c in range(channels):
                packed[c] = np.int16(pixel[c]) - zero
            for c in range(channels, cp):
                packed[c] = 0


@kernel
def _store_rows(out, sums, bias, n_rows, p0, k0, valid, block, k_out, m, shift, zero_point, lo, hi):
    # out[(p0 + r) * k_out + k0 + lane] = the epilogue of sums[r * block + lane] + bias[lane].
    for r in range(n_rows):
        at = (p0 + r) * k_out + k0
        target = out[at: at + valid]
        source = sums[r * block: r * block + valid]
        for lane in range(valid):
            target[lane] = scale_lane(np.int64(source[lane]) + bias[lane], m, shift, zero_point, lo, hi)


@kernel
def _store_rows_per_channel(out, sums, bias, n_rows, p0, k0, valid, block, k_out, zero_point, lo, hi):
    # _store_rows with lane ``lane``'s own multiplier and shift: ``bias`` is the plan's [bias | m | shift] array
    # and the tile's lanes are channels k0 ..
    padded = bias.shape[0] // 3
    lane_bias, lane_m, lane_shift = (bias[k0: k0 + valid], bias[padded + k0: padded + k0 + valid],
                                     bias[2 * padded + k0: 2 * padded + k0 + valid])
    for r in range(n_rows):
        at = (p0 + r) * k_out + k0
        target = out[at: at + valid]
        source = sums[r * block: r * block + valid]
        for lane in range(valid):
            target[lane] = scale_lane(np.int64(source[lane]) + lane_bias[lane], lane_m[lane], lane_shift[lane],
                                      zero_point, lo, hi)


@kernel
def _copy_rows(out, staged, n_rows, p0, k0, valid, block, k_out):
    # out[(p0 + r) * k_out + k0 + lane] = staged[r * block + lane]: a staged tile's rows to their pixels.
    for r in range(n_rows):
        at = (p0 + r) * k_out + k0
        target, source = out[at: at + valid], staged[r * block: r * block + valid]
        for lane in range(valid):
            target[lane] = source[lane]


# params: the units' scalars, in this order (one int64 array keeps the signatures short).
OW, OH, K_OUT, PIXELS, ROWS, BLOCK, N_STRIPS, STRIP_TILES, STRIDE_X, STRIDE_Y, INNER, TAP_STRIDE, BLOCK_STEPS, \
    MULT, SHIFT, ZERO, LO, HI, NARROW, FUSED, PER_CHANNEL = range(21)


def _units(code, xp, taps, weights, bias, out, params, u0, u1):
    # Work units u0 .. u1-1: unit u is strip (u % n_strips), ``strip`` tiles of ``rows`` consecutive pixels,
    # of output-channel block (u // n_strips).
    ow, oh, k_out, pixels = params[OW], params[OH], params[K_OUT], params[PIXELS]
    rows, block, n_strips, strip = params[ROWS], params[BLOCK], params[N_STRIPS], params[STRIP_TILES]
    stride_x, stride_y, inner, tap_stride, steps = (params[STRIDE_X], params[STRIDE_Y], params[INNER],
                                                    params[TAP_STRIDE], params[BLOCK_STEPS])
    m, shift, zero_point, lo, hi = params[MULT], params[SHIFT], params[ZERO], params[LO], params[HI]
    _, hp, wp, cp = xp.shape
    pitch = cp * 2
    n_taps = taps.shape[0]
    width = strip * rows
    tile = np.empty(rows * block, np.int32)
    acc = np.empty(rows * block, np.int64)
    addr = np.empty(rows, np.int64)
    base = np.int64(xp.ctypes.data)
    tile_at, addr_at, taps_at = np.int64(tile.ctypes.data), np.int64(addr.ctypes.data), np.int64(taps.ctypes.data)
    w_blocks = np.int64(weights.ctypes.data)
    block_bytes = n_taps * tap_stride
    taps_per_block = max(1, steps // inner)
    inner_per_block = min(inner, steps)
    single = taps_per_block >= n_taps and inner_per_block >= inner
    per_channel = params[PER_CHANNEL] != 0  # bias is [bias | m | shift]: the general epilogue, lane by lane
    # the epilogue in 32-bit lanes, one run per tile (scale_run)
    narrow = single and params[NARROW] != 0 and not per_channel
    whole = narrow and block == k_out  # ... written straight into ``out``: the tile's rows are whole pixels
    fused = narrow and params[FUSED] != 0  # ... in the micro-kernel's registers (tile_kernel_requantized)
    half = np.int64(1) << max(shift - 1, 0)
    row_bias = np.empty(rows * block, np.int32)
    staged = np.empty(rows * block, np.uint8)
    rule = np.empty(6, np.int64)
    rule[0], rule[1], rule[2], rule[3], rule[4], rule[5] = m, half, shift - 32, zero_point, lo, hi
    targets = np.empty(rows, np.int64)
    out_at, staged_at, targets_at = np.int64(out.ctypes.data), np.int64(staged.ctypes.data), np.int64(targets.ctypes.data)
    rule_at, row_bias_at = np.int64(rule.ctypes.data), np.int64(row_bias.ctypes.data)
    for u in range(u0, u1):
        ob = u // n_strips
        s0 = (u % n_strips) * width
        n_pix = min(width, pixels - s0)
        w0 = w_blocks + ob * block_bytes
        k0 = ob * block
        valid = min(block, k_out - k0)
        lane_bias = bias[k0: k0 + block]
        if narrow:
            for r in range(rows):
                for lane in range(block):
                    row_bias[r * block + lane] = lane_bias[lane]
        # The pixel after the tile's last row, as coordinates stepped along (divisions cost more than a
        # small tile's sums); rows past the last pixel repeat it.
        ox, q = s0 % ow, s0 // ow
        oy, image = q % oh, q // oh
        for t in range(0, n_pix, rows):
            for r in range(rows):
                addr[r] = base + ((image * hp + oy * stride_y) * wp + ox * stride_x) * pitch
                if s0 + t + r + 1 < pixels:
                    ox += 1
                    if ox == ow:
                        ox = 0
                        oy += 1
                        if oy == oh:
                            oy = 0
                            image += 1
            n_rows = min(rows, n_pix - t)
            if fused:  # rows past the last pixel go to the staging tile
                for r in range(rows):
                    targets[r] = out_at + (s0 + t + r) * k_out + k0 if r < n_rows else staged_at + r * block
                tile_kernel_requantized(code, addr_at, taps_at, n_taps, inner, w0, tap_stride, targets_at, row_bias_at,
                                        rule_at)
                continue
            if single:
                tile_kernel(code, tile_at, addr_at, taps_at, n_taps, inner, w0, tap_stride)
                if per_channel:
                    _store_rows_per_channel(out, tile, bias, n_rows, s0 + t, k0, valid, block, k_out, zero_point, lo,
                                            hi)
                elif whole:  # the tile's rows are whole pixels, one after the other in ``out``
                    scale_run(out[(s0 + t) * k_out: (s0 + t + n_rows) * k_out], tile, row_bias, n_rows * block, m,
                              half, shift - 32, zero_point, lo, hi)
                elif narrow:
                    scale_run(staged, tile, row_bias, n_rows * block, m, half, shift - 32, zero_point, lo, hi)
                    _copy_rows(out, staged, n_rows, s0 + t, k0, valid, block, k_out)
                else:
                    _store_rows(out, tile, lane_bias, n_rows, s0 + t, k0, valid, block, k_out, m, shift, zero_point,
                                lo, hi)
                continue
            accumulate_blocks(code, tile, acc, addr, taps_at, n_taps, inner, w0, tap_stride, taps_per_block,
                              inner_per_block)
            if per_channel:
                _store_rows_per_channel(out, acc, bias, n_rows, s0 + t, k0, valid, block, k_out, zero_point, lo, hi)
            else:
                _store_rows(out, acc, lane_bias, n_rows, s0 + t, k0, valid, block, k_out, m, shift, zero_point, lo,
                            hi)


_UNITS = kernel(_units)


def _claim(code, xp, taps, weights, bias, out, params, n_units, n_chunks, counters, wait):
    # Chunks of units claimed from counters[0] by the caller (from the front) and its helpers (from the back:
    # atomics.take_chunk); counters[1] counts finished chunks, and the caller (``wait``) returns once all are
    # finished. Written out, not ``chunk_loop.chunk_driver``: ``code`` passed in its argument tuple would stop
    # being a compile-time literal, which the micro-kernels need.
    claim = np.int64(counters.ctypes.data)
    while True:
        i = take_chunk(claim, n_chunks, not wait)
        if i < 0:
            break
        _UNITS(code, xp, taps, weights, bias, out, params, n_units * i // n_chunks, n_units * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        wait_for_chunks(claim, n_chunks)


_CLAIM = kernel(_claim)

_ARRAYS = (types.Array(types.int16, 4, "C", readonly=True), types.Array(types.int64, 1, "C", readonly=True),
           types.Array(types.int16, 1, "C", readonly=True), types.Array(types.int64, 1, "C", readonly=True),
           types.Array(types.uint8, 1, "C"), types.Array(types.int64, 1, "C", readonly=True))


pack_offsets_kernel = _pack
"""The packer's dispatcher (``_pack``), for native entries of other layers that pack their input the same way."""


@functools.cache
def pack_entry():
    """The compiled packer: ``(x, xp, zero_point, pad_left, pad_top, part, parts)``, both C-ordered 4-D."""
    return jit.entry(_pack, types.Array(types.uint8, 4, "C", readonly=True), types.Array(types.int16, 4, "C"),
                     *(jit.INT,) * 5)


@functools.cache
def _units_entry(code: int):
    return jit.entry(_UNITS, types.literal(code), *_ARRAYS, jit.INT, jit.INT)


@functools.cache
def _claim_entry(code: int):
    return jit.entry(_CLAIM, types.literal(code), *_ARRAYS, jit.INT, jit.INT, types.Array(types.int64, 1, "C"),
                     jit.BOOL)


def pack_offsets(x: np.ndarray, zero_point: int, pad_left: int, pad_top: int, height: int, width: int,
                 depth: int) -> np.ndarray:
    """``x`` (uint8 [N, H, W, C], any strides) as int16 offsets ``x - zero_point`` in a window of ``height`` x
    ``width`` pixels of ``depth >= C`` channels whose first sample is input (-pad_left, -pad_top); 0 elsewhere."""
    xp = np.empty((x.shape[0], height, width, depth), np.int16)
    pack_entry()(np.ascontiguousarray(x), xp, zero_point, pad_left, pad_top, 0, 1)
    return xp


class NhwcCall:
    """A layer bound to its requantization: ``call(x, out)`` fills ``out`` (uint8 ``out_shape`` = [N, OH, OW, K],
    C-ordered) from ``x`` (uint8 [N, H, W, C], any strides); :meth:`attach` binds it to two arrays once."""

    def __init__(self, plan: NhwcPlan, out_shape: tuple[int, ...], x_zero: int, multiplier: int, shift: int,
                 zero_point: int, lo: int, hi: int):
        images, oh, ow, k_out = out_shape
        pixels = images * oh * ow
        strip = max(1, STRIP // plan.rows)
        n_strips = -(-pixels // (strip * plan.rows))
        block = plan.vecs * plan.lanes
        # scale_run where the plan allows it: one run per tile (measured faster than scale_lane's loop; a run
        # per row was slower)
        narrow = plan.bound <= ACC_LIMIT and 32 <= shift <= 62 and not plan.per_channel
        self.params = np.array([ow, oh, k_out, pixels, plan.rows, block, n_strips, strip, plan.strides[0],
                                plan.strides[1], plan.inner, plan.inner * 4 * block, min(plan.block_steps, 1 << 40),
                                multiplier, shift, zero_point, lo, hi, int(narrow), int(k_out % block == 0),
                                int(plan.per_channel)], np.int64)
        self.plan, self.x_zero, self.empty = plan, x_zero, pixels * k_out == 0
        self.n_units = n_strips * (-(-k_out // block))
        work = pixels * k_out * plan.taps.size * plan.inner * ELEMENTS
        self.shared, self.native_shared = work >= PARALLEL_WORK, work >= NATIVE_PARALLEL_WORK
        self.xp_shape = (images, plan.pixels_y, plan.pixels_x, -(-plan.channels // ELEMENTS) * ELEMENTS)

    def __call__(self, x: np.ndarray, out: np.ndarray) -> None:
        if not self.empty:
            self.attach(np.ascontiguousarray(x), out)()

    def attach(self, x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
        """``call(x, out)`` for these arrays (``x`` C-ordered uint8, ``out`` C-ordered), with its packed input and
        compiled entries found once: per run only the two kernel calls (and the helpers' hand-over)."""
        plan, code, n_units, x_zero, (left, top) = self.plan, self.plan.code, self.n_units, self.x_zero, self.plan.pads
        if self.empty:
            return lambda: None
        xp = np.empty(self.xp_shape, np.int16)
        arrays = (xp, plan.taps, plan.weights, plan.bias, out.reshape(-1), self.params)
        pack, units, claim, shared = pack_entry(), _units_entry(code), _claim_entry(code), self.shared

        def run() -> None:
            pack(x, xp, x_zero, left, top, 0, 1)
            helpers = workers.helpers() if shared else 0
            if not helpers:
                units(code, *arrays, 0, n_units)
                return
            n_chunks = workers.chunk_count(n_units, helpers + 1)
            counters = shared_words(2)
            share = workers.Share(counters)
            share.lend(lambda: claim(code, *arrays, n_units, n_chunks, counters, False), helpers)
            share.run(claim, code, *arrays, n_units, n_chunks, counters, True)
        return run

    def native_entry(self, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
        """:meth:`attach` as a native entry (``support/native.py``): the same packing and units, shared with the
        gang's spinning helpers as :meth:`attach` shares them, the packing too (:func:`pack_parts`); None for an
        empty layer. ``x`` and ``out`` C-ordered uint8, not overlapping."""
        if self.empty:
            return None
        plan = self.plan
        task = gang.NativeTask(self.n_units, self.native_shared)
        xp = np.empty(self.xp_shape, np.int16)
        arrays = (x, xp, plan.taps, plan.weights, plan.bias, out.reshape(-1), self.params, task.counters,
                  shared_words(2))
        words, keep = native.pack(*(a.reshape((1,) * (native.RANK - a.ndim) + a.shape) for a in arrays),
                                  self.x_zero, plan.pads[0], plan.pads[1], self.n_units, *task.words())
        return native.Entry(_native_entry(plan.code), words, keep + task.finish(_native_helper(plan.code), words))


_NX, _NXP, _NTAPS, _NWEIGHTS, _NBIAS, _NOUT, _NPARAMS, _NCOUNTERS, _NPACKED = (native.ARRAY_WORDS * k for k in range(9))
_NZERO, _NLEFT, _NTOP, _NUNITS, _NMAILBOX, _NTASK, _NCHUNKS = range(native.ARRAY_WORDS * 9, native.ARRAY_WORDS * 9 + 7)


@kernel
def pack_parts(x, xp, zero_point, pad_left, pad_top, parts, counters, task):
    """:func:`_pack` in ``parts`` shares claimed from ``counters`` (int64 [claimed, finished], zero before the
    layer's task is posted) by the caller and its helpers alike; each returns once every share is packed, so
    that no unit reads a row before it is written, or once the ``task``'s chunks failed (a thread raised). A
    helper that comes late finds nothing left to claim."""
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= parts:
            break
        _pack(x, xp, zero_point, pad_left, pad_top, i, parts)
        fetch_add(claim + 8, 1)
    wait_for_shares(claim, parts, np.int64(task.ctypes.data))


@jit.kernel
def _native_units(code, block, chunks, wait):
    """Every unit of the layer packed in ``block``, its input packed first: serially (``chunks`` 0), or in
    ``chunks`` chunks claimed with the helpers, the packing too (``wait``: until every claimed one is done)."""
    x = native.c_array(block, _NX, np.uint8)[0, 0]
    xp = native.c_array(block, _NXP, np.int16)[0, 0]
    taps = native.c_array(block, _NTAPS, np.int64)[0, 0, 0, 0, 0]
    weights = native.c_array(block, _NWEIGHTS, np.int16)[0, 0, 0, 0, 0]
    bias = native.c_array(block, _NBIAS, np.int64)[0, 0, 0, 0, 0]
    out = native.c_array(block, _NOUT, np.uint8)[0, 0, 0, 0, 0]
    params = native.c_array(block, _NPARAMS, np.int64)[0, 0, 0, 0, 0]
    if chunks == 0:
        _pack(x, xp, block[_NZERO], block[_NLEFT], block[_NTOP], 0, 1)
        _UNITS(code, xp, taps, weights, bias, out, params, 0, block[_NUNITS])
    else:
        counters = native.c_array(block, _NCOUNTERS, np.int64)[0, 0, 0, 0, 0]
        pack_parts(x, xp, block[_NZERO], block[_NLEFT], block[_NTOP], chunks,
                   native.c_array(block, _NPACKED, np.int64)[0, 0, 0, 0, 0], counters)
        _CLAIM(code, xp, taps, weights, bias, out, params, block[_NUNITS], chunks, counters, wait)


@jit.kernel
def _pack_block(block):
    """Before the layer's task is posted: its packing's share counters reset (the last run's helpers are gone)."""
    packed = native.c_array(block, _NPACKED, np.int64)[0, 0, 0, 0, 0]
    packed[0] = 0
    packed[1] = 0


@functools.cache
def _bodies(code: int) -> tuple:
    return gang.shared_entry(_native_units, _pack_block, (_NMAILBOX, _NTASK, _NCHUNKS, _NCOUNTERS), code)


@native.factory(codes=(0,))
def _native_entry(code: int) -> int:
    """The packer, then ``_units`` of micro-kernel ``code`` over every unit (``NhwcCall.attach``'s run; shared,
    both in shares claimed with the helpers)."""
    return jit.native(_bodies(code)[0])


@native.factory(codes=(0,))
def _native_helper(code: int) -> int:
    return jit.native(_bodies(code)[1])


def bind(plan: NhwcPlan, out_shape: tuple[int, ...], x_zero: int, multiplier: int, shift: int, zero_point: int,
         lo: int, hi: int) -> NhwcCall:
    """``call(x, out)``: fill ``out`` (uint8 ``out_shape`` = [N, OH, OW, K], C-ordered) from ``x`` (uint8
    [N, H, W, C], any strides), requantized by (``multiplier``, ``shift``, ``zero_point``) into [lo, hi]
    (a per-channel plan's own multipliers and shifts instead: then ``multiplier`` and ``shift`` are unused)."""
    return NhwcCall(plan, out_shape, x_zero, multiplier, shift, zero_point, lo, hi)
