"""API level 29's region operations (ROI_ALIGN, ROI_POOLING, AXIS_ALIGNED_BBOX_TRANSFORM) in every type their
"Supported tensor types" lists and both layouts, against plain loops written from the header's text (the choices
the text leaves open as docs/nnapi.md states them): random feature maps and boxes, boxes partly or wholly outside
the map, boxes of no width or height, several images."""
from __future__ import annotations

import math

import nnapi_harness
import numpy as np
import pytest
from nnapi_harness import (
    F16T,
    F32T,
    Q8,
    Out,
    Tensor,
    boolean,
    collect_garbage,  # noqa: F401 - an autouse fixture
    f16,
    f32,
    i32,
    quantize,
    refused,
    run,
)

from openvx_nn import nnapi

OP = nnapi.OperationType
Q16A = nnapi.OperandType.TENSOR_QUANT16_ASYMM
nnapi_harness.DTYPE.setdefault(Q16A, np.uint16)  # the harness's output arrays of box tensors


def random_boxes(rng, n, height, width, ratio):
    """Boxes in image coordinates: most inside, some past the edges, some of no width or height."""
    x1 = rng.uniform(-2, width * ratio, n)
    y1 = rng.uniform(-2, height * ratio, n)
    x2 = x1 + rng.uniform(0, width * ratio, n) * (rng.random(n) > 0.15)
    y2 = y1 + rng.uniform(0, height * ratio, n) * (rng.random(n) > 0.15)
    return np.round(np.stack([x1, y1, x2, y2], 1) * 8) / 8  # multiples of 0.125: exact in every box type


# -- references written from the header --------------------------------------------------------------------------
def bilinear(plane, y, x):
    """One channel-last image's value at (y, x): a point more than a pixel outside is 0, else clamped to the edge."""
    height, width = plane.shape[:2]
    if y < -1 or y > height or x < -1 or x > width:
        return np.zeros(plane.shape[2])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = math.floor(y), math.floor(x)
    y1, x1 = min(y0 + 1, height - 1), min(x0 + 1, width - 1)
    if y0 >= height - 1:
        y0, y = height - 1, float(height - 1)
    if x0 >= width - 1:
        x0, x = width - 1, float(width - 1)
    dy, dx = y - y0, x - x0
    return ((1 - dy) * (1 - dx) * plane[y0, x0] + (1 - dy) * dx * plane[y0, x1] + dy * (1 - dx) * plane[y1, x0]
            + dy * dx * plane[y1, x1])


def roi_align_reference(x, rois, batches, oh, ow, hr, wr, sh, sw):
    out = np.zeros((len(rois), oh, ow, x.shape[3]))
    for r, (x1, y1, x2, y2) in enumerate(rois):
        x1, y1, x2, y2 = x1 / wr, y1 / hr, x2 / wr, y2 / hr
        bin_h, bin_w = max(y2 - y1, 1.0) / oh, max(x2 - x1, 1.0) / ow
        gh = sh if sh > 0 else math.ceil(bin_h)
        gw = sw if sw > 0 else math.ceil(bin_w)
        for i in range(oh):
            for j in range(ow):
                points = [bilinear(x[batches[r]], y1 + i * bin_h + (a + 0.5) * bin_h / gh,
                                   x1 + j * bin_w + (b + 0.5) * bin_w / gw) for a in range(gh) for b in range(gw)]
                out[r, i, j] = np.mean(points, axis=0)
    return out


