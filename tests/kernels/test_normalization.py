"""Local response normalization against the plain reference with the same pinned order, bit for bit."""
from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    LAYOUTS,
    Q78,
    S8,
    Format,
    assert_bits_equal,
    blank,
    placed,
    random_values,
)
from nonlinear_reference import CANONICAL_NAN, reference_lrn

from openvx_nn.kernels.openvx.normalization import local_response_normalization

TYPES = {"across": True, "same": False}


def f32(v: float) -> float:
    return float(np.float32(v))


def random_parameters(rng: np.random.Generator) -> tuple[float, float, float]:
    """alpha, beta, bias as float32 values over the ranges networks use, and beyond."""
    alpha = f32(10.0 ** rng.uniform(-5, 0.5))
    beta = f32(rng.uniform(0.05, 2.0))
    bias = f32(rng.choice([1.0, 2.0, rng.uniform(0.01, 4.0)]))
    return alpha, beta, bias


def output_format(rng: np.random.Generator, fin: Format) -> Format:
    if fin.is_float or rng.random() < 0.5:
        return fin
    bits = np.iinfo(fin.dtype).bits
    fpp = int(rng.integers(0, bits + 1 if fin.lo == 0 else bits))
    return Format(f"{fin.dtype.__name__}@{fpp}", fin.dtype, fpp)


def lrn_inputs(rng: np.random.Generator, fmt: Format, shape: tuple[int, ...]) -> np.ndarray:
    if fmt.is_float and rng.random() < 0.5:
        return (rng.standard_normal(shape) * rng.choice([0.1, 1.0, 10.0, 1000.0])).astype(np.float32)
    return random_values(rng, fmt, shape)


def random_lrn_shape(rng: np.random.Generator) -> tuple[int, ...]:
    """[W, H, C, *batch] of rank 3 to 6, small enough for the plain reference."""
    shape = [int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 10))]
    shape += [int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 4)))]
    while np.prod(shape) > 200:
        shape[int(np.argmax(shape))] -= 1
    return tuple(shape)


def run(x, out, across, size, alpha, beta, bias, fin, fout, **options) -> None:
    local_response_normalization(x, out, across, size, alpha, beta, bias, fpp_in=fin.fpp, fpp_out=fout.fpp,
                                 **options)
    assert_bits_equal(out, reference_lrn(x, across, size, alpha, beta, bias, fin, fout))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("size", [3, 5, 7])
