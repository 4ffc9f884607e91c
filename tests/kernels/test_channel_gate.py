"""``channel_gate``: ``out = x * f(g)`` with ``g`` broadcast over ``x`` gives, bit for bit, ``f`` on the float32
activation kernel followed by NumPy's broadcast float32 product, for every broadcast pattern it takes, on the bound
call and the native entry; the patterns it does not take and bad arrays are refused with a reason."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import channel_gate as k
from openvx_nn.kernels.frontend import float_activation as fa
from openvx_nn.kernels.support import native


def _pattern(rng):
    """(x's shape, g's shape), OpenVX order (first dim fastest): dims of g equal to x's, then of length 1, then
    equal again (each part possibly empty), with dims of length 1 in both anywhere."""
    rank = int(rng.integers(1, 6))
    x = tuple(int(d) for d in rng.integers(1, 7, rank))
    cut1, cut2 = sorted(int(c) for c in rng.integers(0, rank + 1, 2))
    g = tuple(d if (i < cut1 or i >= cut2) else 1 for i, d in enumerate(x))
    return x, g


def _want(x, g, function, a, b):
    squashed = np.empty_like(g)
    if function is None:
        squashed[...] = g
    else:
        fa.apply(g, squashed, function, a, b)
    return (x * squashed).astype(np.float32)  # a float32 product: correctly rounded


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(16))
def test_the_product_equals_the_activation_then_the_broadcast_product(seed):
    rng = np.random.default_rng([4700, seed])
    x_shape, g_shape = _pattern(rng)
    function = [None, "logistic", "tanh", "hard_sigmoid", "softplus"][seed % 5]
    a, b = (float(np.float32(1 / 6)), 0.5) if function == "hard_sigmoid" else (1.0, 1.0)
    x = np.asfortranarray((rng.standard_normal(x_shape) * 3).astype(np.float32))
    g = np.asfortranarray((rng.standard_normal(g_shape) * 4).astype(np.float32))
    if x.size > 3:
        x.reshape(-1, order="F")[:3] = [np.nan, np.inf, -0.0]
    want = _want(x, g, function, a, b)
    out = np.asfortranarray(np.full(x_shape, 7.0, np.float32))
    k.bind(x, g, out, function, a, b)()
    np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))
    out[...] = 7.0
    entry = k.native_entry(x, g, out, function, a, b)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))


def test_in_place_on_x():
    rng = np.random.default_rng(4701)
    x = np.asfortranarray(rng.standard_normal((8, 5, 3)).astype(np.float32))
    g = np.asfortranarray(rng.standard_normal((8, 1, 1)).astype(np.float32))
    want = _want(x, g, "logistic", 1.0, 1.0)
    k.bind(x, g, x, "logistic")()
    np.testing.assert_array_equal(x.view(np.int32), want.view(np.int32))


def test_patterns_it_does_not_take_and_bad_arrays_are_refused():
    assert k.split((4, 5, 6), (1, 5, 1)) is None  # equal, broadcast, equal, broadcast: four runs
    assert k.split((4, 5), (4, 5, 1)) is None  # ranks differ
    assert k.split((4, 5), (2, 5)) is None  # neither equal nor 1
    assert k.split((4, 5, 6, 2), (4, 1, 1, 2)) == (2, 30, 4)
    assert k.split((5, 6, 4, 2), (1, 1, 4, 2)) == (8, 30, 1)
    x = np.zeros((4, 5), np.float32, order="F")
    with pytest.raises(ValueError, match="does not broadcast"):
        k.bind(x, np.zeros((2, 5), np.float32, order="F"), x.copy(order="F"), "logistic")
    with pytest.raises(ValueError, match="expected float32"):
        k.bind(x.astype(np.float64), np.zeros((4, 1), np.float32), np.zeros((4, 5), np.float64), None)
    with pytest.raises(ValueError, match="unknown"):
        k.bind(x, np.zeros((4, 1), np.float32), x.copy(order="F"), "gelu")
    assert k.native_entry(x, np.zeros((2, 5), np.float32, order="F"), x.copy(order="F"), "logistic") is None
