"""Normalisations of float tensors by statistics over chosen axes: mean-variance
normalisation (MVN, instance norm, layer norm), L2 normalisation and log-softmax.

Axes are OpenVX axes; statistics are float64 means over exactly those axes,
the variance is the mean squared deviation (biased), the result is stored as
float32 once. ``gamma``/``beta`` (optional) broadcast OpenVX-order against the input.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .combine import widen


def normalize(x: np.ndarray, out: np.ndarray, axes: Sequence[int], mode: str, epsilon: float,
              gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> None:
    """mode 'center': x - mean; 'standardize': (x - mean) / sqrt(var + eps);
    'l2': x / sqrt(sum(x^2) + eps); then y = gamma * y + beta when given."""
    v = np.asarray(x, np.float64)
    axes = tuple(axes)
    if mode == "l2":
        y = v / np.sqrt(np.sum(v * v, axis=axes, keepdims=True) + epsilon)
    else:
        y = v - np.mean(v, axis=axes, keepdims=True)
        if mode == "standardize":
            y = y / np.sqrt(np.mean(y * y, axis=axes, keepdims=True) + epsilon)
    if gamma is not None:
        y = y * widen(gamma, y.ndim)
    if beta is not None:
        y = y + widen(beta, y.ndim)
    out[...] = y


def log_softmax(x: np.ndarray, out: np.ndarray, axis: int, beta: float = 1.0) -> None:
    """out = beta * x - log(sum(exp(beta * x))) along ``axis`` (the maximum taken out of the sum first)."""
    v = np.asarray(x, np.float64) * np.float64(beta)
    top = np.max(v, axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[...] = v - (top + np.log(np.sum(np.exp(v - top), axis=axis, keepdims=True)))