@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize("fin", FORMATS, ids=str)
def test_random_configurations_match_the_reference(fin, kind, size, seed):
    rng = np.random.default_rng([50, FORMATS.index(fin), TYPES[kind], size, seed])  # 210 configurations
    shape = random_lrn_shape(rng)
    fout = output_format(rng, fin)
    x = placed(rng, lrn_inputs(rng, fin, shape))
    out = blank(rng, shape, fin.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    run(x, out, TYPES[kind], size, *random_parameters(rng), fin, fout)


@pytest.mark.parametrize("kind", TYPES)
def test_windows_match_a_direct_sum_with_zero_padding(kind):
    # Real values 0 .. 63 in one 4 x 4 x 4 cube: check the window sums through alpha = n, beta = 1, bias = 0,
    # where y = v / s; NumPy's padded sum of squares is exact here (integers below 2**53).
    across = TYPES[kind]
    x = np.arange(1, 65, dtype=np.float32).reshape(4, 4, 4)
    n = 3 if across else 9
    out = np.empty_like(x)
    local_response_normalization(x, out, across, 3, float(n), 1.0, 0.0)
    squares = np.pad(x.astype(np.float64) ** 2, 1)
    if across:
        s = squares[1:-1, 1:-1, :-2] + squares[1:-1, 1:-1, 1:-1] + squares[1:-1, 1:-1, 2:]
    else:
        s = sum(squares[i:i + 4, j:j + 4, 1:-1] for i in range(3) for j in range(3))
    assert_bits_equal(out, (x / s).astype(np.float32))


@pytest.mark.parametrize("fin, fout", [(S8, S8), (Q78, Q78), (Q78, Format("Q11.4", np.int16, 4))], ids=str)
def test_exact_halves_round_to_even(fin, fout):
    # alpha far below an ulp of bias = 4 and beta = 0.5: d = pow(4, 0.5) = 2 exactly, so y = v / 2.
    x = np.arange(fin.lo, fin.hi + 1, 37).astype(fin.dtype).reshape(-1, 1, 1)
    out = np.empty_like(x)
    run(x, out, True, 3, 1e-30, 0.5, 4.0, fin, fout)
    exact = x.astype(np.int64) * 2 ** fout.fpp / 2 ** (fin.fpp + 1)
    ties = exact - np.floor(exact) == 0.5
    assert ties.any()
    assert (out[ties] % 2 == 0).all()


def test_extreme_parameters_follow_ieee_arithmetic():
    x = np.array([[[0.0, 0.0, 3.0, -2.0]]], np.float32)  # one pixel, 4 maps
    out = np.empty_like(x)
    for alpha, beta, bias in [(1.0, 1.0, 0.0),  # bias 0 and a zero window: 0 / 0 is NaN
                              (1.0, f32(1e30), 2.0),  # pow overflows: d = inf, y = +-0
                              (f32(1e-30), f32(1e30), 0.5)]:  # pow underflows: d = 0, y = +-inf
        run(x, out, True, 3, alpha, beta, bias, F32, F32)
    ints = np.array([[[0, 0, 3, -2]]], np.int8)
    iout = np.empty_like(ints)
    run(ints, iout, True, 3, f32(1e-30), f32(1e30), 0.5, S8, S8)
    assert iout.tolist() == [[[0, 0, 127, -128]]]
    run(ints, iout, True, 3, 1.0, 1.0, 0.0, S8, S8)
    assert iout[0, 0, 0] == 0


def test_float32_special_values():
    x = np.zeros((3, 3, 3), np.float32)
    x[1, 1, 1] = np.inf
    x[0, 0, 0] = np.nan
    x[2, 2, 2] = -0.0
    x[0, 2, 1] = np.finfo(np.float32).max
    for across in (True, False):
        out = np.empty_like(x)
        run(x, out, across, 3, 1e-4, 0.75, 1.0, F32, F32)
        assert out.view(np.uint32)[1, 1, 1] == CANONICAL_NAN.view(np.uint32)  # inf / inf


@pytest.mark.parametrize("fmt", [Q78, F32], ids=str)
def test_output_overlapping_the_input_reads_the_input_first(fmt):
    rng = np.random.default_rng(51)
    x = placed(rng, lrn_inputs(rng, fmt, (5, 4, 6, 2)))
    expected = reference_lrn(x, False, 3, f32(1e-3), 0.75, 2.0, fmt, fmt)
    local_response_normalization(x, x, False, 3, 1e-3, 0.75, 2.0, fpp_in=fmt.fpp, fpp_out=fmt.fpp)
    assert_bits_equal(x, expected)


@pytest.mark.parametrize("fmt", [Q78, F32], ids=str)
@pytest.mark.parametrize("kind", TYPES)
def test_parallel_and_serial_kernels_agree(fmt, kind):
    rng = np.random.default_rng(52)
    x = placed(rng, lrn_inputs(rng, fmt, (23, 19, 9, 2)), "perm")
    serial, threaded = np.empty(x.shape, fmt.dtype), np.empty(x.shape, fmt.dtype)
    args = (TYPES[kind], 5, f32(1e-4), 0.75, 1.0)
    local_response_normalization(x, serial, *args, fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=False)
    local_response_normalization(x, threaded, *args, fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=True)
    assert_bits_equal(threaded, serial)
    # Rows 0 .. 2 of the output read input rows 0 .. 4 at most: the reference runs on the first 6 only.
    assert_bits_equal(serial[:, :3], reference_lrn(x[:, :6], *args, fmt, fmt)[:, :3])


@pytest.mark.parametrize("bad, message", [
    ({"size": 4}, "size 4"),
    ({"size": 9}, "size 9"),
    ({"x": np.zeros((3, 3), np.int8), "out": np.zeros((3, 3), np.int8)}, "rank 2"),
    ({"out": np.zeros((3, 3, 3), np.int16)}, "dtype"),
])
def test_bad_arguments_raise_value_error(bad, message):
    args = {"x": np.zeros((3, 3, 3), np.int8), "out": np.zeros((3, 3, 3), np.int8), "size": 3} | bad
    with pytest.raises(ValueError, match=message):
        local_response_normalization(args["x"], args["out"], True, args["size"], 1e-4, 0.75, 1.0)


# ---- the pinned order is observable -------------------------------------------------------------
# Sums of squares of integer inputs are exact in any order; float32 ones round, but a different order moves
# d by an ulp of float64, which the final float32 rounding nearly always hides. These inputs make every
# window's base = (alpha / n) * s close to 1 and beta = 2**26, so pow magnifies a one-ulp change of base
# into a relative change of 2**-26 in d: visible in float32 outputs. The tests check that the kernel
# matches the reference on them and that each plausible other order would not.

def lrn_variant(x: np.ndarray, across: bool, size: int, alpha: float, beta: float, order: str,
                scaling: str) -> np.ndarray:
    """float32 LRN with bias 0, summing the window in ``order`` and scaling by ``scaling``."""
    width, height, maps = x.shape
    h = size // 2
    n = size if across else size * size
    out = np.empty(x.shape, np.float32)
    for i, j, c in np.ndindex(x.shape):
        if across:
            window = [(i, j, k) for k in range(c - h, c + h + 1) if 0 <= k < maps]
        else:  # pinned: rows (j) outer, columns (i) inner
            window = [(ii, jj, c) for jj in range(j - h, j + h + 1) for ii in range(i - h, i + h + 1)
                      if 0 <= ii < width and 0 <= jj < height]
        if order == "reversed":
            window = window[::-1]
        elif order == "columns-outer":
            window = sorted(window)
        s = 0.0
        for p in window:
            s += float(x[p]) * float(x[p])
        if scaling == "alpha/n first":
            base = (alpha / n) * s
        elif scaling == "alpha*s first":
            base = (alpha * s) / n
        else:  # "alpha*(1/n)"
            base = (alpha * (1.0 / n)) * s
        with np.errstate(all="ignore"):
            out[i, j, c] = np.float32(float(x[i, j, c]) / np.float64(c_pow_safe(base, beta)))
    return out


def c_pow_safe(base: float, exponent: float) -> float:
    try:
        return pow(base, exponent)
    except OverflowError:
        return float("inf")


def near_one_squares(rng: np.random.Generator, big: float, shape, is_big) -> np.ndarray:
    """float32 values: ``big`` moved by a few ulps where ``is_big``, else tiny, with random signs."""
    x = np.empty(shape, np.float32)
    for index in np.ndindex(shape):
        if is_big(index):
            v = np.float32(big)
            for _ in range(int(rng.integers(0, 3))):
                v = np.nextafter(v, np.float32(np.inf if rng.random() < 0.5 else -np.inf))
        else:
            v = np.float32(rng.uniform(2.0 ** -27, 2.0 ** -24))
        x[index] = v if rng.random() < 0.5 else -v
    return x


@pytest.mark.parametrize("kind", TYPES)
def test_the_pinned_summation_and_scaling_order_is_observable_and_followed(kind):
    across = TYPES[kind]
    rng = np.random.default_rng([53, across])
    beta = 2.0 ** 26
    alpha = f32(0.85)  # alpha / n differs from alpha * (1 / n) for n = 3 and 9
    others = [("pinned", "alpha*s first"), ("pinned", "alpha*(1/n)"), ("reversed", "alpha/n first")]
    if across:  # every window of 3 maps holds one value near sqrt(3 / alpha) and two tiny ones: s ~ n / alpha
        x = near_one_squares(rng, math.sqrt(3 / alpha), (6, 5, 9), lambda p: p[2] % 3 == 0)
    else:  # every 3 x 3 window holds one value near sqrt(9 / alpha) and eight tiny ones
        x = near_one_squares(rng, math.sqrt(9 / alpha), (12, 12, 2), lambda p: p[0] % 3 == 0 and p[1] % 3 == 0)
        others.append(("columns-outer", "alpha/n first"))
    out = np.empty_like(x)
    local_response_normalization(x, out, across, 3, alpha, beta, 0.0)
    expected = reference_lrn(x, across, 3, alpha, beta, 0.0, F32, F32)
    assert_bits_equal(out, expected)
    assert_bits_equal(lrn_variant(x, across, 3, alpha, beta, "pinned", "alpha/n first"), expected)
    for order, scaling in others:
        other = lrn_variant(x, across, 3, alpha, beta, order, scaling)
        assert (other.view(np.uint32) != expected.view(np.uint32)).any(), (order, scaling)
