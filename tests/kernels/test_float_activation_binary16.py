"""The float32 activation kernel's binary16 mode (``frontend/float_activation``): float16 arrays are widened as
they are loaded and each result is rounded once to binary16 as it is stored, and the float16 activation layer's
exact functions (relu, brelu, abs, square, sqrt, linear) run on it.

Every check is bit for bit, over every binary16 bit pattern (NaNs with payloads of both signs, infinities,
subnormals, -0) in random orders and random shapes, bound and native, serial and shared with the helpers: against
the float32 kernel on the widened values rounded once by NumPy (``astype(np.float16)``), and against the plain
float64 reference of the layer's expressions (``test_activation_float32_loops.reference``) rounded to float32 and
then by NumPy to binary16, which is the documented float16 semantics (a NaN result is the canonical quiet NaN).
"""
from __future__ import annotations

import numpy as np
import pytest
from test_activation_float32_loops import EXACT, PARAMETERS, reference

from openvx_nn.kernels.frontend import float_activation as fa
from openvx_nn.kernels.openvx import float16_layers
from openvx_nn.kernels.support import native

F16 = np.float16
CASES = [(f, a, b) for f in EXACT for a, b in ([(0.0, 0.0)] if f in ("relu", "abs", "square", "sqrt")
                                               else PARAMETERS + [(1.0, 15.5), (1.0, 16.0)])]
SIZES = [1, 31, 1 << 16, 300_001]  # serial, one row, every pattern once, shared with the helpers


