"""Softmax against the plain reference with the same pinned order: integer formats bit for bit, float32 within the
float32 softmax's bound."""
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
    U8,
    Format,
    assert_bits_equal,
    blank,
    placed,
    random_shape,
    random_values,
)
from nonlinear_reference import CANONICAL_NAN, assert_softmax, reference_softmax

from openvx_nn.kernels.openvx.softmax import softmax

Q0_15 = Format("Q0.15", np.int16, 15)
Q0_7 = Format("Q0.7", np.int8, 7)
U0_8 = Format("U0.8", np.uint8, 8)
S16 = Format("S16", np.int16, 0)


def output_format(rng: np.random.Generator, fin: Format) -> Format:
    """Same dtype; half the time the input's fixed point position, else any position the type holds."""
    if fin.is_float or rng.random() < 0.5:
        return fin
    bits = np.iinfo(fin.dtype).bits
    fpp = int(rng.integers(0, bits + 1 if fin.lo == 0 else bits))
    return Format(f"{fin.dtype.__name__}@{fpp}", fin.dtype, fpp)


def softmax_inputs(rng: np.random.Generator, fmt: Format, shape: tuple[int, ...]) -> np.ndarray:
    """Full-range raw values with extremes; for float32 half the time a gentle spread, where outputs vary."""
    if fmt.is_float and rng.random() < 0.5:
        return (rng.standard_normal(shape) * rng.choice([0.5, 3.0, 30.0])).astype(np.float32)
    if not fmt.is_float and rng.random() < 0.3:  # a narrow band, so several classes share the mass
        centre = int(rng.integers(fmt.lo, fmt.hi + 1))
        spread = 3 << fmt.fpp
        return np.clip(centre + rng.integers(-spread, spread + 1, shape), fmt.lo, fmt.hi).astype(fmt.dtype)
    return random_values(rng, fmt, shape)


def run(x: np.ndarray, axis: int, fin: Format, fout: Format, out: np.ndarray, **options) -> None:
    softmax(x, out, axis, fpp_in=fin.fpp, fpp_out=fout.fpp, **options)
    assert_softmax(out, reference_softmax(x, axis, fin, fout))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fin", FORMATS, ids=str)
