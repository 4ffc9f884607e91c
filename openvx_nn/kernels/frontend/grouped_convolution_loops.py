"""The numba loops of ``grouped_convolution`` (arithmetic and routes are described there), on
C-contiguous float32 NCHW arrays: the depthwise kernel over a range of planes (shared with the
engine's helpers through ``float_sharing.Rows``), and im2col, col2im and the bias/residual/clip
epilogue, each compiled serial and parallel and found through ``ENTRY``."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import prange

from ..engine.atomics import fetch_add, pause
from ..support import jit
from ..support.jit import kernel


# -- numba kernels (C-contiguous float32 arrays) ------------------------------------------------
def _depthwise(x, w, kh, kw, bias, out, sy, sx, dy, dx, top, left, low64, high64, residual, add, plane0, plane1):
    """Output planes ``[plane0, plane1)`` (item-major: plane = item * channels + channel)."""
    low, high = np.float32(low64), np.float32(high64)  # float64 arguments: warm records float64 scalars
    _, channels, height, width = x.shape
    n_out = w.shape[0]
    out_h, out_w = out.shape[2], out.shape[3]
    multiplier = n_out // channels
    # The input channel as sy row-phase planes of its zero-padded self, pw columns each: tap (ky, kx)
    # reads phase (ky*dy) % sy at row offset (ky*dy) // sy and column offset kx*dx, and each tap is ONE
    # contiguous multiply-add over out_h * pw values: long vectors even for 7x7 planes, no bounds in the
    # loop. Every column is computed and each sx-th kept (at stride 2 twice the multiply-adds, but
    # contiguous loads instead of strided gathers, which AVX2 does slowly).
    pw = (out_w - 1) * sx + (kw - 1) * dx + 1
    ph = out_h + ((kh - 1) * dy) // sy + 1  # + 1: the last row's extra columns read one row further
    phase_size = ph * pw
    total = out_h * pw
    n_taps = kh * kw
    starts = np.empty(n_taps, np.int64)  # where each tap's values begin among the phase planes
    for ky in range(kh):
        for kx in range(kw):
            starts[ky * kw + kx] = ((ky * dy) % sy) * phase_size + ((ky * dy) // sy) * pw + kx * dx
    # columns j of a phase row inside the input: 0 <= j - left < width
    lo, hi = min(pw, left), max(min(pw, left), min(pw, width + left))
    scratch = np.empty(sy * phase_size + total, np.float32)
    phases = scratch[:sy * phase_size]
    acc = scratch[sy * phase_size:]
    for i in range(sy * phase_size):  # the padding: the same places for every plane, zeroed once
        phases[i] = 0.0
    last = -1
    for plane in range(plane0, plane1):
        n, o = plane // n_out, plane % n_out
        source = n * channels + o // multiplier
        if source != last:
            last = source
            src = x[n, o // multiplier]
            for py in range(sy):
                for i in range(ph):
                    iy = i * sy + py - top
                    if 0 <= iy < height:
                        line = src[iy]
                        base = (py * ph + i) * pw + left  # input column j sits at j + left
                        for j in range(lo - left, hi - left):
                            phases[base + j] = line[j]
        # three taps per pass over the accumulator (a third of its loads and stores)
        taps = w[o]
        b = bias[o]
        for i in range(total):
            acc[i] = b
        for t in range(0, n_taps - 2, 3):
            a0 = phases[starts[t]:starts[t] + total]
            a1 = phases[starts[t + 1]:starts[t + 1] + total]
            a2 = phases[starts[t + 2]:starts[t + 2] + total]
            w0, w1, w2 = taps[t], taps[t + 1], taps[t + 2]
            for i in range(total):
                acc[i] += w0 * a0[i] + w1 * a1[i] + w2 * a2[i]
        for t in range(n_taps - n_taps % 3, n_taps):
            a0 = phases[starts[t]:starts[t] + total]
            w0 = taps[t]
            for i in range(total):
                acc[i] += w0 * a0[i]
        dst = out[n, o]
        for oy in range(out_h):
            line = dst[oy]
            for ox in range(out_w):
                v = acc[oy * pw + ox * sx]
                if add:
                    v += residual[n, o, oy, ox]
                if v < low:  # noqa: PLR1730 (comparisons: NaN passes through)
                    v = low
                if v > high:  # noqa: PLR1730
                    v = high
                line[ox] = v


DEPTHWISE = kernel(_depthwise)


def _depthwise_shared(x, w, kh, kw, bias, out, sy, sx, dy, dx, top, left, low64, high64, residual, add, n_planes,
                      n_chunks, counters, wait):
    # Chunks of planes claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    i = fetch_add(claim, 1)
    while i < n_chunks:
        DEPTHWISE(x, w, kh, kw, bias, out, sy, sx, dy, dx, top, left, low64, high64, residual, add,
                   n_planes * i // n_chunks, n_planes * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
        i = fetch_add(claim, 1)
    while wait and fetch_add(claim + 8, 0) < n_chunks:
        pause()


DEPTHWISE_SHARED = kernel(_depthwise_shared)
DEPTHWISE_TYPES = (jit.types.Array(jit.types.float32, 4, "C", readonly=True),
                   jit.types.Array(jit.types.float32, 2, "C", readonly=True), jit.INT, jit.INT,
                   jit.types.Array(jit.types.float32, 1, "C", readonly=True),
                   jit.types.Array(jit.types.float32, 4, "C")) + (jit.INT,) * 6 + (
    jit.FLOAT, jit.FLOAT, jit.types.Array(jit.types.float32, 4, "C", readonly=True), jit.BOOL)
"""The depthwise kernels' argument types before the plane range (``float_sharing.Rows``)."""


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
