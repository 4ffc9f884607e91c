"""The numba loops of ``grouped_convolution``'s BLAS routes (arithmetic and routes are described there):
im2col, col2im and the bias/residual/clip epilogue, on C-contiguous float32 NCHW arrays, each compiled
serial and parallel and found through ``ENTRY``."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import prange

from ..support import jit
from ..support.jit import kernel


# -- numba kernels (C-contiguous float32 arrays) ------------------------------------------------
def _im2col(x, n, first, cols, kh, kw, sy, sx, dy, dx, top, left, out_h, out_w):
    """cols[(c, ky, kx), oy*out_w + ox] of item ``n``, channels from ``first``; zeros off the input."""
    height, width = x.shape[2], x.shape[3]
    count = cols.shape[0] // (kh * kw)
    for row in prange(count * kh * kw):
        c, tap = row // (kh * kw), row % (kh * kw)
        ky, kx = tap // kw, tap % kw
        src_plane = x[n, first + c]
        dst = cols[row]
        shift = kx * dx - left
        lo = 0 if shift >= 0 else min(out_w, (-shift + sx - 1) // sx)
        hi = max(lo, min(out_w, (width - 1 - shift) // sx + 1)) if width - 1 - shift >= 0 else lo
        for oy in range(out_h):
            iy = oy * sy - top + ky * dy
            base = oy * out_w
            if iy < 0 or iy >= height:
                for ox in range(out_w):
                    dst[base + ox] = 0.0
                continue
            src = src_plane[iy]
            for ox in range(lo):
                dst[base + ox] = 0.0
            if sx == 1:
                for ox in range(lo, hi):
                    dst[base + ox] = src[ox + shift]
            else:
                for ox in range(lo, hi):
                    dst[base + ox] = src[ox * sx + shift]
            for ox in range(hi, out_w):
                dst[base + ox] = 0.0


def _col2im(cols, out, n, first, bias, kh, kw, sy, sx, top, left, in_h, in_w):
    """out[n, first + j] = bias + the scatter of cols[(j, ky, kx), iy*in_w + ix] to (iy*sy-top+ky, ix*sx-left+kx)."""
    out_h, out_w = out.shape[2], out.shape[3]
    count = cols.shape[0] // (kh * kw)
    for j in prange(count):
        dst = out[n, first + j]
        b = bias[first + j]
        for y in range(out_h):
            for x_ in range(out_w):
                dst[y, x_] = b
        for ky in range(kh):
            for kx in range(kw):
                src = cols[(j * kh + ky) * kw + kx]
                shift = kx - left
                lo = 0 if shift >= 0 else min(in_w, (-shift + sx - 1) // sx)
                hi = max(lo, min(in_w, (out_w - 1 - shift) // sx + 1)) if out_w - 1 - shift >= 0 else lo
                for iy in range(in_h):
                    y = iy * sy - top + ky
                    if y < 0 or y >= out_h:
                        continue
                    row = dst[y]
                    base = iy * in_w
                    for ix in range(lo, hi):
                        row[ix * sx + shift] += src[base + ix]


def _epilogue(out, n, bias, low64, high64, residual, add):
    """out[n] = clip(out[n] + bias (+ residual[n] when ``add``), low, high) (NaN stays NaN)."""
    low, high = np.float32(low64), np.float32(high64)
    for o in prange(out.shape[1]):
        plane = out[n, o]
        b = bias[o]
        for y in range(plane.shape[0]):
            line = plane[y]
            for x_ in range(plane.shape[1]):
                v = line[x_] + b
                if add:
                    v += residual[n, o, y, x_]
                if v < low:  # noqa: PLR1730 (comparisons: NaN passes through)
                    v = low
                if v > high:  # noqa: PLR1730
                    v = high
                line[x_] = v


_KERNELS = {(name, parallel): kernel(function, parallel=parallel)
            for name, function in (("im2col", _im2col), ("col2im", _col2im),
                                   ("epilogue", _epilogue))
            for parallel in (False, True)}
_F4, _F3, _F2, _F1 = (jit.types.Array(jit.types.float32, r, "C") for r in (4, 3, 2, 1))
_R4, _R3, _R2, _R1 = (jit.types.Array(jit.types.float32, r, "C", readonly=True) for r in (4, 3, 2, 1))
_SIGNATURES = {
    "im2col": (_R4, jit.INT, jit.INT, _F2) + (jit.INT,) * 10,
    "col2im": (_R2, _F4, jit.INT, jit.INT, _R1) + (jit.INT,) * 8,
    "epilogue": (_F4, jit.INT, _R1, jit.FLOAT, jit.FLOAT, _R4, jit.BOOL),
}


class _Entry:
    """A kernel's serial and parallel entry points, each compiled (or loaded) on first use and then
    found without hashing numba types on every call."""

    __slots__ = ("functions", "name")

    def __init__(self, name: str):
        self.name, self.functions = name, [None, None]

    def __call__(self, parallel: bool) -> Callable:
        function = self.functions[parallel]
        if function is None:
            function = self.functions[parallel] = jit.entry(_KERNELS[self.name, parallel], *_SIGNATURES[self.name])
        return function


ENTRY = {name: _Entry(name) for name in _SIGNATURES}
