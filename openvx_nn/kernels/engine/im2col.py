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

Steps, all serial numba except the product (OpenBLAS brings its own threads,
whose idle workers spin: numba or helper threads beside them measured no faster):

1. ``window``: the part of the input the outputs read, zero padding
   included, as float64 ``(WP, HP, C, images)`` in Fortran order (a few
   images at a time). Every tap then reads inside it, with no bounds checks.
2. ``cols[j, r]``: tap ``j = mx + KX * (my + KY * c)`` of output row ``r``
   (``ox`` fastest, then ``oy``, then the image): contiguous runs copied out
   of the window.
3. ``res[k, r] = sum_j wm[k, j] * cols[j, r]`` by ``np.dot`` (BLAS dgemm) in
   the operand order ``blas_product`` chooses for the shape.
4. Requantization of ``res`` into the output, through a Fortran-ordered
   ``(OW*OH, K, batch)`` array: the output itself when it has OpenVX's
   natural layout, else a temporary copied into it at the end.

Rows and taps are processed in blocks of at most ``BUDGET`` float64 scratch
elements, so memory stays bounded for any shape; scratch buffers are kept
per thread and reused across calls.
"""
from __future__ import annotations

import functools
import threading

import numba
import numpy as np
from numba import types

from ..support import jit
from ..support.fixed_point import requantize_run
from ..support.jit import kernel
from . import blas_product

# float64 elements of one im2col block (32 MiB); rows per block never drop below ROW_MIN.
BUDGET = 1 << 22
ROW_MIN = 64
# Scratch buffers larger than this are freed after the call instead of kept for the next one.
RETAIN = 1 << 23


def _pad_block(x, xp, g0, lo_x, lo_y):
    width, height, channels = x.shape[0], x.shape[1], x.shape[2]
    n1, n2 = x.shape[3], x.shape[4]
    wp, hp, _, groups = xp.shape
    first = min(max(-lo_x, 0), wp)  # window columns i with 0 <= lo_x + i < width: first .. last - 1
    last = max(min(width - lo_x, wp), first)
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
                column[:first] = 0.0
                for i in range(first, last):
                    column[i] = np.float64(x[lo_x + i, iy, c, b1, b2, b3])
                column[last:] = 0.0


@jit.jitable
def _tap(j, kx, ky, step_x, step_y):
    """Tap ``j = mx + KX * (my + KY * c)`` as (channel ``c``, window offsets ``mx * step_x``, ``my * step_y``)."""
    mx = j % kx
    rest = j // kx
    return rest // ky, mx * step_x, (rest % ky) * step_y


def _im2col_images(xp, cols, j0, image0, n_images, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh):
    # Whole images image0 .. image0 + n_images - 1 of the window. Every loop runs from 0 to a plain bound, with
    # addresses affine in the loop variables: the shape LLVM vectorizes. (A loop starting at a variable, or
    # bounded by a count computed here, compiled to scalar copies, twice as slow: see _im2col.)
    for jj in range(cols.shape[0]):
        c, dx, dy = _tap(j0 + jj, kx, ky, step_x, step_y)
        row = cols[jj]
        for image in range(n_images):
            for oy in range(oh):
                o = (image * oh + oy) * ow
                source = xp[:, oy * stride_y + dy, c, image0 + image]
                if stride_x == 1:
                    for ox in range(ow):
                        row[o + ox] = source[ox + dx]
                else:
                    for ox in range(ow):
                        row[o + ox] = source[ox * stride_x + dx]


def _im2col(xp, cols, j0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh, ox_start, oy_start, image_start,
            head, full, tail):
    # Any block of rows: ``head`` rows finishing the line (oy_start, image_start) from ox_start, then ``full``
    # whole lines, then ``tail`` rows starting one more, all computed by the caller. Used for blocks smaller
    # than an image; its copy loops do not vectorize (bounds and addresses depend on running counters).
    n_taps = cols.shape[0]
    for jj in range(n_taps):
        c, dx, dy = _tap(j0 + jj, kx, ky, step_x, step_y)
        row = cols[jj]
        oy = oy_start
        image = image_start
        done = 0
        if head > 0:
            source = xp[:, oy * stride_y + dy, c, image]
            first = ox_start * stride_x + dx
            for i in range(head):
                row[i] = source[first + i * stride_x]
            done = head
            oy += 1
            if oy == oh:
                oy = 0
                image += 1
        for _ in range(full):
            source = xp[:, oy * stride_y + dy, c, image]
            if stride_x == 1:
                for i in range(ow):
                    row[done + i] = source[dx + i]
            else:
                for i in range(ow):
                    row[done + i] = source[dx + i * stride_x]
            done += ow
            oy += 1
            if oy == oh:
                oy = 0
                image += 1
        if tail > 0:
            source = xp[:, oy * stride_y + dy, c, image]
            for i in range(tail):
                row[done + i] = source[dx + i * stride_x]


def _requantize_rows(res, bias_k, bias_at, out, r0, positions, sum_shift, bias_shift, shift, nearest_even,
                     saturate, lo, hi):
    # res (K, rows) holds exact sums; out is the flat memory of a Fortran-ordered (P, K, batch) array with
    # P = OW * OH positions per image. The bias is bias_k[k] everywhere, or bias_at[p + P * k] per location when
    # bias_at is not empty. Flat, contiguous operands let LLVM vectorize every loop below.
    k_out, n_rows = res.shape
    per_location = bias_at.size > 0
    total = np.empty(min(positions, n_rows), np.int64)
    for k in range(k_out):
        shared = np.int64(bias_k[k]) << bias_shift
        r = r0
        done = 0
        while done < n_rows:  # one segment per image the block touches
            b = r // positions
            p0 = r - b * positions
            n = min(positions - p0, n_rows - done)
            source = res[k, done:done + n]
            target = out[p0 + positions * (k + k_out * b):]
            # res holds exact integers below 2**53 in magnitude: the conversions are exact.
            if per_location:
                at = bias_at[p0 + positions * k:]
                for i in range(n):
                    total[i] = (np.int64(source[i]) << sum_shift) + (np.int64(at[i]) << bias_shift)
            else:
                for i in range(n):
                    total[i] = (np.int64(source[i]) << sum_shift) + shared
            requantize_run(total, n, shift, nearest_even, saturate, lo, hi)
            for i in range(n):
                target[i] = total[i]
            r += n
            done += n


_MATRIX = types.Array(types.float64, 2, "C")
_PAD = kernel(_pad_block)
_IM2COL = kernel(_im2col)
_IM2COL_IMAGES = kernel(_im2col_images)
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


def bias_vectors(bias3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bias_k, bias_at)``: per-channel values and, for a per-location bias, its Fortran-ordered flat copy."""
    k_out = bias3.shape[2]
    if bias3.strides[0] == 0 and bias3.strides[1] == 0:  # shared (K,) or no bias: broadcast views
        return np.ascontiguousarray(bias3[0, 0]), np.empty(0, bias3.dtype)
    return np.zeros(k_out, bias3.dtype), bias3.ravel(order="F")


