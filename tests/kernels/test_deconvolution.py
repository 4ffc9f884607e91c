"""Deconvolution layer kernel against the seed's upsample-pad-correlate reference (conv_reference.py), bit for bit."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conv_reference import reference_deconvolution, upsampled_padded
from kernel_testing import (
    F32,
    FORMATS,
    INT_FORMATS,
    LAYOUTS,
    Q3_12,
    Q7,
    Q11_4,
    Q78,
    S8,
    Format,
    assert_bits_equal,
    blank,
    placed,
    random_values,
    round_exact,
)

from openvx_nn.kernels.openvx.deconvolution import deconvolution

POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def policy_id(saturate: bool, nearest_even: bool) -> str:
    return f"{'saturate' if saturate else 'wrap'}-{'even' if nearest_even else 'zero'}"


# 6 integer formats x 4 policies x 8 seeds + float32 x 16 seeds = 208 random configurations.
RANDOM_CASES = ([pytest.param(fmt, s, n, seed, id=f"{fmt}-{policy_id(s, n)}-{seed}")
                 for fmt in INT_FORMATS for s, n in POLICIES for seed in range(8)]
                + [pytest.param(F32, True, True, seed, id=f"F32-{seed}") for seed in range(16)])


def random_geometry(rng: np.random.Generator) -> dict:
    """Kernel 1..4, upscale 1..3, a < upscale, pad 0..K (pad = K makes p' = -1: the upsampled input is cropped)."""
    kernel = tuple(int(v) for v in rng.integers(1, 5, 2))
    upscale = tuple(int(v) for v in rng.integers(1, 4, 2))
    extra = tuple(int(rng.integers(0, u)) for u in upscale)
    size = [int(v) for v in rng.integers(1, 6, 2)]
    pad = []
    for axis in range(2):
        p = int(rng.integers(0, kernel[axis] + 1))
        while (size[axis] - 1) * upscale[axis] - 2 * p + kernel[axis] + extra[axis] < 1:
            size[axis] += 1  # the output must keep at least one element
        pad.append(p)
    channels, k_out = (int(v) for v in rng.integers(1, 4, 2))
    batch = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 4))))
    out_size = [(size[i] - 1) * upscale[i] - 2 * pad[i] + kernel[i] + extra[i] for i in range(2)]
    return {"x_shape": (size[0], size[1], channels) + batch, "w_shape": kernel + (channels, k_out),
            "out_shape": (out_size[0], out_size[1], k_out) + batch, "pad": tuple(pad), "upscale": upscale,
            "extra": extra}


