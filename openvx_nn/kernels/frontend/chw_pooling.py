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


def _max_pool(x, out, kh, kw, sy, sx, top, left):
    """``out[n, c]`` = the window maxima of ``x[n, c]`` (module doc); C-contiguous NCHW float32."""
    lowest = np.float32(-3.4028234663852886e38)
    n_items, channels, height, width = x.shape
    out_h, out_w = out.shape[2], out.shape[3]
    column = np.empty(width, np.float32)
    for item in range(n_items):
        for c in range(channels):
            plane, dst = x[item, c], out[item, c]
            for oy in range(out_h):
                row = dst[oy]
                y0 = oy * sy - top
                y1 = min(y0 + kh, height)
                y0 = max(y0, 0)
                if y0 >= y1:
                    for ox in range(out_w):
                        row[ox] = lowest
                    continue
                first = plane[y0]
                for i in range(width):
                    column[i] = first[i]
                for y in range(y0 + 1, y1):
                    line = plane[y]
                    for i in range(width):
                        column[i] = _larger(column[i], line[i])
                for ox in range(out_w):
                    x0 = ox * sx - left
                    x1 = min(x0 + kw, width)
                    x0 = max(x0, 0)
                    if x0 >= x1:
                        row[ox] = lowest
                        continue
                    m = column[x0]
                    for i in range(x0 + 1, x1):
                        m = _larger(m, column[i])
                    row[ox] = m


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
