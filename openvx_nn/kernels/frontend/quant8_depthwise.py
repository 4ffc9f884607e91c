"""NNAPI's TENSOR_QUANT8_ASYMM DEPTHWISE_CONV_2D as a direct integer kernel on NHWC data.

Depthwise convolution does ``kh * kw`` multiply-adds per output value: it is bound by memory, not
by arithmetic, so it gets no im2col and no GEMM. Each output pixel keeps one int32 accumulator per
output channel; every tap inside the input adds ``(x - zx) * (w - zw)`` over the channels in one
contiguous, vectorized loop (channel ``k * multiplier + q`` reads input channel ``k``). The sums are
exact in int32 (``kh * kw * 255 * 255 < 2**31`` for windows below 33025 taps, checked), the bias is
added in int64, and ``engine.nhwc.scale_lane`` requantizes (``engine.nhwc.scale_run``, the same rule in
32-bit lanes, where the layer's bounds allow it): bit for bit ``nhwc_convolution``'s NumPy route
(``asymmetric.requantize``), which stays as the reference. With a depth multiplier of 1 every tap adds
one run per output line, strided layers included: their input is packed with each row's columns
grouped by phase (``_pack_phases``). A 3x3 window of multiplier 1 (MobileNet's every depthwise layer) sums
two taps per 32-bit lane: its packed rows g and g + 1 interleaved as int16 pairs (``_pair_row``, each built once)
against the weights of window rows 0 and 1, row 2 beside a zero, six ``vpmaddwd`` for nine products, and its
sums are requantized in the registers they were summed in (``_pair_scaled``) where ``scale_run``'s rule applies.
A filter with a scale per output channel (NNAPI's TENSOR_QUANT8_SYMM_PER_CHANNEL) passes each channel's
multiplier and shift beside its bias (``bias`` then ``[bias | m | shift]``, three times the channel count long)
and always takes ``scale_lane``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..engine import gang, workers
from ..engine.atomics import fetch_add, shared_words, wait_for_shares
from ..engine.chunk_loop import chunk_driver
from ..engine.nhwc import ACC_LIMIT, pack_entry, pack_offsets_kernel, scale_lane, scale_run
from ..engine.requantize_lanes import requantize_vector
from ..support import jit, native
from ..support.jit import kernel
from ..support.llvm_loops import splat
from .asymmetric import quantized_multiplier, quantized_range
from .quant8_convolution import Prepared, channel_multipliers

PARALLEL_WORK = 1 << 18  # multiply-adds from which the rows are shared between threads
NATIVE_PARALLEL_WORK = 1 << 15  # the same for a native entry's layer: its helpers spin in a held gang, see nhwc.py
MAX_TAPS = ((1 << 31) - 1) // (255 * 255)
SEGMENT = 512
"""Values of a line a tap's run covers at most (multiplier 1): nine taps' weights for them stay in L1 (weights
tiled over a whole 14x128 line, 32 KB, did not: ~1.4 ns an output against ~0.8 for the same sums in L1)."""


def _depthwise(xp, w_offsets, bias, line_bias, out, multiplier, stride_h, stride_w, m, shift, zero_point, lo, hi,
               narrow, line0, line1):
    # out[b, oy, ox, k*multiplier + q] (flat, C-ordered) from the packed offsets xp[b, y, x, k] (int16, the
    # window's padding included: no bounds to test) and w_offsets[ky, kx, k*multiplier + q] (int16; LLVM here
    # multiplies the sign-extended factors with vpmulld: raw uint8 inputs got vpmaddwd, no faster in L1), for the
    # output lines b * out_h + oy in line0 .. line1-1. A line's sums stay in ``acc`` (out_w x depth_out
    # int32, in L1) while each tap adds one contiguous run per output pixel, or (multiplier 1: ``w_offsets``
    # then holds each tap's weights repeated for a few whole pixels, ``SEGMENT`` values at most, so that they stay
    # in L1 beside the input's runs) one run per segment of that many values of the line. Such runs need the
    # input columns a tap reads to follow each other: with stride s > 1 the packed row holds the window's
    # columns by phase (:func:`_pack_phases`), column s * j + p at p * phase + j, so tap kx reads
    # ``phase * (kx % s) + kx // s + ox`` for ox = 0, 1, ... ``narrow``: the plan allows the epilogue in 32-bit
    # lanes (``engine.nhwc.scale_run``, with ``line_bias`` the bias repeated out_w times), else ``scale_lane``.
    _, hp, wp, depth_in = xp.shape
    kh, kw = w_offsets.shape[0], w_offsets.shape[1]
    _, out_h, out_w, depth_out = out.shape
    whole_line = multiplier == 1 and w_offsets.shape[2] % depth_out == 0
    segment = w_offsets.shape[2]
    phase = -(-wp // stride_w)
    half = np.int64(1) << max(shift - 1, 0)
    flat = xp.reshape(-1)
    target = out.reshape(-1)
    acc = np.empty(out_w * depth_out, np.int32)
    n = out_w * depth_out
    # a 3x3 window of whole-line runs: the nine taps in one pass over the line (no sum stored between taps)
    nine = whole_line and kh == 3 and kw == 3
    per_channel = depth_out > 0 and bias.shape[0] == 3 * depth_out
    cols = [(phase * (kx % stride_w) + kx // stride_w) * depth_in for kx in range(3)]
    row_len = wp * depth_in
    pairs = np.empty(RING * row_len if nine else 0, np.int32)
    held = np.full(RING, -1, np.int64)  # the packed row whose pair row each slot of ``pairs`` holds
    w_pairs = _weight_pairs(w_offsets) if nine else np.empty(0, np.int32)
    fused = nine and narrow != 0 and not per_channel  # requantized in registers (no sums stored)
    for line in range(line0, line1):
        b, oy = line // out_h, line % out_h
        if nine:
            g = b * hp + oy * stride_h
            first, third = _pair_row(pairs, held, flat, g, hp, row_len), _pair_row(pairs, held, flat, g + 2, hp,
                                                                                     row_len)
            at = line * out_w * depth_out
            for s0 in range(0, n, segment):
                _nine_taps(acc, target, at, line_bias, pairs, first, third, w_pairs, s0, min(segment, n - s0),
                           segment, cols[0], cols[1], cols[2], fused, m, half, shift - 32, zero_point, lo, hi)
            if fused:
                continue
        else:
            acc[:] = 0
        for ky in range(kh if nine else 0, kh):
            row = (b * hp + oy * stride_h + ky) * wp
            for kx in range(kw):
                taps = w_offsets[ky, kx]
                if whole_line:  # the pixels tap kx reads follow each other: runs of out_w * depth channels
                    start = (row + phase * (kx % stride_w) + kx // stride_w) * depth_in
                    for s0 in range(0, n, segment):
                        size = min(segment, n - s0)
                        run, sums = flat[start + s0: start + s0 + size], acc[s0: s0 + size]
                        for j in range(size):
                            sums[j] += np.int32(run[j]) * taps[j]
                    continue
                for ox in range(out_w):  # slices: indexes from 0 (no negative-index test in the loop)
                    src = (row + ox * stride_w + kx) * depth_in
                    pixel = flat[src: src + depth_in]
                    sums = acc[ox * depth_out: (ox + 1) * depth_out]
                    if multiplier == 1:
                        for c in range(depth_out):
                            sums[c] += np.int32(pixel[c]) * taps[c]
                    else:
                        for c in range(depth_out):
                            sums[c] += np.int32(pixel[c // multiplier]) * taps[c]
        at = line * out_w * depth_out
        if per_channel:  # each channel's own multiplier and shift, beside its bias
            for ox in range(out_w):
                values = target[at + ox * depth_out: at + (ox + 1) * depth_out]
                sums = acc[ox * depth_out: (ox + 1) * depth_out]
                for c in range(depth_out):
                    values[c] = scale_lane(np.int64(sums[c]) + bias[c], bias[depth_out + c],
                                           bias[2 * depth_out + c], zero_point, lo, hi)
            continue
        if narrow:
            scale_run(target[at: at + out_w * depth_out], acc, line_bias, out_w * depth_out, m, half, shift - 32,
                      zero_point, lo, hi)
            continue
        for ox in range(out_w):
            values = target[at + ox * depth_out: at + (ox + 1) * depth_out]
            sums = acc[ox * depth_out: (ox + 1) * depth_out]
            for c in range(depth_out):
                values[c] = scale_lane(np.int64(sums[c]) + bias[c], m, shift, zero_point, lo, hi)


def _pmadd(builder: ir.IRBuilder, x: ir.Value, w: ir.Value) -> ir.Value:
    """``lo(x) * lo(w) + hi(x) * hi(w)`` in each 32-bit lane of two ``<n x i32>`` vectors of int16 pairs: the
    products of all 2n halves, even and odd lanes added. LLVM matches exactly this form to ``(v)pmaddwd``, one
    instruction for two products per lane (sign-extending each factor and ``vpmulld`` cost 2.5 times as much);
    generic IR, so it is correct on any x86 whether or not the match is made."""
    n = x.type.count
    halves, wide = ir.VectorType(ir.IntType(16), 2 * n), ir.VectorType(ir.IntType(32), 2 * n)
    products = builder.mul(builder.sext(builder.bitcast(x, halves), wide), builder.sext(builder.bitcast(w, halves), wide))
    even, odd = ([2 * i + k for i in range(n)] for k in (0, 1))
    return builder.add(builder.shuffle_vector(products, products, ir.Constant(ir.VectorType(ir.IntType(32), n), even)),
                       builder.shuffle_vector(products, products, ir.Constant(ir.VectorType(ir.IntType(32), n), odd)))


PAIR_LANES = 8
"""Sums per step of :func:`_pair_sums` (16 lanes measured no faster)."""
RING = 4
"""Pair rows a 3x3 layer's kernel call holds: a line reads rows g and g + 2, so in order each is built once."""