def test_random_shapes_axes_and_formats_match_the_reference(fin, seed):
    rng = np.random.default_rng([40, FORMATS.index(fin), seed])
    for ndim in range(1, 7):  # 6 configurations per test, 252 in all
        shape = random_shape(rng, ndim, max_size=240, max_dim=7)
        axis = int(rng.integers(ndim))
        fout = output_format(rng, fin)
        x = placed(rng, softmax_inputs(rng, fin, shape))
        out = blank(rng, shape, fin.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        run(x, axis, fin, fout, out)


@pytest.mark.parametrize("fin, fout", [(S8, S8), (Q78, Q78), (S16, Format("Q12.3", np.int16, 3)), (U8, U0_8),
                                       (Q0_7, Q0_7)], ids=str)
def test_equal_inputs_land_on_exact_ties_that_round_to_even(fin, fout):
    # 2**(f+1) equal classes give y = 2**-(f+1): exactly half an LSB at fpp f, which rounds to 0.
    # 2**f equal classes give exactly one LSB.
    rng = np.random.default_rng(41)
    for classes, expected in ((2 ** (fout.fpp + 1), 0), (2 ** fout.fpp, 1)):
        row = rng.integers(fin.lo, fin.hi + 1, 5).astype(fin.dtype)
        x = np.broadcast_to(row, (classes, 5)).copy()  # dim 0: the classes, dim 1: batch
        out = np.empty_like(x)
        run(x, 0, fin, fout, out)
        assert (out == expected).all()


@pytest.mark.parametrize("fin, fout", [(S16, S16), (S16, Q0_15), (Q78, Format("int16@0", np.int16, 0))],
                         ids=str)
def test_far_below_classes_vanish_and_leave_exact_halves(fin, fout):
    # Two equal maxima; the rest so far below that exp underflows to 0 (S16) or falls below half an ulp of 2.
    top = fin.hi
    x = np.array([top, fin.lo, top, fin.lo, fin.lo], fin.dtype)
    out = np.empty_like(x)
    run(x, 0, fin, fout, out)
    half = 0.5 * 2 ** fout.fpp
    assert out.tolist() == [round(half), 0, round(half), 0, 0]


@pytest.mark.parametrize("fout", [Q0_7, Q0_15, U0_8], ids=str)
def test_a_certain_class_saturates_at_the_largest_value_below_one(fout):
    x = np.array([[0], [5]], fout.dtype).T  # rows of one class each: y = 1.0 exactly
    out = np.empty_like(x)
    run(x, 0, fout, fout, out)
    assert (out == fout.hi).all()


def test_float32_extremes_and_special_values():
    big = np.finfo(np.float32).max
    rows = [
        [big, -big, 0.0, 1.0],  # differences beyond float32, fine in float64
        [-big, -big, -big, -big],  # equal: exactly 1/4 each
        [1.0, -np.inf, 2.0, -np.inf],  # -inf classes get exactly 0
        [1.0, np.nan, 2.0, 3.0],  # NaN anywhere: NaN throughout
        [np.nan, 1.0, 2.0, 3.0],
        [1.0, np.inf, 2.0, 3.0],  # +inf: inf - inf is NaN
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [-0.0, 0.0, -0.0, 0.0],
        [1e-45, -1e-45, 0.0, 88.0],
    ]
    x = np.array(rows, np.float32).T.copy()  # dim 0: the 4 classes
    out = np.empty_like(x)
    run(x, 0, F32, F32, out)
    assert out[:, 1].tolist() == [0.25] * 4 and out[1, 2] == 0.0 and out[3, 2] == 0.0
    nan_bits = int(CANONICAL_NAN.view(np.uint32))
    assert (out[:, 3:7].view(np.uint32) == nan_bits).all()


@pytest.mark.parametrize("fmt", [Q78, F32], ids=str)
def test_output_may_be_the_input_itself(fmt):
    rng = np.random.default_rng(42)
    x = placed(rng, softmax_inputs(rng, fmt, (6, 5, 4, 3)))
    expected = reference_softmax(x, 2, fmt, fmt)
    softmax(x, x, 2, fpp_in=fmt.fpp, fpp_out=fmt.fpp)
    assert_softmax(x, expected)


@pytest.mark.parametrize("fmt", [S8, F32], ids=str)
def test_parallel_and_serial_kernels_agree(fmt):
    rng = np.random.default_rng(43)
    x = placed(rng, softmax_inputs(rng, fmt, (40, 30, 10, 3)), "f")
    serial, threaded = np.empty(x.shape, fmt.dtype), np.empty(x.shape, fmt.dtype)
    softmax(x, serial, 2, fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=False)
    softmax(x, threaded, 2, fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=True)
    assert_bits_equal(threaded, serial)
    sample = (slice(0, 6), slice(0, 5))
    assert_softmax(serial[sample], reference_softmax(x[sample], 2, fmt, fmt))


def test_probabilities_sum_to_one_within_rounding():
    rng = np.random.default_rng(44)
    x = (rng.standard_normal((10, 50)) * 2).astype(np.float32)
    out = np.empty_like(x)
    softmax(x, out, 0)
    assert np.allclose(out.astype(np.float64).sum(axis=0), 1.0, atol=1e-6)
    assert math.isclose(float(out[0, 0]), math.exp(x[0, 0]) / sum(math.exp(v) for v in x[:, 0]), rel_tol=1e-6)


@pytest.mark.parametrize("bad, message", [
    ({"axis": 2}, "out of bounds"),
    ({"axis": -1}, "out of bounds"),
    ({"out": np.zeros((3, 2), np.int16)}, "dtype"),
    ({"out": np.zeros((2, 3), np.int8)}, "shape"),
])
def test_bad_arguments_raise_value_error(bad, message):
    args = {"x": np.zeros((3, 2), np.int8), "out": np.zeros((3, 2), np.int8), "axis": 0} | bad
    with pytest.raises(ValueError, match=message):
        softmax(args["x"], args["out"], args["axis"])


# ---- the pinned summation order is observable (integer formats; float32 is held to a bound) --------
# Another order moves s by an ulp of float64, which the final rounding nearly always hides. A row
# [max, x_1, ..., x_K] with exp(x_1) + ... + exp(x_K) tuned to the last bits makes y_0 = 1 / s land exactly
# on a rounding tie of the output format; then summing in any other order misses the tie.

class Inputs:
    """Input values of one format for the construction: their reals, and the largest one below an exp."""

    def __init__(self, fmt: Format):
        self.fmt = fmt
        self.unit = 2 ** fmt.fpp

    def real(self, value) -> float:
        return float(value) if self.fmt.is_float else value / self.unit

    def below(self, target: float):
        """The largest value v <= 0 with exp(v) <= target."""
        if self.fmt.is_float:
            v = np.float32(math.log(target))
            while math.exp(float(v)) > target:
                v = np.nextafter(v, np.float32(-np.inf))
            return v
        return max(self.fmt.lo, math.floor(math.log(target) * self.unit))



def sum_in_order(exps: list[float]) -> float:
    s = 0.0
    for e in exps:
        s += e
    return s


def output_raw(y: float, fout: Format) -> int:
    """The stored bits of ``y`` (no saturation needed here)."""
    if fout.is_float:
        return int(np.array([y], np.float32).view(np.uint32)[0])
    return round(y * 2 ** fout.fpp)


def tie_row(fin: Format, fout: Format, ties: list[float]) -> list:
    """A row [0, x_1, ...] of ``fin`` values whose y_0 is one of ``ties`` in the pinned order, not reversed.

    Greedy: each exp(x_j) takes the largest share of what the previous ones left of ``1 / tie - 1``, aiming
    a few ulps of s low; then two "nudges" of 1/8 ulp steps search for a row that meets the tie exactly.
    """
    inputs = Inputs(fin)
    ulp = 2.0 ** -52  # of s in [1, 2)
    for tie in ties:
        picks, residual = [], 1.0 / tie - 1.0 - 4 * ulp
        while residual > ulp / 64 and len(picks) < 12:
            v = inputs.below(residual)
            picks.append(v)
            residual -= math.exp(inputs.real(v))
        for j1 in range(1, 49):
            for j2 in range(1, 49):
                row = [0, *picks, inputs.below(j1 * ulp / 8), inputs.below(j2 * ulp / 8)]
                exps = [math.exp(inputs.real(v)) for v in row]
                y = 1.0 / sum_in_order(exps)
                y_reversed = 1.0 / sum_in_order(exps[::-1])
                if y == tie and output_raw(y_reversed, fout) != output_raw(y, fout):
                    return row
    raise AssertionError("no row found")


Q14_1 = Format("Q14.1", np.int16, 1)


@pytest.mark.parametrize("fin, fout, ties", [
    (Q78, Q14_1, [0.75]),  # 1.5 LSB of Q14.1: rounds to 2, and to 1 if y is any smaller
], ids=["Q7.8-to-Q14.1"])
def test_the_pinned_summation_order_is_observable_and_followed(fin, fout, ties):
    row = tie_row(fin, fout, ties)
    x = np.array(row, fin.dtype)
    out = np.empty_like(x)
    softmax(x, out, 0, fpp_in=fin.fpp, fpp_out=fout.fpp)
    assert_bits_equal(out, reference_softmax(x, 0, fin, fout))
    if not fout.is_float:
        assert out[0] == 2  # the tie 1.5 went to even