def run_routes(x, w, bias, fmt_out: Format, g: dict, saturate, nearest_even, fpp, rng):
    methods = ["direct"] if fmt_out.is_float else ["gemm", "direct"]
    results = []
    for method in methods:
        out = blank(rng, g["out_shape"], fmt_out.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        deconvolution(x, w, bias, out, *g["pad"], *g["upscale"], *g["extra"], saturate, nearest_even,
                      fpp_x=fpp[0], fpp_w=fpp[1], fpp_b=fpp[2], fpp_out=fpp[3], method=method)
        results.append(out)
    return results


@pytest.mark.parametrize("fmt, saturate, nearest_even, seed", RANDOM_CASES)
def test_deconvolution_matches_the_seeds_definition(fmt, saturate, nearest_even, seed):
    rng = np.random.default_rng([50, FORMATS.index(fmt), saturate, nearest_even, seed])
    g = random_geometry(rng)
    x = placed(rng, random_values(rng, fmt, g["x_shape"]))
    w = placed(rng, random_values(rng, fmt, g["w_shape"]))
    bias = None if seed % 2 else placed(rng, random_values(rng, fmt, (g["w_shape"][3],)))
    fpp = (fmt.fpp,) * 4
    expected = reference_deconvolution(x, w, bias, g["pad"], g["upscale"], g["extra"], fmt, fpp, saturate,
                                       nearest_even)
    for out in run_routes(x, w, bias, fmt, g, saturate, nearest_even, fpp, rng):
        assert_bits_equal(out, expected)


MIXED = [(Q11_4, Q3_12, Q78, Q78), (Q78, Q78, Q3_12, Q11_4), (Q7, Q7, S8, Q7), (Q11_4, Q11_4, Q11_4, Q3_12)]


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("formats", MIXED, ids=lambda f: "-".join(map(str, f)))
def test_deconvolution_aligns_fixed_point_positions_exactly(formats, saturate, nearest_even):
    rng = np.random.default_rng([51, MIXED.index(formats), saturate, nearest_even])
    dtype = formats[0].dtype
    fx, fw, fb, fo = (Format(f.name, dtype, f.fpp) for f in formats)
    fpp = tuple(f.fpp for f in (fx, fw, fb, fo))
    for with_bias in (True, False):
        g = random_geometry(rng)
        x = placed(rng, random_values(rng, fx, g["x_shape"]))
        w = placed(rng, random_values(rng, fw, g["w_shape"]))
        bias = placed(rng, random_values(rng, fb, (g["w_shape"][3],))) if with_bias else None
        expected = reference_deconvolution(x, w, bias, g["pad"], g["upscale"], g["extra"], fo, fpp, saturate,
                                           nearest_even)
        for out in run_routes(x, w, bias, fo, g, saturate, nearest_even, fpp, rng):
            assert_bits_equal(out, expected)


@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_values_at_the_type_extremes_overflow_by_the_policy(fmt, saturate):
    rng = np.random.default_rng([52, INT_FORMATS.index(fmt), saturate])
    for _ in range(3):
        g = random_geometry(rng)
        x = placed(rng, random_values(rng, fmt, g["x_shape"], extremes=1.0))
        w = placed(rng, random_values(rng, fmt, g["w_shape"], extremes=1.0))
        bias = placed(rng, random_values(rng, fmt, (g["w_shape"][3],), extremes=1.0))
        fpp = (fmt.fpp,) * 4
        expected = reference_deconvolution(x, w, bias, g["pad"], g["upscale"], g["extra"], fmt, fpp, saturate)
        for out in run_routes(x, w, bias, fmt, g, saturate, True, fpp, rng):
            assert_bits_equal(out, expected)


@pytest.mark.parametrize("method", ["gemm", "direct"])
@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("fmt", [Q7, Q78, Q11_4, Q3_12], ids=str)
def test_exact_ties_round_by_the_policy(fmt, nearest_even, method):
    # Upscale 2 with a 1-tap kernel of raw weight 1 and pad 0: out[2i] = x[i], out[2i+1] = 0 (an inserted zero).
    # With the output s bits coarser than the products, x = odd * 2**(s-1) are ties of both signs.
    s = fmt.fpp
    n = 16
    odd = (np.arange(n) - n // 2) * 2 + 1
    largest_odd = fmt.hi >> (s - 1)  # hi = 2**n - 1, so this is odd
    odd = np.clip(odd, -largest_odd, largest_odd)
    x = (odd << (s - 1)).astype(fmt.dtype).reshape(n, 1, 1)
    w = np.ones((1, 1, 1, 1), fmt.dtype)
    out = np.full((2 * n - 1, 1, 1), 99, fmt.dtype)
    deconvolution(x, w, None, out, 0, 0, 2, 1, 0, 0, True, nearest_even, fpp_x=s, fpp_w=s, fpp_out=s,
                  method=method)
    exact = [Fraction(int(v), 2 ** s) for v in x[:, 0, 0]]
    assert all(q.denominator == 2 for q in exact) and min(exact) < 0 < max(exact)
    assert out[0::2, 0, 0].tolist() == [round_exact(q, nearest_even) for q in exact]
    assert out[1::2, 0, 0].tolist() == [0] * (n - 1)


def test_small_example_by_hand():
    # x = [1, 2], upscale 2, kernel [1, 10, 100], pad 0: p' = 2, U = [0, 0, 1, 0, 2, 0, 0], OW = 5.
    x = np.array([1, 2], np.int16).reshape(2, 1, 1)
    w = np.array([1, 10, 100], np.int16).reshape(3, 1, 1, 1)
    out = np.zeros((5, 1, 1), np.int16)
    deconvolution(x, w, None, out, 0, 0, 2, 1, 0, 0, True, True)
    assert out[:, 0, 0].tolist() == [100, 10, 1 + 200, 20, 2]
    u, _ = upsampled_padded(x, (2, 1), (0, 0), (3, 1), (0, 0))
    assert u[:, 0, 0].tolist() == [0, 0, 1, 0, 2, 0, 0]
    # pad 1 crops one output on each side (p' = 1); a = 1 adds one more zero at the far end.
    out = np.zeros((4, 1, 1), np.int16)
    deconvolution(x, w, np.array([7], np.int16), out, 1, 0, 2, 1, 1, 0, True, True)
    assert out[:, 0, 0].tolist() == [10 + 7, 201 + 7, 20 + 7, 2 + 7]


def test_kernel_smaller_than_the_upscale_leaves_phases_with_the_bias_alone():
    x = np.array([[3, 4]], np.int8).T.reshape(2, 1, 1)
    w = np.full((1, 1, 1, 2), 2, np.int8)
    bias = np.array([-1, 5], np.int8)
    out = np.zeros((6, 1, 2), np.int8)  # (2 - 1) * 3 - 0 + 1 + 2; p' = 0: U = [3, 0, 0, 4, 0, 0]
    deconvolution(x, w, bias, out, 0, 0, 3, 1, 2, 0, True, True)
    assert out[:, 0, 0].tolist() == [6 - 1, -1, -1, 8 - 1, -1, -1]
    assert out[:, 0, 1].tolist() == [6 + 5, 5, 5, 8 + 5, 5, 5]


def test_float32_inserted_zeros_never_meet_an_infinite_weight():
    x = np.array([1.0, 2.0], np.float32).reshape(2, 1, 1)
    w = np.array([np.inf, 1.0], np.float32).reshape(2, 1, 1, 1)  # upscale 2, K = 2: each output uses one tap
    out = np.zeros((4, 1, 1), np.float32)
    deconvolution(x, w, None, out, 0, 0, 2, 1, 0, 0, True, True)
    assert out[:, 0, 0].tolist() == [1.0, np.inf, 2.0, np.inf]  # p' = 1: U = [0, 1, 0, 2, 0]


@pytest.mark.parametrize("seed", range(6))
def test_float32_cancellations_follow_the_documented_order(seed):
    # Huge values that cancel next to small ones: any other summation order shows in the result.
    rng = np.random.default_rng([53, seed])
    g = random_geometry(rng)
    pool = np.array([2.0 ** 60, -(2.0 ** 60), 2.0 ** 36, -(2.0 ** 36), 1.0, -1.0, 0.75, 3.0], np.float32)
    x = placed(rng, rng.choice(pool, g["x_shape"]))
    w = placed(rng, rng.choice(np.array([1.0, -1.0, 0.5, 2.0], np.float32), g["w_shape"]))
    bias = None if seed % 2 else placed(rng, rng.choice(pool, (g["w_shape"][3],)))
    expected = reference_deconvolution(x, w, bias, g["pad"], g["upscale"], g["extra"], F32, (0, 0, 0, 0))
    for out in run_routes(x, w, bias, F32, g, True, True, (0, 0, 0, 0), rng):
        assert_bits_equal(out, expected)


def test_beyond_2_53_the_int64_route_keeps_every_bit():
    # Upscale 1 and a 1x1 kernel: one output summing 2**23 + 2 products, all 2**30 but one that is 1. float64
    # would round the sum to an even value; the int64 route keeps the low bits, which wrapping exposes.
    taps = (1 << 23) + 2
    x = np.full((1, 1, taps), -32768, np.int16)
    w = np.full((1, 1, taps, 1), -32768, np.int16)
    x[0, 0, 7], w[0, 0, 7, 0] = 1, 1
    out = np.zeros((1, 1, 1), np.int16)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        deconvolution(x, w, None, out, 0, 0, 1, 1, 0, 0, False, True, method="gemm")
    deconvolution(x, w, None, out, 0, 0, 1, 1, 0, 0, False, True)
    assert out[0, 0, 0] == 1


def test_refuses_beyond_the_int64_accumulator():
    # Each output of upscale 1 meets all KX*KY*C taps: 2**17 int16 taps with a Q0.15 bias reach 2**62.
    x = np.zeros((1, 1, 1 << 17), np.int16)
    w = np.zeros((1, 1, 1 << 17, 1), np.int16)
    out = np.zeros((1, 1, 1), np.int16)
    with pytest.raises(ValueError, match="2\\*\\*62"):
        deconvolution(x, w, np.zeros(1, np.int16), out, 0, 0, 1, 1, 0, 0, True, True, fpp_b=15)
    deconvolution(x, w, np.zeros(1, np.int16), out, 0, 0, 1, 1, 0, 0, True, True, fpp_b=14)


def test_rejects_mismatched_shapes_and_parameters():
    x = np.zeros((3, 3, 2), np.int16)
    w = np.zeros((3, 3, 2, 4), np.int16)
    out = np.zeros((7, 7, 4), np.int16)  # (3 - 1) * 2 - 0 + 3 + 0
    deconvolution(x, w, None, out, 0, 0, 2, 2, 0, 0, True, True)
    with pytest.raises(ValueError, match="output shape"):
        deconvolution(x, w, None, out, 0, 0, 2, 2, 1, 0, True, True)
    with pytest.raises(ValueError, match="input channels"):
        deconvolution(x, np.zeros((3, 3, 1, 4), np.int16), None, out, 0, 0, 2, 2, 0, 0, True, True)
    with pytest.raises(ValueError, match="bias shape"):
        deconvolution(x, w, np.zeros((7, 6, 4), np.int16), out, 0, 0, 2, 2, 0, 0, True, True)
    with pytest.raises(ValueError, match="bound_y"):
        deconvolution(x, w, None, out, 0, 0, 2, 2, 0, 0, True, True, bound_y=0)
    with pytest.raises(ValueError, match="upscale_x"):
        deconvolution(x, w, None, out, 0, 0, 0, 2, 0, 0, True, True)
    with pytest.raises(ValueError, match="differs"):
        deconvolution(x, w.astype(np.uint8), None, out, 0, 0, 2, 2, 0, 0, True, True)
