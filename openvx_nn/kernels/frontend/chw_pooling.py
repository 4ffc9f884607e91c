"""Float32 max and average pooling on channel-major planes, any window, stride and padding: the one pooling
kernel of CoreML's max pool and of the OpenVX pooling layer on float32 (``openvx/pooling.py``), on planes
(:func:`pool_planes`) or on the channels-last tensors the plan lays out (:func:`pool_pixels`: the same runs,
the same bytes).

Windows. Output ``(oy, ox)`` covers input rows ``oy * sy - top ..`` and columns ``ox * sx - left ..`` (``kh`` x
``kw``); positions off the input are left out; a window with no input position gives ``empty`` (CoreML: the
lowest float32, what its padding would give; OpenVX: 0.0).

Passes. Per group of planes, two passes along contiguous memory (``window_runs``): down the window's rows for
every input column of every output row (one call for the rows whose windows lie inside the plane, one per edge
row), into rows bordered left and right by the reduction's identity (+0.0 for the sum, -inf for the maximum:
neither changes a result, so a window the padding cuts reads the border as if it were not there), then across
the window's columns for every output row of the group at once (stride 2 reads every other value in vector
lanes, larger strides read the rows split by column phase).

Float16. Either side may be binary16 bits (uint16 planes): the first pass widens the input as it loads it,
the second narrows each output once as it stores it (``window_runs``' binary16 forms), so a binary16 pool is the
float32 pool of the widened values rounded once, bit for bit, without a float32 copy of either tensor. A maximum
binary16 on both sides converts nothing: both passes compare the bits as integer keys (``window_runs``' ``_hk``
and ``_kh`` forms, the same picks), the rows between them keys too.

Max. Values compare as ``window_max.larger`` defines (IEEE ``maximum``: NaN wins, +0.0 over -0.0), so the
result is the window's exact maximum whatever the order of visits.

Average. Divided by the whole window ``kh * kw`` (OpenVX counts the padding as zeros). The sum is float32, of the
values times ``2**-k``, the smallest power of two with ``2**k >= kh * kw`` (exact for every normal float, and no
partial sum can overflow: the mean of finite values is finite): each window column's values top to bottom from
+0.0, then those column sums left to right from +0.0, then divided by ``float32(kh * kw * 2**-k)``. Each output
is within ``(kh + kw) * 2**-24`` of its window's sum of magnitudes over ``kh * kw`` (the layers promise 1e-5 of
it), plus ``kh * kw * 2**-148`` where subnormal values lose bits in the scaling.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..support import jit
from ..support.binary16 import narrow_bits
from ..support.bit_casts import bits_of_float
from .window_runs import (
    max_runs,
    max_runs_2,
    max_runs_2fh,
    max_runs_2kh,
    max_runs_fh,
    max_runs_hf,
    max_runs_hk,
    max_runs_kh,
    sum_runs,
    sum_runs_2,
    sum_runs_2fh,
    sum_runs_fh,
    sum_runs_hf,
)

LOWEST = np.float32(np.finfo(np.float32).min)


@jit.kernel
def window_span(start, stride, size, extent, n_out):
    """``[lo, hi)``: the outputs ``o < n_out`` whose window ``o * stride + start .. + size - 1`` lies wholly inside
    ``[0, extent)`` (``hi >= lo``)."""
    lo = min(n_out, max(0, (stride - 1 - start) // stride))
    hi = min(n_out, (extent - size - start) // stride + 1) if extent - size - start >= 0 else 0
    return lo, max(lo, hi)


@jit.kernel
def _down(maximum, half_in, keys, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride, scale):
    """The first pass's ``window_runs`` call (stride 1, float32 out; ``keys``: a maximum of binary16 into binary16):
    max, or sum of the values times ``scale``; binary16 runs (``half_in``) or float32."""
    args = (out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)
    one = np.float32(1.0)
    if keys:
        max_runs_hk(*args)
    elif half_in:
        if maximum:
            max_runs_hf(*args)
        else:
            sum_runs_hf(*args, scale, one)
    elif maximum:
        max_runs(*args)
    else:
        sum_runs(*args, scale, one)


@jit.kernel
def _across(maximum, stride, half_out, keys, out, base, offsets, n_taps, n, n_rows, out_stride, base_stride,
            divisor):
    """The second pass's ``window_runs`` call (float32 runs, stride 1 or 2; ``keys``: a maximum of binary16 into
    binary16): max, or sum divided by ``divisor``; binary16 outputs (``half_out``) or float32."""
    args = (out, base, offsets, n_taps, n, n_rows, out_stride, base_stride)
    one = np.float32(1.0)
    if keys:
        if stride == 2:
            max_runs_2kh(*args)
        else:
            max_runs_kh(*args)
    elif half_out:
        if maximum:
            if stride == 2:
                max_runs_2fh(*args)
            else:
                max_runs_fh(*args)
        elif stride == 2:
            sum_runs_2fh(*args, one, divisor)
        else:
            sum_runs_fh(*args, one, divisor)
    elif maximum:
        if stride == 2:
            max_runs_2(*args)
        else:
            max_runs(*args)
    elif stride == 2:
        sum_runs_2(*args, one, divisor)
    else:
        sum_runs(*args, one, divisor)


GROUP_VALUES = 8192
"""Planes are pooled in groups whose window-row reductions fill about this many float32 (32 KiB: they stay in
the first-level cache between the two passes); a plane of one output row (a global pool) is one row of a group,
so 512 planes of ResNet's 7x7 head take two calls, not a thousand."""


