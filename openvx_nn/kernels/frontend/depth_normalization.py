"""Normalizations along the last (depth) axis, on exact real values in float64:
softmax with a beta, L2 normalization and local response normalization."""
from __future__ import annotations

import numpy as np

from . import float_softmax
from .asymmetric import dequantize, store


def softmax_last_axis(x: np.ndarray, out: np.ndarray, beta: float, quant_in=None, quant_out=None) -> None:
    """``exp((x - max) * beta) / sum exp((x - max) * beta)`` over the last axis: float32 tensors on the float32
    softmax kernel (``float_softmax``, its tolerance), others in float64 on their exact real values."""
    if quant_in is None and quant_out is None and x.dtype == out.dtype == np.float32 and x.ndim > 0:
        float_softmax.softmax(x, out, x.ndim - 1, beta)
        return
    real = dequantize(x, quant_in)
    e = np.exp((real - real.max(axis=-1, keepdims=True)) * beta)
    store(e / e.sum(axis=-1, keepdims=True), out, quant_out)


def l2_normalization(x: np.ndarray, out: np.ndarray, quant_in=None, quant_out=None) -> None:
    """``x / sqrt(sum x**2)`` over the last axis; an all-zero vector gives zeros."""
    real = dequantize(x, quant_in)
    norm = np.sqrt((real * real).sum(axis=-1, keepdims=True))
    store(np.divide(real, norm, out=np.zeros_like(real), where=norm > 0), out, quant_out)


def local_response_normalization(x: np.ndarray, out: np.ndarray, radius: int, bias: float, alpha: float,
                                 beta: float, quant_in=None, quant_out=None) -> None:
    """``x / (bias + alpha * sum_{|d'-d| <= radius} x[d']**2) ** beta``, the window cut at the edges."""
    real = dequantize(x, quant_in)
    squares = np.cumsum(np.concatenate([np.zeros(real.shape[:-1] + (1,)), real * real], axis=-1), axis=-1)
    depth = real.shape[-1]
    d = np.arange(depth)
    high = np.minimum(d + radius + 1, depth)
    low = np.maximum(d - radius, 0)
    window = squares[..., high] - squares[..., low]
    store(real / np.power(bias + alpha * window, beta), out, quant_out)
