"""GENERATE_PROPOSALS in float32, float16 and uint8 (TENSOR_QUANT16_SYMM anchors and image sizes), both layouts,
against a loop written from the header's text (in the order docs/nnapi.md states: the anchors at each position
moved by their deltas and clipped to the image, the best pre-NMS count, boxes narrower or lower than min_size
dropped, hard NMS, the best post-NMS count). Its outputs have as many rows as the data decides."""
from __future__ import annotations

import math

import nnapi_harness
import numpy as np
import pytest
from nnapi_harness import F16T, F32T, I32T, Q8, Out, Tensor, boolean, build, collect_garbage, f16, f32, i32  # noqa: F401
from test_nnapi_1_2_box_with_nms_limit import iou

from openvx_nn import nnapi

OP = nnapi.OperationType
Q16A, Q16S = nnapi.OperandType.TENSOR_QUANT16_ASYMM, nnapi.OperandType.TENSOR_QUANT16_SYMM
nnapi_harness.DTYPE.setdefault(Q16A, np.uint16)


def reference(scores, deltas, anchors, info, hr, wr, pre, post, iou_thr, min_size):
    """scores [b, h, w, a], deltas [b, h, w, 4a] (real values); rows (batch, score, box)."""
    rows = []
    batches, height, width, count = scores.shape
    for b in range(batches):
        found = []
        for y in range(height):
            for x in range(width):
                for a in range(count):
                    x1, y1, x2, y2 = anchors[a] + [x * wr, y * hr, x * wr, y * hr]
                    dx, dy, dw, dh = deltas[b, y, x, 4 * a:4 * a + 4]
                    w, h = x2 - x1, y2 - y1
                    cx, cy = x1 + w / 2 + dx * w, y1 + h / 2 + dy * h
                    nw, nh = w * math.exp(dw), h * math.exp(dh)
                    box = [min(max(cx - nw / 2, 0), info[b, 1]), min(max(cy - nh / 2, 0), info[b, 0]),
                           min(max(cx + nw / 2, 0), info[b, 1]), min(max(cy + nh / 2, 0), info[b, 0])]
                    found.append((scores[b, y, x, a], box))
        found.sort(key=lambda row: -row[0])
        if pre > 0:
            found = found[:pre]
        found = [f for f in found if f[1][2] - f[1][0] >= min_size and f[1][3] - f[1][1] >= min_size]
        kept = []
        while found:
            best = found.pop(0)
            kept.append(best)
            found = [f for f in found if iou(best[1], f[1]) < iou_thr]
        if post > 0:
            kept = kept[:post]
        rows += [(b, s, box) for s, box in kept]
    return rows


@pytest.mark.parametrize("kind", [F32T, F16T, Q8], ids=["float32", "float16", "quant8"])
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
def test_proposals_are_moved_anchors_after_hard_nms(kind, nchw):
    rng = np.random.default_rng(52 + kind + nchw)
    for trial in range(3):
        batches, height, width, count = rng.integers(1, 3), rng.integers(1, 4), rng.integers(1, 4), rng.integers(1, 3)
        hr, wr = rng.choice([4.0, 8.0], 2)
        sizes = rng.integers(2, 9, (count, 2)) * 2.0
        anchors = np.concatenate([-sizes / 2, sizes / 2], axis=1)
        info = np.stack([rng.integers(height * hr, height * hr + 16, batches),
                         rng.integers(width * wr, width * wr + 16, batches)], axis=1).astype(np.float64)
        pre, post = [(-1, 0), (5, 3), (3, -1)][trial]
        iou_thr, min_size = float(rng.choice([0.3, 0.7])), float(rng.choice([0.0, 3.0]))
        if kind == Q8:
            qs = rng.integers(0, 256, (batches, height, width, count), dtype=np.uint8)
            qd = rng.integers(96, 160, (batches, height, width, 4 * count), dtype=np.uint8)
            scores, deltas = qs / 256, (qd.astype(np.float64) - 128) / 64
            ins = [Tensor(qs, 1 / 256, 0), Tensor(qd, 1 / 64, 128),
                   Tensor((anchors * 8).astype(np.int16), 0.125, 0, kind=Q16S),
                   Tensor((info * 8).astype(np.int16), 0.125, 0, kind=Q16S)]
            outs = [Out(Q8, (0,), 1 / 256, 0), Out(Q16A, (0, 4), 0.125, 0)]
        else:
            dtype = np.float16 if kind == F16T else np.float32
            scores = rng.random((batches, height, width, count)).astype(dtype)
            deltas = rng.uniform(-0.5, 0.5, (batches, height, width, 4 * count)).astype(dtype)
            ins = [Tensor(scores), Tensor(deltas), Tensor(anchors.astype(dtype)), Tensor(info.astype(dtype))]
            scores, deltas = scores.astype(np.float64), deltas.astype(np.float64)
            outs = [Out(kind, (0,)), Out(kind, (0, 4))]
        if nchw:
            for k in (0, 1):
                ins[k].value = ins[k].value.transpose(0, 3, 1, 2).copy()
        want = reference(scores, deltas, anchors, info, hr, wr, pre, post, iou_thr, min_size)
        real = f16 if kind == F16T else f32
        m, feeds, _ = build(OP.GENERATE_PROPOSALS, ins + [real(float(hr)), real(float(wr)), i32(pre), i32(post),
                                                          real(iou_thr), real(min_size), boolean(nchw)],
                            outs + [Out(I32T, (0,))])
        c = nnapi.Compilation(m)
        c.finish()
        e = nnapi.Execution(c)
        for k, value in enumerate(feeds):
            e.set_input(k, value)
        capacity = batches * height * width * count
        got_scores = np.zeros(capacity, nnapi_harness.DTYPE[outs[0].kind])
        got_boxes = np.zeros((capacity, 4), nnapi_harness.DTYPE[outs[1].kind])
        got_batches = np.zeros(capacity, np.int32)
        for k, a in enumerate((got_scores, got_boxes, got_batches)):
            e.set_output(k, a)
        e.compute()
        n = len(want)
        assert [e.output_shape(k) for k in range(3)] == [(n,), (n, 4), (n,)]
        assert got_batches[:n].tolist() == [row[0] for row in want]
        want_boxes = np.array([row[2] for row in want]).reshape(n, 4)
        if kind == Q8:
            np.testing.assert_allclose(got_scores[:n] / 256, [row[1] for row in want])
            assert np.abs(got_boxes[:n].astype(np.int64) - np.rint(want_boxes * 8)).max(initial=0) <= 1
        else:
            np.testing.assert_array_equal(got_scores[:n], np.array([row[1] for row in want], got_scores.dtype))
            tolerance = 2e-3 if kind == F16T else 1e-6
            np.testing.assert_allclose(got_boxes[:n], want_boxes.astype(got_boxes.dtype), rtol=tolerance, atol=tolerance)
