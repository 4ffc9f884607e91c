"""The fast float32 activations (``frontend/float_activation``) against float64 NumPy written from each function's
definition, rounded once to float32: within the kernel's stated ulps over sweeps of float32 bit patterns (every
sign and exponent), dense runs where the evaluation switches formulas or the results turn subnormal, and the
special values; the same bits serial and shared, in place, in any layout and from the native entry."""
from __future__ import annotations

import numpy as np
import pytest
from kernel_testing import assert_float32_ulps

from openvx_nn.kernels.frontend import float_activation as fa
from openvx_nn.kernels.support import native

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, -1.1754944e-38,
                     3.4028235e38, -3.4028235e38, 88.72283, 88.72284, -87.33655, -103.27893, -103.97208, -104.0,
                     -149.9, -150.0, -150.1, 0.625, -0.625, 0.6249999, -0.88137, 20.0, -20.0], np.float32)
PARAMETERS = {"logistic": [(1.0, 1.0)], "tanh": [(1.0, 1.0), (1.7159, 2 / 3), (0.25, 3.0)],
              "swish": [(1.0, 1.0)], "hard_sigmoid": [(1 / 6, 0.5), (0.2, 0.5)],
              "hard_swish": [(1 / 6, 0.5), (0.2, 0.4), (1.0, 1.0), (3.0, -2.5), (0.25, 0.0), (1e20, 1e-30)], "softplus": [(1.0, 1.0)], "exp": [(1.0, 1.0)]}
CASES = [(f, ab) for f, abs_ in PARAMETERS.items() for ab in abs_]


