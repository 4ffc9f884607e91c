"""ROI max pooling against the per-bin plain reference (Fast R-CNN bins with exact Fractions).

Layout: x [W, H, C(, B)], rois [4, R(, B)] holding x0, y0, x1, y1 (inclusive,
raw integers), out [OW, OH, C, R(, B)].
"""
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
    assert_bits_equal,
    blank,
    placed,
    random_values,
)
from layer_references import roi_bins, roi_pooling_ref

from openvx_nn.kernels.openvx.roi_pooling import PARALLEL_WORK, roi_pooling

ROI_DTYPES = [np.int16, np.int32, np.uint8, np.int8]
SEEDS = range(8)


def random_rois(rng: np.random.Generator, width: int, height: int, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Corners partly outside the input, degenerate (x1 < x0) and tiny ROIs, within the dtype's range."""
    lo = 0 if np.iinfo(dtype).min == 0 else -4
    rois = np.empty(shape, np.int64)
    for index in np.ndindex(shape[1:]):
        kind = rng.random()
        x0, y0 = int(rng.integers(lo, width + 3)), int(rng.integers(lo, height + 3))
        if kind < 0.15:  # degenerate: empty along x or y
            x1, y1 = (x0 - int(rng.integers(1, 3)), y0) if rng.integers(2) else (x0, y0 - int(rng.integers(1, 3)))
        elif kind < 0.35:  # one or two pixels: more bins than pixels
            x1, y1 = x0 + int(rng.integers(0, 2)), y0 + int(rng.integers(0, 2))
        else:
            x1, y1 = x0 + int(rng.integers(0, width + 4)), y0 + int(rng.integers(0, height + 4))
        rois[(slice(None),) + index] = [max(v, lo) for v in (x0, y0, x1, y1)]
    return rois.astype(dtype)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("roi_dtype", ROI_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_roi_pooling_matches_reference(fmt, roi_dtype, seed):
    rng = np.random.default_rng([60, FORMATS.index(fmt), ROI_DTYPES.index(roi_dtype), seed])
    batched = bool(rng.integers(2))
    width, height, channels = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    n_rois, n_batch = int(rng.integers(1, 4)), int(rng.integers(1, 4)) if batched else 1
    out_w, out_h = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    x_shape = (width, height, channels) + ((n_batch,) if batched else ())
    rois_shape = (4, n_rois) + ((n_batch,) if batched else ())
    out_shape = (out_w, out_h, channels, n_rois) + ((n_batch,) if batched else ())
    x = placed(rng, random_values(rng, fmt, x_shape, extremes=0.4))
    rois = placed(rng, random_rois(rng, width, height, rois_shape, roi_dtype))
    out = blank(rng, out_shape, fmt.dtype, LAYOUTS[int(rng.integers(len(LAYOUTS)))])
    roi_pooling(x, rois, out, parallel=bool(rng.integers(2)))
    assert_bits_equal(out, roi_pooling_ref(x, rois, out_shape, fmt))


@pytest.mark.parametrize("seed", range(3))
def test_sample_mode_gives_zeros_for_malformed_rois_only(seed):
    """The sample implementation's rule: a ROI with x1 < x0 or y1 < y0 has no pixels (all bins 0);
    every other ROI pools as in the standard mode."""
    rng = np.random.default_rng([61, seed])
    x = random_values(rng, S8, (6, 5, 2), extremes=0.4)
    rois = random_rois(rng, 6, 5, (4, 12), np.int16)
    rois[:, 0] = [3, 1, 1, 4]  # malformed along x: the standard mode pools the pixel column at 3
    out_shape = (2, 2, 2, 12)
    standard, sample = np.zeros(out_shape, np.int8), np.zeros(out_shape, np.int8)
    roi_pooling(x, rois, standard)
    roi_pooling(x, rois, sample, sample=True)
    expected = roi_pooling_ref(x, rois, out_shape, S8)
    malformed = (rois[2] < rois[0]) | (rois[3] < rois[1])
    expected[:, :, :, malformed] = 0
    assert_bits_equal(sample, expected)
    assert_bits_equal(standard[:, :, :, ~malformed], sample[:, :, :, ~malformed])
    assert np.any(standard[:, :, :, 0] != 0)


def test_bins_follow_fast_rcnn_floor_and_ceiling():
    # A 5-pixel ROI from x0 = 2 in 3 bins: floor(0) .. ceil(5/3) = 2..4, floor(5/3) .. ceil(10/3) = 3..6,
    # floor(10/3) .. ceil(5) = 5..7 (exclusive ends): neighbouring bins share a pixel.
    x = np.arange(10, dtype=np.int16)[:, None, None] * np.ones((1, 1, 1), np.int16)
    rois = np.array([[2], [0], [6], [0]], np.int32)
    out = np.zeros((3, 1, 1, 1), np.int16)
    roi_pooling(x, rois, out)
    assert out[:, 0, 0, 0].tolist() == [3, 5, 6]
    assert [list(r) for r in roi_bins(2, 6, 3, 10)] == [[2, 3], [3, 4, 5], [5, 6]]


def test_more_bins_than_pixels_repeat_pixels():
    x = np.array([7, -2], np.int8).reshape(2, 1, 1)  # W 2, H 1, C 1
    rois = np.array([[0], [0], [1], [0]], np.int16)
    out = np.zeros((5, 3, 1, 1), np.int8)
    roi_pooling(x, rois, out)
    # 2 pixels in 5 bins: floor(2i/5) .. ceil(2(i+1)/5) = 0..1, 0..1, 0..2, 1..2, 1..2; 1 row in 3 bins.
    assert out[:, :, 0, 0].T.tolist() == [[7, 7, 7, -2, -2]] * 3


@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
def test_rois_outside_the_input_give_zero(fmt):
    rng = np.random.default_rng([61, FORMATS.index(fmt)])
    x = np.full((6, 5, 2, 1), fmt.lo if not fmt.is_float else -1.0, fmt.dtype)
    rois = np.empty((4, 2, 1), np.int32)  # [4, R, B]
    rois[:, 0, 0] = [7, 0, 9, 3]  # wholly right of the input (W = 6)
    rois[:, 1, 0] = [-9, -9, -2, -1]  # wholly above and left of it
    out = blank(rng, (2, 3, 2, 2, 1), fmt.dtype, "perm")
    roi_pooling(x, rois, out)
    assert_bits_equal(out, np.zeros_like(out))
    assert_bits_equal(out, roi_pooling_ref(x, rois, out.shape, fmt))


@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
def test_malformed_rois_pool_one_pixel_wide_or_high(fmt):
    # x1 < x0 (or y1 < y0): the ROI is max(x1 - x0, 0) + 1 = 1 pixel wide at x0, as the conformance suite says.
    rng = np.random.default_rng([62, FORMATS.index(fmt)])
    x = random_values(rng, fmt, (6, 5, 2))
    rois = np.array([[3, 2, 2, 4], [0, 4, 5, 3], [5, 4, 1, 0]], np.int16).T  # [4, R]
    out = blank(rng, (2, 3, 2, 3), fmt.dtype, "f")
    roi_pooling(x, rois, out)
    for c in range(2):
        for oy in range(3):
            for ox in range(2):
                assert_bits_equal(out[ox, oy, c, 0], x[3, 2 + oy, c])  # 1 column, rows 2..4: one row per bin
                assert_bits_equal(out[ox, oy, c, 2], x[5, 4, c])  # both reversed: the single pixel (5, 4)
        # roi 1: columns 0..5 in 2 bins of 3, the single row 4
        assert_bits_equal(out[0, :, c, 1], np.full(3, x[0:3, 4, c].max(), fmt.dtype))
        assert_bits_equal(out[1, :, c, 1], np.full(3, x[3:6, 4, c].max(), fmt.dtype))
    assert_bits_equal(out, roi_pooling_ref(x, rois, out.shape, fmt))


def test_roi_partly_outside_takes_only_inside_pixels():
    x = np.full((4, 4, 1), -100, np.int16)
    x[0, 0, 0] = -7
    rois = np.array([[-6], [-6], [1], [1]], np.int8)  # 8 x 8 ROI, only its last 2 x 2 pixels inside
    out = np.full((2, 2, 1, 1), 55, np.int16)
    roi_pooling(x, rois, out)
    assert out[:, :, 0, 0].tolist() == [[0, 0], [0, -7]]  # bins wholly outside are empty: 0, not -100


def test_extreme_coordinates_are_exact():
    rng = np.random.default_rng(62)
    x = random_values(rng, Q78, (7, 6, 2))
    lo, hi = int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max)
    rois = np.array([[lo, lo, hi, hi], [lo, 2, hi, 3], [-3, lo, 5, hi], [hi, hi, lo, lo]], np.int32).T
    out_shape = (5, 4, 2, 4)
    out = np.zeros(out_shape, np.int16)
    roi_pooling(x, rois, out)
    assert_bits_equal(out, roi_pooling_ref(x, rois, out_shape, Q78))
    # ROI 0 spans 2**32 pixels each way: bin 2 of 5 along x covers -429496730 .. 429496729 and bin 2 of 4
    # along y covers 0 .. 2**30 - 1, so that one bin holds the whole input and every other bin is empty.
    whole = x.max(axis=(0, 1))
    assert out[2, 2, :, 0].tolist() == whole.tolist()
    assert np.count_nonzero(out[:, :, :, 0]) == np.count_nonzero(whole)
    assert not out[:, :, :, 3].any()  # ROI 3 has x1 < x0 and y1 < y0


def test_float_max_propagates_nan_and_prefers_positive_zero():
    x = np.array([-0.0, 0.0, np.nan, 1.0], np.float32).reshape(4, 1, 1)
    rois = np.array([[0, 0, 0, 0], [0, 0, 1, 0], [1, 0, 2, 0], [1, 0, 0, 0]], np.int16).T
    out = np.zeros((1, 1, 1, 4), np.float32)
    roi_pooling(x, rois, out)
    got = out[0, 0, 0]
    assert got[0] == 0.0 and math.copysign(1.0, got[0]) < 0
    assert got[1] == 0.0 and math.copysign(1.0, got[1]) > 0
    assert math.isnan(got[2])
    assert got[3] == 0.0 and math.copysign(1.0, got[3]) > 0  # degenerate ROI: +0.0


@pytest.mark.parametrize("fmt", [U8, F32], ids=str)
def test_many_rois_use_the_thread_pool_and_stay_exact(fmt):
    rng = np.random.default_rng([63, FORMATS.index(fmt)])
    width, height, channels, n_rois, n_batch = 32, 24, 16, 12, 2
    assert channels * n_rois * n_batch * width * height >= PARALLEL_WORK  # parallel=None picks the thread pool
    x = placed(rng, random_values(rng, fmt, (width, height, channels, n_batch)), "f")
    rois = random_rois(rng, width, height, (4, n_rois, n_batch), np.int16)
    out = blank(rng, (3, 2, channels, n_rois, n_batch), fmt.dtype, "step")
    roi_pooling(x, rois, out)
    assert_bits_equal(out, roi_pooling_ref(x, rois, out.shape, fmt))


@pytest.mark.parametrize("bad", ["dtype", "roi_float", "roi_int64", "rank", "roi_rank", "batch", "rois", "channels"])
def test_rejects_bad_arguments(bad):
    x, rois, out = np.zeros((4, 4, 2, 2), np.uint8), np.zeros((4, 3, 2), np.int16), np.zeros((2, 2, 2, 3, 2), np.uint8)
    if bad == "dtype":
        out = out.astype(np.int8)
    elif bad == "roi_float":
        rois = rois.astype(np.float32)
    elif bad == "roi_int64":
        rois = rois.astype(np.int64)
    elif bad == "rank":
        x = x[..., None]
    elif bad == "roi_rank":
        rois = rois[0]
    elif bad == "batch":
        rois = np.zeros((4, 3, 1), np.int16)
    elif bad == "rois":
        rois = np.zeros((5, 3, 2), np.int16)
    else:
        out = np.zeros((2, 2, 3, 3, 2), np.uint8)
    with pytest.raises(ValueError):
        roi_pooling(x, rois, out)
