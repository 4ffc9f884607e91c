"""Fully connected layer against the exact Python-integer and ordered Python-float reference.

Layout: x [IFM, B], w [IFM, OFM], bias [OFM], out [OFM, B] (NumPy shapes in
OpenVX dim order); out[i, b] = sum_j x[j, b] * w[j, i] + bias[i].
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    LAYOUTS,
    Q3_12,
    Q7,
    Q11_4,
    Q78,
    S8,
    U8,
    Format,
    assert_bits_equal,
    assert_float32_sums,
    blank,
    placed,
    random_values,
)
from layer_references import fully_connected_ref

from openvx_nn.kernels.openvx.fully_connected import PARALLEL_WORK, fully_connected

POLICIES = [(True, True), (True, False), (False, True), (False, False)]
FORMAT_POLICIES = [pytest.param(fmt, saturate, nearest_even,
                                id=f"{fmt}-{'saturate' if saturate else 'wrap'}-{'even' if nearest_even else 'zero'}")
                   for fmt in FORMATS for saturate, nearest_even in (POLICIES[:1] if fmt.is_float else POLICIES)]
SEEDS = range(4)


def values(rng: np.random.Generator, fmt: Format, shape: tuple[int, ...], small: bool) -> np.ndarray:
    """Full-range values with extremes, or small ones whose sums stay in range so rounding shows."""
    if small and not fmt.is_float:
        limit = 1 << (np.iinfo(fmt.dtype).bits // 2)
        return rng.integers(max(fmt.lo, -limit), min(fmt.hi, limit) + 1, shape).astype(fmt.dtype)
    return random_values(rng, fmt, shape)


def operands(rng, fmt: Format, n_in: int, n_out: int, n_batch: int, with_bias: bool, small: bool = False):
    x = placed(rng, values(rng, fmt, (n_in, n_batch), small))
    w = placed(rng, values(rng, fmt, (n_in, n_out), small))
    bias = placed(rng, values(rng, fmt, (n_out,), small)) if with_bias else None
    out = blank(rng, (n_out, n_batch), fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    return x, w, bias, out


def positions(fmt: Format) -> dict[str, int]:
    return {"fpp_x": fmt.fpp, "fpp_w": fmt.fpp, "fpp_b": fmt.fpp, "fpp_out": fmt.fpp}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("with_bias", [False, True], ids=["no_bias", "bias"])
@pytest.mark.parametrize("fmt, saturate, nearest_even", FORMAT_POLICIES)
def test_fully_connected_matches_exact_reference(fmt, saturate, nearest_even, with_bias, seed):
    rng = np.random.default_rng([40, FORMATS.index(fmt), saturate, nearest_even, with_bias, seed])
    n_in, n_out, n_batch = int(rng.integers(1, 13)), int(rng.integers(1, 9)), int(rng.integers(1, 6))
    x, w, bias, out = operands(rng, fmt, n_in, n_out, n_batch, with_bias, small=seed % 2 == 1)
    fully_connected(x, w, bias, out, saturate, nearest_even, **positions(fmt), parallel=bool(rng.integers(2)))
    assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, saturate, nearest_even, **positions(fmt)))


# (dtype, fpp_x, fpp_w, fpp_b, fpp_out): the bias finer than the products (sum shifted left), the output
# finer than everything (result shifted left), positions 0 and bits - 1, and an unsigned Q0.8.
MIXED = [(np.int16, 4, 12, 8, 3), (np.int16, 0, 0, 15, 8), (np.int16, 8, 8, 8, 15), (np.int16, 12, 12, 0, 0),
         (np.int8, 7, 0, 7, 2), (np.int8, 3, 5, 0, 7), (np.uint8, 8, 8, 8, 8), (np.uint8, 0, 4, 8, 2)]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("saturate, nearest_even", POLICIES)
@pytest.mark.parametrize("mixed", MIXED, ids=lambda m: f"{np.dtype(m[0])}-{'-'.join(map(str, m[1:]))}")
def test_fully_connected_aligns_positions_exactly(mixed, saturate, nearest_even, seed):
    dtype, fpp_x, fpp_w, fpp_b, fpp_out = mixed
    fmt = Format(f"{np.dtype(dtype)}", dtype)
    rng = np.random.default_rng([41, MIXED.index(mixed), saturate, nearest_even, seed])
    x, w, bias, out = operands(rng, fmt, int(rng.integers(1, 10)), int(rng.integers(1, 7)),
                               int(rng.integers(1, 4)), True, small=seed == 1)
    pos = {"fpp_x": fpp_x, "fpp_w": fpp_w, "fpp_b": fpp_b, "fpp_out": fpp_out}
    fully_connected(x, w, bias, out, saturate, nearest_even, **pos)
    assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, saturate, nearest_even, **pos))


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("fmt", [Q78, Q7, Q11_4, Q3_12], ids=str)
def test_fully_connected_rounds_exact_ties_by_the_policy(fmt, nearest_even):
    # All four positions s: products at 2**-2s, one rounding shift by s. Row 0 gives (odd * 2**(s-1)) * odd,
    # row 1 and the bias whole multiples of 2**s: every sum is a tie, of both signs.
    s = fmt.fpp
    rng = np.random.default_rng([42, s])
    n_out, n_batch = 6, 4
    x = np.zeros((2, n_batch), fmt.dtype)
    x[0] = np.array([1, -1, 1, -1]) << (s - 1)
    x[1] = rng.integers(-3, 4, n_batch)
    w = np.zeros((2, n_out), fmt.dtype)
    w[0] = rng.choice([-3, -1, 1, 3], n_out)
    w[1] = rng.choice([-1, 0], n_out) << s
    bias = rng.integers(-3, 4, n_out).astype(fmt.dtype)
    out = blank(rng, (n_out, n_batch), fmt.dtype, "f")
    fully_connected(x, w, bias, out, True, nearest_even, **positions(fmt))
    assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, True, nearest_even, **positions(fmt)))
    exact = [Fraction(int(x[0, b]) * int(w[0, i]) + int(x[1, b]) * int(w[1, i]), 2 ** s) + int(bias[i])
             for i in range(n_out) for b in range(n_batch)]
    assert all(q.denominator == 2 for q in exact)
    assert any(q > 0 for q in exact) and any(q < 0 for q in exact)
    # The policies differ on these ties (a kernel ignoring the policy would fail one of the two runs).
    raw = np.array(exact, dtype=object).reshape(n_out, n_batch)
    expected = np.vectorize(lambda q: round(q) if nearest_even else int(q))(raw).astype(fmt.dtype)
    assert_bits_equal(out, expected)
    assert (np.vectorize(round)(raw) != np.vectorize(int)(raw)).any()


def test_fully_connected_saturates_or_wraps_extreme_sums():
    # Q7.8 with every input at -32768: each product is 2**30, far beyond int16 after the shift by 8.
    fmt = Q78
    x = np.full((5, 2), fmt.lo, fmt.dtype)
    w = np.full((5, 3), fmt.lo, fmt.dtype)
    bias = np.array([fmt.lo, 0, fmt.hi], fmt.dtype)
    for saturate in (True, False):
        out = np.zeros((3, 2), fmt.dtype)
        fully_connected(x, w, bias, out, saturate, True, **positions(fmt))
        assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, saturate, True, **positions(fmt)))
        total = (5 * 2 ** 30 + np.array([fmt.lo, 0, fmt.hi]) * 2 ** 8) // 2 ** 8  # exact: no fraction
        expected = np.full((3, 2), fmt.hi) if saturate else ((total + 2 ** 15) % 2 ** 16 - 2 ** 15)[:, None]
        assert (out == expected).all()


@pytest.mark.parametrize("fmt", [U8, Q78, F32], ids=str)
def test_large_layer_uses_the_thread_pool_and_stays_exact(fmt):
    rng = np.random.default_rng([43, FORMATS.index(fmt)])
    n_in, n_out, n_batch = 512, 256, 2  # 2**18 multiply-adds: parallel=None picks the thread pool
    assert n_in * n_out * n_batch >= PARALLEL_WORK
    x, w, bias, out = operands(rng, fmt, n_in, n_out, n_batch, True, small=True)
    fully_connected(x, w, bias, out, True, True, **positions(fmt))
    expected = fully_connected_ref(x, w, bias, fmt, True, True, **positions(fmt))
    if fmt.is_float:  # the float engine's float32 sums
        magnitude = fully_connected_ref(np.abs(x), np.abs(w), np.abs(bias), fmt, True, True, **positions(fmt))
        assert_float32_sums(out, expected, magnitude)
    else:
        assert_bits_equal(out, expected)


def test_seed_layout_whd_flattens_to_ifm_in_openvx_order():
    # The integrator's flattening of [W, H, C, B]: IFM index = x + W * (y + H * c), i.e. a Fortran-order reshape.
    rng = np.random.default_rng(44)
    width, height, channels, n_batch, n_out = 3, 2, 4, 2, 5
    x4 = rng.integers(-50, 50, (width, height, channels, n_batch)).astype(np.int16)
    w = rng.integers(-50, 50, (width * height * channels, n_out)).astype(np.int16)
    x = x4.reshape(width * height * channels, n_batch, order="F")
    assert x[2 + width * (1 + height * 3), 1] == x4[2, 1, 3, 1]
    out = np.zeros((n_out, n_batch), np.int16)
    fully_connected(x, w, None, out, True, True)
    for i in range(n_out):
        for b in range(n_batch):
            expected = sum(int(x4[px, py, c, b]) * int(w[px + width * (py + height * c), i])
                           for px in range(width) for py in range(height) for c in range(channels))
            assert out[i, b] == expected


def test_output_overlapping_the_input_reads_the_input_first():
    rng = np.random.default_rng(45)
    buffer = rng.integers(-20, 20, (8, 3)).astype(np.int8)
    x = buffer  # IFM 8, B 3
    w = rng.integers(-20, 20, (8, 4)).astype(np.int8)
    expected = fully_connected_ref(x.copy(), w, None, S8, True, True)
    out = buffer[2:6]  # OFM 4 rows of the same memory
    fully_connected(x, w, None, out, True, True)
    assert_bits_equal(out, expected)


def test_float_ignores_policies_and_adds_no_bias_when_there_is_none():
    x = np.array([[1.5], [-2.25], [3.0]], np.float32)
    w = np.array([[2.0, 0.5], [4.0, -1.0], [1.0, 0.0]], np.float32)
    out = np.zeros((2, 1), np.float32)
    fully_connected(x, w, None, out, False, False, fpp_x=3, fpp_out=5)
    assert out[:, 0].tolist() == [1.5 * 2 - 2.25 * 4 + 3.0, 1.5 * 0.5 + 2.25]
    fully_connected(x, w, np.array([0.25, -1.0], np.float32), out, True, True)
    assert out[:, 0].tolist() == [-2.75, 2.0]


def test_refuses_a_layer_that_could_overflow_the_int64_accumulator():
    n_in = 1 << 17
    x = np.zeros((n_in, 1), np.int16)
    w = np.zeros((n_in, 1), np.int16)
    bias = np.zeros(1, np.int16)
    out = np.zeros((1, 1), np.int16)
    # A Q0.15 bias with integer x and w shifts the sum left by 15: 2**17 * 2**30 * 2**15 reaches 2**62.
    with pytest.raises(ValueError, match="int64"):
        fully_connected(x, w, bias, out, True, True, fpp_b=15)
    fully_connected(x, w, bias, out, True, True, fpp_b=14)  # one bit less: 2**61 plus the bias, fine
    assert out[0, 0] == 0


@pytest.mark.parametrize("bad", ["dtype", "ifm", "ofm", "batch", "bias", "rank", "int32"])
def test_rejects_mismatched_tensors(bad):
    x, w, bias, out = np.zeros((4, 2), np.int8), np.zeros((4, 3), np.int8), np.zeros(3, np.int8), np.zeros((3, 2), np.int8)
    if bad == "dtype":
        w = w.astype(np.int16)
    elif bad == "ifm":
        w = np.zeros((5, 3), np.int8)
    elif bad == "ofm":
        out = np.zeros((4, 2), np.int8)
    elif bad == "batch":
        out = np.zeros((3, 1), np.int8)
    elif bad == "bias":
        bias = np.zeros(4, np.int8)
    elif bad == "rank":
        x = np.zeros((4, 2, 1), np.int8)
    else:
        x, w, bias, out = (a.astype(np.int32) for a in (x, w, bias, out))
    with pytest.raises(ValueError):
        fully_connected(x, w, bias, out, True, True)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fmt", [Q78, U8, S8], ids=str)
def test_a_classifier_the_tiles_would_mostly_pad_runs_on_the_dot_products_exactly(fmt, seed):
    """A few outputs of one or two images (a small CNN's last layer): the planner leaves the SIMD tiles, whose
    padded lanes would cost more than the sums (``PADDING_LIMIT``), for the dot products; exact either way."""
    from openvx_nn.kernels.engine import isa
    from openvx_nn.kernels.engine.correlation import Arithmetic
    from openvx_nn.kernels.openvx.fully_connected import prepare_fully_connected
    rng = np.random.default_rng([42, FORMATS.index(fmt), seed])
    n_in, n_out, n_batch = int(rng.integers(64, 1100)), int(rng.integers(1, 17)), int(rng.integers(1, 3))
    x, w, bias, out = operands(rng, fmt, n_in, n_out, n_batch, True, small=seed % 2 == 1)
    arithmetic = Arithmetic(True, True, fmt.fpp, fmt.fpp, fmt.fpp, fmt.fpp)
    if isa.selected() != "generic":
        assert prepare_fully_connected(w, True, n_batch, arithmetic) is None
        assert prepare_fully_connected(w, True, n_batch, arithmetic, isa=isa.selected()) is not None
        assert prepare_fully_connected(np.zeros((64, 512), fmt.dtype), True, 1, arithmetic) is not None
    fully_connected(x, w, bias, out, True, True, **positions(fmt))
    assert_bits_equal(out, fully_connected_ref(x, w, bias, fmt, True, True, **positions(fmt)))