def blocks(positions: int, images: int, taps: int, k_out: int) -> tuple[int, int]:
    """``(rows per block, taps per block)`` keeping ``cols`` and ``res`` near ``BUDGET`` elements.

    Blocks hold whole images when one fits (their im2col is the fast one), splitting the taps if need be.
    """
    per_image = positions * max(taps, k_out, 1)
    if per_image <= BUDGET:
        row_block, tap_block = positions * min(images, BUDGET // per_image), taps
    elif positions * k_out <= BUDGET:
        row_block, tap_block = positions, max(1, BUDGET // positions)
    else:
        row_block = max(ROW_MIN, BUDGET // max(taps, k_out, 1))
        tap_block = max(1, BUDGET // row_block)
    return min(row_block, positions * images), min(tap_block, taps)


def gemm_correlate(x6, w, bias3, out6, geometry, sum_shift, bias_shift, shift, nearest_even, saturate,
                   lo, hi, wm=None) -> None:
    """Fill the integer ``out6`` through im2col + float64 BLAS; the caller has checked the 2**53 bound.

    ``geometry`` is ``(stride_x, stride_y, step_x, step_y, offset_x, offset_y)``
    as in ``correlation.py``; ``x6`` and ``out6`` are 6-D, ``bias3`` is
    ``(OW, OH, K)`` (broadcast views allowed). ``wm``: the weights already packed by
    ``blas_product.pack_weights`` (a route made at verify), else they are packed or found in the cache.
    """
    stride_x, stride_y, step_x, step_y, offset_x, offset_y = geometry
    kx, ky, channels, k_out = w.shape
    ow, oh = out6.shape[0], out6.shape[1]
    positions = ow * oh
    taps = kx * ky * channels
    batch = out6.shape[3] * out6.shape[4] * out6.shape[5]
    # The requantization writes an (OW*OH, K, batch) Fortran-ordered array: out6 itself when it is laid out so
    # (OpenVX's natural layout), else a temporary copied into out6 at the end.
    direct_out = out6.flags.f_contiguous
    out_flat = (out6 if direct_out else np.empty(out6.shape, out6.dtype, order="F")).ravel(order="F")
    bias_k, bias_at = bias_vectors(bias3)
    # The input window every output of one image reads, copied to float64 with its zero padding.
    wp = (ow - 1) * stride_x + (kx - 1) * step_x + 1
    hp = (oh - 1) * stride_y + (ky - 1) * step_y + 1
    group = max(1, min(batch, BUDGET // (wp * hp * channels)))
    wm = blas_product.packed_weights.get(w) if wm is None else wm
    pad, im2col, finish = _compiled(x6.dtype, bias3.dtype, out6.dtype)
    for g0 in range(0, batch, group):
        n_images = min(group, batch - g0)
        xp = _buffer("window", (wp, hp, channels, n_images), "F")
        pad(x6, xp, g0, offset_x, offset_y)
        rows = positions * n_images
        row_block, tap_block = blocks(positions, n_images, taps, k_out)
        for r0 in range(0, rows, row_block):
            n_rows = min(row_block, rows - r0)
            shape = (k_out, min(tap_block, taps), n_rows)
            channels_major = blas_product.orders.pick(shape)
            res = _result("res", k_out, n_rows, channels_major)
            for j0 in range(0, taps, tap_block):
                n_taps = min(tap_block, taps - j0)
                cols = _buffer("cols", (n_taps, n_rows))
                _fill(im2col, xp, cols, j0, r0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh)
                block = wm[:, j0:j0 + n_taps]
                if j0 == 0:
                    blas_product.timed_multiply(block, cols, res, channels_major, shape)
                else:  # exact: each block's sum is a subset sum, within the same 2**53 bound
                    part = _result("part", k_out, n_rows, channels_major)
                    blas_product.multiply(block, cols, part, channels_major)
                    res += part
            finish[channels_major](res, bias_k, bias_at, out_flat, g0 * positions + r0, positions, sum_shift,
                                   bias_shift, shift, nearest_even, saturate, lo, hi)
    if not direct_out:
        out6[...] = out_flat.reshape(out6.shape, order="F")


def _fill(im2col, xp, cols, j0, r0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh) -> None:
    """``cols`` for taps ``j0 ..`` and rows ``r0 ..``: the whole-image kernel when the rows are whole images."""
    n_rows = cols.shape[1]
    positions = ow * oh
    geometry = (kx, ky, stride_x, stride_y, step_x, step_y)
    if r0 % positions == 0 and n_rows % positions == 0:
        im2col[0](xp, cols, j0, r0 // positions, n_rows // positions, *geometry, ow, oh)
        return
    line, ox_start = divmod(r0, ow)
    image_start, oy_start = divmod(line, oh)
    head = min(n_rows, (ow - ox_start) % ow)
    full, tail = divmod(n_rows - head, ow)
    im2col[1](xp, cols, j0, *geometry, ow, oh, ox_start, oy_start, image_start, head, full, tail)


@functools.cache
def _compiled(x_dtype: np.dtype, bias_dtype: np.dtype, out_dtype: np.dtype):
    """The compiled pad, im2col and requantization (for both result layouts) for these dtypes."""
    x_type = types.Array(numba.from_dtype(x_dtype), 6, "A", readonly=True)
    pad = jit.entry(_PAD, x_type, types.Array(types.float64, 4, "F"), *(jit.INT,) * 3)
    window = types.Array(types.float64, 4, "F", readonly=True)
    im2col = (jit.entry(_IM2COL_IMAGES, window, _MATRIX, *(jit.INT,) * 11),
              jit.entry(_IM2COL, window, _MATRIX, *(jit.INT,) * 15))
    bias_type = types.Array(numba.from_dtype(bias_dtype), 1, "C", readonly=True)
    finish = {channels_major: jit.entry(_REQUANTIZE, _MATRIX.copy(layout="C" if channels_major else "F",
                                                                  readonly=True),
                                        bias_type, bias_type, types.Array(numba.from_dtype(out_dtype), 1, "C"),
                                        *(jit.INT,) * 5, jit.BOOL, jit.BOOL, jit.INT, jit.INT)
              for channels_major in (True, False)}
    return pad, im2col, finish


def _result(role: str, k_out: int, n_rows: int, channels_major: bool) -> np.ndarray:
    """A (K, rows) float64 scratch array: C-ordered, or the transpose of a C-ordered (rows, K) one."""
    return _buffer(role, (k_out, n_rows)) if channels_major else _buffer(role, (n_rows, k_out)).T
