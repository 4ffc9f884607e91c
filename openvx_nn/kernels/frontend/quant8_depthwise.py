"""NNAPI's TENSOR_QUANT8_ASYMM DEPTHWISE_CONV_2D as a direct integer kernel on NHWC data.

Depthwise convolution does ``kh * kw`` multiply-adds per output value: it is bound by memory, not
by arithmetic, so it gets no im2col and no GEMM. Each output pixel keeps one int32 accumulator per
output channel; every tap inside the input adds ``(x - zx) * (w - zw)`` over the channels in one
contiguous, vectorized loop (channel ``k * multiplier + q`` reads input channel ``k``). The sums are
exact in int32 (``kh * kw * 255 * 255 < 2**31`` for windows below 33025 taps, checked), the bias is
added in int64, and ``engine.nhwc.scale_lane`` requantizes: bit for bit ``nhwc_convolution``'s
NumPy route (``asymmetric.requantize``), which stays as the reference.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import workers
from ..engine.atomics import fetch_add, pause
from ..engine.nhwc import scale_lane
from ..support import jit
from ..support.jit import kernel
from .asymmetric import quantized_multiplier, quantized_range

PARALLEL_WORK = 1 << 18  # multiply-adds from which the rows are shared between threads
CHUNKS_PER_THREAD = 4
MAX_TAPS = ((1 << 31) - 1) // (255 * 255)


def _depthwise(x, w_offsets, bias, out, x_zero, multiplier, pad_top, pad_left, stride_h, stride_w, m, shift,
               zero_point, lo, hi, line0, line1):
    # out[b, oy, ox, k*multiplier + q] from x[b, .., .., k] and w_offsets[ky, kx, k*multiplier + q] (int32), for
    # the output lines b * out_h + oy in line0 .. line1-1.
    _, height, width, depth_in = x.shape
    _, out_h, out_w, depth_out = out.shape
    kh, kw = w_offsets.shape[0], w_offsets.shape[1]
    acc = np.empty(depth_out, np.int32)
    wide = np.empty(depth_out, np.int32)  # one pixel's input offsets, repeated per multiplier
    zero = np.int32(x_zero)  # int32 arithmetic throughout (an int64 operand would widen the vector loop)
    for line in range(line0, line1):
        b, oy = line // out_h, line % out_h
        y0 = oy * stride_h - pad_top
        for ox in range(out_w):
            x0 = ox * stride_w - pad_left
            acc[:] = 0
            for ky in range(max(0, -y0), min(kh, height - y0)):
                for kx in range(max(0, -x0), min(kw, width - x0)):
                    pixel = x[b, y0 + ky, x0 + kx]
                    taps = w_offsets[ky, kx]
                    if multiplier == 1:
                        for c in range(depth_out):
                            acc[c] += (np.int32(pixel[c]) - zero) * taps[c]
                    else:
                        for k in range(depth_in):
                            v = np.int32(pixel[k]) - zero
                            for q in range(multiplier):
                                wide[k * multiplier + q] = v
                        for c in range(depth_out):
                            acc[c] += wide[c] * taps[c]
            target = out[b, oy, ox]
            for c in range(depth_out):
                target[c] = scale_lane(np.int64(acc[c]) + bias[c], m, shift, zero_point, lo, hi)


_DEPTHWISE = kernel(_depthwise)


def _claim(x, w_offsets, bias, out, scalars, n_lines, n_chunks, counters, wait):
    # Chunks of output lines claimed from counters[0] by the caller and its helpers (engine/workers.py);
    # counters[1] counts finished chunks, and the caller (``wait``) returns once all are finished.
    claim = np.int64(counters.ctypes.data)
    while True:
        i = fetch_add(claim, 1)
        if i >= n_chunks:
            break
        _DEPTHWISE(x, w_offsets, bias, out, scalars[0], scalars[1], scalars[2], scalars[3], scalars[4], scalars[5],
                   scalars[6], scalars[7], scalars[8], scalars[9], scalars[10], n_lines * i // n_chunks,
                   n_lines * (i + 1) // n_chunks)
        fetch_add(claim + 8, 1)
    if wait:
        while fetch_add(claim + 8, 0) < n_chunks:
            pause()


_CLAIM = kernel(_claim)
_TYPES = (types.Array(types.uint8, 4, "C", readonly=True), types.Array(types.int32, 3, "C", readonly=True),
          types.Array(types.int64, 1, "C", readonly=True), types.Array(types.uint8, 4, "A"))


def _entries():
    return (jit.entry(_DEPTHWISE, *_TYPES, *(jit.INT,) * 13),
            jit.entry(_CLAIM, *_TYPES, types.UniTuple(jit.INT, 11), jit.INT, jit.INT, types.Array(types.int64, 1, "C"),
                      jit.BOOL))


def prepare_depthwise(w: np.ndarray, bias: np.ndarray | None, out_shape: tuple[int, ...],
                      pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int, activation: int,
                      quant_in: tuple[float, int], quant_w: tuple[float, int],
                      quant_out: tuple[float, int]) -> Callable[[np.ndarray, np.ndarray], None]:
    """``run(x, out)`` for a uint8 DEPTHWISE_CONV_2D: ``x`` [N, H, W, C], ``w`` [1, KY, KX, C * multiplier],
    ``out`` [N, OH, OW, C * multiplier]; ``pads`` (left, right, top, bottom), ``strides`` (width, height)."""
    _, kh, kw, depth_out = w.shape
    if kh * kw > MAX_TAPS:
        raise ValueError(f"a depthwise window of {kh}x{kw} taps can exceed the exact int32 accumulator "
                         f"(at most {MAX_TAPS} taps)")
    w_offsets = np.ascontiguousarray(w[0], np.int32) - np.int32(quant_w[1])
    lane_bias = np.zeros(depth_out, np.int64) if bias is None else np.asarray(bias, np.int64).copy()
    m, shift = quantized_multiplier(float(quant_in[0]) * float(quant_w[0]) / float(quant_out[0]))
    lo, hi = quantized_range(activation, *quant_out)
    scalars = tuple(int(v) for v in (quant_in[1], multiplier, pads[2], pads[0], strides[1], strides[0], m, shift,
                                      quant_out[1], lo, hi))
    n_lines = out_shape[0] * out_shape[1]
    parallel = int(np.prod(out_shape)) * kh * kw >= PARALLEL_WORK and n_lines > 1

    def run(x: np.ndarray, out: np.ndarray) -> None:
        x = np.ascontiguousarray(x)  # NNAPI's tensors already are: a channel run is one vector loop
        serial, claim = _entries()
        helpers = workers.helpers() if parallel else 0
        if not helpers:
            serial(x, w_offsets, lane_bias, out, *scalars, 0, n_lines)
            return
        n_chunks = min(n_lines, CHUNKS_PER_THREAD * (helpers + 1))
        counters = np.zeros(2, np.int64)
        workers.lend(lambda: claim(x, w_offsets, lane_bias, out, scalars, n_lines, n_chunks, counters, False),
                     helpers)
        claim(x, w_offsets, lane_bias, out, scalars, n_lines, n_chunks, counters, True)
    return run
