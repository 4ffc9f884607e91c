"""Fast float32 DEPTHWISE_CONV_2D on NHWC data: a direct loop vectorized over the channels.

A depthwise layer does a few multiply-adds per value it reads, so it is bound by memory, not by
arithmetic: no im2col, no packing beyond [kh, kw, C * m]. For each output pixel the loop over the
channels is innermost (contiguous in the input, the weights and the output), which LLVM vectorizes
with FMA. A 3x3 window wholly inside the image with a multiplier of 1 (MobileNet's case) keeps its
nine products in one register sum per channel vector; other windows (edges, other sizes, depth
multipliers) add tap by tap into the output row.

float32 sums with fused multiply-adds: within docs/nnapi.md's bound of the float64 reference.
"""
from __future__ import annotations

import numpy as np

from ..engine.atomics import fetch_add, pause
from ..support import jit
from .asymmetric import real_range
from .float_sharing import share_rows


@jit.kernel(contract=True)
def _pixel_3x3(x, w, bias, out, b, y, xx, oy, ox):
    # The nine taps of a window inside the image, channel multiplier 1.
    for c in range(out.shape[3]):
        s = bias[c]
        s += x[b, y, xx, c] * w[0, 0, c]
        s += x[b, y, xx + 1, c] * w[0, 1, c]
        s += x[b, y, xx + 2, c] * w[0, 2, c]
        s += x[b, y + 1, xx, c] * w[1, 0, c]
        s += x[b, y + 1, xx + 1, c] * w[1, 1, c]
        s += x[b, y + 1, xx + 2, c] * w[1, 2, c]
        s += x[b, y + 2, xx, c] * w[2, 0, c]
        s += x[b, y + 2, xx + 1, c] * w[2, 1, c]
        s += x[b, y + 2, xx + 2, c] * w[2, 2, c]
        out[b, oy, ox, c] = s


@jit.kernel(contract=True)
def _pixel_any(x, w, bias, out, b, y0, x0, oy, ox, multiplier):
    # Any window, any multiplier: taps outside the image are skipped (they add zero).
    _, height, width, depth = x.shape
    kh, kw, units = w.shape
    for o in range(units):
        out[b, oy, ox, o] = bias[o]
    for ky in range(max(0, -y0), min(kh, height - y0)):
        for kx in range(max(0, -x0), min(kw, width - x0)):
            if multiplier == 1:
                for c in range(units):
                    out[b, oy, ox, c] += x[b, y0 + ky, x0 + kx, c] * w[ky, kx, c]
            else:
                for c in range(depth):
                    v = x[b, y0 + ky, x0 + kx, c]
                    for q in range(c * multiplier, (c + 1) * multiplier):
                        out[b, oy, ox, q] += v * w[ky, kx, q]


@jit.kernel(contract=True)
def _depthwise_rows(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, multiplier, lo, hi, r0, r1):
    """Output rows ``[r0, r1)`` (row r: image r // out_h, line r % out_h)."""
    _, height, width, _ = x.shape
    kh, kw, units = w.shape
    _, out_h, out_w, _ = out.shape
    low, high = np.float32(lo), np.float32(hi)
    clamp = lo > -np.inf or hi < np.inf
    fast = kh == 3 and kw == 3 and multiplier == 1
    for r in range(r0, r1):
        b = r // out_h
        oy = r - b * out_h
        y0 = oy * stride_h - pad_top
        inside_y = y0 >= 0 and y0 + kh <= height
        for ox in range(out_w):
            x0 = ox * stride_w - pad_left
            if fast and inside_y and x0 >= 0 and x0 + kw <= width:
                _pixel_3x3(x, w, bias, out, b, y0, x0, oy, ox)
            else:
                _pixel_any(x, w, bias, out, b, y0, x0, oy, ox, multiplier)
            if clamp:
                for c in range(units):
                    v = out[b, oy, ox, c]
                    v = max(v, low)
                    v = min(v, high)
                    out[b, oy, ox, c] = v


@jit.kernel
def _depthwise_shared(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, multiplier, lo, hi, n_rows, n_chunks,
                      counters, wait):
    # Chunks claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= n_chunks:
            break
        _depthwise_rows(x, w, bias, out, pad_top, pad_left, stride_h, stride_w, multiplier, lo, hi,
                        n_rows * i // n_chunks, n_rows * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        while fetch_add(claim + 8, 0) < n_chunks:
            pause()


def pack_depthwise(w: np.ndarray) -> np.ndarray:
    """DEPTHWISE_CONV_2D weights [1, kh, kw, C * m] as the kernel reads them: [kh, kw, C * m] float32."""
    return np.ascontiguousarray(w[0], np.float32)


def depthwise_conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray,
                     pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int,
                     activation: int) -> None:
    """``out[b,y,x,k*m+q] = act(bias + sum x[b, .., .., k] * w[0, i, j, k*m+q])`` with ``wp = pack_depthwise(w)``;
    ``pads`` (left, right, top, bottom), ``strides`` (width, height), as ``nhwc_convolution.depthwise_conv2d``."""
    lo, hi = real_range(activation)
    target = out if out.flags.c_contiguous else np.empty(out.shape, np.float32)
    args = (np.ascontiguousarray(x), wp, bias, target, pads[2], pads[0], strides[1], strides[0], multiplier,
            float(lo), float(hi))
    share_rows(_depthwise_rows, _depthwise_shared, args, out.shape[0] * out.shape[1],
               out.size * wp.shape[0] * wp.shape[1])
    if target is not out:
        out[...] = target