def _six_products(context, builder, rows, weights, x0, x1, x2, far, w_at, segment):
    """The ``<PAIR_LANES x i32>`` sums of :func:`_pair_sums` (arrays as made by ``context.make_array``, indexes
    i64)."""
    vec = ir.VectorType(ir.IntType(32), PAIR_LANES)

    def load(array, index):
        return builder.load(builder.bitcast(builder.gep(array.data, [index]), vec.as_pointer()), align=4)
    total = None
    for kx, x in enumerate((x0, x1, x2)):
        for r in range(2):
            w = builder.add(builder.mul(ir.Constant(ir.IntType(64), 2 * kx + r), segment), w_at)
            term = _pmadd(builder, load(rows, builder.add(x, far) if r else x), load(weights, w))
            total = term if total is None else builder.add(total, term)
    return total


def _int32_arrays(*arrays) -> bool:
    return all(isinstance(a, types.Array) and a.dtype == types.int32 for a in arrays)


@intrinsic
def _pair_sums(typingctx, acc, at, pairs, x0, x1, x2, far, w_pairs, w_at, segment):
    """``acc[at + i] = sum over kx < 3, r < 2 of pmadd(pairs[x_kx + r * far + i], w_pairs[(2 kx + r) * segment +
    w_at + i])`` for ``i < PAIR_LANES`` (every array int32, contiguous for those lanes from there: the caller's
    bounds): a 3x3 window's nine products per output in six ``_pmadd`` (rows 0 and 1 paired, row 2 beside 0)."""
    if not (_int32_arrays(acc, pairs, w_pairs) and all(isinstance(v, types.Integer)
                                                       for v in (at, x0, x1, x2, far, w_at, segment))):
        return None

    def codegen(context, builder, signature, args):
        sums, rows, weights = (context.make_array(signature.args[k])(context, builder, args[k]) for k in (0, 2, 7))
        at, x0, x1, x2, far, w_at, seg = (context.cast(builder, args[k], signature.args[k], types.int64)
                                          for k in (1, 3, 4, 5, 6, 8, 9))
        total = _six_products(context, builder, rows, weights, x0, x1, x2, far, w_at, seg)
        vec = ir.VectorType(ir.IntType(32), PAIR_LANES)
        builder.store(total, builder.bitcast(builder.gep(sums.data, [at]), vec.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.void(acc, at, pairs, x0, x1, x2, far, w_pairs, w_at, segment), codegen


@intrinsic
def _pair_scaled(typingctx, target, at, line_bias, bias_at, pairs, x0, x1, x2, far, w_pairs, w_at, segment, m, half,
                 shift_hi, zero_point, lo, hi):
    """:func:`_pair_sums` over ``2 * PAIR_LANES`` lanes plus ``line_bias[bias_at + i]``, requantized in the
    register (``requantize_vector``: the rule of ``engine.nhwc.scale_run`` in 32-bit lanes, which the caller's plan
    allows) into ``target[at + i]`` (uint8): the sums never stored. Sixteen lanes: the rule over eight cost as
    much as the sums."""
    scalars = (at, bias_at, x0, x1, x2, far, w_at, segment, m, half, shift_hi, zero_point, lo, hi)
    if not (isinstance(target, types.Array) and target.dtype == types.uint8 and _int32_arrays(line_bias, pairs, w_pairs)
            and all(isinstance(v, types.Integer) for v in scalars)):
        return None

    def codegen(context, builder, signature, args):
        out, bias, rows, weights = (context.make_array(signature.args[k])(context, builder, args[k])
                                    for k in (0, 2, 4, 9))
        at, bias_at, x0, x1, x2, far, w_at, seg, *rule = (
            context.cast(builder, args[k], signature.args[k], types.int64)
            for k in (1, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17))
        eight = ir.Constant(ir.IntType(64), PAIR_LANES)
        low = _six_products(context, builder, rows, weights, x0, x1, x2, far, w_at, seg)
        high = _six_products(context, builder, rows, weights, *(builder.add(x, eight) for x in (x0, x1, x2)), far,
                             builder.add(w_at, eight), seg)
        total = builder.shuffle_vector(low, high, ir.Constant(ir.VectorType(ir.IntType(32), 2 * PAIR_LANES),
                                                              list(range(2 * PAIR_LANES))))
        vec, bytes_ = ir.VectorType(ir.IntType(32), 2 * PAIR_LANES), ir.VectorType(ir.IntType(8), 2 * PAIR_LANES)
        total = builder.add(total, builder.load(builder.bitcast(builder.gep(bias.data, [bias_at]),
                                                                vec.as_pointer()), align=4))
        builder.store(requantize_vector(builder, total, *rule),
                      builder.bitcast(builder.gep(out.data, [at]), bytes_.as_pointer()), align=1)
        return context.get_dummy_value()
    return types.void(target, at, line_bias, bias_at, pairs, x0, x1, x2, far, w_pairs, w_at, segment, m, half,
                      shift_hi, zero_point, lo, hi), codegen


@kernel
def _pair_row(pairs, held, flat, g, hp, row_len):
    # The offset in ``pairs`` (RING rows of row_len) of packed row g paired with row g + 1 of the same image, 0
    # past its last: pairs[i] = (flat[g * row_len + i], that row's) as int16 pairs, low half first. Built when
    # its slot holds another row: each row once per call of the kernel when its lines come in order.
    slot = g % RING
    at = slot * row_len
    if held[slot] != g:
        held[slot] = g
        row, into = flat[g * row_len: (g + 1) * row_len], pairs[at: at + row_len]
        if (g + 1) % hp != 0:
            below = flat[(g + 1) * row_len: (g + 2) * row_len]
            for i in range(row_len):
                into[i] = (np.int32(row[i]) & 0xFFFF) | (np.int32(below[i]) << 16)
        else:
            for i in range(row_len):
                into[i] = np.int32(row[i]) & 0xFFFF
    return at


@kernel
def _weight_pairs(w_offsets):
    # [3, 3, segment] int16 taps as the six int16-pair rows _pair_sums reads: (w[0, kx], w[1, kx]), (w[2, kx], 0).
    segment = w_offsets.shape[2]
    out = np.empty(6 * segment, np.int32)
    for kx in range(3):
        top, mid, low = w_offsets[0, kx], w_offsets[1, kx], w_offsets[2, kx]
        first, second = out[2 * kx * segment: (2 * kx + 1) * segment], out[(2 * kx + 1) * segment: (2 * kx + 2) * segment]
        for j in range(segment):
            first[j] = (np.int32(top[j]) & 0xFFFF) | (np.int32(mid[j]) << 16)
            second[j] = np.int32(low[j]) & 0xFFFF
    return out


@kernel
def _nine_taps(acc, target, at, line_bias, pairs, first, third, w_pairs, s0, size, segment, c0, c1, c2, fused, m,
               half, shift_hi, zero_point, lo, hi):
    # Values s0 .. s0 + size - 1 of a line of a 3x3 window of whole-line runs, from the pair rows of its first and
    # third packed rows (offsets ``first`` and ``third`` in ``pairs``, _pair_row) and the weights' (_weight_pairs):
    # PAIR_LANES at a time (each pair loaded once per tap, the sum in a register), requantized there into
    # target[at + ...] (``fused``: scale_run's 32-bit rule, the line's bias in ``line_bias``) or stored in
    # ``acc``; the rest one by one from the same pairs into ``acc`` (and scale_run's own loop when ``fused``).
    scaled = size - size % (2 * PAIR_LANES) if fused else 0
    whole = size - size % PAIR_LANES
    far = third - first
    for j in range(0, scaled, 2 * PAIR_LANES):
        x = first + s0 + j
        _pair_scaled(target, at + s0 + j, line_bias, s0 + j, pairs, x + c0, x + c1, x + c2, far, w_pairs, j,
                     segment, m, half, shift_hi, zero_point, lo, hi)
    for j in range(scaled, whole, PAIR_LANES):
        x = first + s0 + j
        _pair_sums(acc, s0 + j, pairs, x + c0, x + c1, x + c2, far, w_pairs, j, segment)
    for j in range(whole, size):
        total = np.int32(0)
        for kx in range(3):
            x = first + (c0, c1, c2)[kx] + s0 + j
            for r in range(2):
                v, w = pairs[x + r * far], w_pairs[(2 * kx + r) * segment + j]
                total += np.int32(np.int16(v & 0xFFFF)) * np.int32(np.int16(w & 0xFFFF)) + (v >> 16) * (w >> 16)
        acc[s0 + j] = total
    if fused and size > scaled:
        scale_run(target[at + s0 + scaled: at + s0 + size], acc[s0 + scaled: s0 + size],
                  line_bias[s0 + scaled: s0 + size], size - scaled, m, half, shift_hi, zero_point, lo, hi)


_DEPTHWISE = kernel(_depthwise)


@intrinsic
def _offsets8(typingctx, packed, to, pixel, at, zero):
    """``packed[to + k] = pixel[at + k] - zero`` for ``k < 8`` as one vector step (``packed`` int16, ``pixel`` uint8,
    both contiguous for 8 elements from there: the caller's bounds). numba's loop of a pixel's few channels
    stayed scalar (the arrays might alias) and cost as much as the layer's sums; generic IR, so any x86 runs it."""
    if not (isinstance(packed, types.Array) and packed.dtype == types.int16 and isinstance(pixel, types.Array)
            and pixel.dtype == types.uint8 and all(isinstance(v, types.Integer) for v in (to, at, zero))):
        return None

    def codegen(context, builder, signature, args):
        target, source = (context.make_array(signature.args[k])(context, builder, args[k]) for k in (0, 2))
        to, at = (context.cast(builder, args[k], signature.args[k], types.int64) for k in (1, 3))
        offset = context.cast(builder, args[4], signature.args[4], types.int16)
        v8, v16 = ir.VectorType(ir.IntType(8), 8), ir.VectorType(ir.IntType(16), 8)
        values = builder.load(builder.bitcast(builder.gep(source.data, [at]), v8.as_pointer()), align=1)
        values = builder.sub(builder.zext(values, v16), splat(builder, offset, v16))
        builder.store(values, builder.bitcast(builder.gep(target.data, [to]), v16.as_pointer()), align=2)
        return context.get_dummy_value()
    return types.void(packed, to, pixel, at, zero), codegen


@kernel
def _pack_phases(x, xp, zero_point, pad_left, pad_top, stride, part, parts):
    # xp[b, j, p * phase + i, c] = x[b, j - top, stride * i + p - left, c] - zero_point inside the input, else 0
    # (phase = ceil(width of xp / stride)), for the rows (b, j) of share ``part`` of ``parts``: pack_offsets with
    # each row's columns grouped by phase. Per phase the columns inside the input are one range of i (no test per
    # column), and a pixel's channels go eight at a time (``_offsets8``); the last phase's missing column is
    # never read.
    n_batch, height, width, channels = x.shape
    _, hp, wp, _ = xp.shape
    phase = -(-wp // stride)
    zero = np.int16(zero_point)
    blocks = channels - channels % 8
    source, target = x.reshape(-1), xp.reshape(-1)
    for line in range(n_batch * hp * part // parts, n_batch * hp * (part + 1) // parts):
        b, j = line // hp, line % hp
        row = xp[b, j]
        iy = j - pad_top
        if iy < 0 or iy >= height:
            row[:, :] = 0
            continue
        for p in range(stride):
            count = min(phase, (wp - p + stride - 1) // stride)  # the columns stride * i + p < wp
            first = min(max(-((p - pad_left) // stride), 0), count)  # the first with stride * i + p >= left
            last = max(min(-((p - pad_left - width) // stride), count), first)  # ... the first past the input
            row[p * phase: p * phase + first, :] = 0
            row[p * phase + last: p * phase + count, :] = 0
            at = ((b * height + iy) * width + stride * first + p - pad_left) * channels
            to = (line * wp + p * phase + first) * channels
            for _ in range(first, last):
                for c in range(0, blocks, 8):
                    _offsets8(target, to + c, source, at + c, zero)
                for c in range(blocks, channels):
                    target[to + c] = np.int16(source[at + c]) - zero
                at += stride * channels
                to += channels


_RUN_CHUNKS = chunk_driver(_DEPTHWISE)


def _claim(x, w_offsets, bias, line_bias, out, scalars, n_lines, n_chunks, counters, wait):
    # Chunks of output lines shared by the caller and its helpers (``engine.chunk_loop``).
    _RUN_CHUNKS((x, w_offsets, bias, line_bias, out) + scalars, n_lines, n_chunks, counters, wait)


_CLAIM = kernel(_claim)
_TYPES = (types.Array(types.int16, 4, "C", readonly=True), types.Array(types.int16, 3, "C", readonly=True),
          types.Array(types.int64, 1, "C", readonly=True), types.Array(types.int32, 1, "C", readonly=True),
          types.Array(types.uint8, 4, "C"))


@functools.cache
def _entries():
    return (jit.entry(_DEPTHWISE, *_TYPES, *(jit.INT,) * 11),
            jit.entry(_pack_phases, types.Array(types.uint8, 4, "C", readonly=True), types.Array(types.int16, 4, "C"),
                      *(jit.INT,) * 6),
            jit.entry(_CLAIM, *_TYPES, types.UniTuple(jit.INT, 9), jit.INT, jit.INT, types.Array(types.int64, 1, "C"),
                      jit.BOOL))


def prepare_depthwise(w: np.ndarray, bias: np.ndarray | None, out_shape: tuple[int, ...],
                      pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int, activation: int,
                      quant_in: tuple[float, int], quant_w: tuple[float, int] | None,
                      quant_out: tuple[float, int], scales: np.ndarray | None = None) -> Prepared:
    """``run(x, out)`` for a uint8 DEPTHWISE_CONV_2D: ``x`` [N, H, W, C], ``w`` [1, KY, KX, C * multiplier],
    ``out`` [N, OH, OW, C * multiplier]; ``pads`` (left, right, top, bottom), ``strides`` (width, height).
    ``scales``: an int8 filter's scale per output channel (its zero point 0; ``quant_w`` unused)."""
    _, kh, kw, depth_out = w.shape
    if kh * kw > MAX_TAPS:
        raise ValueError(f"a depthwise window of {kh}x{kw} taps can exceed the exact int32 accumulator "
                         f"(at most {MAX_TAPS} taps)")
    w_zero = 0 if scales is not None else quant_w[1]
    w_offsets = (np.asarray(w[0], np.int32) - np.int32(w_zero)).astype(np.int16)  # within +-255
    if multiplier == 1:  # the kernel's runs: each tap's weights per pixel, for as many pixels as a segment holds
        w_offsets = np.ascontiguousarray(np.tile(w_offsets, (1, 1, max(1, min(out_shape[2], SEGMENT // depth_out)))))
    lane_bias = np.zeros(depth_out, np.int64) if bias is None else np.asarray(bias, np.int64).copy()
    if scales is None:
        m, shift = quantized_multiplier(float(quant_in[0]) * float(quant_w[0]) / float(quant_out[0]))
    else:  # each channel's own, beside its bias (below)
        m, shift = 0, 0
    lo, hi = quantized_range(activation, *quant_out)
    n_batch, out_h, out_w, _ = out_shape
    x_max = max(int(quant_in[1]), 255 - int(quant_in[1]))
    bound = kh * kw * x_max * int(np.abs(w_offsets).max(initial=0)) + int(np.abs(lane_bias).max(initial=0))
    narrow = bound <= ACC_LIMIT and 32 <= shift <= 62
    if scales is not None:
        lane_bias = np.concatenate([lane_bias, *channel_multipliers(quant_in, scales, quant_out)])
    line_bias = np.tile(lane_bias, out_w).astype(np.int32) if narrow else np.zeros(0, np.int32)
    scalars = tuple(int(v) for v in (multiplier, strides[1], strides[0], m, shift, quant_out[1], lo, hi, narrow))
    window = ((out_h - 1) * strides[1] + kh, (out_w - 1) * strides[0] + kw)
    phased = strides[0] > 1 and multiplier == 1  # whole-line runs of a strided layer: columns by phase
    if phased:  # room for every phase's columns (the last phase may be a column short)
        window = (window[0], -(-window[1] // strides[0]) * strides[0])
    n_lines = n_batch * out_h
    work = int(np.prod(out_shape)) * kh * kw
    parallel = work >= PARALLEL_WORK and n_lines > 1

    def attach(x: np.ndarray, out: np.ndarray) -> Callable[[], None]:
        # x, out C-ordered (uint8): the packed input and the compiled entries found once.
        serial, phases, claim = _entries()
        shape = (x.shape[0], *window, x.shape[3])
        xp = np.empty(shape, np.int16)
        if phased:
            def pack() -> None:
                phases(x, xp, int(quant_in[1]), pads[0], pads[2], strides[0], 0, 1)
        else:
            pack_x = pack_entry()

            def pack() -> None:
                pack_x(x, xp, int(quant_in[1]), pads[0], pads[2], 0, 1)

        def run() -> None:
            pack()
            helpers = workers.helpers() if parallel else 0
            if not helpers:
                serial(xp, w_offsets, lane_bias, line_bias, out, *scalars, 0, n_lines)
                return
            n_chunks = workers.chunk_count(n_lines, helpers + 1)
            counters = shared_words(2)
            share = workers.Share(counters)
            share.lend(lambda: claim(xp, w_offsets, lane_bias, line_bias, out, scalars, n_lines, n_chunks, counters,
                                     False), helpers)
            share.run(claim, xp, w_offsets, lane_bias, line_bias, out, scalars, n_lines, n_chunks, counters, True)
        return run

    def fill(x: np.ndarray, out: np.ndarray) -> None:
        attach(np.ascontiguousarray(x), out)()

    def native_entry(x: np.ndarray, out: np.ndarray) -> native.Entry:
        xp = np.empty((x.shape[0], *window, x.shape[3]), np.int16)
        task = gang.NativeTask(n_lines, work >= NATIVE_PARALLEL_WORK)
        words, keep = native.pack(*(a.reshape((1,) * (native.RANK - a.ndim) + a.shape)
                                    for a in (x, xp, w_offsets, lane_bias, line_bias, out, task.counters,
                                              shared_words(2))),
                                  *scalars, n_lines, int(quant_in[1]), pads[0], pads[2], int(phased), *task.words())
        return native.Entry(_native_entry(), words, keep + task.finish(_native_helper(), words))
    return Prepared(fill, attach, native_entry)


_X, _XP, _W, _BIAS, _LINE_BIAS, _OUT, _COUNTERS, _PACKED = (native.ARRAY_WORDS * k for k in range(8))
_S = native.ARRAY_WORDS * 8  # the nine scalars of ``_depthwise``, then these:
_LINES, _ZERO, _LEFT, _TOP, _PHASED, _MAILBOX, _TASK, _CHUNKS = range(_S + 9, _S + 17)


@kernel
def _pack_part(block, part, parts):
    """Share ``part`` of ``parts`` of the packing of the layer in ``block`` (by phase for a strided layer of
    multiplier 1)."""
    x = native.c_array(block, _X, np.uint8)[0, 0]
    xp = native.c_array(block, _XP, np.int16)[0, 0]
    if block[_PHASED] != 0:
        _pack_phases(x, xp, block[_ZERO], block[_LEFT], block[_TOP], block[_S + 2], part, parts)
    else:
        pack_offsets_kernel(x, xp, block[_ZERO], block[_LEFT], block[_TOP], part, parts)


@kernel
def _native_lines(code, block, chunks, wait):
    """Every output line of the layer packed in ``block``, its input packed first: serially (``chunks`` 0), or in
    ``chunks`` chunks claimed with the helpers, the packing too, each thread going on to the lines once every
    share of it is done (``wait``: until every claimed line chunk is done)."""
    if chunks == 0:
        _pack_part(block, 0, 1)
    else:
        claim = np.int64(native.c_array(block, _PACKED, np.int64)[0, 0, 0, 0, 0].ctypes.data)
        while True:
            i = fetch_add(claim, 1)
            if i >= chunks:
                break
            _pack_part(block, i, chunks)
            fetch_add(claim + 8, 1)
        task = native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0]
        wait_for_shares(claim, chunks, np.int64(task.ctypes.data))  # or until some thread failed
    arrays = (native.c_array(block, _XP, np.int16)[0, 0], native.c_array(block, _W, np.int16)[0, 0, 0],
              native.c_array(block, _BIAS, np.int64)[0, 0, 0, 0, 0],
              native.c_array(block, _LINE_BIAS, np.int32)[0, 0, 0, 0, 0], native.c_array(block, _OUT, np.uint8)[0, 0])
    scalars = (block[_S], block[_S + 1], block[_S + 2], block[_S + 3], block[_S + 4], block[_S + 5], block[_S + 6],
               block[_S + 7], block[_S + 8])
    if chunks == 0:
        _DEPTHWISE(*arrays, *scalars, 0, block[_LINES])
    else:
        _CLAIM(*arrays, scalars, block[_LINES], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
               wait)


@kernel
def _pack_block(block):
    """Before the layer's task is posted: its packing's share counters reset (the last run's helpers are gone)."""
    packed = native.c_array(block, _PACKED, np.int64)[0, 0, 0, 0, 0]
    packed[0] = 0
    packed[1] = 0


_BODIES = gang.shared_entry(_native_lines, _pack_block, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _native_entry() -> int:
    """The packer, then ``_depthwise`` over every line, both shared with the gang's spinning helpers when the
    layer is large enough (``gang.shared_entry``), else serially."""
    return jit.native(_BODIES[0])


@native.factory
def _native_helper() -> int:
    return jit.native(_BODIES[1])
