"""2-D convolution, depthwise convolution and fully connected layers on NHWC
data (batches, height, width, channels; channels fastest) with explicit,
possibly asymmetric padding, in float32 or asymmetric uint8.

Sums of products are exact: int64 for uint8 data (each term is a product of
two offsets of at most 255 in magnitude), float64 for float32 data.  Padded
positions contribute zero in real terms (the input's zero point).  The output
stage is ``asymmetric.requantize`` (uint8) or a float32 cast, after the bias
and the fused activation.
"""
from __future__ import annotations

import numpy as np

from ..support.jit import kernel
from .asymmetric import quantized_range, real_range, requantize

Quant = tuple[float, int] | None


@kernel
def _window_sum(x, w, acc, pad_top, pad_left, stride_h, stride_w, multiplier):
    """Adds the window products to ``acc``: a full convolution (``w`` [O, kh, kw, I]) when
    ``multiplier`` is 0, else depthwise (``w`` [1, kh, kw, O], channel o reads input o // multiplier)."""
    n_batch, height, width, depth_in = x.shape
    _, kh, kw, _ = w.shape
    _, out_h, out_w, depth_out = acc.shape
    for b in range(n_batch):
        for oy in range(out_h):
            for ox in range(out_w):
                for co in range(depth_out):
                    total = acc[b, oy, ox, co]
                    for ky in range(kh):
                        iy = oy * stride_h - pad_top + ky
                        if iy < 0 or iy >= height:
                            continue
                        for kx in range(kw):
                            ix = ox * stride_w - pad_left + kx
                            if ix < 0 or ix >= width:
                                continue
                            if multiplier == 0:
                                for ci in range(depth_in):
                                    total += x[b, iy, ix, ci] * w[co, ky, kx, ci]
                            else:
                                total += x[b, iy, ix, co // multiplier] * w[0, ky, kx, co]
                    acc[b, oy, ox, co] = total


def _offsets(x: np.ndarray, quant: Quant) -> np.ndarray:
    if quant is None:
        return np.ascontiguousarray(x, np.float64)
    return np.ascontiguousarray(x, np.int64) - np.int64(quant[1])


def _accumulator(bias: np.ndarray | None, shape: tuple[int, ...], quantized: bool) -> np.ndarray:
    acc = np.zeros(shape, np.int64 if quantized else np.float64)
    if bias is not None:
        acc += bias.astype(acc.dtype)
    return acc


def output_stage(acc: np.ndarray, out: np.ndarray, activation: int, quant_in: Quant, quant_w: Quant,
                 quant_out: Quant) -> None:
    """Accumulators (bias included) to ``out``: requantized by ``s_in * s_w / s_out`` or cast to float32."""
    if quant_out is None:
        low, high = real_range(activation)
        out[...] = np.clip(acc, low, high).astype(np.float32)
        return
    low, high = quantized_range(activation, *quant_out)
    multiplier = float(quant_in[0]) * float(quant_w[0]) / float(quant_out[0])
    out[...] = requantize(acc, multiplier, quant_out[1], low, high).astype(np.uint8)


def conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, pads: tuple[int, int, int, int],
           strides: tuple[int, int], activation: int, quant_in: Quant = None, quant_w: Quant = None,
           quant_out: Quant = None) -> None:
    """``out[b,y,x,o] = act(bias[o] + sum x[b, y*sh - top + i, x*sw - left + j, c] * w[o,i,j,c])``.

    ``pads`` is (left, right, top, bottom), ``strides`` (width, height); ``out``'s shape fixes the extent.
    """
    acc = _accumulator(bias, out.shape, quant_out is not None)
    _window_sum(_offsets(x, quant_in), _offsets(w, quant_w), acc, pads[2], pads[0], strides[1], strides[0], 0)
    output_stage(acc, out, activation, quant_in, quant_w, quant_out)


def depthwise_conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
                     pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int, activation: int,
                     quant_in: Quant = None, quant_w: Quant = None, quant_out: Quant = None) -> None:
    """``out[b,y,x,k*m+q] = act(bias + sum x[b, .., .., k] * w[0, i, j, k*m+q])`` (``w`` is [1, kh, kw, depth_out])."""
    acc = _accumulator(bias, out.shape, quant_out is not None)
    _window_sum(_offsets(x, quant_in), _offsets(w, quant_w), acc, pads[2], pads[0], strides[1], strides[0],
                   multiplier)
    output_stage(acc, out, activation, quant_in, quant_w, quant_out)


def fully_connected(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray, activation: int,
                    quant_in: Quant = None, quant_w: Quant = None, quant_out: Quant = None) -> None:
    """``out[b, u] = act(bias[u] + sum_i x[b, i] * w[u, i])``; ``x`` is flattened to [batch, input_size]."""
    rows = _offsets(x, quant_in).reshape(-1, w.shape[1])
    acc = rows @ _offsets(w, quant_w).T  # exact: int64 or float64 sums
    if bias is not None:
        acc = acc + bias.astype(acc.dtype)
    output_stage(acc.reshape(out.shape), out, activation, quant_in, quant_w, quant_out)


def conv2d_per_channel(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out: np.ndarray,
                       pads: tuple[int, int, int, int], strides: tuple[int, int], multiplier: int, activation: int,
                       quant_in: tuple[float, int], scales: np.ndarray, quant_out: tuple[float, int]) -> None:
    """A uint8 convolution (``multiplier`` 0) or depthwise convolution whose int8 filter has a scale per output
    channel (symmetric: zero point 0): the exact sums of ``conv2d``, each channel requantized by its own
    ``s_in * scales[o] / s_out``."""
    acc = _accumulator(bias, out.shape, True)
    _window_sum(_offsets(x, quant_in), np.ascontiguousarray(w, np.int64), acc, pads[2], pads[0], strides[1],
                strides[0], multiplier)
    low, high = quantized_range(activation, *quant_out)
    for o in range(out.shape[-1]):
        scale = float(quant_in[0]) * float(scales[o]) / float(quant_out[0])
        out[..., o] = requantize(acc[..., o], scale, quant_out[1], low, high).astype(np.uint8)
