"""The float32 softmax kernel against a plain float64 softmax, within its stated bound, over randomized shapes,
axes, layouts and edge values; and every front end's float32 softmax running on it."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import LAYOUTS, blank, placed, random_shape

from openvx_nn.kernels.frontend import depth_normalization, float_softmax
from openvx_nn.kernels.frontend.float_activation import exp32_scaled
from openvx_nn.kernels.openvx import softmax as openvx_softmax
from openvx_nn.kernels.support import jit, native

RELATIVE = 2.0 ** -20
"""The documented bound: ``|y - softmax| <= RELATIVE * softmax + 2**-150``."""
SMALLEST = 2.0 ** -150  # half the smallest subnormal: outputs below the normal range are rounded once


def reference(x: np.ndarray, axis: int, beta: float = 1.0) -> np.ndarray:
    """The softmax in float64, row by row, from its definition: ``exp(beta (x_i - max)) / sum_j exp(...)``; a row
    with a NaN or +inf, or only -inf, is NaN throughout (the formula's IEEE result)."""
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    y = np.empty(v.shape)
    for index in np.ndindex(*v.shape[:-1]):
        row = [float(t) for t in v[index]]
        if any(math.isnan(t) for t in row) or math.inf in row or all(t == -math.inf for t in row):
            y[index] = math.nan
            continue
        m = max(row)
        e = [math.exp((t - m) * beta) for t in row]
        s = sum(e)
        y[index] = [t / s for t in e]
    return np.moveaxis(y, -1, axis)


def assert_within_bound(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float32 and got.shape == want.shape
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), "NaN where the reference has none, or a number where it has NaN"
    g, w = got[~nan].astype(np.float64), want[~nan]
    excess = np.abs(g - w) - (RELATIVE * w + SMALLEST)
    worst = int(np.argmax(excess)) if excess.size else 0
    assert excess.size == 0 or excess[worst] <= 0, f"got {g[worst]!r}, expected {w[worst]!r}"


def logits(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gentle to very wide spreads, a shift far from zero; or magnitudes from 1e-4 to 30 side by side, whose
    differences from the maximum float32 does not hold exactly."""
    if rng.random() < 0.3:
        return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 1.5, shape)).astype(np.float32)
    x = rng.standard_normal(shape) * rng.choice([0.1, 3.0, 30.0, 300.0]) + rng.choice([0.0, -1e4, 5e4])
    return x.astype(np.float32)


@pytest.mark.parametrize("seed", range(8))
def test_random_shapes_axes_and_layouts_are_within_the_bound(seed):
    rng = np.random.default_rng([4700, seed])
    for ndim in range(1, 7):
        shape = random_shape(rng, ndim, max_size=600, max_dim=40)
        axis = int(rng.integers(ndim))
        x = placed(rng, logits(rng, shape))
        out = blank(rng, shape, np.float32, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        float_softmax.softmax(x, out, axis)
        assert_within_bound(out, reference(x, axis))


@pytest.mark.parametrize("beta", [0.25, 1.0, 1.7, 1e-3])
def test_beta_scales_the_differences(beta):
    rng = np.random.default_rng([4701, int(beta * 1000)])
    x = logits(rng, (13, 37))
    out = np.empty_like(x)
    float_softmax.softmax(x, out, 1, beta)
    assert_within_bound(out, reference(x, 1, beta))


def test_edge_values():
    big = float(np.finfo(np.float32).max)
    rows = [
        [big, -big, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],  # differences beyond float32
        [-big] * 9,  # equal: exactly 1/9 each
        [1.0, -np.inf, 2.0, -np.inf, 0.0, 0.0, 0.0, 0.0, 0.0],  # -inf classes give exactly 0
        [1.0, np.nan, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # NaN anywhere: NaN throughout
        [np.nan, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [1.0, np.inf, 2.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # +inf: inf - inf is NaN
        [-np.inf] * 9,
        [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
        [1e-45, -1e-45, 0.0, 88.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.0, -87.0, -95.0, -103.0, -103.3, -103.9, -104.5, -110.0, -200.0],  # outputs into the subnormals
        [100.0, 99.0, -3.0, -90.0, -100.0, -101.0, -102.0, -103.0, -1000.0],
        [0.0, -3.0, -103.95, -200.0, -3e3, -np.inf, -1e30, -104.0, -103.9],  # y of -103.95 just below 2**-150
        [31.0, 1.2345678e-3, -2.3456789e-4, 7.654321, -9.876543e-3, 30.999998, 0.1, -50.0, -40.00001],
    ]
    x = np.array(rows, np.float32)
    out = np.empty_like(x)
    float_softmax.softmax(x, out, 1)
    want = reference(x, 1)
    assert_within_bound(out, want)
    assert (out[1] == np.float32(1 / 9)).all() and out[2, 1] == 0.0 and out[2, 3] == 0.0
    assert (out[9, 1:6] > 0).all() and (out[9, 6:] == 0).all()  # subnormal outputs kept, not flushed
    one = np.array([[3.5], [-np.inf], [np.nan]], np.float32)  # a single class: 1, or NaN
    got = np.empty_like(one)
    float_softmax.softmax(one, got, 1)
    assert got[0, 0] == 1.0 and np.isnan(got[1:]).all()


@jit.kernel
def _exps_scaled(hi, out):
    for i in range(hi.size):
        out[i] = exp32_scaled(hi[i], np.int32(64))


def _lane_sum(terms: list[float]) -> float:
    """The documented order of the float64 sum: group ``g`` of eight terms into accumulator ``g % 4`` (term
    ``8g + j`` into its lane ``j``), accumulators combined (0, 1), (2, 3), lanes ((0, 1), (2, 3)), ((4, 5), (6, 7)),
    then the tail one by one."""
    whole = len(terms) // 8 * 8
    accumulators = [[0.0] * 8 for _ in range(4)]
    for k in range(whole):
        accumulators[k // 8 % 4][k % 8] += terms[k]
    a0, a1, a2, a3 = accumulators
    lanes = [(a0[j] + a1[j]) + (a2[j] + a3[j]) for j in range(8)]
    total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for t in terms[whole:]:
        total += t
    return total


def _exact_rest(v: float, m: float, hi: float) -> float:
    """``(v - m) - hi`` computed exactly (a float32 value whenever ``hi`` is the rounded difference), or NaN where
    an operand is not finite."""
    if not all(math.isfinite(t) for t in (v, m, hi)):
        return math.nan
    return float(Fraction(v) - Fraction(m) - Fraction(hi))


def formula(row: np.ndarray, beta: float) -> np.ndarray:
    """The module text's formula step by step in NumPy, one element at a time in float32/float64 as written
    there (the exponential is ``float_activation``'s, tested on its own): the bits the kernel must give."""
    m = np.float64(row[0] if np.isnan(row[0]) else np.nanmax(row))  # a NaN never replaces the maximum
    with np.errstate(invalid="ignore", over="ignore"):
        if beta == 1.0:  # hi + lo is x - m exactly: hi the float32 difference, lo the rest (exact rationals)
            hi = (row - np.float32(m)).astype(np.float32)
            lo = np.array([_exact_rest(float(v), float(m), float(h)) for v, h in zip(row, hi)], np.float32)
        else:
            d = (row.astype(np.float64) - m) * beta
            hi = d.astype(np.float32)
            lo = (d - hi.astype(np.float64)).astype(np.float32)
        lo[~(np.abs(lo) < 1)] = 0
        e = np.empty_like(hi)
        _exps_scaled(hi, e)
        e = e + e * lo
        return (e.astype(np.float64) * (1.0 / _lane_sum([float(v) for v in e]))).astype(np.float32)


@pytest.mark.parametrize("seed", range(4))
def test_rows_of_every_tail_give_the_formulas_bits(seed):
    """Rows of random lengths 1 .. 300 (every tail of the eight lanes and of the vector loops) with edge values
    (-inf, the largest floats, runs of equal values, subnormals, NaN, +inf): the kernel's bytes are the formula's
    (NaN where it is NaN), and within the bound of the float64 softmax."""
    rng = np.random.default_rng([4703, seed])
    big = float(np.finfo(np.float32).max)
    edges = np.array([-np.inf, big, -big, 1e-45, -1e-40, 0.0, -0.0, 88.0, -104.0, np.nan, np.inf], np.float32)
    for _ in range(40):
        n = int(rng.integers(1, 301))
        row = logits(rng, (n,))
        kind = rng.integers(4)
        if kind == 1:
            row[rng.integers(0, n, max(1, n // 16))] = rng.choice(edges[:9], max(1, n // 16))
        elif kind == 2:
            row[:] = row[0]  # all equal
        elif kind == 3 and rng.random() < 0.5:
            row[rng.integers(n)] = rng.choice(edges[9:])
        beta = float(rng.choice([1.0, 0.25, 1.7]))
        x = np.stack([row, row[::-1]])
        out = np.empty_like(x)
        float_softmax.softmax(x, out, 1, beta)
        for got, r in zip(out, x):
            want = formula(r, beta)
            nan = np.isnan(want)
            assert (np.isnan(got) == nan).all()
            np.testing.assert_array_equal(got[~nan].view(np.int32), want[~nan].view(np.int32))
        assert_within_bound(out, reference(x, 1, beta))


@jit.kernel(error_model="numpy")
def _float64_split_rows(x, out, beta):
    """Every row of ``x`` by the float64 split (``_softmax_row``, the route of every ``beta`` but 1)."""
    low = np.empty(x.shape[1], np.float32)
    for r in range(x.shape[0]):
        float_softmax._softmax_row(x[r], out[r], low, x.shape[1], beta)


@pytest.mark.parametrize("seed", range(3))
def test_beta_one_gives_the_float64_splits_bits_where_that_difference_is_exact(seed):
    """Rows of 1 .. 300 whose values lie within 2**20 of each other in magnitude (every x - m exact in float64),
    with equal values, zeros of both signs, -inf and subnormals beside a subnormal maximum: the float32 TwoSum
    route gives the very bytes of the float64 split at beta 1."""
    rng = np.random.default_rng([4704, seed])
    for _ in range(30):
        n = int(rng.integers(1, 301))
        row = (rng.standard_normal(n) * rng.choice([0.1, 3.0, 30.0])).astype(np.float32)
        kind = rng.integers(4)
        if kind == 1:
            row[rng.integers(0, n, max(1, n // 8))] = rng.choice(np.array([-np.inf, 0.0, -0.0], np.float32))
        elif kind == 2:
            row[:] = row[0]
        elif kind == 3:
            row = (rng.standard_normal(n) * 1e-40).astype(np.float32)  # subnormals only
        x = np.stack([row, row[::-1]])
        got, old = np.empty_like(x), np.empty_like(x)
        float_softmax.softmax(x, got, 1)
        _float64_split_rows(x, old, 1.0)
        np.testing.assert_array_equal(got.view(np.int32), old.view(np.int32))


def test_differences_float64_rounds_are_split_exactly():
    """x - m with exponents more than 29 apart (a maximum of 40 to 120 beside values near 3e-8 with low mantissa
    bits set, below float64's grid at the maximum): hi + lo is the exact difference (the formula's bytes), not the
    float64 split's, and within the bound."""
    rng = np.random.default_rng(4705)
    tiny = (np.float32(2.0 ** -25) * (1 + (2 * rng.integers(0, 2 ** 22, (64, 40)) + 1) / 2.0 ** 23)).astype(np.float32)
    x = np.concatenate([rng.uniform(40, 120, (64, 1)).astype(np.float32), tiny, -tiny], axis=1)
    m = x[:, :1].astype(np.float64)
    d = x.astype(np.float64) - m
    rounded = (d - d.astype(np.float32).astype(np.float64)).astype(np.float32)
    exact = np.array([[_exact_rest(float(v), float(r[0]), float(np.float32(v - r[0]))) for v in r] for r in x])
    assert (rounded != exact.astype(np.float32)).mean() > 0.5  # the case where the two splits differ
    out = np.empty_like(x)
    float_softmax.softmax(x, out, 1)
    for got, r in zip(out, x):
        np.testing.assert_array_equal(got.view(np.int32), formula(r, 1.0).view(np.int32))
    assert_within_bound(out, reference(x, 1))


@pytest.mark.parametrize("seed", range(4))
def test_bound_call_native_entry_and_in_place_give_the_same_bits(seed):
    """Attention-sized rows (shared with the engine's helpers: chunks of rows) and small ones (serial)."""
    rng = np.random.default_rng([4702, seed])
    shape = [(4, 128, 128), (2, 7, 33), (8, 64, 200), (3, 5)][seed]
    x = logits(rng, shape)
    want = reference(x, x.ndim - 1)
    out = np.full_like(x, 7.0)
    float_softmax.bind(x, out, x.ndim - 1)()
    assert_within_bound(out, want)
    again = np.full_like(x, 7.0)
    entry = float_softmax.native_entry(x, again, x.ndim - 1)
    assert entry is not None and native.run(entry) == 0
    np.testing.assert_array_equal(again.view(np.int32), out.view(np.int32))
    inplace = x.copy()
    float_softmax.softmax(inplace, inplace, x.ndim - 1)
    np.testing.assert_array_equal(inplace.view(np.int32), out.view(np.int32))


def test_bad_operands_are_refused_with_a_reason():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="beta"):
        float_softmax.softmax(x, np.empty_like(x), 1, 0.0)
    with pytest.raises(ValueError, match="beta"):
        float_softmax.softmax(x, np.empty_like(x), 1, float("nan"))
    with pytest.raises(ValueError, match="axis 2"):
        float_softmax.softmax(x, np.empty_like(x), 2)
    with pytest.raises(ValueError, match="float32 of one shape"):
        float_softmax.softmax(x, np.empty((4, 3), np.float32), 1)
    with pytest.raises(ValueError, match="float32 of one shape"):
        float_softmax.softmax(x.astype(np.float64), np.empty((3, 4)), 1)
    assert float_softmax.native_entry(x, np.empty((4, 4), np.float32)[:3], 1) is not None  # rows of stride 4
    assert float_softmax.native_entry(x, np.empty((4, 3), np.float32).T, 1) is not None  # strided rows
    base = np.zeros((3, 5), np.float32)
    assert float_softmax.native_entry(base[:, :4], base[:, 1:], 1) is None  # overlapping: a copy per run


def test_the_front_ends_float32_softmax_is_this_kernel():
    """OpenVX's softmax layer (also CoreML's softmax) and NNAPI's SOFTMAX give this kernel's bits on float32."""
    rng = np.random.default_rng(4703)
    x = logits(rng, (6, 50))
    want = np.empty_like(x)
    float_softmax.softmax(x, want, 1, 1.0)
    got = np.empty_like(x)
    openvx_softmax.softmax(x, got, 1)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    got[...] = 7.0
    assert native.run(openvx_softmax.native_entry(x, got, 1)) == 0
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    float_softmax.softmax(x, want, 1, 0.5)
    depth_normalization.softmax_last_axis(x, got, 0.5)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
