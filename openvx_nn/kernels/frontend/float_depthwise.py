"""Fast float32 DEPTHWISE_CONV_2D on NHWC data: a direct loop vectorized over the channels.

A depthwise layer does a few multiply-adds per value it reads, so it is bound by memory, not by
arithmetic: no im2col, no packing beyond [kh, kw, C * m] (a tap's channels a vector longer where C is a multiple
of ``SPREAD_EVERY``), no padded copy of the input. With a multiplier
of 1 every pixel runs on a micro-kernel, a block of ``CHUNK_VECTORS`` channel vectors and an output row at a
time: windows 3 or 5 taps across (no dilation across; any height and row dilation) at stride 1, and 5 across at
stride 2, slide along the whole row (``depthwise_microkernel.slide``: runs of 8 pixels, each input column read
once for every pixel whose window holds it, the edge columns included through per-column tests, so small maps
keep 8 chains too); other 3x3 windows wholly inside the image on ``float_microkernel.depthwise_3x3`` (the nine
weight vectors in registers; ``SEGMENT`` pixels at a time, every channel vector of them in turn); every other
window -- edges, other sizes, dilation across, the partial vector of channel counts not in vectors of the width --
on ``depthwise_microkernel.run`` (the taps inside the image given as ranges). The vectors are of 16 channels where the CPU has AVX-512 (``isa.float_lanes``), the rest of 8.
Every micro-kernel sums in the order below, so which one takes a pixel changes no bit. Other depth multipliers
add tap by tap into the output.

float32 sums with fused multiply-adds: within docs/nnapi.md's bound of the float64 reference. ``bias_last``
(multiplier 1, whole vectors of channels only): each output sums its taps inside the image from +0.0 in row
order, then adds the bias once, and a NaN under a finite clamp is stored canonical -- the order of the plane
kernel's ``bias_last`` (``chw_depthwise``), so a depthwise layer the OpenVX plan lays out channels-last gives
the bytes it gives on planes (taps outside the image, zeros, change no sum of finite weights).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..engine import gang, isa
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing
from .asymmetric import real_range
from .depthwise_microkernel import depthwise_3x3, run, slide
from .epilogue_activation import NONE, activate_span, checked_epilogue
from .float_microkernel import LANES, WIDE_LANES
from .float_sharing import F32, Rows, at, block_of, contiguous_f32, finish, output_target, staged


@jit.kernel(contract=True)
def _pixel_any(x, w, bias, out, b, y0, x0, oy, ox, multiplier, dil_h, dil_w):
    # Any multiplier: taps outside the image are skipped (they add zero).
    _, height, width, depth = x.shape
    kh, kw = w.shape[0], w.shape[1]
    units = out.shape[3]
    for o in range(units):
        out[b, oy, ox, o] = bias[o]
    for ky in range(kh):
        y = y0 + ky * dil_h
        if y < 0 or y >= height:
            continue
        for kx in range(kw):
            xx = x0 + kx * dil_w
            if xx < 0 or xx >= width:
                continue
            for c in range(depth):
                v = x[b, y, xx, c]
                for q in range(c * multiplier, (c + 1) * multiplier):
                    out[b, oy, ox, q] += v * w[ky, kx, q]


@jit.kernel
def _inside(origin, dilation, extent, taps):
    """(first, end) of the taps ``k`` whose ``origin + k * dilation`` lies in ``[0, extent)``."""
    first = min(taps, max(0, -(origin // dilation)))
    end = max(first, min(taps, (extent - origin + dilation - 1) // dilation))
    return first, end


@jit.kernel
def _depthwise_rows(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last, lo, hi,
                    code, alpha, ea, eb, r0, r1):
    """Output rows ``[r0, r1)`` (row r: image r // out_h, line r % out_h); ``lanes``: the widest vectors to use;
    ``bias_last``: the order of the sums (module doc; the caller checks the layer is on the micro-kernels);
    ``(code, alpha, ea, eb)``: the activation after the clamp, on each row once written (``epilogue_activation``;
    outside :func:`_sums`, whose multiply-adds may contract: the activation's may not)."""
    if code == NONE:
        _sums(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last, lo, hi, r0, r1)
        return
    units, out_w = out.shape[3], out.shape[2]
    of, flat = native.as_rows(out, units), native.flat(out)
    for r in range(r0, r1):
        _sums(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last, lo, hi, r, r + 1)
        activate_span(of, flat, r * out_w, out_w, 0, units, code, alpha, ea, eb)


@jit.kernel
def _row_3x3(o_at, i_at, n, units, depth, x_step, x_row, x_col, w_at, w_tap, bias_at, lanes, bias_last, low, high):
    """``n`` output pixels of a 3x3 window inside the image, on the kernels that hold the nine weight vectors in
    registers (``float_microkernel.depthwise_3x3``): ``SEGMENT`` pixels at a time, every channel vector of them in
    turn, so their input columns are read from memory once for all the channels (a vector-outer order walked the
    whole row once per vector, 512-byte strides apart)."""
    for s in range(0, n, SEGMENT):
        m = min(SEGMENT, n - s)
        o_s, i_s = o_at + s * 4 * units, i_at + s * x_step
        c = 0
        while c < units:
            wide = lanes == WIDE_LANES and c + WIDE_LANES <= units
            depthwise_3x3(wide, bias_last, o_s + 4 * c, i_s + 4 * c, m, 4 * units, x_step, x_row, x_col, w_at + 4 * c,
                          w_tap, bias_at + 4 * c, low, high)
            c += WIDE_LANES if wide else LANES


@jit.kernel(contract=True)
def _sums(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last, lo, hi,
          r0, r1):
    """Output rows ``[r0, r1)`` of the layer with its clamp (:func:`_depthwise_rows`)."""
    _, height, width, depth = x.shape
    kh, kw, w_units = w.shape  # w_units >= units: a tap's channels may be padded (``_spread``)
    _, out_h, out_w, units = out.shape
    low, high = np.float32(lo), np.float32(hi)
    if lanes == WIDE_LANES and (units < WIDE_LANES or units % WIDE_LANES == LANES and units < NARROW_BELOW):
        # Fewer channels than a wide vector, or a half vector left over: whole narrow vectors on the sliding
        # kernels, not one masked wide vector a pixel at a time (MobileNet v1 0.25's 112x112x8 layer: 51 to 18 us,
        # one thread; MediaPipe's 112x112x24, 151 to 85); same bits.
        lanes = LANES
    # The output columns whose window lies inside the image across: one run of the micro-kernel; the others one
    # pixel each with their own column range.
    first = min(out_w, -(-pad_left // stride_w))
    last = max(first, min(out_w, (width - 1 - (kw - 1) * dil_w + pad_left) // stride_w + 1))
    x_at, w_at, bias_at, out_at = x.ctypes.data, w.ctypes.data, bias.ctypes.data, out.ctypes.data
    chunk = CHUNK_VECTORS * lanes
    wide = lanes == WIDE_LANES
    slides = dil_w == 1 and (kw == 5 and stride_w <= 2 or kw == 3 and stride_w == 1)
    vector = not slides and kh == 3 and kw == 3 and dil_h == 1 and dil_w == 1 and units % LANES == 0
    x_step, x_row, x_col = 4 * stride_w * depth, 4 * dil_h * width * depth, 4 * dil_w * depth
    w_row, w_col = 4 * kw * w_units, 4 * w_units
    for r in range(r0, r1):
        b = r // out_h
        oy = r - b * out_h
        y0 = oy * stride_h - pad_top
        if multiplier != 1:
            for ox in range(out_w):
                _pixel_any(x, w, bias, out, b, y0, ox * stride_w - pad_left, oy, ox, multiplier, dil_h, dil_w)
                for c in range(units):
                    v = out[b, oy, ox, c]
                    v = max(v, low)  # NaN stays NaN, as in the reference
                    v = min(v, high)
                    out[b, oy, ox, c] = v
            continue
        ky0, ky1 = _inside(y0, dil_h, height, kh)
        row_at = x_at + 4 * (b * height + y0) * width * depth
        held = vector and ky0 == 0 and ky1 == kh and last > first
        if held:
            _row_3x3(out_at + 4 * (r * out_w + first) * units, row_at + 4 * (first * stride_w - pad_left) * depth,
                     last - first, units, depth, x_step, x_row, x_col, w_at, w_col, bias_at, lanes, bias_last, low, high)
        # The rest a block of channels at a time (its weights stay in L1 across the row): rows 3 or 5 taps
        # across at stride 1 or 2 slide along the whole row (``depthwise_microkernel.slide``), the partial
        # vector and other windows a pixel or the run of inner columns at a time.
        for c0 in range(0, units, chunk):
            units_c = min(chunk, units - c0)
            n_vec, valid = units_c // lanes, units_c % lanes
            if slides and n_vec > 0:
                slide(wide, bias_last, kw == 5, stride_w == 2, out_at + 4 * (r * out_w * units + c0),
                      row_at + 4 * (c0 - pad_left * depth), out_w, 4 * units, 4 * depth, x_row, w_at + 4 * c0, w_row,
                      w_col, bias_at + 4 * c0, ky0, ky1, n_vec, -pad_left, width, low, high)
                if valid == 0:
                    continue
                c0 += n_vec * lanes
                n_vec = 0
            ox = 0
            while ox < out_w:
                x0 = ox * stride_w - pad_left
                n = last - first if ox == first and last > first else 1
                if held and n > 1:
                    ox += n
                    continue
                kx0, kx1 = (0, kw) if n > 1 else _inside(x0, dil_w, width, kw)
                run(wide, bias_last, out_at + 4 * ((r * out_w + ox) * units + c0), row_at + 4 * (x0 * depth + c0),
                    n, 4 * units, x_step, x_row, x_col, w_at + 4 * c0, w_row, w_col, bias_at + 4 * c0, ky0, ky1, kx0,
                    kx1, n_vec, valid, low, high)
                ox += n


_ROW_CHUNKS = chunk_driver(_depthwise_rows)


@jit.kernel
def _depthwise_shared(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last, lo, hi,
                      code, alpha, ea, eb, n_rows, n_chunks, counters, wait):
    """The rows of ``Rows``'s shared call, in chunks claimed with the helpers (``chunk_loop``)."""
    _ROW_CHUNKS((x, w, bias, out, pad_top, pad_left, stride_h, stride_w, dil_h, dil_w, multiplier, lanes, bias_last,
                 lo, hi, code, alpha, ea, eb), n_rows, n_chunks, counters, wait)


NARROW_BELOW = 128
"""Layers of fewer channels than this, a multiple of 8 but not of 16, run on 8-lane vectors alone (``_sums``): the
left-over half vector went a pixel at a time. Zen 4, one thread, 3x3 stride 1: 112x112x24 151 -> 85 us, 28x28x88
29 -> 24, 56x56x72 80 -> 76, 28x28x120 (5x5) 55 -> 54; 14x14x200 13 -> 14, so larger layers keep the wide ones."""
SEGMENT = 8
"""Output pixels of a 3x3 run that every channel vector takes in turn (:func:`_row_3x3`)."""
CHUNK_VECTORS = 8
"""Channel vectors the micro-kernel's calls take at a time outside the 3x3 runs (module doc)."""
COST_PER_MAC = 4
"""A depthwise multiply-add's time in a convolution's (``Rows`` weighs work in the latter): measured 0.10-0.18 ns
against 0.03-0.04 ns for 1x1 layers of the same size, one thread; so MobileNet v1 0.25's 112x112, 56x56 and
28x28 depthwise layers (0.9 million multiply-adds, 50-110 us) are shared with the helpers."""
_DEPTHWISE_TYPES = (F32[4, False], F32[3, False], F32[1, False], F32[4, True], *(jit.INT,) * 9, jit.FLOAT, jit.FLOAT,
                    jit.INT, F32[1, False], jit.FLOAT, jit.FLOAT)


def _lanes(lanes: int | None) -> int:
    """The widest vectors a layer uses: ``lanes`` (8 or 16), else the CPU's."""
    if lanes is None:
        return isa.float_lanes()
    if lanes not in (LANES, WIDE_LANES):
        raise ValueError(f"lanes is {lanes}, expected {LANES} or {WIDE_LANES}")
    return int(lanes)


def _dilations(dilations: tuple[int, int]) -> tuple[int, int]:
    """(height, width) dilation from ``dilations`` (width, height), each at least 1."""
    dw, dh = (int(d) for d in dilations)
    if min(dw, dh) < 1:
        raise ValueError(f"dilations {tuple(dilations)} must be at least 1")
    return dh, dw


def pack_depthwise(w: np.ndarray) -> np.ndarray:
    """DEPTHWISE_CONV_2D weights [1, kh, kw, C * m] as the kernel reads them: [kh, kw, C * m] float32."""
    return np.ascontiguousarray(w[0], np.float32)


SPREAD_EVERY = 128
"""Channel counts that are multiples of this have their taps' weights ``WIDE_LANES`` channels apart more
(:func:`_spread`)."""


def _spread(wp: np.ndarray, multiplier: int) -> np.ndarray:
    """``wp`` [kh, kw, C] with each tap's C channels followed by a vector of unused ones when C is a multiple of
    ``SPREAD_EVERY``: taps a power of two of bytes apart fall in the same L1 sets (7x7x1024's nine taps 4 KiB
    apart, one set of eight ways), and a row's vectors evicted each other's weights."""
    kh, kw, units = wp.shape
    if multiplier != 1 or units % SPREAD_EVERY:
        return wp
    spread = np.zeros((kh, kw, units + WIDE_LANES), np.float32)
    spread[:, :, :units] = wp
    return spread


def _range(activation: int, clamp: tuple[float, float] | None, bias_last: bool, units: int,
           multiplier: int) -> tuple[float, float]:
    """(low, high) of the fused activation, or ``clamp`` when given; checks that ``bias_last`` is on the
    micro-kernels (module doc)."""
    if bias_last and (multiplier != 1 or units % LANES):
        raise ValueError(f"bias_last takes a multiplier of 1 and whole vectors of {LANES} channels")
    return real_range(activation) if clamp is None else (float(clamp[0]), float(clamp[1]))


def bias_last_fits(units: int, multiplier: int) -> bool:
    """Whether a layer of ``units`` output channels can sum in the ``bias_last`` order (module doc)."""
    return multiplier == 1 and units % LANES == 0 and units > 0


def bind_depthwise_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                          pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int,
                          activation: int, lanes: int | None = None, clamp: tuple[float, float] | None = None,
                          bias_last: bool = False, epilogue: tuple | None = None,
                          dilations: tuple[int, int] = (1, 1)) -> Callable[[], None]:
    """A no-argument call computing ``out[b,y,x,k*m+q] = act(bias + sum x[b, .., .., k] * w[0, i, j, k*m+q])``
    from the arrays' current values, with ``wp = pack_depthwise(w)``; ``pads`` (left, right, top, bottom),
    ``strides`` (width, height), as ``nhwc_convolution.depthwise_conv2d``; ``lanes``: the widest vectors (default
    ``isa.float_lanes()``); ``clamp``: (low, high) instead of ``activation``'s; ``bias_last``: the order of the
    sums (module doc); ``epilogue``: the activation after the clamp (``epilogue_activation.epilogue_of``'s);
    ``dilations``: (width, height), the taps that far apart."""
    lo, hi = _range(activation, clamp, bias_last, wp.shape[2], multiplier)
    target = output_target(out)
    xs, copy = staged(x)
    code, alpha, ea, eb = checked_epilogue(epilogue, out.shape[-1])
    args = (xs, _spread(wp, multiplier), np.ascontiguousarray(bias, np.float32), target, int(pads[2]), int(pads[0]), int(strides[1]),
            int(strides[0]), *_dilations(dilations), int(multiplier), _lanes(lanes), int(bool(bias_last)), float(lo), float(hi), code, alpha,
            ea, eb)
    rows = Rows(_depthwise_rows, _depthwise_shared, args, _DEPTHWISE_TYPES, out.shape[0] * out.shape[1],
                out.size * wp.shape[0] * wp.shape[1] * COST_PER_MAC)
    return finish(rows, [copy], target, out)


def depthwise_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                     pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int,
                     activation: int, lanes: int | None = None) -> None:
    """``bind_depthwise_conv2d(...)()``: one call."""
    bind_depthwise_conv2d(x, wp, bias, out, pads, strides, multiplier, activation, lanes)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _W, _BIAS, _OUT, _COUNTERS, _ALPHA = (at(k) for k in range(6))
(_TOP, _LEFT, _SH, _SW, _DH, _DW, _MULTIPLIER, _LANES, _LAST, _LO, _HI, _CODE, _EA, _EB, _ROWS, _MAILBOX, _TASK,
 _CHUNKS) = range(at(6), at(6) + 18)


@jit.kernel
def _depthwise_block(code, block, chunks, wait):
    """Every output row of the layer packed in ``block``: serially (``chunks`` 0), or in ``chunks`` chunks
    claimed with the helpers (``wait``: until every claimed one is done)."""
    args = (native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _W, np.float32)[0, 0, 0],
            native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0], native.c_array(block, _OUT, np.float32)[0, 0],
            block[_TOP], block[_LEFT], block[_SH], block[_SW], block[_DH], block[_DW], block[_MULTIPLIER], block[_LANES],
            block[_LAST], native.real(block, _LO), native.real(block, _HI), block[_CODE],
            native.c_array(block, _ALPHA, np.float32)[0, 0, 0, 0, 0], native.real(block, _EA), native.real(block, _EB))
    if chunks == 0:
        _depthwise_rows(*args, 0, block[_ROWS])
    else:
        _depthwise_shared(*args, block[_ROWS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
                          wait)


_BODIES = gang.shared_entry(_depthwise_block, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _depthwise_entry() -> int:
    """Every output row, shared with the gang's spinning helpers when the layer is large enough, else serially."""
    return jit.native(_BODIES[0])


@native.factory
def _depthwise_helper() -> int:
    return jit.native(_BODIES[1])


def native_depthwise_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                            pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int,
                            activation: int, lanes: int | None = None, clamp: tuple[float, float] | None = None,
                            bias_last: bool = False, epilogue: tuple | None = None,
                            dilations: tuple[int, int] = (1, 1)) -> native.Entry | None:
    """:func:`bind_depthwise_conv2d` as a native entry (the same rows; shared with helper threads as the bound
    call shares them); None when ``x`` or ``out`` is not C-contiguous float32 or they overlap."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0 or np.may_share_memory(x, out):
        return None
    lo, hi = _range(activation, clamp, bias_last, wp.shape[2], multiplier)
    code, alpha, ea, eb = checked_epilogue(epilogue, out.shape[-1])
    n_rows = out.shape[0] * out.shape[1]
    task = gang.NativeTask(n_rows, out.size * wp.shape[0] * wp.shape[1] * COST_PER_MAC >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(x, _spread(wp, multiplier), np.ascontiguousarray(bias, np.float32), out, task.counters, alpha, int(pads[2]),
                           int(pads[0]), int(strides[1]), int(strides[0]), *_dilations(dilations), int(multiplier), _lanes(lanes),
                           int(bool(bias_last)), float(lo), float(hi), code, float(ea), float(eb), n_rows,
                           *task.words())
    return native.Entry(_depthwise_entry(), words, keep + task.finish(_depthwise_helper(), words))
