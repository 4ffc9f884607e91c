"""Winograd F(2x2, 3x3) for float32 3x3 stride-1 undilated convolutions: 2.25x fewer multiplies than the direct
implicit GEMM (``float_convolution``), whose 3x3 layers already run near this CPU's FMA rate.

Each 2x2 block of output pixels (a tile) reads a 4x4 window of the input (zeros outside it, as the padding)::

    y = A^T [ (G g G^T) . (B^T d B) ] A        per input channel, summed over the input channels

``G g G^T`` (16 matrices ``U[k]`` of ``[Cin, Cout]``) is computed once at bind in float64, rounded once to
float32 and packed as a 1x1 convolution's weights (``pack_conv``); per call, the tiles go in groups (``group_tiles``:
as few as keep ``U`` from streaming more often than the transformed inputs ``V[k] = B^T d B`` ``[group, Cin]``
and products ``M[k]`` are written, one a thread at least):
the input transform, then 16 matrix products ``M[k] = V[k] U[k]`` by the engine's own tile loop
(``float_convolution._conv_tiles`` of a 1x1 layer: the same micro-kernels, no second GEMM), then the output
transform ``A^T M A`` and the direct route's epilogue (bias, residual unless NaN, clamp with NaN made canonical
where the clamp is finite, then ``epilogue_activation``'s function), stored into the output (plain, a channel
slice, or a zero-bordered buffer's interior; a residual plain or bordered).

Summation order, float32 throughout: ``B^T d B`` as rows then columns (``d0 - d2, d1 + d2, d2 - d1, d1 - d3``),
each ``M[k]`` summed over the input channels in order with FMA (the micro-kernel's), ``A^T M A`` as rows then
columns (``m0 + m1 + m2``, ``m1 - m2 - m3``), then ``+ bias``. The transforms' factors are 1 and 1/2 (exact), so
the error against the float64 result is a few float32 roundings of the sum of ``|U| |V|`` terms, which the
transforms make up to about 4x the direct route's sum of ``|w| |x|``: bounded by 2^-20 of the output's largest
magnitude on the layers tested (measured 1-3e-7; docs/nnapi.md's float32 convolution bound of 1e-5 holds).

A layer takes this route or the direct one when it is bound (``chosen``), the same way in every path (bound call
or native entry, one thread or two, a bordered buffer or not), so it gives the same bits whichever runs.
On unless ``OPENVX_NN_WINOGRAD=0``: in one process, in turns, on a quiet machine, the converted ResNet-18 and
U-Net ran faster with it on one thread and not slower on two (docs/benchmarks.md).
"""
from __future__ import annotations

import os

import numpy as np
from numba import types

from ..engine import gang, isa
from ..support import jit, native
from ..support.vector_width import wide_vectors
from . import float_sharing
from .epilogue_activation import NONE, activate_span, clamped_value
from .float_convolution import _VARIANTS, _chunks_of, _conv_tiles, interior, pack_conv, tile_rows, tile_variant
from .float_microkernel import ROW_VECTORS, TILES
from .float_sharing import F32, Rows, at, block_of

ENV = "OPENVX_NN_WINOGRAD"
MIN_CHANNELS = 32
"""Input and output channels a layer needs at least, each (and ``MIN_CHANNEL_SUM`` together). One thread, CPU time,
in turns with the direct route on a loaded Intel Xeon (docs/benchmarks.md), with the transforms vectorized: 3x3
64->64 at 56x56 1.02-1.21x as fast, 128->128 at 28x28 1.03-1.34, 256->256 at 14x14 1.33; on an AMD EPYC (Zen 4),
quiet: DenseNet-121's 128->32 1.31-1.34x at 56x56 and 28x28, 1.17 at 14x14, 32->64 1.23-1.30, 64->48 1.41, 48->48
1.29, 32->128 1.38, but 32->32 0.98 at 56x56 and 0.80 at 14x14."""
MIN_CHANNEL_SUM = 96
"""Input and output channels together a layer needs at least: 32 -> 32 runs no faster (above)."""
MIN_SIDE = 14
"""Output rows and columns a layer needs at least: 7x7 maps of 512 channels stream 16 MB of transformed weights per
call against the direct route's 9.4 (measured 0.91-1.08x, within the noise: left direct)."""
GROUP_BYTES = 4 << 20
"""Bytes of a group's transformed inputs and products together (``V`` and ``M``: 16 x group x (Cin + Cout)
float32) at most, unless the transformed weights ``U`` are larger (``group_tiles``). Every group streams all of
``U``: with groups of 1 MB, ResNet-18's 256->256 layers at 14x14 (``U`` 4 MB) streamed it twice and ran 0.90-0.93
of the direct route alone, in one group 1.16-1.20 (one thread, CPU time, in turns in one process)."""

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_U6 = types.Array(types.float32, 6, "C", readonly=True)