@jit.kernel
def pool_planes(x, out, average, kh, kw, sy, sx, top, left, empty, p0, p1):
    """Planes ``[p0, p1)`` of ``out[p]`` = the window maxima (``average``: means) of ``x[p]`` (module doc),
    C-contiguous ``[P, H, W]`` float32, or binary16 bits (uint16) on either side: widened as read, each output
    narrowed once as written; a window with no input position gives ``empty``. Planes are independent: threads
    may share them."""
    half_in, half_out = x.itemsize == 2, out.itemsize == 2  # constants of each compiled form
    ex, eo = x.itemsize, out.itemsize
    height, width = x.shape[1], x.shape[2]
    out_h, out_w = out.shape[1], out.shape[2]
    maximum = not average
    keys = maximum and half_in and half_out  # the rows between the passes keys (module doc)
    ec = 2 if keys else 4  # bytes of a value of those rows (a row keeps its float32 length: rows at 4 * span)
    c0 = min(out_w, max(0, (left - kw + sx) // sx))  # outputs whose windows meet the row: [c0, c1)
    c1 = max(c0, min(out_w, (width - 1 + left) // sx + 1))
    r0 = min(out_h, max(0, (top - kh + sy) // sy))  # output rows whose windows meet the plane: [r0, r1)
    r1 = max(r0, min(out_h, (height - 1 + top) // sy + 1))
    oa, ob = window_span(-top, sy, kh, height, out_h)  # of those, the ones whose windows lie inside the plane
    # The first pass writes each output row's reductions at [left, left + width) of a row bordered by what leaves
    # a reduction as it is (+0.0 for a sum from +0.0, -inf for a maximum): every window meeting the row then lies
    # inside the bordered row, and the second pass reads it whole.
    span = max(width + left, (c1 - 1) * sx + kw) if c1 > c0 else width + left
    split = sx > 2  # read by column phase: phase s * n_ph + j = bordered column j * sx + s
    n_ph = (span + sx - 1) // sx
    line = min(sx, span) * n_ph if split else span
    group = max(1, min(p1 - p0, GROUP_VALUES // max(1, out_h * line)))
    column = np.empty((group * out_h, span), np.float32)
    phases = np.empty((group * out_h if split else 1, line), np.float32)
    border = np.float32(0.0) if average else np.float32(-np.inf)
    halves = column.view(np.uint16)
    for r in range(group * out_h):
        for i in range(left):
            column[r, i] = border
        for i in range(left + width, span):
            column[r, i] = border
        if keys:
            for i in range(left):
                halves[r, i] = 0x83FF  # the key of -inf
            for i in range(left + width, span):
                halves[r, i] = 0x83FF
    rows, taps = np.empty(kh, np.int64), np.empty(kw, np.int64)
    for k in range(kh):
        rows[k] = ex * k * width
    for k in range(kw):
        taps[k] = ec * ((k % sx) * n_ph + k // sx if split else k)
    edges = c0 > 0 or c1 < out_w or r0 > 0 or r1 < out_h  # windows wholly off the plane
    fill = np.float32(0.0) if average else empty
    fill_bits = narrow_bits(bits_of_float(fill))
    # average: the values times 2**-k (exact for normal floats) with 2**k >= kh * kw, so no sum overflows, and the
    # sum divided by kh * kw * 2**-k (in (0.5, 1]) at the end
    area = kh * kw
    k = 0
    while (1 << k) < area:
        k += 1
    scale, divisor = np.float32(2.0 ** -k), np.float32(area * 2.0 ** -k)
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    col_at, ph_at = np.int64(column.ctypes.data) + ec * left, np.int64(phases.ctypes.data)
    rows_at, taps_at = np.int64(rows.ctypes.data), np.int64(taps.ctypes.data)
    src_at, src_stride = (ph_at + ec * c0, 4 * line) if split else (col_at - ec * left + ec * c0 * sx, 4 * span)
    plane_size = height * width
    for g0 in range(p0, p1, group):
        n = min(p1, g0 + group) - g0
        if out_h == 1 and oa == 0 and ob == 1:  # one output row a plane, inside it: every plane's in one call
            _down(maximum, half_in, keys, col_at, x_at + ex * g0 * plane_size, rows_at, kh, width, n, 4 * span,
                  ex * plane_size, scale)
        else:
            if ob > oa:
                for q in range(n):
                    _down(maximum, half_in, keys, col_at + 4 * (q * out_h + oa) * span,
                          x_at + ex * ((g0 + q) * plane_size + (oa * sy - top) * width), rows_at, kh, width, ob - oa,
                          4 * span, ex * sy * width, scale)
            for oy in range(r0, r1):  # an edge row: the same output row of every plane in the group in one call
                if oa <= oy < ob:
                    continue
                y0 = oy * sy - top
                ya, yb = max(y0, 0), min(y0 + kh, height)
                _down(maximum, half_in, keys, col_at + 4 * oy * span, x_at + ex * (g0 * plane_size + ya * width),
                      rows_at,
                      yb - ya, width, n, 4 * out_h * span, ex * plane_size, scale)
        if split and keys:
            phase_halves = phases.view(np.uint16)
            for r in range(n * out_h):
                for s in range(min(sx, span)):
                    for j in range((span - s + sx - 1) // sx):
                        phase_halves[r, s * n_ph + j] = halves[r, j * sx + s]
        elif split:
            for r in range(n * out_h):
                for s in range(min(sx, span)):
                    for j in range((span - s + sx - 1) // sx):
                        phases[r, s * n_ph + j] = column[r, j * sx + s]
        if c1 > c0:
            _across(maximum, 1 if split else sx, half_out, keys, out_at + eo * (g0 * out_h * out_w + c0), src_at, taps_at,
                    kw, c1 - c0, n * out_h, eo * out_w, src_stride, divisor)
        if edges:
            for q in range(n):
                p = g0 + q
                for oy in range(out_h):
                    whole = not r0 <= oy < r1
                    for ox in range(out_w):
                        if whole or not c0 <= ox < c1:
                            if half_out:
                                out[p, oy, ox] = fill_bits
                            else:
                                out[p, oy, ox] = fill


@jit.kernel
def pool_pixels(x, out, average, kh, kw, sy, sx, top, left, empty, r0, r1):
    """Output rows ``[r0, r1)`` (row ``n * OH + oy``) of ``out[n, oy, ox, c]`` = the window maxima (``average``:
    means) of ``x[n, :, :, c]``, C-contiguous channels-last ``[N, H, W, C]`` float32: :func:`pool_planes`'
    arithmetic on pixels. An image row is one run of ``W * C`` values, so the first pass is the same call down the
    window's rows; the second reduces the same bordered row's window columns, ``C`` values a window, the taps in
    the same order: every output is computed by the same operations on the same values as on planes, so the
    bytes are the same (NaN payloads included). A row at a time: its bordered row stays in the first-level
    cache. Rows are independent: threads may share them."""
    height, width, depth = x.shape[1], x.shape[2], x.shape[3]
    out_h, out_w = out.shape[1], out.shape[2]
    maximum = not average
    c0 = min(out_w, max(0, (left - kw + sx) // sx))  # as pool_planes: outputs whose windows meet the image
    c1 = max(c0, min(out_w, (width - 1 + left) // sx + 1))
    y_lo = min(out_h, max(0, (top - kh + sy) // sy))
    y_hi = max(y_lo, min(out_h, (height - 1 + top) // sy + 1))
    span = max(width + left, (c1 - 1) * sx + kw) if c1 > c0 else width + left
    column = np.empty(span * depth, np.float32)
    border = np.float32(0.0) if average else np.float32(-np.inf)
    for i in range(left * depth):
        column[i] = border
    for i in range((left + width) * depth, span * depth):
        column[i] = border
    rows, taps = np.empty(kh, np.int64), np.empty(kw, np.int64)
    for k in range(kh):
        rows[k] = 4 * k * width * depth
    for k in range(kw):
        taps[k] = 4 * k * depth
    fill = np.float32(0.0) if average else empty
    area = kh * kw
    k = 0
    while (1 << k) < area:
        k += 1
    scale, divisor = np.float32(2.0 ** -k), np.float32(area * 2.0 ** -k)
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    col_at, rows_at, taps_at = np.int64(column.ctypes.data), np.int64(rows.ctypes.data), np.int64(taps.ctypes.data)
    of = out.reshape(-1)
    line = out_w * depth
    for r in range(r0, r1):
        n, oy = r // out_h, r % out_h
        if y_lo <= oy < y_hi:
            y0 = oy * sy - top
            ya, yb = max(y0, 0), min(y0 + kh, height)
            _down(maximum, False, False, col_at + 4 * left * depth, x_at + 4 * (n * height + ya) * width * depth, rows_at,
                  yb - ya, width * depth, 1, 0, 0, scale)
            if c1 > c0:
                _across(maximum, 1, False, False, out_at + 4 * (r * line + c0 * depth), col_at + 4 * c0 * sx * depth, taps_at,
                        kw, depth, c1 - c0, 4 * depth, 4 * sx * depth, divisor)
            for ox in range(out_w):
                if not c0 <= ox < c1:
                    for c in range(depth):
                        of[r * line + ox * depth + c] = fill
        else:
            for i in range(line):
                of[r * line + i] = fill


def _max_pool(x, out, kh, kw, sy, sx, top, left):
    """``out[n, c]`` = the window maxima of ``x[n, c]`` (module doc); C-contiguous NCHW float32."""
    lowest = np.float32(-3.4028234663852886e38)
    n_planes = x.shape[0] * x.shape[1]
    pool_planes(x.reshape(n_planes, x.shape[2], x.shape[3]), out.reshape(n_planes, out.shape[2], out.shape[3]),
                False, kh, kw, sy, sx, top, left, lowest, 0, n_planes)


_MAX_POOL = jit.kernel(_max_pool)
_TYPES = (jit.types.Array(jit.types.float32, 4, "C", readonly=True), jit.types.Array(jit.types.float32, 4, "C")) + \
    (jit.INT,) * 6


def _nchw_shape(a: np.ndarray) -> tuple[int, ...]:
    """OpenVX-order ``a``'s NCHW shape, every batch dim folded into N."""
    return (int(np.prod(a.shape[3:], dtype=np.int64)),) + a.T.shape[-3:]


def _nchw(a: np.ndarray) -> np.ndarray | None:
    """The C-contiguous NCHW view of OpenVX-order ``a`` ([W, H, C, *batch]), or None when its memory is not so."""
    t = a.T
    if not t.flags.c_contiguous:
        return None
    return t.reshape((-1,) + t.shape[-3:])


def prepare(x: np.ndarray, out: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int],
            offset: tuple[int, int]) -> Callable[[], None]:
    """A runner writing the max pool of ``x`` (read at each call) into ``out``, both float32 in OpenVX order
    ``[W, H, C, *batch]`` with the same channels and batch dims; ``kernel``, ``stride`` and ``offset`` (top, left)
    are (y, x) pairs, the output extent is ``out``'s. Raises ValueError for anything else."""
    if x.dtype != np.float32 or out.dtype != np.float32:
        raise ValueError(f"x ({x.dtype}) and out ({out.dtype}) must be float32")
    if x.ndim < 3 or out.ndim != x.ndim or out.shape[2:] != x.shape[2:]:
        raise ValueError(f"x {x.shape} and out {out.shape} must be [W, H, C, *batch] with the same C and batch dims")
    if min(kernel + stride) < 1 or min(offset) < 0:
        raise ValueError(f"kernel {kernel} and stride {stride} must be at least 1, offset {offset} at least 0")
    function = jit.entry(_MAX_POOL, *_TYPES)
    geometry = tuple(int(v) for v in kernel + stride + offset)
    src, dst = _nchw(x), _nchw(out)
    if src is not None:
        src = src.view()
        src.flags.writeable = False
    target = dst if dst is not None else np.empty(_nchw_shape(out), np.float32)
    if out.size == 0:
        return lambda: None

    def call() -> None:
        source = src if src is not None else np.ascontiguousarray(x.T).reshape((-1,) + x.T.shape[-3:])
        if not source.flags.writeable or src is None:
            source.flags.writeable = False
        function(source, target, *geometry)
        if dst is None:
            out.T[...] = target.reshape(out.T.shape)
    return call
