"""Random tensors from a documented bit stream (CoreML's random layers; Apple's stream is not ours to copy).

The stream: NumPy's PCG64 bit generator (whose raw output NumPy keeps stable across versions) seeded with the
seed as an unsigned 64-bit integer (``seed mod 2**64``, through NumPy's SeedSequence, also stable); ``None``
seeds it from the operating system's entropy. Its raw 64-bit words become uniforms ``u = (word >> 11) * 2**-53``
in ``[0, 1)``, one per element in row-major order, except the normal distribution, which takes two per element
(``u1``, ``u2``: words ``2k`` and ``2k + 1``) through Box-Muller's cosine branch. Values are computed in float64
and stored once.
"""
from __future__ import annotations

import numpy as np

DISTRIBUTIONS = ("normal", "uniform", "bernoulli")
"""``normal(mean, std)``: ``mean + std * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)``; ``uniform(low, high)``:
``low + (high - low) * u``; ``bernoulli(prob, unused)``: 1 where ``u < prob``, else 0."""


def uniforms(seed: int | None, count: int) -> np.ndarray:
    """The first ``count`` uniforms of the stream of ``seed``."""
    generator = np.random.PCG64(None if seed is None else int(seed) % 2**64)
    return (generator.random_raw(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def sample(out: np.ndarray, distribution: str, a: float, b: float, seed: int | None) -> None:
    """Fill ``out`` (row-major) with draws of ``distribution`` with parameters ``a``, ``b`` from ``seed``'s stream."""
    n = out.size
    if distribution == "normal":
        u = uniforms(seed, 2 * n)
        values = a + b * np.sqrt(-2.0 * np.log1p(-u[0::2])) * np.cos(2.0 * np.pi * u[1::2])
    elif distribution == "uniform":
        values = a + (b - a) * uniforms(seed, n)
    elif distribution == "bernoulli":
        values = (uniforms(seed, n) < a).astype(np.float64)
    else:
        raise ValueError(f"unknown distribution {distribution!r} (expected one of {', '.join(DISTRIBUTIONS)})")
    out[...] = values.reshape(out.shape)


def categorical(x: np.ndarray, out: np.ndarray, is_logits: bool, eps: float, temperature: float,
                seed: int | None) -> None:
    """``out[..., k]`` = category ``k``'s draw for each row of ``x`` (last axis: the categories): the logits are
    ``x`` (or ``log(x + eps)`` for probabilities) divided by ``temperature``, their softmax the distribution; draw
    ``k`` of row ``r`` takes uniform ``r * samples + k`` of the stream and is the first category whose running
    probability passes it (as a float). Rows whose distribution is not finite raise ``ValueError``."""
    v = np.asarray(x, np.float64)
    rows, categories = int(np.prod(v.shape[:-1])), v.shape[-1]
    samples = out.shape[-1]
    if not is_logits:
        if (v < 0).any() or not np.isfinite(v).all():
            raise ValueError("probabilities must be finite and at least 0")
        with np.errstate(divide="ignore"):
            v = np.log(v + eps)
    logits = (v / temperature).reshape(rows, categories)
    top = logits.max(axis=1, keepdims=True)
    weights = np.exp(logits - top)
    running = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    if not np.isfinite(running).all():
        raise ValueError("a row's category distribution is not finite (logits of inf or NaN, or all probabilities 0 "
                         "with eps 0)")
    u = uniforms(seed, rows * samples).reshape(rows, samples)
    drawn = np.empty((rows, samples))
    for r in range(rows):
        drawn[r] = np.minimum(np.searchsorted(running[r], u[r] * running[r, -1], side="right"), categories - 1)
    out[...] = drawn.reshape(out.shape)
