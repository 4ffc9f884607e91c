"""Normalizations over chosen axes (``frontend/moments``): the bound call and the native entry, serial and shared
with the engine's helpers, against a plain float64 reference written from the definitions, over random shapes,
axes, modes and scales."""
from __future__ import annotations

import math

import numpy as np
import pytest

from openvx_nn.kernels.engine import gang, isa, workers
from openvx_nn.kernels.frontend import moments
from openvx_nn.kernels.support import native

EPS32 = 2.0 ** -23


def reference(x, axes, mode, eps, gamma=None, beta=None):
    """Per index of the other axes: centre by the mean; divide by sqrt(mean squared deviation + eps)
    ('standardize'), or the values by sqrt(sum of squares + eps) ('l2'); then * gamma + beta."""
    out = np.empty(x.shape)
    others = [i for i in range(x.ndim) if i not in axes]
    for index in np.ndindex(*[x.shape[i] for i in others]):
        where = [slice(None)] * x.ndim
        for i, v in zip(others, index):
            where[i] = v
        values = [float(v) for v in x[tuple(where)].reshape(-1)]
        if mode == "l2":
            y = np.array(values) / math.sqrt(math.fsum(v * v for v in values) + eps)
        else:
            mean = math.fsum(values) / len(values)
            y = np.array([v - mean for v in values])
            if mode == "standardize":
                y = y / math.sqrt(math.fsum(d * d for d in y) / len(values) + eps)
        out[tuple(where)] = y.reshape(x[tuple(where)].shape)
    if gamma is not None:  # broadcast OpenVX-order: its axes are the input's first ones
        out = out * gamma.astype(np.float64).reshape(gamma.shape + (1,) * (x.ndim - gamma.ndim))
    if beta is not None:
        out = out + beta.astype(np.float64).reshape(beta.shape + (1,) * (x.ndim - beta.ndim))
    return out


def _run_shared(entry) -> None:
    gang.summon(workers.helpers())
    with gang.held():
        assert native.run(entry) == 0


@pytest.mark.parametrize("seed", range(8))
def test_random_normalizations_native_and_bound_give_the_reference(seed):
    rng = np.random.default_rng([7301, seed])
    mode = ("center", "standardize", "l2")[seed % 3]
    rank = int(rng.integers(2, 5))
    shape = tuple(int(v) for v in rng.integers(1, 12, rank))
    if seed < 2:  # a Transformer's layer normalization: 128 tokens of 256 (rows shared with the helpers)
        shape, rank = (256, 128), 2
    first = int(rng.integers(1, rank))  # OpenVX order (the first axis fastest): the normalized axes lead
    axes = tuple(range(first))
    x = np.asfortranarray((rng.standard_normal(shape) * 3 + 1).astype(np.float32))
    gamma = np.asfortranarray(rng.standard_normal(shape[:first]).astype(np.float32)) if seed % 4 != 3 else None
    beta = np.asfortranarray(rng.standard_normal(shape[:first]).astype(np.float32)) if seed % 4 not in (2, 3) else None
    want = reference(x, axes, mode, 1e-5, gamma, beta)
    bound = np.full(shape, 7.0, np.float32, order="F")
    moments.bind_normalize(x, bound, axes, mode, 1e-5, gamma, beta)()
    got = np.full(shape, 7.0, np.float32, order="F")
    entry = moments.native_normalize(x, got, axes, mode, 1e-5, gamma, beta)
    assert entry is not None
    if x.size * moments.COST_PER_VALUE >= 150_000:
        assert gang.lends(entry) == (isa.threads() > 1)
    for _ in range(3):  # which runs a helper joins is the OS's say
        got[...] = 7.0
        _run_shared(entry)
        np.testing.assert_array_equal(got.view(np.int32), bound.view(np.int32))
    np.testing.assert_allclose(got, want, rtol=8 * EPS32, atol=1e-6)


def test_sums_of_many_values_stay_float64_accurate():
    """A row whose mean is large beside its spread: float64 sums keep the deviations (float32 ones would not)."""
    x = (np.float32(1000.0) + np.arange(4096, dtype=np.float32) % 7 * np.float32(1e-3)).reshape(1, -1)
    got = np.empty_like(x)
    moments.normalize(x, got, (1,), "standardize", 0.0)
    np.testing.assert_allclose(got, reference(x, (1,), "standardize", 0.0), rtol=1e-4, atol=1e-5)
