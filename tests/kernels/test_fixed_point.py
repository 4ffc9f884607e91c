"""The shared fixed-point helpers, one value at a time, against Fractions and Python integers."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import round_exact

from openvx_nn.kernels.support.fixed_point import (
    dyadic,
    float_to_int,
    int_range,
    left_shift_fit,
    requantize,
    requantize_ratio,
    round_div,
    round_shift,
)

RANGES = [(-128, 127), (0, 255), (-32768, 32767), (0, 65535), (-(2 ** 31), 2 ** 31 - 1)]
BIG = 2 ** 62 - 1


def fit(v: int, lo: int, hi: int, saturate: bool) -> int:
    return min(max(v, lo), hi) if saturate else (v - lo) % (hi - lo + 1) + lo


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
def test_round_shift_matches_fractions(nearest_even):
    values = list(range(-300, 301)) + [BIG, -BIG, BIG - 1, -BIG + 1, 2 ** 61, -(2 ** 61), 3 << 59, -(3 << 59)]
    for shift in list(range(12)) + [30, 59, 60, 61, 62, 63, 64, 100]:
        for v in values:
            assert round_shift(v, shift, nearest_even) == round_exact(Fraction(v, 2 ** shift), nearest_even), \
                (v, shift)


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
def test_round_div_matches_fractions(nearest_even):
    for divisor in [1, 2, 3, 4, 255, 510, 255 << 20, 7]:
        for v in list(range(-1000, 1001, 3)) + [BIG, -BIG, 255 * 128, -255 * 128, 255 * 129 // 2]:
            assert round_div(v, divisor, nearest_even) == round_exact(Fraction(v, divisor), nearest_even), \
                (v, divisor)


@pytest.mark.parametrize("lo, hi", RANGES)
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
def test_left_shift_fits_without_int64_overflow(lo, hi, saturate):
    for v in [0, 1, -1, 3, -3, 127, -128, 255, 40000, -40000, BIG, -BIG, 2 ** 40 + 5]:
        for shift in [0, 1, 7, 8, 15, 16, 31, 32, 33, 61, 62, 63, 64, 200]:
            assert left_shift_fit(v, shift, lo, hi, saturate) == fit(v << shift, lo, hi, saturate), (v, shift)


@pytest.mark.parametrize("lo, hi", RANGES)
@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
def test_requantize_is_one_rounding_then_one_fit(lo, hi, saturate, nearest_even):
    rng = np.random.default_rng([RANGES.index((lo, hi)), saturate, nearest_even])
    for v in [int(x) for x in rng.integers(-(2 ** 40), 2 ** 40, 300)] + [BIG, -BIG, 0, 1, -1]:
        for shift in [-40, -9, -1, 0, 1, 5, 8, 16, 39, 63]:
            expected = fit(round_exact(Fraction(v) / Fraction(2) ** shift, nearest_even), lo, hi, saturate)
            assert requantize(v, shift, nearest_even, saturate, lo, hi) == expected, (v, shift)
        small = v >> 20  # the ratio helper left-shifts before dividing: keep v << 7 inside 2**62
        for shift in [-7, 0, 3, 30]:
            expected = fit(round_exact(Fraction(small, 255) / Fraction(2) ** shift, nearest_even), lo, hi,
                           saturate)
            assert requantize_ratio(small, shift, 255, nearest_even, saturate, lo, hi) == expected, (small, shift)


@pytest.mark.parametrize("lo, hi", RANGES[:4])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
def test_float_to_int_rounds_half_to_even_and_fits(lo, hi, saturate):
    values = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, 255.5, 1e10 + 0.5, -1e10, 2.0 ** 70 + 2 ** 18,
              -(2.0 ** 80), 3.4e38, -0.0, 1e-300, 65535.5, 32767.49999999999]
    for x in values:
        assert float_to_int(x, lo, hi, saturate) == fit(round(x), lo, hi, saturate), x
    assert float_to_int(math.inf, lo, hi, saturate) == (hi if saturate else 0)
    assert float_to_int(-math.inf, lo, hi, saturate) == (lo if saturate else 0)
    assert float_to_int(math.nan, lo, hi, saturate) == 0


@pytest.mark.parametrize("scale", [1.0, 0.5, 2.0 ** -15, 1 / 255, 0.3, 3.0, 100.5, 65536.0, 2.0 ** -140, 3e38,
                                   -0.75, 0.0, 1e-45])
def test_dyadic_is_the_exact_float32_value(scale):
    m, e = dyadic(scale)
    assert Fraction(m) * Fraction(2) ** e == Fraction(float(np.float32(scale)))
    assert abs(m) < 2 ** 24 and (m % 2 == 1 or m == 0)


def test_dyadic_refuses_non_finite_scales():
    for bad in (math.inf, -math.inf, math.nan, 1e39):  # 1e39 overflows float32
        with pytest.raises(ValueError, match="finite"):
            dyadic(bad)


def test_int_range_refuses_64_bit_types():
    assert int_range(np.dtype(np.int16)) == (-32768, 32767)
    with pytest.raises(ValueError, match="64 bits"):
        int_range(np.dtype(np.int64))
