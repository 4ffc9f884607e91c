"""DETECTION_POSTPROCESSING in float32 and float16, regular (per class) and fast (each anchor's best class) NMS,
against a loop written from the header's text: deltas [dy, dx, dh, dw] over their scales on anchors
[ctr_y, ctr_x, h, w], class 0 ignored, scores under the threshold filtered, hard NMS (IoU from the threshold on
suppresses, as BOX_WITH_NMS_LIMIT's hard kernel; fast: once on each anchor's best class, each kept anchor
giving its best max-classes-per-detection classes), the best max_num_detections; labels from 0 or, with the
background included, from 1; rows past the count 0."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, I32T, Out, Tensor, boolean, collect_garbage, f16, f32, i32, refused, run  # noqa: F401
from test_nnapi_1_2_box_with_nms_limit import iou

from openvx_nn import nnapi

OP = nnapi.OperationType


def decode(delta, anchor, scales):
    dy, dx, dh, dw = (d / s for d, s in zip(delta[:4], scales))
    ay, ax, ah, aw = anchor
    cy, cx, h, w = ay + dy * ah, ax + dx * aw, ah * math.exp(dh), aw * math.exp(dw)
    return [cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2]


def nms(candidates, threshold):
    """candidates: (score, anchor, box) in anchor order; the taken ones, best first."""
    pending = sorted(candidates, key=lambda c: -c[0])
    taken = []
    while pending:
        best = pending.pop(0)
        taken.append(best)
        pending = [c for c in pending if iou(best[2], c[2]) < threshold]
    return taken


def reference(scores, deltas, anchors, scales, regular, most, per_class, per_detection, score_thr, iou_thr,
              background):
    batches, count, classes = scores.shape
    out = []
    for b in range(batches):
        boxes = [decode(deltas[b, a], anchors[a], scales) for a in range(count)]
        found = []
        if regular:
            for c in range(1, classes):
                kept = nms([(scores[b, a, c], a, boxes[a]) for a in range(count) if scores[b, a, c] >= score_thr],
                           iou_thr)[:per_class]
                found += [(s, c, box) for s, _, box in kept]
        else:
            best = [1 + int(np.argmax(scores[b, a, 1:])) for a in range(count)]
            kept = nms([(scores[b, a, best[a]], a, boxes[a]) for a in range(count)
                        if scores[b, a, best[a]] >= score_thr], iou_thr)
            for _, a, box in kept:  # the anchor's best classes, equal scores the lower class first
                ranked = sorted(range(1, classes), key=lambda c: (-scores[b, a, c], c))[:per_detection]
                found += [(scores[b, a, c], c, box) for c in ranked]
        found.sort(key=lambda row: -row[0])
        out.append([(s, c - (0 if background else 1), box) for s, c, box in found[:most]])
    return out


@pytest.mark.parametrize("kind", [F32T, F16T], ids=["float32", "float16"])
@pytest.mark.parametrize("regular", [True, False], ids=["regular", "fast"])
def test_decoded_anchors_after_hard_nms_keep_the_best_detections(kind, regular):
    rng = np.random.default_rng(47 + kind + regular)
    dtype = np.float16 if kind == F16T else np.float32
    real = f16 if kind == F16T else f32
    for trial in range(4):
        batches, count, classes = rng.integers(1, 3), rng.integers(1, 12), rng.integers(2, 5)
        scores = rng.random((batches, count, classes)).astype(dtype)
        deltas = rng.uniform(-1, 1, (batches, count, rng.integers(4, 7))).astype(dtype)
        anchors = np.concatenate([rng.uniform(0, 1, (count, 2)), rng.uniform(0.1, 0.5, (count, 2))], 1).astype(dtype)
        scales = (10.0, 10.0, 5.0, 5.0)
        most, per_class, per_detection = int(rng.integers(1, 8)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        score_thr, iou_thr, background = float(rng.choice([0.0, 0.4])), float(rng.choice([0.3, 0.6])), trial % 2 == 1
        want = reference(scores.astype(np.float64), deltas.astype(np.float64), anchors.astype(np.float64), scales,
                         regular, most, per_class, per_detection, np.float64(dtype(score_thr)), np.float64(dtype(iou_thr)), background)
        got_scores, got_boxes, got_classes, got_count = run(
            OP.DETECTION_POSTPROCESSING,
            [Tensor(scores), Tensor(deltas), Tensor(anchors), f32(scales[0]), f32(scales[1]), f32(scales[2]),
             f32(scales[3]), boolean(regular), i32(most), i32(per_detection), i32(per_class), real(score_thr), real(iou_thr),
             boolean(background)],
            [Out(kind, (batches, most)), Out(kind, (batches, most, 4)), Out(I32T, (batches, most)), Out(I32T, (batches,))])
        tolerance = 2e-3 if kind == F16T else 1e-5
        for b in range(batches):
            n = len(want[b])
            assert got_count[b] == n
            np.testing.assert_array_equal(got_classes[b, :n], [row[1] for row in want[b]])
            np.testing.assert_array_equal(got_scores[b, :n], np.array([row[0] for row in want[b]], dtype))
            np.testing.assert_allclose(got_boxes[b, :n], np.array([row[2] for row in want[b]]).reshape(n, 4),
                                       rtol=tolerance, atol=tolerance)
            assert (got_scores[b, n:] == 0).all() and (got_classes[b, n:] == 0).all()


def test_the_fast_algorithm_with_no_class_per_detection_is_refused():
    args = [Tensor(np.zeros((1, 2, 3), np.float32)), Tensor(np.zeros((1, 2, 4), np.float32)),
            Tensor(np.ones((2, 4), np.float32)), f32(1.0), f32(1.0), f32(1.0), f32(1.0), boolean(False), i32(2), i32(0),
            i32(1), f32(0.0), f32(0.5), boolean(False)]
    message = refused(OP.DETECTION_POSTPROCESSING, args, [Out(F32T, (1, 2)), Out(F32T, (1, 2, 4)), Out(I32T, (1, 2)),
                                                          Out(I32T, (1,))])
    assert "input 9 (maximum classes per detection) is 0" in message