def _sigmoid(v: np.ndarray) -> np.ndarray:
    # 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below: neither form overflows on its side
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def reference(function: str, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The function in float64 from its definition (``a``, ``b`` as float32 values), rounded to float32."""
    with np.errstate(invalid="ignore"):  # a signalling NaN's cast
        v = x.astype(np.float64)
    a, b = float(np.float32(a)), float(np.float32(b))
    with np.errstate(all="ignore"):
        if function == "logistic":
            r = _sigmoid(v)
        elif function == "tanh":
            r = a * np.tanh(b * v)
        elif function == "swish":
            r = v * _sigmoid(b * v)
        elif function == "hard_sigmoid":
            r = np.clip(a * v + b, 0.0, 1.0)
        elif function == "hard_swish":
            r = v * np.clip(a * v + b, 0.0, 1.0)
        elif function == "softplus":
            r = np.maximum(v, 0.0) + np.log1p(np.exp(-np.abs(v)))
        else:
            r = np.exp(v)
        return r.astype(np.float32)


def _ulps(function: str, a: float, b: float) -> int:
    # A scaled tanh rounds b * x and a * t in float32 first: a step more.
    return fa.ULPS[function] + ((a, b) != (1.0, 1.0) and function == "tanh")


def _patterns(step: int, offset: int) -> np.ndarray:
    bits = np.arange(offset, 2 ** 32, step, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


def _runs() -> np.ndarray:
    """Every float32 in short runs about the points where the evaluation switches formula or range."""
    centres = np.array([0.625, -0.625, 0.3, -0.881374, 0.881374, 1.0, -1.0, 0.5, -0.5, 1e-3, -1e-3, 44.0, -44.0,
                        88.72, -87.3, -88.7, -100.0, -103.3, -104.0, -149.0, -150.0, 16.6, -16.6, 8.0, -8.0, 3.0,
                        -3.0, 2.5e-8, -2.5e-8], np.float32)
    bits = centres.view(np.int32)[:, None].astype(np.int64) + np.arange(-3000, 3000)
    return bits.astype(np.int32).reshape(-1).view(np.float32)


@pytest.mark.parametrize("function, ab", CASES, ids=[f"{f}-{a:g}-{b:g}" for f, (a, b) in CASES])
def test_every_exponent_and_the_switch_points_are_within_the_stated_ulps(function, ab):
    x = np.concatenate([_patterns(4093, CASES.index((function, ab))), _runs(), SPECIALS])
    out = np.full_like(x, 7.0)
    fa.apply(x, out, function, *ab)
    assert_float32_ulps(out, reference(function, x, *ab), _ulps(function, *ab), x)


def test_every_nan_is_the_canonical_quiet_nan():
    x = np.array([np.nan, -np.nan, np.nan, -np.inf, np.inf], np.float32)
    x.view(np.uint32)[2] = 0x7F800001  # signalling, with a payload
    for function, (a, b) in CASES:
        out = np.zeros_like(x)
        fa.apply(x, out, function, a, b)
        nan = np.isnan(out)
        assert nan[:3].all() and (out.view(np.uint32)[nan] == np.float32(np.nan).view(np.uint32)).all(), function


def test_swish_of_minus_infinity_is_nan_as_the_product_of_its_factors():
    out = np.zeros(3, np.float32)
    fa.apply(np.array([-np.inf, -1e30, -200.0], np.float32), out, "swish")
    assert np.isnan(out[0]) and out[1:].tolist() == [0.0, 0.0] and np.signbit(out[1:]).all()


def _bits(v) -> list[int]:
    return np.asarray(v, np.float32).view(np.uint32).tolist()


def test_swish_edges_give_the_bits_of_the_sigmoid_and_multiply_layers():
    # x * logistic(x) in IEEE float32: the signed zeros kept, +inf * 1, -inf * 0 and NaN the canonical NaN, a
    # subnormal x halved (exactly, or rounded once), the largest values themselves
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 2e-45, -2e-45, 1.1754942e-38, -1.1754942e-38,
                  3.4028235e38, -3.4028235e38, 150.0, -150.0, -150.00002], np.float32)
    out = np.full_like(x, 7.0)
    fa.apply(x, out, "swish")
    nan = float(np.float32(np.nan))
    half = (x[5:11].astype(np.float64) / 2).astype(np.float32)  # logistic(x) = 1/2 within 2**-150 of x's size
    want = [0.0, -0.0, np.inf, nan, nan, *half, 3.4028235e38, -0.0, 150.0, -0.0, -0.0]
    assert _bits(out) == _bits(want)


@pytest.mark.parametrize("seed", range(3))
def test_swish_of_random_values_is_within_the_stated_ulps(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(200_000) * 10 ** rng.uniform(-3, 2.3, 200_000),
                        rng.uniform(-105, -85, 50_000)]).astype(np.float32)
    out = np.empty_like(x)
    fa.apply(x, out, "swish")
    assert_float32_ulps(out, reference("swish", x, 1.0, 1.0), fa.ULPS["swish"], x)


def _thresholded_reference(x: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    """CoreML's layers one by one in float64: ``t = x if x >= c else 0``, then ``t * min(max(a t + b, 0), 1)``."""
    with np.errstate(invalid="ignore"):
        v = x.astype(np.float64)
    a, b, c = (float(np.float32(p)) for p in (a, b, c))
    with np.errstate(all="ignore"):
        t = np.where(v >= c, v, 0.0)
        return (t * np.clip(a * t + b, 0.0, 1.0)).astype(np.float32)


THRESHOLDS = [(1 / 6, 0.5, -3.0), (0.25, 0.5, -2.0), (0.2, 0.4, -5.0), (1 / 6, 0.5, 1.5), (1e20, 1e-30, -1.0)]


@pytest.mark.parametrize("a, b, c", THRESHOLDS)
def test_thresholded_hard_swish_is_within_a_step_and_gives_the_layers_bytes_at_the_edges(a, b, c):
    t = np.float32(c)
    edges = np.array([t, np.nextafter(t, np.float32(-np.inf)), np.nextafter(t, np.float32(np.inf)), 0.0, -0.0,
                      np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, -3.0, -2.9999998, 3.0, 1e30, -1e30], np.float32)
    x = np.concatenate([_patterns(4093, 7), _runs(), SPECIALS, edges])
    out = np.full_like(x, 7.0)
    fa.apply(x, out, "thresholded_hard_swish", a, b, c)
    want = _thresholded_reference(x, a, b, c)
    assert_float32_ulps(out, want, fa.ULPS["thresholded_hard_swish"], x)
    below = ~(x >= t)  # NaN among them
    assert (out.view(np.uint32)[below] == 0).all()  # +0, the thresholded ReLU's zero times the hard sigmoid's
    exact = (want == 0) | ~np.isfinite(want)  # zeros of either sign, infinities: the layers' bytes
    assert _bits(out[exact]) == _bits(want[exact])


@pytest.mark.parametrize("function", fa.FUNCTIONS)
def test_shared_serial_in_place_and_any_layout_give_the_same_bits(function):
    rng = np.random.default_rng(sum(map(ord, function)))
    x = (rng.standard_normal((64, 40, 50)) * 6).astype(np.float32)  # 128000 values: shared with the helpers
    rows = fa.bind(x, np.empty_like(x), function)
    want = np.empty_like(x)
    fa._rows(x.reshape(-1), want.reshape(-1), fa.code_of(function), 1.0, 1.0, 0.0, 0, rows.n_rows)  # serial
    got = np.empty_like(x)
    fa.apply(x, got, function)
    assert rows.lend and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    same = x.copy()
    fa.apply(same, same, function)
    assert np.array_equal(same.view(np.uint32), want.view(np.uint32))
    fortran = np.asfortranarray(x)
    out = np.empty(x.shape, np.float32, order="F")
    fa.apply(fortran, out, function)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))
    strided = np.empty((64, 40, 100), np.float32)[:, :, ::2]
    fa.apply(x[:, ::-1, :], strided, function)
    assert np.array_equal(strided[:, ::-1, :].view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("size", [1, 7, 5000, 200_000])
def test_the_native_entry_gives_the_bits_of_the_bound_call(size):
    rng = np.random.default_rng(size)
    x = (rng.standard_normal(size) * 10).astype(np.float32)
    cases = [(function, a, b, 0.0) for function, (a, b) in CASES]
    for function, a, b, c in cases + [("thresholded_hard_swish", *abc) for abc in THRESHOLDS]:
        want, got = np.empty_like(x), np.full_like(x, 7.0)
        fa.apply(x, want, function, a, b, c)
        entry = fa.native_entry(x, got, function, a, b, c)
        assert entry is not None and native.run(entry) == 0
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), function


def test_strided_or_overlapping_arrays_have_no_native_entry_and_bad_calls_raise():
    x = np.ones(16, np.float32)
    assert fa.native_entry(x[::2], np.empty(8, np.float32), "logistic") is None
    assert fa.native_entry(x[1:], x[:-1], "logistic") is None
    assert fa.native_entry(x[:0], x[:0], "logistic") is None
    with pytest.raises(ValueError, match="unknown"):
        fa.bind(x, x, "gelu")
    with pytest.raises(ValueError, match="float32"):
        fa.bind(x.astype(np.float64), x.astype(np.float64), "exp")
    with pytest.raises(ValueError, match="shape"):
        fa.bind(x, x[:4], "exp")
