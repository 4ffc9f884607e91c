"""Fast float32 CONV_2D and FULLY_CONNECTED on NHWC data: a direct convolution over weights packed once.

The weights [O, kh, kw, I] are packed at bind time to [kh, kw * I, O]: for one output pixel and one
filter row, the taps inside the image are one contiguous run of the input row (``kw * I`` values at
most) against a contiguous block of packed rows, so a 1x1 convolution is a GEMM and a 3x3 one an
implicit GEMM with no im2col copy. The inner loop runs over the output channels (contiguous in both
the packed weights and the output) and LLVM vectorizes it with FMA (AVX2 or AVX-512, whatever the CPU
has). Two neighbouring output pixels are computed together and eight input values are folded per
pass, so each weight vector loaded serves 16 multiply-adds and the output row is read and written once
per eight of them.

Sums are float32 with fused multiply-adds, in a fixed order: results differ from the float64 reference
(``nhwc_convolution``) by at most a few float32 roundings of the sum of |products| (docs/nnapi.md states
the bound the tests check). Bias and the fused activation are applied in the same pass (the epilogue).
"""
from __future__ import annotations

import numpy as np

from ..engine.atomics import fetch_add, pause
from ..support import jit
from .asymmetric import real_range
from .float_sharing import share_rows


@jit.kernel(contract=True)
def _madd(xf, xrow, start_a, start_b, wf, w_row, length, of, pixel_a, pixel_b, pair):
    """of[pixel_a] += xf[xrow, start_a:+length] @ wf[w_row:+length] (and pixel_b from start_b when pair)."""
    units = of.shape[1]
    k8 = length - length % 8
    if pair:
        for k in range(0, k8, 8):
            a0, a1, a2, a3 = xf[xrow, start_a + k], xf[xrow, start_a + k + 1], xf[xrow, start_a + k + 2], \
                xf[xrow, start_a + k + 3]
            a4, a5, a6, a7 = xf[xrow, start_a + k + 4], xf[xrow, start_a + k + 5], xf[xrow, start_a + k + 6], \
                xf[xrow, start_a + k + 7]
            b0, b1, b2, b3 = xf[xrow, start_b + k], xf[xrow, start_b + k + 1], xf[xrow, start_b + k + 2], \
                xf[xrow, start_b + k + 3]
            b4, b5, b6, b7 = xf[xrow, start_b + k + 4], xf[xrow, start_b + k + 5], xf[xrow, start_b + k + 6], \
                xf[xrow, start_b + k + 7]
            r = w_row + k
            for j in range(units):
                w0, w1, w2, w3 = wf[r, j], wf[r + 1, j], wf[r + 2, j], wf[r + 3, j]
                w4, w5, w6, w7 = wf[r + 4, j], wf[r + 5, j], wf[r + 6, j], wf[r + 7, j]
                s = of[pixel_a, j]
                t = of[pixel_b, j]
                s += a0 * w0
                s += a1 * w1
                s += a2 * w2
                s += a3 * w3
                s += a4 * w4
                s += a5 * w5
                s += a6 * w6
                s += a7 * w7
                t += b0 * w0
                t += b1 * w1
                t += b2 * w2
                t += b3 * w3
                t += b4 * w4
                t += b5 * w5
                t += b6 * w6
                t += b7 * w7
                of[pixel_a, j] = s
                of[pixel_b, j] = t
        for k in range(k8, length):
            a0 = xf[xrow, start_a + k]
            b0 = xf[xrow, start_b + k]
            for j in range(units):
                w0 = wf[w_row + k, j]
                of[pixel_a, j] += a0 * w0
                of[pixel_b, j] += b0 * w0
        return
    for k in range(0, k8, 8):
        a0, a1, a2, a3 = xf[xrow, start_a + k], xf[xrow, start_a + k + 1], xf[xrow, start_a + k + 2], \
            xf[xrow, start_a + k + 3]
        a4, a5, a6, a7 = xf[xrow, start_a + k + 4], xf[xrow, start_a + k + 5], xf[xrow, start_a + k + 6], \
            xf[xrow, start_a + k + 7]
        r = w_row + k
        for j in range(units):
            s = of[pixel_a, j]
            s += a0 * wf[r, j]
            s += a1 * wf[r + 1, j]
            s += a2 * wf[r + 2, j]
            s += a3 * wf[r + 3, j]
            s += a4 * wf[r + 4, j]
            s += a5 * wf[r + 5, j]
            s += a6 * wf[r + 6, j]
            s += a7 * wf[r + 7, j]
            of[pixel_a, j] = s
    for k in range(k8, length):
        a0 = xf[xrow, start_a + k]
        for j in range(units):
            of[pixel_a, j] += a0 * wf[w_row + k, j]


@jit.kernel
def _epilogue(of, pixel, lo, hi):
    """Clamp one output pixel to the fused activation's range (NaN stays NaN, as in the reference)."""
    low, high = np.float32(lo), np.float32(hi)
    for j in range(of.shape[1]):
        v = of[pixel, j]
        v = max(v, low)
        v = min(v, high)
        of[pixel, j] = v


