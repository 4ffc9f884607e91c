"""The GEMM route of the correlation engine: im2col into float64, one BLAS product, exact requantization.

Why float64 BLAS is exact here. Every operand is an integer of at most 16
bits, so every product is an integer with ``|p| <= Mx * Mw`` (``2**30`` for
int16). The caller (``correlation.py``) takes this route only when
``taps * Mx * Mw <= 2**53``, where ``taps = KX * KY * C`` is the number of
products in one output. Then every partial sum a BLAS may form, in whatever
order, blocking or with FMA, is a sum of a subset of those products: an
integer of magnitude at most ``2**53``, which float64 represents exactly. No
addition ever rounds, so the float64 result is the exact integer sum. The
same holds when the tap range is split into blocks whose results are added
afterwards (each block's sum is again such a subset sum).

Layout. For output rows ``r`` (output positions ``ox`` fastest, then ``oy``,
then the flattened batch) and taps ``j = mx + KX * (my + KY * c)``::

    cols[j, r]  = x at the position tap j of output r reads, 0.0 outside the input
    wm[k, j]    = w[mx, my, c, k]
    res[k, r]   = sum_j wm[k, j] * cols[j, r]           (np.dot: BLAS dgemm)

``res`` is C-ordered ``(K, rows)``: for an output in OpenVX's natural layout
(dim 0 fastest) the requantization walks both in memory order, and ``wm`` is
the weight tensor's own memory order. Rows and taps are processed in blocks
of at most ``BUDGET`` float64 scratch elements, so memory stays bounded for
any shape; scratch buffers are kept per thread and reused across calls.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import types

from . import jit
from .fixed_point import requantize
from .jit import kernel

# float64 elements of one im2col block (32 MiB); rows per block never drop below ROW_MIN.
BUDGET = 1 << 22
ROW_MIN = 64
# Scratch buffers larger than this are freed after the call instead of kept for the next one.
RETAIN = 1 << 23


def _pad_block(x, xp, g0, lo_x, lo_y):
    width, height, channels = x.shape[0], x.shape[1], x.shape[2]
    n1, n2 = x.shape[3], x.shape[4]
    wp, hp, _, groups = xp.shape
    for g in range(groups):
        b = g0 + g
        b1 = b % n1
        b2 = (b // n1) % n2
        b3 = b // (n1 * n2)
        for c in range(channels):
            for j in range(hp):
                iy = lo_y + j
                column = xp[:, j, c, g]
                if iy < 0 or iy >= height:
                    column[:] = 0.0
                    continue
                for i in range(wp):
                    ix = lo_x + i
                    column[i] = np.float64(x[ix, iy, c, b1, b2, b3]) if 0 <= ix < width else 0.0


def _im2col(xp, cols, j0, r0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh):
    n_taps, n_rows = cols.shape
    for jj in range(n_taps):
        j = j0 + jj
        mx = j % kx
        rest = j // kx
        my = rest % ky
        c = rest // ky
        row = cols[jj]
        r = r0
        done = 0
        while done < n_rows:  # one segment per output line (oy, batch) the block touches
            line = r // ow
            ox0 = r - line * ow
            n = min(ow - ox0, n_rows - done)
            oy = line % oh
            source = xp[:, oy * stride_y + my * step_y, c, line // oh]
            first = ox0 * stride_x + mx * step_x
            if stride_x == 1:
                for i in range(n):
                    row[done + i] = source[first + i]
            else:
                for i in range(n):
                    row[done + i] = source[first + i * stride_x]
            r += n
            done += n


def _requantize_rows(res, bias, out, r0, sum_shift, bias_shift, shift, nearest_even, saturate, lo, hi):
    k_out, n_rows = res.shape
    ow, oh = out.shape[0], out.shape[1]
    n1, n2 = out.shape[3], out.shape[4]
    span = hi - lo + 1
    # Rounding right shifts of v, |v| < 2**62, by 0 < shift < 62: adding 2**(shift-1) - 1 plus the bit that
    # lands in the last kept place rounds half to even; adding 2**shift - 1 to negatives rounds toward zero.
    # Exact: the additions stay below 2**63. Other shifts go through fixed_point.requantize.
    fast = 0 < shift < 62
    half = (np.int64(1) << (shift - 1)) - 1 if fast else np.int64(0)
    mask = (np.int64(1) << shift) - 1 if fast else np.int64(0)
    total = np.empty(ow, np.int64)
    for k in range(k_out):
        r = r0
        done = 0
        while done < n_rows:
            line = r // ow
            ox0 = r - line * ow
            n = min(ow - ox0, n_rows - done)
            oy = line % oh
            b = line // oh
            b1 = b % n1
            b2 = (b // n1) % n2
            b3 = b // (n1 * n2)
            # res holds exact integers below 2**53 in magnitude: the conversions are exact.
            for i in range(n):
                total[i] = (np.int64(res[k, done + i]) << sum_shift) + (np.int64(bias[ox0 + i, oy, k]) << bias_shift)
            if not fast:
                for i in range(n):
                    out[ox0 + i, oy, k, b1, b2, b3] = requantize(total[i], shift, nearest_even, saturate, lo, hi)
            else:
                if nearest_even:
                    for i in range(n):
                        v = total[i]
                        total[i] = (v + half + ((v >> shift) & 1)) >> shift
                else:
                    for i in range(n):
                        v = total[i]
                        total[i] = (v + ((v >> 63) & mask)) >> shift
                if saturate:
                    for i in range(n):
                        out[ox0 + i, oy, k, b1, b2, b3] = min(max(total[i], lo), hi)
                else:
                    for i in range(n):
                        u = total[i] & (span - 1)
                        out[ox0 + i, oy, k, b1, b2, b3] = u - span if u > hi else u
            r += n
            done += n


_PAD = kernel(_pad_block)
_IM2COL = kernel(_im2col)
_REQUANTIZE = kernel(_requantize_rows)

_scratch = threading.local()


def _buffer(role: str, shape: tuple[int, ...], order: str = "C") -> np.ndarray:
    """A float64 scratch array of ``shape`` in ``order``, reused by this thread across calls."""
    size = int(np.prod(shape))
    kept = getattr(_scratch, role, None)
    if kept is None or kept.size < size:
        kept = np.empty(size, np.float64)
        setattr(_scratch, role, kept if size <= RETAIN else None)
    return kept[:size].reshape(shape, order=order)


def pack_weights(w: np.ndarray) -> np.ndarray:
    """``wm[k, j] = w[mx, my, c, k]`` as a C-ordered float64 ``(K, KX*KY*C)`` matrix."""
    kx, ky, channels, k_out = w.shape
    wm = np.empty((k_out, kx * ky * channels), np.float64)
    wm.reshape(k_out, channels, ky, kx)[...] = w.transpose(3, 2, 1, 0)
    return wm


def blocks(rows: int, taps: int, k_out: int) -> tuple[int, int]:
    """``(rows per block, taps per block)`` keeping ``cols`` and ``res`` near ``BUDGET`` elements."""
    row_block = min(rows, max(ROW_MIN, BUDGET // max(taps, k_out, 1)))
    return row_block, min(taps, max(1, BUDGET // row_block))


def gemm_correlate(x6, w, bias3, out6, geometry, sum_shift, bias_shift, shift, nearest_even, saturate,
                   lo, hi) -> None:
    """Fill the integer ``out6`` through im2col + float64 BLAS; the caller has checked the 2**53 bound.

    ``geometry`` is ``(stride_x, stride_y, step_x, step_y, offset_x, offset_y)``
    as in ``correlation.py``; ``x6`` and ``out6`` are 6-D, ``bias3`` is
    ``(OW, OH, K)`` (broadcast views allowed).
    """
    stride_x, stride_y, step_x, step_y, offset_x, offset_y = geometry
    kx, ky, channels, k_out = w.shape
    ow, oh = out6.shape[0], out6.shape[1]
    taps = kx * ky * channels
    batch = out6.shape[3] * out6.shape[4] * out6.shape[5]
    # The input window every output of one image reads, copied to float64 with its zero padding.
    wp = (ow - 1) * stride_x + (kx - 1) * step_x + 1
    hp = (oh - 1) * stride_y + (ky - 1) * step_y + 1
    group = max(1, min(batch, BUDGET // (wp * hp * channels)))
    wm = pack_weights(w)
    matrix = types.Array(types.float64, 2, "C")
    pad = jit.entry(_PAD, jit.array_in(x6), types.Array(types.float64, 4, "F"), *(jit.INT,) * 3)
    im2col = jit.entry(_IM2COL, types.Array(types.float64, 4, "F", readonly=True), matrix, *(jit.INT,) * 10)
    finish = jit.entry(_REQUANTIZE, matrix.copy(readonly=True), jit.array_in(bias3), jit.array_out(out6),
                       *(jit.INT,) * 4, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    for g0 in range(0, batch, group):
        n_images = min(group, batch - g0)
        xp = _buffer("window", (wp, hp, channels, n_images), "F")
        pad(x6, xp, g0, offset_x, offset_y)
        rows = ow * oh * n_images
        row_block, tap_block = blocks(rows, taps, k_out)
        for r0 in range(0, rows, row_block):
            n_rows = min(row_block, rows - r0)
            res = _buffer("res", (k_out, n_rows))
            for j0 in range(0, taps, tap_block):
                n_taps = min(tap_block, taps - j0)
                cols = _buffer("cols", (n_taps, n_rows))
                im2col(xp, cols, j0, r0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh)
                if j0 == 0:
                    np.dot(wm[:, :n_taps], cols, out=res)
                else:  # exact: each block's sum is a subset sum, within the same 2**53 bound
                    part = _buffer("part", (k_out, n_rows))
                    np.dot(wm[:, j0:j0 + n_taps], cols, out=part)
                    res += part
            finish(res, bias3, out6, g0 * ow * oh + r0, sum_shift, bias_shift, shift, nearest_even, saturate,
                   lo, hi)
