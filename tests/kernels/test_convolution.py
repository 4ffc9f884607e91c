"""Convolution layer kernel against the plain reference of conv_reference.py, bit for bit.

Every integer case runs through both routes (im2col + float64 BLAS, and the
direct int64 loops); float32 runs the direct route, whose summation order the
reference reproduces exactly.
"""
from __future__ import annotations

import concurrent.futures
from fractions import Fraction

import numpy as np
import pytest
from conv_reference import reference_convolution
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
    U8,
    Format,
    assert_bits_equal,
    blank,
    fit_exact,
    placed,
    random_values,
    round_exact,
)

from openvx_nn.kernels.engine import blas_product, correlation, im2col
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.support import jit

S16 = Format("S16", np.int16)  # plain int16 integers
POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def policy_id(saturate: bool, nearest_even: bool) -> str:
    return f"{'saturate' if saturate else 'wrap'}-{'even' if nearest_even else 'zero'}"


# 6 integer formats x 4 policies x 8 seeds + float32 x 16 seeds = 208 random configurations.
RANDOM_CASES = ([pytest.param(fmt, s, n, seed, id=f"{fmt}-{policy_id(s, n)}-{seed}")
                 for fmt in INT_FORMATS for s, n in POLICIES for seed in range(8)]
                + [pytest.param(F32, True, True, seed, id=f"F32-{seed}") for seed in range(16)])