@jit.kernel(contract=True)
def _conv_rows(x, wp, bias, out, pad_top, pad_left, stride_h, stride_w, lo, hi, r0, r1):
    """Output rows ``[r0, r1)`` (row r: image r // out_h, line r % out_h) of the convolution."""
    n_batch, height, width, depth = x.shape
    kh, kwc, units = wp.shape
    kw = kwc // depth
    _, out_h, out_w, _ = out.shape
    xf = x.reshape(n_batch * height, width * depth)
    wf = wp.reshape(kh * kwc, units)
    of = out.reshape(n_batch * out_h * out_w, units)
    clamp = lo > -np.inf or hi < np.inf
    for r in range(r0, r1):
        b = r // out_h
        y0 = (r - b * out_h) * stride_h - pad_top
        ky0, ky1 = max(0, -y0), min(kh, height - y0)
        ox = 0
        while ox < out_w:
            xa = ox * stride_w - pad_left
            kx0, kx1 = max(0, -xa), min(kw, width - xa)
            xb = xa + stride_w
            pair = ox + 1 < out_w and max(0, -xb) == kx0 and min(kw, width - xb) == kx1
            pa = r * out_w + ox
            pb = pa + 1 if pair else pa
            for j in range(units):
                of[pa, j] = bias[j]
                of[pb, j] = bias[j]
            if kx1 > kx0:
                for ky in range(ky0, ky1):
                    _madd(xf, b * height + y0 + ky, (xa + kx0) * depth, (xb + kx0) * depth, wf,
                          ky * kwc + kx0 * depth, (kx1 - kx0) * depth, of, pa, pb, pair)
            if clamp:
                _epilogue(of, pa, lo, hi)
                if pair:
                    _epilogue(of, pb, lo, hi)
            ox += 2 if pair else 1


@jit.kernel
def _conv_shared(x, wp, bias, out, pad_top, pad_left, stride_h, stride_w, lo, hi, n_rows, n_chunks, counters,
                 wait):
    # Chunks claimed from counters[0]; counters[1] counts finished ones (float_sharing.py).
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= n_chunks:
            break
        _conv_rows(x, wp, bias, out, pad_top, pad_left, stride_h, stride_w, lo, hi, n_rows * i // n_chunks,
                   n_rows * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        while fetch_add(claim + 8, 0) < n_chunks:
            pause()


def pack_conv(w: np.ndarray) -> np.ndarray:
    """CONV_2D weights [O, kh, kw, I] as the kernel reads them: [kh, kw * I, O], float32, contiguous."""
    o, kh, kw, i = w.shape
    return np.ascontiguousarray(np.transpose(w, (1, 2, 3, 0)).reshape(kh, kw * i, o), np.float32)


def pack_fc(w: np.ndarray) -> np.ndarray:
    """FULLY_CONNECTED weights [units, size] as a 1x1 convolution's: [1, size, units]."""
    return np.ascontiguousarray(np.asarray(w, np.float32).T[None])


def bias_or_zeros(bias: np.ndarray | None, units: int) -> np.ndarray:
    """The bias as a contiguous float32 vector (zeros when the layer has none)."""
    if bias is None:
        return np.zeros(units, np.float32)
    return np.ascontiguousarray(bias, np.float32)


def conv2d(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
           strides: tuple[int, int], activation: int) -> None:
    """``out = act(bias + conv(x, w))`` with ``wp = pack_conv(w)``; ``pads`` (left, right, top, bottom),
    ``strides`` (width, height); ``out``'s shape fixes the extent (``nhwc_convolution.conv2d``'s contract)."""
    lo, hi = real_range(activation)
    target = out if out.flags.c_contiguous else np.empty(out.shape, np.float32)
    x = np.ascontiguousarray(x)
    args = (x, wp, bias, target, pads[2], pads[0], strides[1], strides[0], float(lo), float(hi))
    n_rows = out.shape[0] * out.shape[1]
    share_rows(_conv_rows, _conv_shared, args, n_rows, out.size * wp.shape[0] * wp.shape[1])
    if target is not out:
        out[...] = target


def fully_connected(x: np.ndarray, wp: np.ndarray, bias: np.ndarray, out: np.ndarray, activation: int) -> None:
    """``out[b] = act(bias + w @ x[b])`` with ``wp = pack_fc(w)``; ``x`` is flattened to [batch, size]."""
    size, units = wp.shape[1], wp.shape[2]
    rows = np.ascontiguousarray(x).reshape(1, 1, -1, size)
    target = out if out.flags.c_contiguous else np.empty(out.shape, np.float32)
    conv2d(rows, wp, bias, target.reshape(1, 1, -1, units), (0, 0, 0, 0), (1, 1), activation)
    if target is not out:
        out[...] = target
