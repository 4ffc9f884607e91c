"""Tensor add, subtract and multiply against exact references (Python ints and Fractions)."""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    INT_FORMATS,
    Q3_12,
    Q7,
    Q11_4,
    Q78,
    S8,
    U8,
    Format,
    assert_bits_equal,
    blank,
    broadcast_shape,
    fit_exact,
    placed,
    random_shape,
    random_values,
    round_exact,
)

from openvx_nn.kernels import add, multiply, subtract

# ---- references -------------------------------------------------------------------------------


def reference_add_sub(a, b, shape, fmt: Format, saturate: bool, minus: bool) -> np.ndarray:
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    if fmt.is_float:
        return (a - b) if minus else (a + b)  # float32 arithmetic, correctly rounded
    result = np.empty(shape, fmt.dtype)
    for index in np.ndindex(shape):
        x, y = int(a[index]), int(b[index])
        result[index] = fit_exact(x - y if minus else x + y, fmt, saturate)
    return result


def exact_scale(scale: float) -> Fraction:
    """The scale the contract means: float32(scale) exactly, or 1/255 itself."""
    if np.float32(scale) == np.float32(1 / 255):
        return Fraction(1, 255)
    return Fraction(float(np.float32(scale)))


def exact_products(a, b, shape, scale: float, f1: Format, f2: Format, fo: Format) -> dict:
    """Each element's exact value in units of the output's LSB."""
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    unit = exact_scale(scale) * Fraction(2) ** (fo.fpp - f1.fpp - f2.fpp)
    return {index: int(a[index]) * int(b[index]) * unit for index in np.ndindex(shape)}


def reference_multiply(a, b, shape, scale, f1, f2, fo, saturate, nearest_even) -> np.ndarray:
    if fo.is_float:
        product = np.broadcast_to(a, shape).astype(np.float64) * np.broadcast_to(b, shape).astype(np.float64)
        return (product * np.float64(np.float32(scale))).astype(np.float32)
    result = np.empty(shape, fo.dtype)
    for index, q in exact_products(a, b, shape, scale, f1, f2, fo).items():
        result[index] = fit_exact(round_exact(q, nearest_even), fo, saturate)
    return result


# ---- cases --------------------------------------------------------------------------------------