def random_geometry(rng: np.random.Generator, stride: tuple[int, int] | None = None) -> dict:
    """Small random shapes: kernel 1..4, pad up to the kernel size, stride 1..3, dilation 0..2, 0..3 batch dims."""
    kx, ky = (int(v) for v in rng.integers(1, 5, 2))
    dilation = tuple(int(v) for v in rng.integers(0, 3, 2))
    stride = stride or tuple(int(v) for v in rng.integers(1, 4, 2))
    pad = (int(rng.integers(0, kx + 1)), int(rng.integers(0, ky + 1)))
    width, height = (int(v) for v in rng.integers(1, 9, 2))
    channels, k_out = (int(v) for v in rng.integers(1, 4, 2))
    batch = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 4))))
    out_size = []
    for n, k, p, d, s in ((width, kx, pad[0], dilation[0], stride[0]), (height, ky, pad[1], dilation[1], stride[1])):
        span = n + 2 * p - (k + (k - 1) * d)
        ceiling = rng.random() < 0.3  # VX_NN_DS_SIZE_ROUNDING_CEILING: the last window may overhang
        out_size.append(max(1, (-(-span // s) if ceiling else span // s) + 1))
    return {"x_shape": (width, height, channels) + batch, "w_shape": (kx, ky, channels, k_out),
            "out_shape": (out_size[0], out_size[1], k_out) + batch, "pad": pad, "stride": stride,
            "dilation": dilation}


def make_bias(rng, fmt: Format, kind: str, out_shape) -> np.ndarray | None:
    if kind == "none":
        return None
    shape = (out_shape[2],) if kind == "shared" else tuple(out_shape[:3])
    return placed(rng, random_values(rng, fmt, shape))


def run_both_routes(x, w, bias, out_shape, fmt_out: Format, g: dict, saturate, nearest_even, fpp, rng):
    """Outputs of every route that applies to the format, each into an awkwardly laid out array."""
    methods = ["direct"] if fmt_out.is_float else ["gemm", "direct"]
    results = []
    for method in methods:
        out = blank(rng, out_shape, fmt_out.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        convolution(x, w, bias, out, *g["pad"], *g["stride"], *g["dilation"], saturate, nearest_even,
                    fpp_x=fpp[0], fpp_w=fpp[1], fpp_b=fpp[2], fpp_out=fpp[3], method=method)
        results.append(out)
    return results


@pytest.mark.parametrize("fmt, saturate, nearest_even, seed", RANDOM_CASES)
def test_convolution_matches_exact_reference(fmt, saturate, nearest_even, seed):
    rng = np.random.default_rng([40, FORMATS.index(fmt), saturate, nearest_even, seed])
    g = random_geometry(rng)
    x = placed(rng, random_values(rng, fmt, g["x_shape"]))
    w = placed(rng, random_values(rng, fmt, g["w_shape"]))
    bias = make_bias(rng, fmt, ["none", "shared", "location"][seed % 3], g["out_shape"])
    fpp = (fmt.fpp,) * 4
    expected = reference_convolution(x, w, bias, g["out_shape"], g["pad"], g["stride"], g["dilation"], fmt, fpp,
                                     saturate, nearest_even)
    for out in run_both_routes(x, w, bias, g["out_shape"], fmt, g, saturate, nearest_even, fpp, rng):
        assert_bits_equal(out, expected)


# (input, weights, bias, output): products finer than the bias, bias finer than the products, output
# finer than both (a negative shift: exact left shift), and mixed int8 positions.
MIXED = [(Q11_4, Q3_12, Q78, Q78), (Q78, Q78, Q3_12, Q11_4), (Q7, Q7, S8, Q7), (S8, Q7, Q78, Q3_12),
         (Q11_4, Q11_4, Q11_4, Q3_12)]


@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("formats", MIXED, ids=lambda f: "-".join(map(str, f)))
def test_convolution_aligns_fixed_point_positions_exactly(formats, saturate, nearest_even):
    # Formats of one call share the dtype; only the positions differ, so the values are drawn per position.
    rng = np.random.default_rng([41, MIXED.index(formats), saturate, nearest_even])
    dtype = formats[0].dtype
    fx, fw, fb, fo = (Format(f.name, dtype, f.fpp) for f in formats)
    fpp = tuple(f.fpp for f in (fx, fw, fb, fo))
    for kind in ("shared", "location", "none"):
        g = random_geometry(rng)
        x = placed(rng, random_values(rng, fx, g["x_shape"]))
        w = placed(rng, random_values(rng, fw, g["w_shape"]))
        bias = make_bias(rng, fb, kind, g["out_shape"])
        expected = reference_convolution(x, w, bias, g["out_shape"], g["pad"], g["stride"], g["dilation"], fo,
                                         fpp, saturate, nearest_even)
        for out in run_both_routes(x, w, bias, g["out_shape"], fo, g, saturate, nearest_even, fpp, rng):
            assert_bits_equal(out, expected)


@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("fmt", INT_FORMATS, ids=str)
def test_values_at_the_type_extremes_overflow_by_the_policy(fmt, saturate):
    rng = np.random.default_rng([42, INT_FORMATS.index(fmt), saturate])
    for seed in range(3):
        g = random_geometry(rng)
        x = placed(rng, random_values(rng, fmt, g["x_shape"], extremes=1.0))
        w = placed(rng, random_values(rng, fmt, g["w_shape"], extremes=1.0))
        bias = placed(rng, random_values(rng, fmt, tuple(g["out_shape"][:3]), extremes=1.0))
        fpp = (fmt.fpp,) * 4
        expected = reference_convolution(x, w, bias, g["out_shape"], g["pad"], g["stride"], g["dilation"], fmt, fpp,
                                         saturate, True)
        for out in run_both_routes(x, w, bias, g["out_shape"], fmt, g, saturate, True, fpp, rng):
            assert_bits_equal(out, expected)


TIE_FORMATS = [Q7, Q78, Q11_4, Q3_12]


@pytest.mark.parametrize("method", ["gemm", "direct"])
@pytest.mark.parametrize("nearest_even", [False, True], ids=["to_zero", "nearest_even"])
@pytest.mark.parametrize("fmt", TIE_FORMATS, ids=str)
def test_exact_ties_round_by_the_policy(fmt, nearest_even, method):
    # A 1x1 kernel of raw weight 1 over C=2 channels sums x0 + x1 at scale 2**-2s; the output keeps scale 2**-s.
    # x0 a multiple of 2**s and x1 = +-2**(s-1) put every output exactly on a tie, positive or negative, with
    # odd and even integers below it.
    s = fmt.fpp
    rng = np.random.default_rng([43, s, nearest_even])
    n = 24
    whole = rng.integers(fmt.lo >> s, (fmt.hi >> s) + 1, n) << s
    half = np.where(np.arange(n) % 2 == 0, 1, -1) << (s - 1)
    x = np.stack([whole, half], axis=-1).astype(fmt.dtype).reshape(n, 1, 2)
    w = np.ones((1, 1, 2, 1), fmt.dtype)
    out = np.zeros((n, 1, 1), fmt.dtype)
    convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, True, nearest_even, fpp_x=s, fpp_w=s, fpp_out=s, method=method)
    exact = [Fraction(int(a + b), 2 ** s) for a, b in zip(whole, half)]
    assert all(q.denominator == 2 for q in exact)
    assert any(q > 0 for q in exact) and any(q < 0 for q in exact)
    assert out[:, 0, 0].tolist() == [round_exact(q, nearest_even) for q in exact]
    if nearest_even:
        assert all(v % 2 == 0 for v in out[:, 0, 0].tolist())


@pytest.mark.parametrize("method", ["gemm", "direct"])
def test_ties_from_the_bias_alignment(method):
    # Q7.8 products (scale 2**-16) plus a Q3.12 bias: P = 16, shift 8 to Q7.8. x*w = 3 * 2**7 and bias = -2**4
    # gives (384 - 16 * 16) / 2**8 = 0.5: a tie made by the aligned bias.
    x = np.full((1, 1, 1), 3, np.int16)
    w = np.full((1, 1, 1, 1), 1 << 7, np.int16)
    bias = np.array([-(1 << 4)], np.int16)
    for nearest_even, expected in ((True, 0), (False, 0)):
        out = np.zeros((1, 1, 1), np.int16)
        convolution(x, w, bias, out, 0, 0, 1, 1, 0, 0, True, nearest_even, fpp_x=8, fpp_w=8, fpp_b=12, fpp_out=8,
                    method=method)
        assert out[0, 0, 0] == expected
    bias[0] = -48  # (384 - 48 * 16) / 2**8 = -1.5: to -2 when nearest-even, to -1 toward zero
    for nearest_even, expected in ((True, -2), (False, -1)):
        out = np.zeros((1, 1, 1), np.int16)
        convolution(x, w, bias, out, 0, 0, 1, 1, 0, 0, True, nearest_even, fpp_x=8, fpp_w=8, fpp_b=12, fpp_out=8,
                    method=method)
        assert out[0, 0, 0] == expected


def test_small_example_by_hand():
    # 1-D along x: input 1..6, kernel [1, 10, 100] dilated by 1 (taps two apart), pad 2, stride 2.
    x = np.arange(1, 7, dtype=np.int16).reshape(6, 1, 1)
    w = np.array([1, 10, 100], np.int16).reshape(3, 1, 1, 1)
    out = np.zeros((3, 1, 1), np.int16)
    convolution(x, w, np.array([5], np.int16), out, 2, 0, 2, 1, 1, 0, True, True)
    # padded: 0 0 1 2 3 4 5 6 0 0; output ox reads padded[2*ox], [2*ox+2], [2*ox+4]
    assert out[:, 0, 0].tolist() == [0 + 10 * 1 + 100 * 3 + 5, 1 + 10 * 3 + 100 * 5 + 5, 3 + 10 * 5 + 0 + 5]


@pytest.mark.parametrize("channels_major", [True, False], ids=["channels_major", "positions_major"])
@pytest.mark.parametrize("budget, row_min", [(24, 5), (24, 13), (400, 5)])
@pytest.mark.parametrize("seed", range(4))
def test_gemm_blocks_and_operand_orders_give_the_same_result(seed, budget, row_min, channels_major, monkeypatch):
    # A tiny scratch budget splits rows mid-line, over several lines and mid-image, splits the taps (summed
    # block by block) and pads a few images at a time; both BLAS operand orders must give the same exact sums.
    monkeypatch.setattr(im2col, "BUDGET", budget)
    monkeypatch.setattr(im2col, "ROW_MIN", row_min)
    monkeypatch.setattr(blas_product, "FORCE_ORDER", channels_major)
    rng = np.random.default_rng([44, seed, budget, row_min])
    fmt = [Q78, U8, S8, Q3_12][seed]
    g = random_geometry(rng, stride=(1 + seed % 2, 1 + seed // 2))
    g["x_shape"] = g["x_shape"][:3] + (2, 3)  # two batch dims: 6 images
    g["out_shape"] = g["out_shape"][:3] + (2, 3)
    x = placed(rng, random_values(rng, fmt, g["x_shape"]))
    w = placed(rng, random_values(rng, fmt, g["w_shape"]))
    bias = make_bias(rng, fmt, ["location", "shared"][seed % 2], g["out_shape"])
    fpp = (fmt.fpp,) * 4
    expected = reference_convolution(x, w, bias, g["out_shape"], g["pad"], g["stride"], g["dilation"], fmt, fpp)
    for layout in ("f", "perm"):
        out = blank(rng, g["out_shape"], fmt.dtype, layout)
        convolution(x, w, bias, out, *g["pad"], *g["stride"], *g["dilation"], True, True, fpp_x=fmt.fpp,
                    fpp_w=fmt.fpp, fpp_b=fmt.fpp, fpp_out=fmt.fpp, method="gemm")
        assert_bits_equal(out, expected)


@pytest.mark.parametrize("stride_x", [1, 2, 3])
def test_im2col_fills_any_block_of_rows_and_taps(stride_x):
    # White-box: every block (r0, rows) x (j0, taps) of the cols matrix, filled by the whole-image or the
    # any-rows kernel, equals the same block of a cols matrix written out plainly.
    rng = np.random.default_rng([49, stride_x])
    kx, ky, channels, images = 2, 3, 2, 3
    stride_y, step_x, step_y = 2, 2, 1
    ow, oh = 4, 3
    wp, hp = (ow - 1) * stride_x + (kx - 1) * step_x + 1, (oh - 1) * stride_y + (ky - 1) * step_y + 1
    window = np.asfortranarray(rng.standard_normal((wp, hp, channels, images)))
    taps, rows = kx * ky * channels, ow * oh * images
    full = np.empty((taps, rows))
    for j in range(taps):
        mx, my, c = j % kx, (j // kx) % ky, j // (kx * ky)
        for r in range(rows):
            ox, oy, image = r % ow, (r // ow) % oh, r // (ow * oh)
            full[j, r] = window[ox * stride_x + mx * step_x, oy * stride_y + my * step_y, c, image]
    _, kernels, _ = im2col._compiled(np.dtype(np.int16), np.dtype(np.int16), np.dtype(np.int16))
    for r0 in range(rows):
        for n_rows in range(1, rows - r0 + 1):
            j0, n_taps = (r0 + n_rows) % taps, 1 + (r0 * 7 + n_rows) % 5
            n_taps = min(n_taps, taps - j0)
            cols = np.full((n_taps, n_rows), np.nan)
            im2col._fill(kernels, window, cols, j0, r0, kx, ky, stride_x, stride_y, step_x, step_y, ow, oh)
            assert np.array_equal(cols, full[j0:j0 + n_taps, r0:r0 + n_rows]), (r0, n_rows, j0, n_taps)


def test_gemm_route_sees_weights_changed_in_place():
    # Packed weights are reused across calls only while the tensor holds the same values.
    rng = np.random.default_rng(48)
    x = np.asfortranarray(rng.integers(1, 50, (9, 9, 4)).astype(np.int16))
    w = np.asfortranarray(rng.integers(-50, 50, (3, 3, 4, 5)).astype(np.int16))
    previous = None
    for step in range(3):
        out = np.zeros((7, 7, 5), np.int16, order="F")
        convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, True, True, method="gemm")
        assert_bits_equal(out, reference_convolution(x, w, None, out.shape, (0, 0), (1, 1), (0, 0), S16,
                                                     (0, 0, 0, 0)))
        assert previous is None or not np.array_equal(out, previous)
        previous = out
        w[step, 1, 2, 3] += 7  # one raw value changes, at the same address


@pytest.mark.parametrize("fmt", [Q78, U8, F32], ids=str)
def test_larger_layer_picks_its_route_and_threads_and_stays_exact(fmt, monkeypatch):
    # The generic instruction set: float64 GEMM for this size (the SIMD engine has its own tests).
    rng = np.random.default_rng(45)
    x = np.asfortranarray(random_values(rng, fmt, (14, 12, 8, 2)))
    w = np.asfortranarray(random_values(rng, fmt, (3, 3, 8, 6)))
    bias = random_values(rng, fmt, (6,))
    out = np.zeros((14, 12, 6, 2), fmt.dtype, order="F")
    calls = []
    monkeypatch.setattr(correlation, "gemm_correlate",
                        lambda *a, **k: (calls.append(1), im2col.gemm_correlate(*a, **k))[1])
    convolution(x, w, bias, out, 1, 1, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp, fpp_b=fmt.fpp,
                fpp_out=fmt.fpp, isa="generic")
    assert bool(calls) == (not fmt.is_float)  # 14*12*6*2 outputs x 72 taps: above GEMM_WORK
    fpp = (fmt.fpp,) * 4
    assert_bits_equal(out, reference_convolution(x, w, bias, out.shape, (1, 1), (1, 1), (0, 0), fmt, fpp))
    with jit.thread_pool():  # the pool is busy: the serial kernels run, with the same result
        again = np.zeros_like(out)
        convolution(x, w, bias, again, 1, 1, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                    fpp_b=fmt.fpp, fpp_out=fmt.fpp, isa="generic")
    assert_bits_equal(again, out)


def test_concurrent_calls_from_two_threads_stay_exact():
    # Scratch buffers are per thread; the packed-weight cache and the order chooser are shared.
    rng = np.random.default_rng(50)
    cases = []
    for i in range(8):
        fmt = [Q78, U8][i % 2]
        x = np.asfortranarray(random_values(rng, fmt, (10 + i % 3, 9, 6)))
        w = np.asfortranarray(random_values(rng, fmt, (3, 3, 6, 7)))
        cases.append((fmt, x, w, reference_convolution(x, w, None, (x.shape[0], 9, 7), (1, 1), (1, 1), (0, 0), fmt,
                                                      (fmt.fpp,) * 4)))

    def run(case):
        fmt, x, w, _ = case
        out = np.zeros((x.shape[0], 9, 7), fmt.dtype, order="F")
        for _ in range(5):
            convolution(x, w, None, out, 1, 1, 1, 1, 0, 0, True, True, fpp_x=fmt.fpp, fpp_w=fmt.fpp,
                        fpp_out=fmt.fpp, method="gemm")
        return out

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for case, out in zip(cases, pool.map(run, cases)):
            assert_bits_equal(out, case[3])


def test_output_overlapping_the_input_reads_the_input_first():
    rng = np.random.default_rng(46)
    memory = rng.integers(-50, 50, (6, 6, 2)).astype(np.int16)
    x = memory[:, :, :1]
    out = memory[:, :, 1:]  # 3x3 pad 1: same size, its memory interleaved with the input's
    w = rng.integers(-5, 5, (3, 3, 1, 1)).astype(np.int16)
    expected = reference_convolution(x.copy(), w, None, out.shape, (1, 1), (1, 1), (0, 0), S16, (0, 0, 0, 0))
    convolution(x, w, None, out, 1, 1, 1, 1, 0, 0, True, True)
    assert_bits_equal(out, expected)


def test_float32_padding_and_an_infinite_weight(monkeypatch):
    # The exact float64 route skips taps that fall on padding: an infinite weight there adds nothing. The float
    # engine (the default) reads padding as zeros that take part in the sums, as other frameworks do: 0 * inf is NaN.
    x = np.ones((1, 1, 1), np.float32)
    w = np.full((3, 1, 1, 1), np.inf, np.float32)
    w[1, 0, 0, 0] = 2.0
    out = np.zeros((1, 1, 1), np.float32)
    monkeypatch.setenv("OPENVX_NN_F32_SUMS", "float64")
    convolution(x, w, None, out, 1, 0, 1, 1, 0, 0, True, True)
    assert out[0, 0, 0] == 2.0
    monkeypatch.delenv("OPENVX_NN_F32_SUMS")
    convolution(x, w, None, out, 1, 0, 1, 1, 0, 0, True, True)
    assert np.isnan(out[0, 0, 0])


def test_float32_sums_in_the_documented_order():
    # 1 + 2**60 - 2**60 is 0 in float64 (the 1 is lost), -2**60 + 2**60 + 1 is 1: the order shows.
    big = float(2 ** 60)
    x = np.array([1.0, big, -big], np.float32)
    w = np.ones(3, np.float32)
    for x_shape, w_shape in (((3, 1, 1), (3, 1, 1, 1)), ((1, 3, 1), (1, 3, 1, 1)), ((1, 1, 3), (1, 1, 3, 1))):
        out = np.zeros((1, 1, 1), np.float32)
        convolution(x.reshape(x_shape), w.reshape(w_shape), None, out, 0, 0, 1, 1, 0, 0, True, True)
        assert out[0, 0, 0] == 0.0, x_shape  # mx, my and c each run upward
    # c is the outer loop: with c = 0 holding 1 and c = 1 holding big, -big along mx, the 1 is lost first.
    x2 = np.array([[1.0, 0.0], [big, -big]], np.float32).T.reshape(2, 1, 2)  # x2[mx, 0, c]
    w2 = np.array([[1.0, 0.0], [1.0, 1.0]], np.float32).T.reshape(2, 1, 2, 1)
    out = np.zeros((1, 1, 1), np.float32)
    convolution(x2, w2, None, out, 0, 0, 1, 1, 0, 0, True, True)
    assert out[0, 0, 0] == 0.0


@pytest.mark.parametrize("seed", range(8))
def test_float32_cancellations_follow_the_documented_order(seed):
    # Huge values that cancel next to small ones: every change of summation order shows in the result.
    rng = np.random.default_rng([47, seed])
    g = random_geometry(rng)
    pool = np.array([2.0 ** 60, -(2.0 ** 60), 2.0 ** 36, -(2.0 ** 36), 1.0, -1.0, 0.75, 3.0], np.float32)
    x = placed(rng, rng.choice(pool, g["x_shape"]))
    w = placed(rng, rng.choice(np.array([1.0, -1.0, 0.5, 2.0], np.float32), g["w_shape"]))
    bias = make_bias(rng, F32, ["none", "shared", "location"][seed % 3], g["out_shape"])
    expected = reference_convolution(x, w, bias, g["out_shape"], g["pad"], g["stride"], g["dilation"], F32,
                                     (0, 0, 0, 0))
    for out in run_both_routes(x, w, bias, g["out_shape"], F32, g, True, True, (0, 0, 0, 0), rng):
        assert_bits_equal(out, expected)


# ---- the exactness bounds, at their edges ----------------------------------------------------------

def extreme_column(taps: int, odd_tap: int) -> tuple[np.ndarray, np.ndarray]:
    """x, w of shape (1, 1, taps) and (1, 1, taps, 1): every product 2**30 except one that is 1."""
    x = np.full((1, 1, taps), -32768, np.int16)
    w = np.full((1, 1, taps, 1), -32768, np.int16)
    x[0, 0, odd_tap] = 1
    w[0, 0, odd_tap, 0] = 1
    return x, w


def test_gemm_route_is_exact_at_its_2_53_bound():
    # taps = 2**23 is the largest count for which taps * 2**30 <= 2**53. The sum (2**23 - 1) * 2**30 + 1 needs
    # all 53 bits: wrapped to int16 only its low bits remain, which are exactly 1.
    taps = 1 << 23
    x, w = extreme_column(taps, taps // 3)
    for saturate, expected in ((False, 1), (True, 32767)):
        out = np.zeros((1, 1, 1), np.int16)
        convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, saturate, True, method="gemm")
        assert out[0, 0, 0] == expected
    x[0, 0, taps // 3] = -32768  # all products 2**30: the sum is 2**53 itself
    w[0, 0, taps // 3, 0] = -32768
    out = np.zeros((1, 1, 1), np.int16)
    convolution(x.reshape(2, 2, taps // 4), w.reshape(2, 2, taps // 4, 1), None, out, 0, 0, 1, 1, 0, 0, False, True,
                method="gemm")
    assert out[0, 0, 0] == fit_exact(2 ** 53, S16, False) == 0


def test_beyond_2_53_the_int64_route_keeps_every_bit():
    # taps = 2**23 + 2: float64 would round (2**23 + 1) * 2**30 + 1 to an even value; int64 keeps the 1.
    taps = (1 << 23) + 2
    x, w = extreme_column(taps, 5)
    out = np.zeros((1, 1, 1), np.int16)
    with pytest.raises(ValueError, match="2\\*\\*53"):
        convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, False, True, method="gemm")
    convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, False, True)  # the automatic choice
    assert out[0, 0, 0] == 1
    assert float((taps - 1) * 2 ** 30 + 1) % 2 ** 16 == 0  # what a float64 sum would have kept


@pytest.mark.parametrize("method", ["gemm", "direct"])
def test_refuses_a_layer_beyond_the_int64_accumulator(method):
    # int16 products at scale 2**0 aligned to a Q0.15 bias: shifted left 15 bits, so taps * 2**45 + 2**15 must
    # stay below 2**62: taps = 2**17 is refused, 2**17 - 1 is computed exactly.
    taps = 1 << 17
    x, w = extreme_column(taps, 0)
    bias = np.array([12345], np.int16)
    out = np.zeros((1, 1, 1), np.int16)
    with pytest.raises(ValueError, match="2\\*\\*62"):
        convolution(x, w, bias, out, 0, 0, 1, 1, 0, 0, False, True, fpp_b=15, fpp_out=15, method=method)
    x, w = extreme_column(taps - 1, 0)
    x[...], w[...] = -32768, -32768
    for fpp_out, saturate in ((15, False), (0, False), (0, True), (15, True)):
        total = (taps - 1) * 2 ** 30 * 2 ** 15 + 12345  # at scale 2**-15
        expected = fit_exact(round_exact(Fraction(total, 2 ** (15 - fpp_out)), True), S16, saturate)
        convolution(x, w, bias, out, 0, 0, 1, 1, 0, 0, saturate, True, fpp_b=15, fpp_out=fpp_out, method=method)
        assert out[0, 0, 0] == expected
    assert expected == 32767


# ---- rejections --------------------------------------------------------------------------------------

def test_rejects_mismatched_shapes_dtypes_and_parameters():
    x = np.zeros((5, 5, 2), np.int16)
    w = np.zeros((3, 3, 2, 4), np.int16)
    out = np.zeros((3, 3, 4), np.int16)
    convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="input channels"):
        convolution(x, np.zeros((3, 3, 3, 4), np.int16), None, out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="output shape"):
        convolution(x, w, None, np.zeros((3, 3, 5), np.int16), 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="output shape"):
        convolution(x[..., None], w, None, out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="bias shape"):
        convolution(x, w, np.zeros((3,), np.int16), out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="differs"):
        convolution(x, w.astype(np.int8), None, out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="not supported"):
        convolution(x.astype(np.int32), w.astype(np.int32), None, out.astype(np.int32), 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="rank"):
        convolution(np.zeros((5, 5), np.int16), w, None, out, 0, 0, 1, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="stride_x"):
        convolution(x, w, None, out, 0, 0, 0, 1, 0, 0, True, True)
    with pytest.raises(ValueError, match="method"):
        convolution(x, w, None, out, 0, 0, 1, 1, 0, 0, True, True, method="fft")
    with pytest.raises(ValueError, match="integer"):
        convolution(x.astype(np.float32), w.astype(np.float32), None, out.astype(np.float32), 0, 0, 1, 1, 0, 0,
                    True, True, method="gemm")
