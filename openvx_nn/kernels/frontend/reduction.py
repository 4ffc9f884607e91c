"""Reductions of float tensors over chosen OpenVX axes, and the dot product of two vectors.

The output holds the reduced axes as length 1 (keep-dims) or drops them; both
have the same elements in the same order, so the result is written through a
reshape. Sums and products run in float64.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _logsumexp(v, axis):
    m = np.max(v, axis=axis, keepdims=True)
    return (m + np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)))


REDUCTIONS = {
    "sum": lambda v, axis, eps: np.sum(v, axis=axis, keepdims=True),
    "mean": lambda v, axis, eps: np.mean(v, axis=axis, keepdims=True),
    "prod": lambda v, axis, eps: np.prod(v, axis=axis, keepdims=True),
    "logsum": lambda v, axis, eps: np.log(np.sum(v, axis=axis, keepdims=True) + eps),
    "sumsquare": lambda v, axis, eps: np.sum(v * v, axis=axis, keepdims=True),
    "l1": lambda v, axis, eps: np.sum(np.abs(v), axis=axis, keepdims=True),
    "l2": lambda v, axis, eps: np.sqrt(np.sum(v * v, axis=axis, keepdims=True)),
    "max": lambda v, axis, eps: np.max(v, axis=axis, keepdims=True),
    "min": lambda v, axis, eps: np.min(v, axis=axis, keepdims=True),
    "argmax": lambda v, axis, eps: _arg(np.argmax, v, axis),
    "argmin": lambda v, axis, eps: _arg(np.argmin, v, axis),
    "logsumexp": lambda v, axis, eps: _logsumexp(v, axis),
}


def _arg(function, v, axes):
    """Index of the first extreme along the single axis ``axes[0]``."""
    (axis,) = axes
    return np.expand_dims(function(v, axis=axis), axis).astype(np.float64)


def reduce(x: np.ndarray, out: np.ndarray, axes: Sequence[int], operation: str, epsilon: float = 0.0) -> None:
    """out = operation of x over ``axes`` (CoreML ReduceLayer and the Reduce* family)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = REDUCTIONS[operation](np.asarray(x, np.float64), tuple(axes), epsilon)
    out[...] = result.reshape(out.shape, order="F")


def mean_of_integers(x: np.ndarray, out: np.ndarray, axes: Sequence[int]) -> None:
    """out = the mean of integer ``x`` over ``axes`` (kept as length 1 or dropped, as ``reduce``): the exact
    sum (int64) divided by the count, rounded once, half to even (docs/fixed-point.md), in ``out``'s type."""
    total = np.sum(np.asarray(x, np.int64), axis=tuple(axes), keepdims=True)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    quotient, remainder = np.divmod(total, count)  # floor division: 0 <= remainder < count
    up = (2 * remainder > count) | ((2 * remainder == count) & (quotient % 2 == 1))
    out[...] = (quotient + up).reshape(out.shape).astype(out.dtype)


def dot_product(a: np.ndarray, b: np.ndarray, out: np.ndarray, cosine: bool) -> None:
    """Per [C, H, W] block (OpenVX axes 0-2) of a and b: the dot product, or the cosine similarity."""
    va, vb = np.asarray(a, np.float64), np.asarray(b, np.float64)
    dot = np.sum(va * vb, axis=(0, 1, 2), keepdims=True)
    if cosine:
        dot = dot / (np.sqrt(np.sum(va * va, axis=(0, 1, 2), keepdims=True)) *
                     np.sqrt(np.sum(vb * vb, axis=(0, 1, 2), keepdims=True)))
    out[...] = dot.reshape(out.shape, order="F")


def cumulative_sum(x: np.ndarray, out: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> None:
    """``out`` = the running sum of ``x`` along OpenVX ``axis`` in float64: from the last element back when
    ``reverse``; ``exclusive`` leaves each element out of its own sum (the first sum is 0)."""
    v = np.asarray(x, np.float64)
    if reverse:
        v = np.flip(v, axis)
    sums = np.cumsum(v, axis=axis)
    if exclusive:
        sums = np.concatenate([np.zeros_like(np.take(sums, [0], axis=axis)),
                               np.take(sums, np.arange(v.shape[axis] - 1), axis=axis)], axis=axis)
    out[...] = np.flip(sums, axis) if reverse else sums