def _patterns(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` binary16 values: every bit pattern in a random order, repeated or cut to ``size``."""
    return np.resize(rng.permutation(1 << 16).astype(np.uint16), size).view(F16)


def _rounded(singles: np.ndarray) -> np.ndarray:
    """NumPy's binary16 rounding (nearest-even) of float32 values, as bits."""
    with np.errstate(over="ignore"):
        return singles.astype(F16).view(np.uint16)


def _float32_rounded(x16: np.ndarray, function: str, a: float, b: float) -> np.ndarray:
    """The float32 kernel on the widened values, rounded once by NumPy: the float16 semantics' bits."""
    wide = x16.astype(np.float32)
    out = np.empty_like(wide)
    fa.apply(wide, out, function, a, b)
    return _rounded(out)


def _shape(rng: np.random.Generator, size: int) -> tuple[int, ...]:
    """A random shape of ``size`` elements (its factors in random order, rank 1 to 4)."""
    factors, n, p = [], size, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    rank = int(rng.integers(1, 5))
    dims = [1] * rank
    for f in factors:
        dims[int(rng.integers(0, rank))] *= f
    return tuple(dims)


@pytest.mark.parametrize("size", SIZES)
def test_binary16_mode_is_the_float32_kernel_rounded_once_and_the_float64_reference(size):
    rng = np.random.default_rng([1651, size])
    for function, a, b in CASES:
        x16 = _patterns(rng, size).reshape(_shape(rng, size))
        if rng.random() < 0.5:
            x16 = np.asfortranarray(x16)
        want = _float32_rounded(x16, function, a, b)
        plain = _rounded(reference(function, x16.astype(np.float32), a, b).view(np.float32))
        assert np.array_equal(want, plain), function  # the two references agree
        bound = np.full(x16.shape, 7.0, F16, order="F" if x16.flags.f_contiguous else "C")
        fa.bind(x16, bound, function, a, b)()
        assert np.array_equal(bound.view(np.uint16), want), (function, a, b)
        entered = np.full_like(bound, 7.0)
        entry = fa.native_entry(x16, entered, function, a, b)
        assert entry is not None and native.run(entry) == 0
        assert np.array_equal(entered.view(np.uint16), want), (function, a, b)
        assert not (np.isnan(bound) & (bound.view(np.uint16) != 0x7E00)).any()  # NaN: the canonical quiet NaN


BOUNDS = [6.0, 0.1, 1.0, 2.0 ** -24, 1.5 * 2.0 ** -24, 2.0 ** -25, 1e-30, 2.0 ** -14 * 1.0001, 65504.0, 65519.0,
          65520.0, 1e6, np.inf, 0.0, -0.0, -1e-30, -2.5, -65504.0, -1e6, -np.inf, np.nan, 6.0009765625, 6.001]
"""brelu bounds: binary16 values and values between two (normal, subnormal, below the smallest), at and past the
largest finite binary16, infinities, signed zeros, negatives (every non-negative input exceeds them) and NaN."""


@pytest.mark.parametrize("size", [1 << 16, 300_001])
def test_binary16_selects_give_the_float32_bits_for_every_bound_and_pattern(size):
    """relu, brelu and abs select on binary16 bits in integer lanes; each stored bit pattern is the float32
    kernel's result rounded once, for every input pattern and every kind of bound, bound and native (serial, and
    shared with the helpers at the larger size)."""
    rng = np.random.default_rng([1655, size])
    cases = [("relu", 0.0), ("abs", 0.0)] + [("brelu", a) for a in BOUNDS]
    for function, a in cases:
        x16 = _patterns(rng, size)
        want = _float32_rounded(x16, function, a, 0.0)
        with np.errstate(invalid="ignore"):
            plain = _rounded(reference(function, x16.astype(np.float32), a, 0.0).view(np.float32))
        assert np.array_equal(want, plain), (function, a)  # the two references agree
        bound = np.full_like(x16, 7.0)
        fa.bind(x16, bound, function, a)()
        assert np.array_equal(bound.view(np.uint16), want), (function, a)
        entered = np.full_like(x16, 7.0)
        entry = fa.native_entry(x16, entered, function, a)
        assert entry is not None and native.run(entry) == 0
        assert np.array_equal(entered.view(np.uint16), want), (function, a)


def test_every_function_of_the_kernel_has_the_mode():
    """The mode is the load and the store, not a function: the approximated functions too give the float32
    kernel's results rounded once."""
    rng = np.random.default_rng(1652)
    x16 = _patterns(rng, 1 << 16)
    for function in fa.FUNCTIONS:
        got = np.empty_like(x16)
        fa.apply(x16, got, function, 0.5, 2.0)
        assert np.array_equal(got.view(np.uint16), _float32_rounded(x16, function, 0.5, 2.0)), function


def test_in_place_strided_and_mismatched_binary16_arrays():
    rng = np.random.default_rng(1653)
    x16 = _patterns(rng, 40 * 30).reshape(40, 30)
    want = _float32_rounded(x16, "linear", 0.1, -0.3)
    same = x16.copy()
    entry = fa.native_entry(same, same, "linear", 0.1, -0.3)
    assert entry is not None and native.run(entry) == 0
    assert np.array_equal(same.view(np.uint16), want)
    same = x16.copy()
    fa.apply(same, same, "linear", 0.1, -0.3)
    assert np.array_equal(same.view(np.uint16), want)
    strided = np.zeros((40, 60), F16)[:, ::2]  # no flat view: bound through a copy, no native entry
    fa.apply(x16[::-1], strided, "linear", 0.1, -0.3)
    assert np.array_equal(strided[::-1].view(np.uint16), want)
    assert fa.native_entry(x16[::-1], strided, "linear", 0.1, -0.3) is None
    assert fa.native_entry(x16[:, 1:], x16[:, :-1], "relu") is None  # overlapping other than in place
    with pytest.raises(ValueError, match="both float32 or both float16"):
        fa.bind(x16, np.empty(x16.shape, np.float32), "relu")
    with pytest.raises(ValueError, match="both float32 or both float16"):
        fa.bind(x16.view(np.uint16), x16.view(np.uint16), "relu")


@pytest.mark.parametrize("function", EXACT)
def test_the_float16_layer_runs_its_exact_functions_on_the_float32_kernel(function):
    """The layer's float16 route is ``float_activation``'s binary16 entry (no per-value float64 expression),
    with the layer's parameters taken as float32 values."""
    rng = np.random.default_rng([1654, len(function)])
    shape = tuple(int(n) for n in rng.integers(1, 40, 3))
    x16 = _patterns(rng, int(np.prod(shape))).reshape(shape, order="F")
    out = np.zeros(shape, F16, order="F")
    a, b = 6.0000001, -0.30000001  # not float32 values: the layer rounds them first
    entry = float16_layers.native_activation(x16, out, function, a, b)
    assert entry is not None and entry.address == fa._entry(True)
    assert native.run(entry) == 0
    pa, pb = (float(np.float32(a)) if function in ("brelu", "linear") else 0.0,
              float(np.float32(b)) if function == "linear" else 0.0)
    want = _rounded(reference(function, x16.astype(np.float32), pa, pb).view(np.float32))
    assert np.array_equal(out.view(np.uint16), want)
    bound = np.zeros_like(out)
    float16_layers.bind_activation(x16, bound, function, a, b)()
    assert np.array_equal(bound.view(np.uint16), want)
    assert float16_layers.native_activation(x16, out, "logistic") is None  # the widening edges keep those