def c_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def roi_pooling_reference(x, rois, batches, oh, ow, hr, wr):
    """Max over bins with floor starts and ceil ends of the rounded ROI (a side of at least one pixel)."""
    height, width = x.shape[1:3]
    out = np.zeros((len(rois), oh, ow, x.shape[3]), x.dtype)
    for r, box in enumerate(rois):
        x1, y1, x2, y2 = (c_round(v / s) for v, s in zip(box, (wr, hr, wr, hr)))
        rw, rh = max(x2 - x1, 0) + 1, max(y2 - y1, 0) + 1
        for i in range(oh):
            h0 = min(max(y1 + (i * rh) // oh, 0), height)
            h1 = min(max(y1 + -((-(i + 1) * rh) // oh), 0), height)
            for j in range(ow):
                w0 = min(max(x1 + (j * rw) // ow, 0), width)
                w1 = min(max(x1 + -((-(j + 1) * rw) // ow), 0), width)
                if h0 < h1 and w0 < w1:
                    out[r, i, j] = x[batches[r], h0:h1, w0:w1].max(axis=(0, 1))
    return out


def bbox_reference(rois, deltas, batches, info):
    out = np.zeros(deltas.shape)
    for r, (x1, y1, x2, y2) in enumerate(rois):
        height, width = info[batches[r]]
        w, h = x2 - x1, y2 - y1
        for k in range(deltas.shape[1] // 4):
            dx, dy, dw, dh = deltas[r, 4 * k:4 * k + 4]
            cx, cy = x1 + w / 2 + dx * w, y1 + h / 2 + dy * h
            nw, nh = w * math.exp(dw), h * math.exp(dh)
            out[r, 4 * k:4 * k + 4] = [min(max(cx - nw / 2, 0), width), min(max(cy - nh / 2, 0), height),
                                       min(max(cx + nw / 2, 0), width), min(max(cy + nh / 2, 0), height)]
    return out


# -- operands of each type -----------------------------------------------------------------------------------------
def feature_map(rng, kind, shape):
    """(operand, real values) of a map of ``kind``."""
    if kind == Q8:
        q = rng.integers(0, 256, shape, dtype=np.uint8)
        return Tensor(q, 0.25, 120), (q.astype(np.float64) - 120) * 0.25
    dtype = np.float16 if kind == F16T else np.float32
    v = rng.standard_normal(shape).astype(dtype)
    return Tensor(v), v.astype(np.float64)


def boxes(kind, real, scale=0.125):
    if kind == Q8 or kind == Q16A:
        return Tensor(np.round(real / scale).astype(np.uint16), scale, 0, kind=Q16A)
    return Tensor(real.astype(np.float16 if kind == F16T else np.float32))


def ratio(kind, v, scalar_f16):
    return f16(v) if kind == F16T and scalar_f16 else f32(v)


def check(got, want, kind, out_quant=(0.5, 100)):
    if kind == Q8:
        ref = quantize(want, *out_quant)
        assert np.abs(got.astype(np.int64) - ref).max(initial=0) <= 1
    elif kind == F16T:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float16).astype(np.float64),
                                   rtol=2e-3, atol=2e-3)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


KINDS = [F32T, F16T, Q8]
NAMES = {F32T: "float32", F16T: "float16", Q8: "quant8"}


@pytest.mark.parametrize("kind", KINDS, ids=NAMES.get)
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_roi_align_averages_bilinear_samples_of_each_bin(kind, nchw):
    rng = np.random.default_rng(81 + kind + nchw)
    for trial in range(3):
        n, h, w, c = rng.integers(1, 3), rng.integers(2, 9), rng.integers(2, 9), rng.integers(1, 4)
        hr, wr = rng.choice([0.5, 1.0, 2.0, 4.0], 2)
        oh, ow = rng.integers(1, 4, 2)
        sh, sw = (0, 0) if trial == 0 else rng.integers(0, 4, 2)
        operand, x = feature_map(rng, kind, (n, h, w, c))
        if nchw:
            operand.value = operand.value.transpose(0, 3, 1, 2).copy()
        n_rois = rng.integers(1, 6)
        rois = random_boxes(rng, n_rois, h, w, (hr + wr) / 2)
        if kind == Q8:  # TENSOR_QUANT16_ASYMM boxes of zero point 0 are not negative
            rois = rois.clip(0)
        batches = rng.integers(0, n, n_rois).astype(np.int32)
        want = roi_align_reference(x, rois, batches, oh, ow, hr, wr, sh, sw)
        out_shape = (n_rois, c, oh, ow) if nchw else (n_rois, oh, ow, c)
        out = Out(kind, out_shape, *((0.5, 100) if kind == Q8 else ()))
        got, = run(OP.ROI_ALIGN, [operand, boxes(kind, rois), Tensor(batches), i32(int(oh)), i32(int(ow)),
                                  ratio(kind, float(hr), trial == 1), ratio(kind, float(wr), trial == 1),
                                  i32(int(sh)), i32(int(sw)), boolean(nchw)], [out])
        check(got.transpose(0, 2, 3, 1) if nchw else got, want, kind)


@pytest.mark.parametrize("kind", KINDS, ids=NAMES.get)
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_roi_pooling_takes_the_maximum_of_each_bin_of_the_rounded_roi(kind, nchw):
    rng = np.random.default_rng(82 + kind + nchw)
    for trial in range(3):
        n, h, w, c = rng.integers(1, 3), rng.integers(2, 9), rng.integers(2, 9), rng.integers(1, 4)
        hr, wr = rng.choice([0.5, 1.0, 2.0], 2)
        oh, ow = rng.integers(1, 5, 2)
        operand, _ = feature_map(rng, kind, (n, h, w, c))
        raw = operand.value
        if nchw:
            operand.value = raw.transpose(0, 3, 1, 2).copy()
        n_rois = rng.integers(1, 6)
        rois = random_boxes(rng, n_rois, h, w, (hr + wr) / 2)
        if kind == Q8:  # TENSOR_QUANT16_ASYMM boxes of zero point 0 are not negative
            rois = rois.clip(0)
        batches = rng.integers(0, n, n_rois).astype(np.int32)
        want = roi_pooling_reference(raw, rois, batches, oh, ow, hr, wr)
        out_shape = (n_rois, c, oh, ow) if nchw else (n_rois, oh, ow, c)
        out = Out(kind, out_shape, operand.scale, operand.zero_point)
        got, = run(OP.ROI_POOLING, [operand, boxes(kind, rois), Tensor(batches), i32(int(oh)), i32(int(ow)),
                                    ratio(kind, float(hr), trial == 1), ratio(kind, float(wr), trial == 1),
                                    boolean(nchw)], [out])
        np.testing.assert_array_equal(got.transpose(0, 2, 3, 1) if nchw else got, want)  # raw values: exact


@pytest.mark.parametrize("kind", [F32T, F16T, Q16A], ids=["float32", "float16", "quant16"])
def test_bbox_transform_moves_scales_and_clips_each_class_box(kind):
    rng = np.random.default_rng(41 + kind)
    for _ in range(3):
        n_rois, classes, images = rng.integers(1, 6), rng.integers(1, 4), rng.integers(1, 3)
        info = rng.integers(8, 40, (images, 2)).astype(np.float64)
        rois = random_boxes(rng, n_rois, 20, 20, 1.0).clip(0, 30)
        deltas = rng.uniform(-1, 1, (n_rois, classes * 4))
        batches = rng.integers(0, images, n_rois).astype(np.int32)
        if kind == Q16A:
            dq = Tensor(quantize(deltas, 1 / 64, 128), 1 / 64, 128)
            deltas = (dq.value.astype(np.float64) - 128) / 64
            inputs = [boxes(kind, rois), dq, Tensor(batches), boxes(kind, info)]
            out = Out(Q16A, (n_rois, classes * 4), 0.125, 0)
        else:
            dtype = np.float16 if kind == F16T else np.float32
            deltas = deltas.astype(dtype).astype(np.float64)
            inputs = [boxes(kind, rois), Tensor(deltas.astype(dtype)), Tensor(batches), Tensor(info.astype(dtype))]
            out = Out(kind, (n_rois, classes * 4))
        want = bbox_reference(rois, deltas, batches, info)
        got, = run(OP.AXIS_ALIGNED_BBOX_TRANSFORM, inputs, [out])
        if kind == Q16A:
            ref = np.clip(np.rint(want * 8), 0, 65535)
            assert np.abs(got.astype(np.int64) - ref).max() <= 1
        else:
            check(got, want, kind)


def test_boxes_of_another_quantization_than_the_headers_are_refused():
    x = Tensor(np.zeros((1, 4, 4, 1), np.uint8), 0.5, 0)
    rois = Tensor(np.zeros((1, 4), np.uint16), 0.25, 0, kind=Q16A)
    args = [x, rois, Tensor(np.zeros(1, np.int32)), i32(2), i32(2), f32(1.0), f32(1.0)]
    message = refused(OP.ROI_POOLING, args + [boolean(False)], [Out(Q8, (1, 2, 2, 1), 0.5, 0)])
    assert "scale 0.125 and zero point 0" in message
    message = refused(OP.ROI_POOLING, args[:2] + [Tensor(np.zeros(1, np.int32))] + args[3:] + [boolean(False)],
                      [Out(Q8, (1, 2, 2, 1), 0.25, 0)])
    assert "quantization" in message


def test_a_batch_index_outside_the_feature_map_fails_the_execution_naming_it():
    x = Tensor(np.zeros((2, 4, 4, 1), np.float32))
    rois = Tensor(np.array([[0, 0, 2, 2]], np.float32))
    with pytest.raises(nnapi.NNAPIError, match="batch index 2 is outside 0..1"):
        run(OP.ROI_ALIGN, [x, rois, Tensor(np.array([2], np.int32)), i32(2), i32(2), f32(1.0), f32(1.0), i32(0),
                           i32(0), boolean(False)], [Out(F32T, (1, 2, 2, 1))])


def test_a_ratio_that_is_not_positive_is_refused():
    x = Tensor(np.zeros((1, 4, 4, 1), np.float32))
    rois = Tensor(np.array([[0, 0, 2, 2]], np.float32))
    message = refused(OP.ROI_POOLING, [x, rois, Tensor(np.zeros(1, np.int32)), i32(2), i32(2), f32(0.0), f32(1.0),
                                       boolean(False)], [Out(F32T, (1, 2, 2, 1))])
    assert "must be positive" in message


def mirror(i, size):
    return 1 if i < 0 else size - 2 if i >= size else i


def keypoint_reference(heatmaps, boxes):
    """The first largest value of each heatmap refined by the quadratic through its 3 x 3 neighbourhood."""
    n, size, _, count = heatmaps.shape
    scores, points = np.zeros((n, count)), np.zeros((n, count, 2))
    for r in range(n):
        for k in range(count):
            m = heatmaps[r, :, :, k]
            row, col = divmod(int(np.argmax(m)), size)
            g = np.array([[m[mirror(row + dy, size), mirror(col + dx, size)] for dx in (-1, 0, 1)]
                          for dy in (-1, 0, 1)])
            b = -np.array([(g[1, 2] - g[1, 0]) / 2, (g[2, 1] - g[0, 1]) / 2])
            cross = (g[2, 2] - g[2, 0] - g[0, 2] + g[0, 0]) / 4
            a = np.array([[g[1, 0] - 2 * g[1, 1] + g[1, 2], cross], [cross, g[0, 1] - 2 * g[1, 1] + g[2, 1]]])
            det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
            d = np.zeros(2)
            if abs(det) >= 1e-5 + 1e-5 * abs(a[0, 0] * a[1, 1]):
                d = np.array([a[1, 1] * b[0] - a[0, 1] * b[1], a[0, 0] * b[1] - a[1, 0] * b[0]]) / det
                if np.abs(d).max() > 1.5:
                    d *= 1.5 / np.abs(d).max()
            scores[r, k] = g[1, 1] - b @ d + d @ a @ d / 2
            x1, y1, x2, y2 = boxes[r]
            points[r, k] = [x1 + (x2 - x1) / size * (col + d[0] + 0.5), y1 + (y2 - y1) / size * (row + d[1] + 0.5)]
    return scores, points


@pytest.mark.parametrize("kind", KINDS, ids=NAMES.get)
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_heatmap_max_keypoint_refines_each_maximum_by_a_quadratic_fit(kind, nchw):
    rng = np.random.default_rng(56 + kind + nchw)
    for _ in range(3):
        n, size, count = rng.integers(1, 4), rng.integers(2, 7), rng.integers(1, 4)
        operand, heat = feature_map(rng, kind, (n, size, size, count))
        if kind != Q8:  # smooth peaks, so the fit has something to refine, and a few edge maxima
            yy, xx = np.mgrid[0:size, 0:size]
            for r in range(n):
                for k in range(count):
                    cy, cx = rng.uniform(-0.5, size - 0.5, 2)
                    heat[r, :, :, k] = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 2) + 0.01 * heat[r, :, :, k]
            operand.value = heat.astype(operand.value.dtype)
            heat = operand.value.astype(np.float64)
        if nchw:
            operand.value = operand.value.transpose(0, 3, 1, 2).copy()
        rois = np.abs(random_boxes(rng, n, 20, 20, 1.0))
        want_scores, want_points = keypoint_reference(heat, rois)
        scores_out = Out(kind, (n, count), *((0.5, 100) if kind == Q8 else ()))
        points_out = Out(Q16A, (n, count, 2), 0.125, 0) if kind == Q8 else Out(kind, (n, count, 2))
        scores, points = run(OP.HEATMAP_MAX_KEYPOINT, [operand, boxes(kind, rois), boolean(nchw)],
                             [scores_out, points_out])
        check(scores, want_scores, kind)
        if kind == Q8:
            assert np.abs(points.astype(np.int64) - np.clip(np.rint(want_points * 8), 0, 65535)).max() <= 1
        else:
            check(points, want_points, kind)