def _hand_over() -> None:
    """Give this route to ``float_convolution``, which chooses it per layer (and cannot import this module,
    which builds on its tiles)."""
    import sys

    from . import float_convolution
    float_convolution.use_winograd(sys.modules[__name__])


def enabled() -> bool:
    """Whether layers may take this route: unless ``OPENVX_NN_WINOGRAD=0`` (the direct route everywhere)."""
    return os.environ.get(ENV, "1").strip() != "0"


def chosen(x_shape: tuple[int, ...], x_border: int, wp: np.ndarray, strides, dilations,
           out_shape: tuple[int, ...]) -> bool:
    """Whether a layer (``float_convolution.bind_conv2d``'s input, packed weights and output interior) takes
    this route: a 3x3 filter, stride and dilation 1, at least ``MIN_CHANNELS`` channels in and out and
    ``MIN_CHANNEL_SUM`` together, ``MIN_SIDE`` output rows and columns, when switched on (``enabled``)."""
    _, kh, inner, vecs, _ = wp.shape
    depth = interior(x_shape, x_border)[3]
    return (enabled() and kh == 3 and inner == 3 * depth and vecs != ROW_VECTORS
            and tuple(int(s) for s in strides) == (1, 1) and tuple(int(d) for d in dilations) == (1, 1)
            and min(depth, out_shape[3]) >= MIN_CHANNELS and depth + out_shape[3] >= MIN_CHANNEL_SUM
            and min(out_shape[1], out_shape[2]) >= MIN_SIDE)


def transformed(wp: np.ndarray, units: int) -> np.ndarray:
    """``U[k] = G g G^T`` of packed 3x3 weights ``wp`` (``pack_conv``'s, ``units`` output channels), computed in
    float64 and rounded once, each packed as a 1x1 layer's weights: ``[16, blocks, 1, Cin, vectors, lanes]``."""
    n_blocks, _, inner, vecs, lanes = wp.shape
    depth = inner // 3
    w = wp.transpose(0, 3, 4, 1, 2).reshape(n_blocks * vecs * lanes, 3, 3, depth)[:units].astype(np.float64)
    u = np.einsum("ay,oyxi,bx->aboi", _G, w, _G, optimize=True).reshape(16, units, 1, 1, depth)
    return np.ascontiguousarray(np.stack([pack_conv(u[k], (vecs, lanes)) for k in range(16)]))