def operands(rng, fmt1: Format, fmt2: Format, out_fmt: Format, max_size: int = 300):
    """Random in1, in2 (either may broadcast; in2 more often) and a junk-filled out, in random layouts."""
    shape = random_shape(rng, max_size=max_size)
    s1 = broadcast_shape(rng, shape, 0.15)
    s2 = broadcast_shape(rng, shape, 0.5)
    a = placed(rng, random_values(rng, fmt1, s1))
    b = placed(rng, random_values(rng, fmt2, s2))
    out = blank(rng, shape, out_fmt.dtype, ["c", "f", "step", "perm", "reversed"][int(rng.integers(5))])
    return a, b, out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("minus", [False, True], ids=["add", "subtract"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_add_subtract_match_exact_reference(fmt, minus, saturate, seed):
    rng = np.random.default_rng([1, FORMATS.index(fmt), minus, saturate, seed])
    a, b, out = operands(rng, fmt, fmt, fmt)
    (subtract if minus else add)(a, b, out, saturate)
    assert_bits_equal(out, reference_add_sub(a, b, out.shape, fmt, saturate, minus))


@pytest.mark.parametrize("fmt, a, b, saturated, wrapped", [
    (S8, 127, 1, 127, -128), (S8, -128, -1, -128, 127), (S8, -128, -128, -128, 0),
    (U8, 255, 1, 255, 0), (U8, 200, 100, 255, 44),
    (Q78, 32767, 32767, 32767, -2), (Q78, -32768, -32768, -32768, 0),
])
def test_add_saturates_or_wraps_on_overflow(fmt, a, b, saturated, wrapped):
    x = np.array([a], fmt.dtype)
    y = np.array([b], fmt.dtype)
    out = np.zeros(1, fmt.dtype)
    add(x, y, out, True)
    assert int(out[0]) == saturated
    add(x, y, out, False)
    assert int(out[0]) == wrapped


def test_subtract_saturates_at_zero_for_unsigned():
    out = np.zeros(3, np.uint8)
    subtract(np.array([0, 5, 255], np.uint8), np.array([1, 6, 0], np.uint8), out, True)
    assert out.tolist() == [0, 0, 255]
    subtract(np.array([0, 5, 255], np.uint8), np.array([1, 6, 0], np.uint8), out, False)
    assert out.tolist() == [255, 255, 255]


@pytest.mark.parametrize("fmt", [S8, Q78, F32], ids=str)
def test_add_writes_in_place_over_its_first_input(fmt):
    rng = np.random.default_rng(7)
    a = random_values(rng, fmt, (5, 4, 3))
    b = random_values(rng, fmt, (5, 1, 3))
    expected = reference_add_sub(a, b, a.shape, fmt, True, False)
    add(a, b, a, True)
    assert_bits_equal(a, expected)


def test_add_reads_a_partly_overlapping_input_before_writing():
    buffer = np.arange(20, dtype=np.int16)
    a, out = buffer[2:18], buffer[0:16]  # out starts two elements before in1
    expected = a.astype(np.int64) + 1
    add(a, np.ones(1, np.int16), out, True)
    assert out.tolist() == expected.tolist()


# ---- multiply -----------------------------------------------------------------------------------

SCALES = [2.0 ** -n for n in range(16)] + [1 / 255] + [0.3, 3.0, 1.7e-3, 100.5, 65536.0, 2.0 ** -30, 0.0]


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_multiply_matches_exact_reference(fmt, scale, saturate, nearest_even):
    rng = np.random.default_rng([2, INT_FORMATS.index(fmt), SCALES.index(scale), saturate, nearest_even])
    a, b, out = operands(rng, fmt, fmt, fmt, max_size=150)
    multiply(a, b, scale, out, saturate, nearest_even, fpp1=fmt.fpp, fpp2=fmt.fpp, fpp_out=fmt.fpp)
    assert_bits_equal(out, reference_multiply(a, b, out.shape, scale, fmt, fmt, fmt, saturate, nearest_even))


MIXED = [(Q78, Q11_4, Q3_12), (Q11_4, Q11_4, Q3_12), (S8, S8, Q7), (Q7, Q7, S8), (Q3_12, Q3_12, Q11_4)]


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("scale", [1.0, 2.0 ** -5, 1 / 255, 0.3, 12.0])
@pytest.mark.parametrize("formats", MIXED, ids=lambda f: "x".join(map(str, f)))
def test_multiply_keeps_the_product_at_the_output_position(formats, scale, saturate, nearest_even):
    f1, f2, fo = formats
    rng = np.random.default_rng([3, MIXED.index(formats), int(scale * 1000), saturate, nearest_even])
    a, b, out = operands(rng, f1, f2, fo, max_size=150)
    multiply(a, b, scale, out, saturate, nearest_even, fpp1=f1.fpp, fpp2=f2.fpp, fpp_out=fo.fpp)
    assert_bits_equal(out, reference_multiply(a, b, out.shape, scale, f1, f2, fo, saturate, nearest_even))


def tie_operands(rng, fmt: Format, t: int, count: int = 64):
    """Raw operand pairs whose product is an exact odd multiple of 2**(t-1): a tie after a shift by t."""
    top = fmt.hi.bit_length() - 1  # the largest power of two that fits
    i = min(t - 1, top)
    j = t - 1 - i
    assert 0 <= j <= top, "shift too large to build ties in this format"
    a, b = [], []
    for _ in range(count):
        for power, into in ((i, a), (j, b)):
            odd_max = fmt.hi >> power
            odd = int(rng.integers(0, (odd_max + 1) // 2)) * 2 + 1
            sign = 1 if fmt.lo == 0 or rng.random() < 0.5 else -1
            into.append(sign * odd << power)
    return np.array(a, fmt.dtype), np.array(b, fmt.dtype)


def tie_cases():
    """(format, n) for scale 2**-n where a product can land on a tie: shift t = fpp + n >= 1, and
    2**(t-1) splits into two powers of two that each fit the format."""
    for fmt in INT_FORMATS:
        top = fmt.hi.bit_length() - 1
        for n in range(16):
            if 1 <= fmt.fpp + n <= 2 * top + 1:
                yield pytest.param(fmt, n, id=f"{fmt}-2^-{n}")


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("fmt, n", list(tie_cases()))
def test_multiply_rounds_exact_ties_by_the_policy(fmt, n, nearest_even):
    t = fmt.fpp + n  # total shift for scale 2**-n with one format throughout
    rng = np.random.default_rng([4, INT_FORMATS.index(fmt), n])
    a, b = tie_operands(rng, fmt, t)
    scale = 2.0 ** -n
    exact = exact_products(a, b, a.shape, scale, fmt, fmt, fmt)
    assert all(q.denominator == 2 for q in exact.values()), "every case must be a tie"
    assert any(q < 0 for q in exact.values()) == (fmt.lo < 0)
    out = np.zeros(a.shape, fmt.dtype)
    multiply(a, b, scale, out, True, nearest_even, fpp1=fmt.fpp, fpp2=fmt.fpp, fpp_out=fmt.fpp)
    assert_bits_equal(out, reference_multiply(a, b, a.shape, scale, fmt, fmt, fmt, True, nearest_even))


@pytest.mark.parametrize("x, nearest, to_zero", [(5, 2, 2), (7, 4, 3), (-5, -2, -2), (-7, -4, -3), (3, 2, 1),
                                                 (-3, -2, -1), (1, 0, 0), (-1, 0, 0)])
def test_multiply_by_a_half_rounds_like_the_contract_examples(x, nearest, to_zero):
    out = np.zeros(1, np.int8)
    multiply(np.array([x], np.int8), np.array([1], np.int8), 0.5, out, True, True)
    assert int(out[0]) == nearest  # 2.5 -> 2, 3.5 -> 4, -2.5 -> -2
    multiply(np.array([x], np.int8), np.array([1], np.int8), 0.5, out, True, False)
    assert int(out[0]) == to_zero  # toward zero


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
def test_multiply_by_one_255th_is_exact_for_every_u8_pair(nearest_even):
    a = np.repeat(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    b = a.T
    out = np.zeros((256, 256), np.uint8)
    multiply(a, b, 1 / 255, out, True, nearest_even)
    expected = np.array([[round_exact(Fraction(int(x) * int(y), 255), nearest_even) for x, y in zip(ra, rb)]
                         for ra, rb in zip(a, b)], dtype=np.uint8)
    assert_bits_equal(out, expected)
    assert out[255, 255] == 255 and out[255, 1] == 1 and out[128, 1] == (1 if nearest_even else 0)


def test_multiply_rejects_a_non_finite_scale():
    out = np.zeros(2, np.int16)
    with pytest.raises(ValueError, match="scale"):
        multiply(np.ones(2, np.int16), np.ones(2, np.int16), float("inf"), out, True, True)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scale", [1.0, 2.0 ** -7, 1 / 255, 0.3, 3.0e5])
def test_multiply_float32_is_the_float64_product_cast_once(scale, seed):
    rng = np.random.default_rng([5, seed, int(scale * 100)])
    a, b, out = operands(rng, F32, F32, F32)
    multiply(a, b, scale, out, True, True)
    assert_bits_equal(out, reference_multiply(a, b, out.shape, scale, F32, F32, F32, True, True))


def test_every_layout_pair_gives_the_same_sum():
    """Each output layout against each input layout, same values: one answer."""
    rng = np.random.default_rng(9)
    shape = (3, 4, 2, 5)
    x = random_values(rng, Q78, shape)
    y = random_values(rng, Q78, (3, 1, 2, 1))
    expected = reference_add_sub(x, y, shape, Q78, True, False)
    for in_layout, out_layout in itertools.product(["c", "f", "step", "perm", "reversed"], repeat=2):
        out = blank(rng, shape, np.int16, out_layout)
        add(placed(rng, x, in_layout), placed(rng, y, in_layout), out, True)
        assert_bits_equal(out, expected)


@pytest.mark.parametrize("minus", [False, True])
def test_a_nan_first_input_is_the_float32_result_whatever_the_second(minus):
    """Which of two NaN operands a vector add keeps is the compiler's choice; the kernel fixes it: input1's."""
    bits = np.array([0xFFC00000, 0x7FC00000, 0xFFC12345, 0x7FA00001], np.uint32)  # the last one signaling
    first = np.tile(bits, 5).view(np.float32)
    second = np.tile(bits[::-1], 5).view(np.float32)
    for in1, in2 in ((first, second), (first, np.ones_like(first)), (np.ones_like(first), second)):
        out = np.empty_like(in1)
        (subtract if minus else add)(in1, in2, out, False)
        if np.isnan(in1).all():
            assert out.view(np.uint32).tolist() == in1.view(np.uint32).tolist()
        else:  # a number and a NaN: the NaN, quieted
            assert out.view(np.uint32).tolist() == (in2.view(np.uint32) | 0x00400000).tolist()
