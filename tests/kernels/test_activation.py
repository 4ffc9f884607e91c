"""Activation layer against the plain reference: every raw input of every integer format, bit for bit."""
from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from kernel_testing import (
    F32,
    LAYOUTS,
    Q3_12,
    Q7,
    Q11_4,
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
from nonlinear_reference import CANONICAL_NAN, activation_table, assert_activation, reference_activation

from openvx_nn.kernels.openvx.activation import FUNCTIONS, activation

# the package re-exports the function under the module's name: reach the module itself
activation_module = importlib.import_module("openvx_nn.kernels.openvx.activation")

A_B = {  # (a, b) settings per function; the others ignore a and b
    "tanh": [(1.0, 1.0), (float(np.float32(1.7159)), float(np.float32(2 / 3))), (0.25, 3.0)],
    "brelu": [(6.0, 0.0), (1.0, 0.0), (float(np.float32(0.3)), 0.0)],
    "linear": [(1.0, 0.0), (float(np.float32(0.7)), float(np.float32(-0.3))), (3.0, 0.5)],
}
CASES = [(function, ab) for function in FUNCTIONS for ab in A_B.get(function, [(0.0, 0.0)])]
CASE_IDS = [f"{function}-a{a:g}-b{b:g}" for function, (a, b) in CASES]

Q0_15 = Format("Q0.15", np.int16, 15)
Q4_3 = Format("Q4.3", np.int8, 3)
U8_F4 = Format("U4.4", np.uint8, 4)
# (input format, output format): same dtype, the fixed point positions may differ.
PAIRS_8 = [(U8, U8), (S8, S8), (Q7, Q7), (S8, Q7), (Q7, S8), (U8, U8_F4), (Q7, Q4_3)]
PAIRS_16 = [(Q78, Q78), (Q3_12, Q3_12), (Q78, Q0_15), (Q3_12, Q11_4)]


def all_raw_inputs(rng: np.random.Generator, fmt: Format) -> np.ndarray:
    """Every raw value of ``fmt`` once, shuffled into a 3-D array of a random memory layout."""
    raw = rng.permutation(np.arange(fmt.lo, fmt.hi + 1)).astype(fmt.dtype)
    shape = (16, 16, raw.size // 256)
    return placed(rng, raw.reshape(shape), LAYOUTS[int(rng.integers(len(LAYOUTS)))])


def check_exhaustive(function: str, a: float, b: float, fin: Format, fout: Format, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = all_raw_inputs(rng, fin)
    out = blank(rng, x.shape, fout.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    activation(x, out, function, a, b, fpp_in=fin.fpp, fpp_out=fout.fpp)
    table = activation_table(function, a, b, fin, fout)  # the reference's math, one raw input at a time
    assert_bits_equal(out, table[x.astype(np.int64) - fin.lo])


@pytest.mark.parametrize("fin, fout", PAIRS_8, ids=lambda f: str(f))
@pytest.mark.parametrize("function, ab", CASES, ids=CASE_IDS)
def test_every_8bit_input_matches_the_reference(function, ab, fin, fout):
    check_exhaustive(function, *ab, fin, fout, seed=[8, CASES.index((function, ab)), PAIRS_8.index((fin, fout))])


@pytest.mark.parametrize("fin, fout", PAIRS_16, ids=lambda f: str(f))
@pytest.mark.parametrize("function, ab", CASES, ids=CASE_IDS)
def test_every_16bit_input_matches_the_reference(function, ab, fin, fout):
    check_exhaustive(function, *ab, fin, fout, seed=[16, CASES.index((function, ab)), PAIRS_16.index((fin, fout))])


F32_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5,
                         np.finfo(np.float32).max, -np.finfo(np.float32).max,
                         np.finfo(np.float32).tiny, -np.finfo(np.float32).tiny, 1e-45, -1e-45,
                         88.72, -88.72, 103.9, -103.9, 709.7, -709.7, 709.8, -709.8, 745.2, -745.2,
                         36.0, -36.0, 37.5, -37.5, 1e10, -1e10, 1e20, 1e30], np.float32)


@pytest.mark.parametrize("function, ab", CASES, ids=CASE_IDS)
def test_float32_inputs_match_the_reference_bit_for_bit_or_within_the_stated_ulps(function, ab):
    rng = np.random.default_rng([32, CASES.index((function, ab))])
    gentle = (rng.standard_normal(400) * 4).astype(np.float32)  # where the functions bend
    wide = random_values(rng, F32, (400,))  # magnitudes 1e-6 .. 1e6, zeros of both signs
    values = np.concatenate([F32_SPECIALS, gentle, wide])
    x = placed(rng, rng.permutation(values).reshape(7, 7, -1))
    out = blank(rng, x.shape, np.float32, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    activation(x, out, function, *ab)
    assert_activation(out, reference_activation(x, function, *ab, F32, F32), function, *ab)


@pytest.mark.parametrize("seed", range(12))
def test_any_rank_and_layout_matches_the_reference(seed):
    rng = np.random.default_rng([64, seed])
    fmt = [U8, S8, Q7, Q78, Q11_4, Q3_12, F32][seed % 7]
    for ndim in range(1, 7):
        function, (a, b) = CASES[int(rng.integers(len(CASES)))]
        x = placed(rng, random_values(rng, fmt, random_shape(rng, ndim, max_size=300)))
        out = blank(rng, x.shape, fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        fout = fmt if fmt.is_float else Format("out", fmt.dtype, int(rng.integers(0, 8)))
        activation(x, out, function, a, b, fpp_in=fmt.fpp, fpp_out=fout.fpp)
        assert_activation(out, reference_activation(x, function, a, b, fmt, fout), function, a, b)


@pytest.mark.parametrize("fmt", [Q78, F32], ids=str)
def test_output_may_be_the_input_itself(fmt):
    rng = np.random.default_rng(5)
    x = placed(rng, random_values(rng, fmt, (9, 8, 7)))
    expected = reference_activation(x, "tanh", 1.5, 0.5, fmt, fmt)
    activation(x, x, "tanh", 1.5, 0.5, fpp_in=fmt.fpp, fpp_out=fmt.fpp)
    assert_activation(x, expected, "tanh", 1.5, 0.5)


@pytest.mark.parametrize("fmt", [S8, Q78, F32], ids=str)
def test_parallel_and_serial_kernels_agree(fmt):
    rng = np.random.default_rng(6)
    x = placed(rng, random_values(rng, fmt, (33, 17, 5, 3)), "perm")
    serial, threaded = np.empty(x.shape, fmt.dtype), np.empty(x.shape, fmt.dtype)
    activation(x, serial, "softrelu", fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=False)
    activation(x, threaded, "softrelu", fpp_in=fmt.fpp, fpp_out=fmt.fpp, parallel=True)
    assert_bits_equal(threaded, serial)
    assert_activation(serial, reference_activation(x, "softrelu", 0.0, 0.0, fmt, fmt), "softrelu", 0.0, 0.0)


def test_requantizing_rounds_exact_ties_to_even():
    # relu from Q7.8 to Q11.4 keeps the value; raw inputs with 8 (binary 1000) in the low bits are ties.
    x = np.array([8, 24, 40, 56, 72, -8, 9, 7, 32767], np.int16)  # 0.5, 1.5, 2.5, 3.5, 4.5 LSB of Q11.4; ...
    out = np.zeros_like(x)
    activation(x, out, "relu", fpp_in=8, fpp_out=4)
    assert out.tolist() == [0, 2, 2, 4, 4, 0, 1, 0, 2048]


def test_saturation_and_nan_in_integer_outputs():
    x = np.array([-128, -1, 0, 1, 127], np.int8)
    out = np.zeros_like(x)
    activation(x, out, "square", fpp_in=0, fpp_out=0)
    assert out.tolist() == [127, 1, 0, 1, 127]
    activation(x, out, "sqrt", fpp_in=0, fpp_out=4)  # negative inputs give NaN: stored as 0
    assert out.tolist() == [0, 0, 0, 16, 127]
    activation(x, out, "linear", 1000.0, -3.0e38)  # huge finite negative: lowest value
    assert out.tolist() == [-128] * 5


def test_logistic_and_softrelu_do_not_overflow_at_the_range_ends():
    x = np.array([-32768, -800, 800, 32767], np.int16)  # plain int16: exp(32768) is beyond float64
    out = np.zeros_like(x)
    activation(x, out, "logistic", fpp_out=14)
    assert out.tolist() == [0, 0, 16384, 16384]
    activation(x, out, "softrelu")
    assert out.tolist() == [0, 0, 800, 32767]
    f = np.array([-1e30, -100.0, 100.0, 1e30], np.float32)
    g = np.zeros_like(f)
    activation(f, g, "softrelu")
    assert g[0] == 0.0 and g[2] == 100.0 and g[3] == np.float32(1e30)
    assert abs(g[1] / np.float32(math.exp(-100.0)) - 1) < 4 * 2.0 ** -23  # exp(-100), not 0


def test_every_nan_is_stored_as_the_canonical_quiet_nan():
    x = np.array([-1.0, np.nan, -np.nan, -np.inf], np.float32)
    x.view(np.uint32)[1] = 0x7F800001  # a signalling NaN with a payload
    out = np.zeros_like(x)
    activation(x, out, "sqrt")
    assert out.view(np.uint32).tolist() == [int(CANONICAL_NAN.view(np.uint32))] * 4


def test_tables_are_built_once_per_setting():
    x = np.arange(-128, 128, dtype=np.int8)
    out = np.empty_like(x)
    activation_module._table.cache_clear()
    activation(x, out, "tanh", 1.25, 0.5, fpp_in=7, fpp_out=7)
    activation(x[::2], out[::2], "tanh", 1.25, 0.5, fpp_in=7, fpp_out=7)
    activation(x, out, "relu", 1.25, 0.5, fpp_in=7, fpp_out=7)
    activation(x, out, "relu", 9.0, 9.0, fpp_in=7, fpp_out=7)  # relu ignores a and b: same table
    info = activation_module._table.cache_info()
    assert info.misses == 2 and info.hits >= 2  # two tables built; every later use found them


def test_parameters_are_taken_as_float32():
    a = 1.00000005  # float32(a) == 1.0; a itself would move both results below
    f = np.array([3.0], np.float32)
    g = np.zeros_like(f)
    activation(f, g, "linear", a, 0.0)
    assert g[0] == np.float32(3.0) and np.float32(3.0 * a) != np.float32(3.0)
    q = np.array([8], np.int16)  # 0.5 LSB of Q11.4: a tie that a > 1 would round up
    r = np.zeros_like(q)
    activation(q, r, "linear", a, 0.0, fpp_in=8, fpp_out=4)
    assert r[0] == 0


@pytest.mark.parametrize("bad, message", [
    ({"function": "gelu"}, "unknown"),
    ({"out": np.zeros(4, np.int16)}, "dtype"),
    ({"out": np.zeros(5, np.int8)}, "shape"),
    ({"x": np.zeros(4, np.int32), "out": np.zeros(4, np.int32)}, "not supported"),
])
def test_bad_arguments_raise_value_error(bad, message):
    args = {"x": np.zeros(4, np.int8), "out": np.zeros(4, np.int8), "function": "relu"} | bad
    with pytest.raises(ValueError, match=message):
        activation(args["x"], args["out"], args["function"], 0.0, 0.0)


def test_empty_tensors_are_left_alone():
    activation(np.zeros((0, 3), np.int8), np.zeros((0, 3), np.int8), "relu")


CLAMP_CASES = [("relu", 0.0), ("brelu", 6.0), ("brelu", float(np.float32(0.3))), ("brelu", 1e6)]


@pytest.mark.parametrize("fmt", [U8, S8, Q7, Q78, Q3_12, Q11_4], ids=str)
@pytest.mark.parametrize("function, a", CLAMP_CASES, ids=lambda v: str(v))
def test_clamps_between_equal_formats_take_the_flat_route_with_the_same_bits(fmt, function, a):
    # relu / brelu from a format to itself is a clamp of the raw values: contiguous tensors (C or F order, or the
    # very same array) run one flat min/max loop, from Python and as a native entry; the table is the reference.
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng([77, fmt.fpp, CLAMP_CASES.index((function, a))])
    table = activation_table(function, a, 0.0, fmt, fmt)
    for order in "CF":
        shape = random_shape(rng, int(rng.integers(1, 5)), max_size=3000)
        x = np.asarray(random_values(rng, fmt, shape), order=order)
        x.flat[: min(x.size, 4)] = [fmt.lo, fmt.hi, 0, -1 if fmt.lo < 0 else 1][: min(x.size, 4)]
        expected = table[x.astype(np.int64) - fmt.lo]
        out = np.zeros(shape, fmt.dtype, order=order)
        assert activation_module._clamped(x, out, function, a, 0.0, fmt.fpp, fmt.fpp) is not None
        activation_module.prepare(x, out, function, a, fpp_in=fmt.fpp, fpp_out=fmt.fpp)()
        assert_bits_equal(out, expected)
        out[...] = 0
        assert native.run(activation_module.native_entry(x, out, function, a, fpp_in=fmt.fpp, fpp_out=fmt.fpp)) == 0
        assert_bits_equal(out, expected)
        inplace = x.copy(order=order)
        activation(inplace, inplace, function, a, fpp_in=fmt.fpp, fpp_out=fmt.fpp)
        assert_bits_equal(inplace, expected)


def test_a_clamp_between_different_formats_or_layouts_keeps_the_table():
    x = np.zeros((4, 5), np.int16)
    assert activation_module._clamped(x, np.zeros((4, 5), np.int16), "relu", 0.0, 0.0, 8, 7) is None
    assert activation_module._clamped(x, np.zeros((4, 5), np.int16, order="F"), "relu", 0.0, 0.0, 8, 8) is None
    assert activation_module._clamped(x, np.zeros((4, 5), np.int16), "tanh", 1.0, 1.0, 8, 8) is None
