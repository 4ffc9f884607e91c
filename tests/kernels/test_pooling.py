"""Max and average pooling against the per-window plain reference.

Layout: x [W, H, C, *batch] (3 to 6 dims), out [OW, OH, C, *batch]; the
window of (ox, oy) starts at (ox * stride_x - pad_x, oy * stride_y - pad_y).
Integers and maxima are bit-exact; the float32 average is a float32 sum (within
1e-5 of the window's magnitude of the exact mean), or the exact float64 one
under ``OPENVX_NN_F32_SUMS=float64``.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from kernel_testing import (
    F32,
    FORMATS,
    LAYOUTS,
    Q7,
    Q78,
    S8,
    U8,
    assert_bits_equal,
    assert_float32_means,
    blank,
    placed,
    random_values,
)
from layer_references import pooling_ref

from openvx_nn.kernels.openvx import float_layers
from openvx_nn.kernels.openvx.pooling import PARALLEL_WORK, _round_mean, pooling

SEEDS = range(16)
KINDS = [True, False]


def out_size(rng: np.random.Generator, n: int, size: int, pad: int, stride: int) -> int:
    """The floor or ceiling output size, sometimes one more (a window past everything); at least 1."""
    span = n + 2 * pad - size
    base = (span // stride if rng.integers(2) else -(-span // stride)) + 1
    return max(1, base + int(rng.random() < 0.2))


def random_config(rng: np.random.Generator):
    rank = int(rng.integers(3, 7))
    shape = [int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 4))]
    shape += [int(rng.integers(1, 3)) for _ in range(rank - 3)]
    size = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    pad = int(rng.integers(0, 4)), int(rng.integers(0, 4))  # a pad >= size puts whole windows in the padding
    stride = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    out_shape = (out_size(rng, shape[0], size[0], pad[0], stride[0]),
                 out_size(rng, shape[1], size[1], pad[1], stride[1]), *shape[2:])
    return tuple(shape), out_shape, size, pad, stride


def window_args(size, pad, stride) -> tuple[int, ...]:
    return size[0], size[1], pad[0], pad[1], stride[0], stride[1]


def assert_pooled(out, x, out_shape, fmt, max_pool, *args) -> None:
    """``out`` is the reference's pooling of ``x``: the same bits, except a float32 average on float32 sums
    (the default), which must lie within their bound of the exact mean."""
    expected = pooling_ref(x, out_shape, fmt, max_pool, *args)
    if fmt.is_float and not max_pool and float_layers.chosen():
        magnitude = pooling_ref(np.abs(x), out_shape, fmt, False, *args)
        assert_float32_means(out, expected, magnitude, args[0] * args[1])
    else:
        assert_bits_equal(out, expected)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("max_pool", KINDS, ids=["max", "average"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_pooling_matches_reference(fmt, max_pool, seed):
    rng = np.random.default_rng([50, FORMATS.index(fmt), max_pool, seed])
    shape, out_shape, size, pad, stride = random_config(rng)
    x = placed(rng, random_values(rng, fmt, shape, extremes=0.4))
    out = blank(rng, out_shape, fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    args = window_args(size, pad, stride)
    pooling(x, out, max_pool, *args, parallel=bool(rng.integers(2)))
    assert_pooled(out, x, out_shape, fmt, max_pool, *args)


@pytest.mark.parametrize("seed", range(6))
def test_float32_average_with_exact_sums_gives_the_references_bits(monkeypatch, seed):
    monkeypatch.setenv(float_layers.SUMS_ENV, "float64")
    rng = np.random.default_rng([59, seed])
    shape, out_shape, size, pad, stride = random_config(rng)
    x = placed(rng, random_values(rng, F32, shape, extremes=0.4))
    out = blank(rng, out_shape, np.float32, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    args = window_args(size, pad, stride)
    pooling(x, out, False, *args)
    assert_bits_equal(out, pooling_ref(x, out_shape, F32, False, *args))


@pytest.mark.parametrize("fmt", [U8, S8, Q78], ids=str)
def test_average_rounds_exact_ties_to_even(fmt):
    # 2x2 windows (area 4) at stride 2 with padding 1: corner windows hold one inside value, edge windows two,
    # the rest four. Each window's last inside value is set so its sum is 2 mod 4: every mean ends in .5.
    rng = np.random.default_rng([51, FORMATS.index(fmt)])
    width, height, channels = 7, 5, 2
    x = rng.integers(max(fmt.lo, -60), 61, (width, height, channels)).astype(np.int64)
    out_shape = (4, 3, channels)
    for ox, oy, c in np.ndindex(out_shape):
        cells = [(px, py) for py in (2 * oy - 1, 2 * oy) for px in (2 * ox - 1, 2 * ox)
                 if 0 <= px < width and 0 <= py < height]
        last = cells[-1]
        rest = sum(int(x[px, py, c]) for px, py in cells[:-1])
        value = int(x[last[0], last[1], c])
        x[last[0], last[1], c] = value + (2 - rest - value) % 4  # sum = 2 mod 4, value moved by 0..3
    x = x.astype(fmt.dtype)
    out = np.zeros(out_shape, fmt.dtype)
    pooling(x, out, False, 2, 2, 1, 1, 2, 2)
    assert_bits_equal(out, pooling_ref(x, out_shape, fmt, False, 2, 2, 1, 1, 2, 2))
    means = [Fraction(sum(int(x[px, py, c]) for py in (2 * oy - 1, 2 * oy) for px in (2 * ox - 1, 2 * ox)
                          if 0 <= px < width and 0 <= py < height), 4) for ox, oy, c in np.ndindex(out_shape)]
    assert all(q.denominator == 2 for q in means)
    assert [round(q) for q in means] == [int(out[i]) for i in np.ndindex(out_shape)]
    if fmt.lo < 0:
        assert any(q < 0 for q in means) and any(q > 0 for q in means)
    rounded_up = [round(q) > q for q in means]
    assert any(rounded_up) and not all(rounded_up)  # ties go both ways: to the even neighbour


def test_mean_rounding_is_exact_where_the_float_estimate_is_off():
    # Windows in tests never sum past 2**53, where the float quotient can floor to the wrong side; the helper's
    # corrections are checked here directly, over its whole domain |total| <= area * 2**15.
    rng = np.random.default_rng(55)
    misses = 0
    for _ in range(1000):
        area = int(rng.integers(1, 1 << 47))
        multiple = int(rng.integers(-(1 << 15), 1 << 15)) * area
        for offset in (0, 1, -1, area // 2, -(area // 2), (area + 1) // 2):  # on, just past, just short, ties
            total = max(-area << 15, min(area << 15, multiple + offset))
            misses += math.floor(float(total) * (1.0 / area)) != total // area
            assert _round_mean(np.int64(total), np.int64(area), 1.0 / area) == round(Fraction(total, area))
    assert misses > 0


@pytest.mark.parametrize("fmt", [U8, S8, Q7, Q78, F32], ids=str)
def test_extreme_inputs_stay_in_range_and_padding_takes_no_part_in_max(fmt):
    rng = np.random.default_rng([52, FORMATS.index(fmt)])
    for value in ((fmt.lo, fmt.hi) if not fmt.is_float else (-3.0e38, 3.0e38)):
        x = np.full((5, 4, 2, 2), value, fmt.dtype)
        out_shape = (4, 3, 2, 2)
        for max_pool in KINDS:
            out = blank(rng, out_shape, fmt.dtype, "f")
            pooling(x, out, max_pool, 3, 3, 2, 1, 1, 2)  # windows hang into padding on every side
            assert_pooled(out, x, out_shape, fmt, max_pool, 3, 3, 2, 1, 1, 2)
            if max_pool:
                assert (out == np.array(value, fmt.dtype)).all()  # padding is not a zero candidate
            else:
                assert out.min() >= min(0, value) and out.max() <= max(0, value)


def test_windows_wholly_in_padding_give_zero():
    x = np.full((3, 3, 1), -5, np.int8)
    out = np.full((4, 4, 1), 99, np.int8)
    pooling(x, out, True, 2, 2, 3, 3, 2, 2)  # window starts -3, -1, 1, 3: the first and last miss the input
    assert out[0, :, 0].tolist() == [0, 0, 0, 0] and out[3, :, 0].tolist() == [0, 0, 0, 0]
    assert out[1:3, 1:3, 0].tolist() == [[-5, -5], [-5, -5]]
    pooling(x, out, False, 2, 2, 3, 3, 2, 2)
    assert out[0, :, 0].tolist() == [0, 0, 0, 0]
    assert out[1, 1, 0] == -1  # -5 / 4 = -1.25 -> -1
    assert out[1, 2, 0] == -2  # two inside values: -10 / 4 = -2.5 -> -2 (even)


def test_float_max_propagates_nan_and_prefers_positive_zero():
    nan = np.float32(np.nan)
    x = np.array([[-0.0, 0.0, -0.0, -1.0], [-0.0, -0.0, nan, 2.0]], np.float32).T[:, :, None]  # W 4, H 2
    out = np.zeros((4, 1, 1), np.float32)
    pooling(x, out, True, 1, 2, 0, 0, 1, 1)
    got = out[:, 0, 0]
    assert math.copysign(1.0, got[0]) < 0 and got[0] == 0.0  # only -0.0 in the window
    assert math.copysign(1.0, got[1]) > 0 and got[1] == 0.0  # +0.0 beats -0.0 in either order
    assert math.isnan(got[2]) and got[3] == 2.0
    reversed_x = np.ascontiguousarray(x[:, ::-1])
    pooling(reversed_x, out, True, 1, 2, 0, 0, 1, 1)
    assert math.copysign(1.0, out[1, 0, 0]) > 0 and math.isnan(out[2, 0, 0])


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_two_by_two_max_windows_inside_the_input_match_reference(fmt):
    # The 2x2 route (every window inside: no padding, outputs that fit): strides 1 to 3, odd and even
    # extents, batches, any layout; float32 with NaN and signed zeros through window_max's rules.
    rng = np.random.default_rng([57, FORMATS.index(fmt)])
    for shape, stride in (((8, 6, 3), (2, 2)), ((9, 7, 2, 2), (2, 1)), ((5, 8, 4), (1, 3)), ((2, 2, 1), (1, 1)),
                          ((11, 10, 2, 1, 2), (3, 2))):
        out_shape = ((shape[0] - 2) // stride[0] + 1, (shape[1] - 2) // stride[1] + 1, *shape[2:])
        x = placed(rng, random_values(rng, fmt, shape, extremes=0.4))
        if fmt == F32:
            x[rng.random(shape) < 0.05] = np.nan
            x[rng.random(shape) < 0.1] = -0.0
        out = blank(rng, out_shape, fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
        args = window_args((2, 2), (0, 0), stride)
        pooling(x, out, True, *args)
        assert_bits_equal(out, pooling_ref(x, out_shape, fmt, True, *args))


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_two_by_two_max_on_f_ordered_tensors_runs_on_planes_with_the_same_bits(fmt):
    # OpenVX's own tensors are F-ordered (W fastest): the 2x2 route then reads C-ordered [plane, H, W] views,
    # from Python and as a native entry.
    from openvx_nn.kernels.openvx import pooling as module
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng([58, FORMATS.index(fmt)])
    for shape, stride in (((32, 32, 16), (2, 2)), ((9, 7, 3, 2), (2, 1)), ((17, 8, 5), (3, 2)), ((2, 2, 1), (1, 1))):
        out_shape = ((shape[0] - 2) // stride[0] + 1, (shape[1] - 2) // stride[1] + 1, *shape[2:])
        x = np.asfortranarray(random_values(rng, fmt, shape, extremes=0.4))
        if fmt == F32:
            x[rng.random(shape) < 0.05] = np.nan
            x[rng.random(shape) < 0.1] = -0.0
        args = window_args((2, 2), (0, 0), stride)
        expected = pooling_ref(x, out_shape, fmt, True, *args)
        out = np.zeros(out_shape, fmt.dtype, order="F")
        assert module._operands(x, out, True, x, args)[0] == "max_2x2_planes"
        module.prepare(x, out, True, *args)()
        assert_bits_equal(out, expected)
        out[...] = 0
        assert native.run(module.native_entry(x, out, True, *args)) == 0
        assert_bits_equal(out, expected)


def test_float_average_with_exact_sums_sums_in_row_major_order(monkeypatch):
    monkeypatch.setenv(float_layers.SUMS_ENV, "float64")
    # Row y = 0 first: 1e16 - 1e16 + 1 + 1 = 2. Column x = 0 first would lose a 1 to 1e16's ulp: 1e16 + 1 - 1e16 + 1.
    x = np.array([[1e16, 1.0], [-1e16, 1.0]], np.float32)[:, :, None]  # x[px, py, c]
    out = np.zeros((1, 1, 1), np.float32)
    pooling(x, out, False, 2, 2, 0, 0, 1, 1)
    assert out[0, 0, 0] == np.float32(0.5)
    column_first = ((float(x[0, 0, 0]) + float(x[0, 1, 0])) + float(x[1, 0, 0])) + float(x[1, 1, 0])
    assert column_first / 4 != 0.5


def test_float32_average_sums_each_window_column_first():
    # float32 sums (the default): each window column top to bottom, then the columns left to right. Column x = 0
    # is 1e16 + 1 = 1e16 (the 1 is below 1e16's ulp), column x = 1 likewise -1e16: the mean is 0, where row-major
    # order gives 0.5 -- both within the bound of the sum of magnitudes.
    x = np.array([[1e16, 1.0], [-1e16, 1.0]], np.float32)[:, :, None]  # x[px, py, c]
    out = np.ones((1, 1, 1), np.float32)
    pooling(x, out, False, 2, 2, 0, 0, 1, 1)
    assert out[0, 0, 0] == 0.0 and pooling_ref(x, (1, 1, 1), F32, False, 2, 2, 0, 0, 1, 1)[0, 0, 0] == 0.5
    assert_pooled(out, x, (1, 1, 1), F32, False, 2, 2, 0, 0, 1, 1)


def _wide_case(rng: np.random.Generator):
    """A float32 layer on OpenVX's own (F-ordered) tensors: rows up to 140 wide (several vector steps, masked
    tails), windows 1 to 7 (some the whole plane), strides 1 to 4 (4: split by column phase), padding below the
    window, the output sizes of both roundings and one more; channels 1, odd or many, sometimes a batch."""
    size = int(rng.integers(1, 8)), int(rng.integers(1, 8))
    pad = int(rng.integers(0, size[0])), int(rng.integers(0, size[1]))
    stride = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    shape = (max(int(rng.integers(1, 141)), size[0] - 2 * pad[0]), max(int(rng.integers(1, 13)), size[1] - 2 * pad[1]),
             int(rng.choice([1, 3, 5, 17])), *((2,) if rng.integers(3) == 0 else ()))
    out_shape = (out_size(rng, shape[0], size[0], pad[0], stride[0]),
                 out_size(rng, shape[1], size[1], pad[1], stride[1]), *shape[2:])
    return shape, out_shape, window_args(size, pad, stride)


def _with_edge_values(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    flat = x.reshape(-1, order="F")
    for value in (np.nan, np.inf, -np.inf, -0.0, 0.0, 3.0e38, -3.0e38, 1e-45):
        flat[rng.integers(0, flat.size, max(1, flat.size // 200))] = value
    return x


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("max_pool", KINDS, ids=["max", "average"])
def test_float32_planes_match_the_reference_on_wide_rows_and_edge_values(max_pool, seed):
    # NaN: a max window holding one pools to NaN; an average too (and +inf beside -inf). +0.0 beats -0.0.
    from openvx_nn.kernels.openvx import pooling as module
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng([60, max_pool, seed])
    shape, out_shape, args = _wide_case(rng)
    x = np.asfortranarray(random_values(rng, F32, shape, extremes=0.3))
    if seed % 2:
        x = _with_edge_values(rng, x)
    out = np.full(out_shape, 7.0, np.float32, order="F")
    module.prepare(x, out, max_pool, *args)()
    assert_pooled(out, x, out_shape, F32, max_pool, *args)
    python = out.copy(order="F")
    out[...] = 7.0
    assert native.run(module.native_entry(x, out, max_pool, *args)) == 0
    assert out.tobytes(order="F") == python.tobytes(order="F")


@pytest.mark.parametrize("width, size, pad, stride", [(128, 2, 0, 2), (64, 3, 1, 1), (129, 3, 1, 2), (16, 3, 0, 1),
                                                      (17, 1, 0, 1), (190, 5, 2, 3)])
@pytest.mark.parametrize("max_pool", KINDS, ids=["max", "average"])
def test_rows_of_whole_vector_steps_and_tails_match_the_reference(max_pool, width, size, pad, stride):
    # the micro-kernels' steps are 64 values (16 at most: one vector): rows of exactly whole steps, one past, one
    # short, a single vector; strides 1, 2 (even lanes of two loads) and 3 (column phases)
    rng = np.random.default_rng([62, width, size, max_pool])
    shape = (width, 7, 3)
    out_shape = ((width + 2 * pad - size) // stride + 1, (7 + 2 * pad - size) // stride + 1, 3)
    x = _with_edge_values(rng, np.asfortranarray(random_values(rng, F32, shape)))
    out = np.zeros(out_shape, np.float32, order="F")
    args = window_args((size, size), (pad, pad), (stride, stride))
    pooling(x, out, max_pool, *args)
    assert_pooled(out, x, out_shape, F32, max_pool, *args)


@pytest.mark.parametrize("max_pool", KINDS, ids=["max", "average"])
def test_global_pooling_of_a_resnet_head_matches_the_reference(max_pool):
    rng = np.random.default_rng([61, max_pool])
    x = np.asfortranarray(random_values(rng, F32, (7, 7, 512, 1)))
    out = np.zeros((1, 1, 512, 1), np.float32, order="F")
    pooling(x, out, max_pool, 7, 7, 0, 0, 1, 1)
    assert_pooled(out, x, (1, 1, 512, 1), F32, max_pool, 7, 7, 0, 0, 1, 1)


def test_float32_average_of_huge_values_does_not_overflow():
    # the mean of finite values is finite: the float32 sums scale their terms by a power of two first
    x = np.full((3, 3, 2), 3.0e38, np.float32)
    x[:, :, 1] = -3.0e38
    out = np.zeros((1, 1, 2), np.float32)
    pooling(x, out, False, 3, 3, 0, 0, 1, 1)
    assert np.isfinite(out).all()
    assert_pooled(out, x, (1, 1, 2), F32, False, 3, 3, 0, 0, 1, 1)


@pytest.mark.parametrize("fmt, max_pool", [(U8, True), (Q78, False), (F32, True), (F32, False)],
                         ids=["U8-max", "Q7.8-average", "F32-max", "F32-average"])
def test_large_input_uses_the_thread_pool_and_stays_exact(fmt, max_pool):
    rng = np.random.default_rng([53, FORMATS.index(fmt), max_pool])
    x = placed(rng, random_values(rng, fmt, (36, 38, 8, 2)), "f")
    out_shape = (16, 16, 8, 2)
    assert np.prod(out_shape) * 8 * 8 >= PARALLEL_WORK  # parallel=None picks the thread pool
    out = blank(rng, out_shape, fmt.dtype, "step")
    pooling(x, out, max_pool, 8, 8, 1, 0, 2, 2)
    assert_pooled(out, x, out_shape, fmt, max_pool, 8, 8, 1, 0, 2, 2)


def test_output_overlapping_the_input_reads_the_input_first():
    rng = np.random.default_rng(54)
    buffer = rng.integers(-100, 100, (6, 6, 2)).astype(np.int16)
    expected = pooling_ref(buffer.copy(), (3, 3, 2), Q78, True, 2, 2, 0, 0, 2, 2)
    out = buffer[1:4, 2:5]
    pooling(buffer, out, True, 2, 2, 0, 0, 2, 2)
    assert_bits_equal(out, expected)


@pytest.mark.parametrize("bad", ["dtype", "rank2", "rank7", "planes", "size", "stride", "pad", "huge", "int32"])
def test_rejects_bad_arguments(bad):
    x, out = np.zeros((4, 4, 2), np.uint8), np.zeros((2, 2, 2), np.uint8)
    args = [2, 2, 0, 0, 2, 2]
    if bad == "dtype":
        out = out.astype(np.int8)
    elif bad == "rank2":
        x, out = x[:, :, 0], out[:, :, 0]
    elif bad == "rank7":
        x, out = x.reshape(4, 4, 2, 1, 1, 1, 1), out.reshape(2, 2, 2, 1, 1, 1, 1)
    elif bad == "planes":
        out = np.zeros((2, 2, 3), np.uint8)
    elif bad == "size":
        args[0] = 0
    elif bad == "stride":
        args[5] = 0
    elif bad == "pad":
        args[2] = -1
    elif bad == "huge":
        args[1] = 1 << 31
    else:
        x, out = x.astype(np.int32), out.astype(np.int32)
    with pytest.raises(ValueError):
        pooling(x, out, True, *args)
