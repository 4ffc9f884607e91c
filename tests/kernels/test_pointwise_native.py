"""The native entry of the piecewise-linear pointwise functions and log gives the bits of the NumPy kernel (which the
CoreML layer tests hold to the seed's formulas) over random and edge inputs and parameters."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import pointwise as k
from openvx_nn.kernels.support import native

EDGES = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.4e38, -3.4e38, -3.0, 6.0, 1.0], np.float32)


@pytest.mark.parametrize("function", k.NATIVE)
def test_the_native_entry_gives_the_bits_of_the_numpy_kernel(function):
    rng = np.random.default_rng(sum(map(ord, function)))
    for _ in range(4):
        n = int(rng.integers(1, 300))
        x = np.concatenate([(4 * rng.standard_normal(n)).astype(np.float32), EDGES])
        x = x[rng.permutation(x.size)].reshape(-1, int(rng.choice([1, x.size])) if rng.integers(2) else x.size)
        scale, shift = (1.0, 0.0) if rng.integers(2) else (float(rng.uniform(-2, 2)), float(rng.normal()))
        alpha, beta = sorted(float(v) for v in rng.uniform(-3, 3, 2))
        want = np.empty_like(x)
        k.prepare(x, want, function, scale, shift, alpha, beta)()
        if rng.integers(2):  # an OpenVX tensor's array: Fortran order
            x = np.asfortranarray(x)
            want = np.asfortranarray(want)
        got = np.full_like(x, 7.0)
        entry = k.native_pointwise(x, got, function, scale, shift, alpha, beta)
        assert entry is not None
        assert native.run(entry) == 0
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_other_functions_and_strided_arrays_have_no_native_entry():
    x = np.ones((4, 4), np.float32)
    assert k.native_pointwise(x, np.empty_like(x), "sin") is None
    assert k.native_pointwise(x[:, ::2], np.empty((4, 2), np.float32), "relu") is None
    assert k.native_pointwise(x, np.empty((4, 4), np.float32, order="F"), "relu") is None