def group_tiles(n_tiles: int, depth: int, units: int, vecs: int, lanes: int, threads: int) -> int:
    """Tiles a group holds: the fewest groups whose ``V`` and ``M`` fit ``GROUP_BYTES`` or, when larger, the
    bytes of ``U`` (each group streams all of ``U``, so ``U`` passes no more often than ``V`` and ``M``), yet one
    group for each of ``threads`` where the tiles allow; rounded up to whole micro-kernel tiles of rows (the
    products' short last tile costs as much as that padding). A tile's sums do not depend on its group (the
    micro-kernel sums each row alone), so the group may follow the thread count with the same bits."""
    per_tile = 16 * 4 * (depth + units)
    budget = max(GROUP_BYTES, 16 * 4 * depth * units)
    rows = TILES[vecs, lanes].rows
    groups = max(1, -(-n_tiles * per_tile // budget), min(threads, -(-n_tiles // rows)))
    per_group = -(-n_tiles // groups)
    return -(-per_group // rows) * rows


@jit.inlined
def _u(i):
    """``i`` (never negative) as an unsigned index: numba checks no unsigned index for wrapping around."""
    return np.uint64(i)


@jit.inlined
def _b_t(src, a0, a1, a2, a3, dst, o0, o1, o2, o3, n):
    """``B^T`` over four runs of ``n`` channels of ``src`` at ``a0..a3`` into ``dst`` at ``o0..o3``: ``a0 - a2,
    a1 + a2, a2 - a1, a1 - a3``. One loop, offsets into flat arrays (no views, whose reference counts cost more
    than the arithmetic), unsigned (``_u``): numba then drops its check for negative indices, which kept LLVM
    from vectorizing the loop (the input transform of 3x3 64->64 at 56x56 took 0.9 ms, unsigned 0.11)."""
    p0, p1, p2, p3, q0, q1, q2, q3 = _u(a0), _u(a1), _u(a2), _u(a3), _u(o0), _u(o1), _u(o2), _u(o3)
    for c in range(_u(n)):
        d0, d1, d2, d3 = src[p0 + c], src[p1 + c], src[p2 + c], src[p3 + c]
        dst[q0 + c] = d0 - d2
        dst[q1 + c] = d1 + d2
        dst[q2 + c] = d2 - d1
        dst[q3 + c] = d1 - d3


@jit.inlined
def _a_t(src, a0, a1, a2, a3, dst, o0, o1, n):
    """``A^T`` over four runs of ``n`` channels: ``(a0 + a1) + a2, (a1 - a2) - a3`` (unsigned, as ``_b_t``)."""
    p0, p1, p2, p3, q0, q1 = _u(a0), _u(a1), _u(a2), _u(a3), _u(o0), _u(o1)
    for c in range(_u(n)):
        m1, m2 = src[p1 + c], src[p2 + c]
        dst[q0 + c] = src[p0 + c] + m1 + m2
        dst[q1 + c] = m1 - m2 - src[p3 + c]


@jit.inlined
def _input_tile(src, base, row_step, d, v, i, group, depth):
    """``V[k][i] = B^T d B`` (``v`` flat ``[16, group, depth]``) of the 4x4 window at ``src[base:]`` (rows
    ``row_step`` apart, pixels ``depth``), rows then columns; ``d`` scratch of ``16 * depth``."""
    for r in range(4):
        at = base + r * row_step
        _b_t(src, at, at + depth, at + 2 * depth, at + 3 * depth, d, 4 * r * depth, (4 * r + 1) * depth,
             (4 * r + 2) * depth, (4 * r + 3) * depth, depth)
    k = group * depth
    for s in range(4):
        _b_t(d, s * depth, (4 + s) * depth, (8 + s) * depth, (12 + s) * depth, v, s * k + i * depth,
             (4 + s) * k + i * depth, (8 + s) * k + i * depth, (12 + s) * k + i * depth, depth)


@jit.inlined
def _output_tile(m, i, group, q, y, units):
    """``y = A^T M A`` (``y`` flat ``[4, units]``: the tile's 2x2 pixels in row order) of tile ``i`` (``m`` flat
    ``[16, group, units]``), rows then columns; ``q`` scratch of ``8 * units``."""
    k = group * units
    for s in range(4):
        _a_t(m, s * k + i * units, (4 + s) * k + i * units, (8 + s) * k + i * units, (12 + s) * k + i * units, q,
             s * units, (4 + s) * units, units)
    for r in range(2):
        _a_t(q, 4 * r * units, (4 * r + 1) * units, (4 * r + 2) * units, (4 * r + 3) * units, y, 2 * r * units,
             (2 * r + 1) * units, units)


@jit.inlined
def _settle(y, y0, bias, res, r0, out, o0, units, lo, hi, adding, clamped):
    """The direct route's epilogue (``float_microkernel``): ``y[y0:] + bias``, the residual ``res[r0:]`` added
    unless NaN, the clamp, a NaN made canonical where the clamp is finite; stored at ``out[o0:]`` (unsigned
    indices, as ``_b_t``)."""
    low, high = np.float32(lo), np.float32(hi)
    y_at, r_at, o_at = _u(y0), _u(r0), _u(o0)
    for c in range(_u(units)):
        value = y[y_at + c] + bias[c]
        if adding and not np.isnan(value):
            value = value + res[r_at + c]
        out[o_at + c] = clamped_value(value, low, high, clamped)


@jit.kernel
def _winograd_units(variant, x, x_border, top, left, u, bias, zeros, res, out, lo, hi, code, alpha, ea, eb,
                    out_border, res_border, first, units, group, panel, gemm_units, g0, g1):
    """Groups ``[g0, g1)`` of ``group`` tiles (2x2 output pixels, in NHWC order) of the layer: ``x`` the input
    (the interior of a zero-bordered buffer of ``x_border`` pixels each side), windows from ``(-top, -left)``;
    ``u`` the transformed weights (``transformed``); ``out`` the output's pixels (channels ``[first, first +
    units)``; a zero-bordered buffer's interior for ``out_border``), ``res`` the residual (empty: none).
    ``variant``: the tile loop of the 16 products (:func:`_products_variant`), a compile-time literal, so that
    this kernel compiles that loop alone."""
    wide_vectors()
    n, full_h, full_w, depth = x.shape
    h, w = full_h - 2 * x_border, full_w - 2 * x_border
    _, o_full_h, o_full_w, pitch = out.shape
    out_h, out_w = o_full_h - 2 * out_border, o_full_w - 2 * out_border
    res_h, res_w = out_h + 2 * res_border, out_w + 2 * res_border
    th, tw = (out_h + 1) // 2, (out_w + 1) // 2
    n_tiles = n * th * tw
    v = np.empty((16, 1, 1, group, depth), np.float32)
    m = np.empty((16, 1, 1, group, units), np.float32)
    y, q, d = np.empty(4 * units, np.float32), np.empty(8 * units, np.float32), np.empty(16 * depth, np.float32)
    vf, mf = native.flat(v), native.flat(m)
    window = np.zeros(16 * depth, np.float32)
    none = np.empty((0, 0, 0, 0), np.float32)
    xf, rf, flat = native.flat(x), native.flat(res), native.flat(out)
    of = native.as_rows(out, pitch)
    adding, clamped = res.size > 0, lo > -np.inf or hi < np.inf
    for g in range(g0, g1):
        t0 = g * group
        for i in range(group):
            t = t0 + i
            if t >= n_tiles:
                v[:, 0, 0, i, :] = 0.0
                continue
            b = t // (th * tw)
            ty = (t - b * th * tw) // tw
            tx = t - b * th * tw - ty * tw
            iy, ix = 2 * ty - top, 2 * tx - left
            if iy >= 0 and ix >= 0 and iy + 4 <= h and ix + 4 <= w:
                _input_tile(xf, ((b * full_h + iy + x_border) * full_w + ix + x_border) * depth, full_w * depth, d,
                            vf, i, group, depth)
                continue
            window[:] = 0.0  # the window's pixels inside the input; zeros for the padding
            for r in range(4):
                if 0 <= iy + r < h:
                    for s in range(4):
                        if 0 <= ix + s < w:
                            at = ((b * full_h + iy + r + x_border) * full_w + ix + s + x_border) * depth
                            window[(4 * r + s) * depth:(4 * r + s + 1) * depth] = xf[at:at + depth]
            _input_tile(window, 0, 4 * depth, d, vf, i, group, depth)
        for k in range(16):  # the engine's tile loop over a 1x1 layer: M[k] = V[k] U[k]
            _conv_tiles(variant, v[k], u[k], zeros, none, m[k], 1, 1, 1, 1, 0, 0, 0, 0, -np.inf, np.inf, panel, NONE,
                        zeros, 1.0, 1.0, 0, 0, 0, units, 0, gemm_units)
        for i in range(min(group, n_tiles - t0)):
            t = t0 + i
            b = t // (th * tw)
            ty = (t - b * th * tw) // tw
            tx = t - b * th * tw - ty * tw
            _output_tile(mf, i, group, q, y, units)
            oy, ox = 2 * ty, 2 * tx
            across = min(2, out_w - ox)
            for r in range(min(2, out_h - oy)):
                for s in range(across):
                    at = ((b * o_full_h + oy + r + out_border) * o_full_w + ox + s + out_border) * pitch + first
                    r_at = ((b * res_h + oy + r + res_border) * res_w + ox + s + res_border) * units
                    _settle(y, (2 * r + s) * units, bias, rf, r_at, flat, at, units, lo, hi, adding, clamped)
                if code != NONE:  # (no border: ``float_convolution._epilogue``)
                    activate_span(of, flat, (b * out_h + oy + r) * out_w + ox, across, first, first + units, code,
                                  alpha, ea, eb)


@jit.kernel
def _units_of(variant, args):
    # ``_winograd_units(variant, *args)``, written out: a call's ``*args`` (a tuple built with ``variant`` in it)
    # and a jitable's typing would both take ``variant``'s literal type away
    a = args
    _winograd_units(variant, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                    a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23])


_run_units = _chunks_of(_units_of)


@jit.kernel
def _winograd_shared(variant, x, x_border, top, left, u, bias, zeros, res, out, lo, hi, code, alpha, ea, eb,
                     out_border, res_border, first, units, group, panel, gemm_units, n_units, n_chunks, counters,
                     wait):
    # the groups in chunks claimed with the helpers (``float_convolution._chunks_of``)
    _run_units(variant, (x, x_border, top, left, u, bias, zeros, res, out, lo, hi, code, alpha, ea, eb, out_border,
                         res_border, first, units, group, panel, gemm_units), n_units, n_chunks, counters, wait)


_TYPES = (F32[4, False], jit.INT, jit.INT, jit.INT, _U6, F32[1, False], F32[1, False], F32[4, False], F32[4, True],
          jit.FLOAT, jit.FLOAT, jit.INT, F32[1, False], jit.FLOAT, jit.FLOAT, jit.INT, jit.INT, jit.INT, jit.INT,
          jit.INT, jit.INT, jit.INT)
_TYPES_OF = tuple((types.literal(v), *_TYPES) for v in range(len(_VARIANTS)))
"""``_winograd_units``' argument types for each tile loop of the products (one constant tuple each)."""


def _products_variant(u: np.ndarray, group: int) -> int:
    """The tile loop (``float_convolution.tile_variant``) of the 16 products of groups of ``group`` tiles: 1x1
    layers of ``group`` pixels on the weights ``u[k]``, no residual."""
    return int(tile_variant(u.shape[4], u.shape[5], u.shape[2], group, False))


def _arguments(x, x_border, wp, pads, bias, res, res_border, target, first, out_shape, out_border, clamp,
               epilogue) -> tuple[tuple, int, int]:
    """(the kernel's arguments but the groups, groups, multiply-adds of the direct route) of :func:`bind`'s layer."""
    n, _, _, depth = interior(x.shape, x_border)
    units = out_shape[3]
    vecs, lanes = wp.shape[3:]
    u = transformed(wp, units)
    n_tiles = n * -(-out_shape[1] // 2) * -(-out_shape[2] // 2)
    group = group_tiles(n_tiles, depth, units, vecs, lanes, isa.threads())
    gemm_units = -(-group // tile_rows(vecs, lanes, group, 1))
    code, alpha, ea, eb = epilogue
    args = (_products_variant(u, group), x, int(x_border), int(pads[2]), int(pads[0]), u, np.ascontiguousarray(bias, np.float32),
            np.zeros(units, np.float32), res, target, float(clamp[0]), float(clamp[1]), int(code), alpha, float(ea),
            float(eb), int(out_border), int(res_border) if res.size else 0, int(first), units, group, u.shape[1],
            gemm_units)
    return args, -(-n_tiles // group), n * out_shape[1] * out_shape[2] * units * 9 * depth


def bind(x: np.ndarray, x_border: int, wp: np.ndarray, pads, bias: np.ndarray, res: np.ndarray, res_border: int,
         target: np.ndarray, first: int, out_shape: tuple[int, ...], out_border: int, clamp: tuple[float, float],
         epilogue: tuple[int, np.ndarray, float, float]) -> Rows:
    """The layer's groups bound once (``float_sharing.Rows``: on this thread or shared with the helpers):
    ``float_convolution.bind_conv2d``'s arrays as it settled them (``x`` C-contiguous float32, bordered by
    ``x_border``; ``target`` the C-contiguous output, its channels ``[first, first + units)`` the layer's)."""
    args, n_groups, work = _arguments(x, x_border, wp, pads, bias, res, res_border, target, first, out_shape,
                                      out_border, clamp, epilogue)
    return Rows(_winograd_units, _winograd_shared, args, _TYPES_OF[args[0]], n_groups, work)


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _U, _BIAS, _ZEROS, _RES, _OUT, _ALPHA, _COUNTERS = (at(k) for k in range(8))
(_XB, _TOP, _LEFT, _LO, _HI, _CODE, _EA, _EB, _OB, _RB, _FIRST, _UNITS, _GROUP, _PANEL, _GEMM, _GROUPS, _MAILBOX,
 _TASK, _CHUNKS) = range(at(8), at(8) + 19)


@jit.kernel
def _lines(code, block, chunks, wait):
    # ``gang.shared_entry``'s lines: every group serially, or the shared chunks
    args = (native.c_array(block, _X, np.float32)[0, 0], block[_XB], block[_TOP], block[_LEFT],
            native.c_array(block, _U, np.float32), native.c_array(block, _BIAS, np.float32)[0, 0, 0, 0, 0],
            native.c_array(block, _ZEROS, np.float32)[0, 0, 0, 0, 0], native.c_array(block, _RES, np.float32)[0, 0],
            native.c_array(block, _OUT, np.float32)[0, 0], native.real(block, _LO), native.real(block, _HI),
            block[_CODE], native.c_array(block, _ALPHA, np.float32)[0, 0, 0, 0, 0], native.real(block, _EA),
            native.real(block, _EB), block[_OB], block[_RB], block[_FIRST], block[_UNITS], block[_GROUP],
            block[_PANEL], block[_GEMM])
    if chunks == 0:
        _units_of(code, args + (0, block[_GROUPS]))
    else:
        _run_units(code, args, block[_GROUPS], chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0],
                   wait)


_BODIES = tuple(gang.shared_entry(_lines, gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS), code=variant)
                for variant in range(len(_VARIANTS)))
"""(entry, helper) bodies for each tile loop of the products (``code``: the loop, a literal in ``_lines``)."""


@native.factory
def _entry(variant: int) -> int:
    """The layer: every group, shared with the gang's spinning helpers when large enough, else serially; its
    products on tile loop ``variant`` alone."""
    return jit.native(_BODIES[variant][0])


@native.factory
def _helper(variant: int) -> int:
    """A helper's part of a shared layer: chunks while any is left."""
    return jit.native(_BODIES[variant][1])


def native_entry(x: np.ndarray, x_border: int, wp: np.ndarray, pads, bias: np.ndarray, res: np.ndarray,
                 res_border: int, target: np.ndarray, first: int, out_shape: tuple[int, ...], out_border: int,
                 clamp: tuple[float, float], epilogue: tuple[int, np.ndarray, float, float]) -> native.Entry:
    """:func:`bind` as a native entry (``float_convolution.native_conv2d``'s arrays, all C-contiguous float32):
    the same groups, so the same bits."""
    args, n_groups, work = _arguments(x, x_border, wp, pads, bias, res, res_border, target, first, out_shape,
                                      out_border, clamp, epilogue)
    (variant, x, x_border, top, left, u, bias, zeros, res, target, lo, hi, code, alpha, ea, eb, out_border, res_border,
     first, units, group, panel, gemm_units) = args
    task = gang.NativeTask(n_groups, work >= float_sharing.NATIVE_PARALLEL_WORK)
    words, keep = block_of(x, u, bias, zeros, res, target, alpha, task.counters, x_border, top, left, lo, hi, code,
                           ea, eb, out_border, res_border, first, units, group, panel, gemm_units, n_groups,
                           *task.words())
    return native.Entry(_entry(variant), words, keep + task.finish(_helper(variant), words))


_hand_over()
