"""Float32 max pooling of CoreML on channel-major planes, any window, stride and padding.

The OpenVX pooling layer (``kernels/openvx/pooling.py``) walks six-dimensional strided views and cannot take a
stride the layer's sizes do not imply; CoreML's ``pooling`` (max, not global) runs here instead on the
C-contiguous NCHW view of its tensors: per output row the window's rows are reduced column by column over
the contiguous input rows (the pass that vectorizes), then each output takes the maximum of its window's
columns.

Windows. Output ``(oy, ox)`` covers input rows ``oy * sy - top ..`` and columns ``ox * sx - left ..`` (``kh`` x
``kw``); positions off the input are left out (CoreML pads a max pool with the lowest value, which never wins
over an input); a window with no input position gives the lowest float32 (what that padding would give).
Values compare as ``window_max.larger`` defines (NaN wins, +0.0 over -0.0), so the result is the window's
exact maximum, independent of the order of visits; here written without branches (``_larger``), so the
row pass vectorizes.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..support import jit

LOWEST = np.float32(np.finfo(np.float32).min)


@jit.kernel
def _larger(m, v):
    """``window_max.larger(m, v)`` as one select: keep ``m`` when it is larger, NaN, or equal to ``v`` unless
    ``v`` is the +0.0 beside a -0.0 (bitwise ``|`` and ``&``: no branch to stop the vectorizer)."""
    keep = (m > v) | math.isnan(m) | ((m == v) & (math.copysign(1.0, v) < 0.0))
    return m if keep else v


@jit.kernel
def phases(line, ph, sx):
    """``ph[s, j] = line[j * sx + s]`` (``ph`` has at least ``min(sx, width)`` rows): a row split by column phase,
    so that a window column ``kx`` of every output of a row (input column ``ox * sx + kx - left``) is one contiguous
    run ``ph[s, ox + q:]`` (the pass vectorizes)."""
    width = line.shape[0]
    for s in range(min(sx, width)):  # a column inside the row has its phase below the width
        for j in range((width - s + sx - 1) // sx):
            ph[s, j] = line[j * sx + s]


@jit.kernel
def max_planes(x, out, kh, kw, sy, sx, top, left, empty, p0, p1):
    """Planes ``[p0, p1)`` of ``out[p]`` = the window maxima of ``x[p]`` (module doc), C-contiguous ``[P, H, W]``
    float32; a window with no input position gives ``empty``. Planes are independent: threads may share them.
    Per output row: the window's rows reduced column by column, then, window column by window column, every
    output of the row at once from the phases of that reduction (``phases``)."""
    height, width = x.shape[1], x.shape[2]
    out_h, out_w = out.shape[1], out.shape[2]
    column = np.empty(width, np.float32)
    ph = np.empty((min(sx, width), (width + sx - 1) // sx), np.float32)
    acc = np.empty(out_w, np.float32)
    lowest = np.float32(-np.inf)
    for p in range(p0, p1):
        plane, dst = x[p], out[p]
        for oy in range(out_h):
            row = dst[oy]
            y0 = oy * sy - top
            y1 = min(y0 + kh, height)
            y0 = max(y0, 0)
            if y0 >= y1:
                for ox in range(out_w):
                    row[ox] = empty
                continue
            first = plane[y0]
            for i in range(width):
                column[i] = first[i]
            for y in range(y0 + 1, y1):
                line = plane[y]
                for i in range(width):
                    column[i] = _larger(column[i], line[i])
            phases(column, ph, sx)
            for ox in range(out_w):
                acc[ox] = lowest
            for kx in range(kw):
                shift = kx - left  # output ox reads column ox * sx + shift: inside for ox in [lo, hi)
                lo = 0 if shift >= 0 else (sx - 1 - shift) // sx
                hi = min(out_w, (width - 1 - shift) // sx + 1) if width - 1 - shift >= 0 else 0
                if lo >= hi:
                    continue
                run = ph[shift % sx, lo + shift // sx:hi + shift // sx]
                part = acc[lo:hi]
                for j in range(hi - lo):
                    part[j] = _larger(part[j], run[j])
            for ox in range(out_w):
                x0 = ox * sx - left
                if min(x0 + kw, width) <= max(x0, 0):
                    row[ox] = empty
                else:
                    row[ox] = acc[ox]


def _max_pool(x, out, kh, kw, sy, sx, top, left):
    """``out[n, c]`` = the window maxima of ``x[n, c]`` (module doc); C-contiguous NCHW float32."""
    lowest = np.float32(-3.4028234663852886e38)
    n_planes = x.shape[0] * x.shape[1]
    max_planes(x.reshape(n_planes, x.shape[2], x.shape[3]), out.reshape(n_planes, out.shape[2], out.shape[3]),
               kh, kw, sy, sx, top, left, lowest, 0, n_planes)


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
