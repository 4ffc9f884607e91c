"""BOX_WITH_NMS_LIMIT in float32, float16 and uint8 (TENSOR_QUANT16_ASYMM boxes) with its three NMS kernels,
against a loop written from the header's text: per image and class, boxes under the score threshold filtered,
then the best pending box taken and the others' scores lowered by the kernel of their IoU with it, those under
the NMS score threshold dropped; the image's best ``max`` kept. Its outputs have as many rows as the data decides:
the execution reports them (``Execution.output_shape``) and writes that many rows; a buffer too small gets
OUTPUT_INSUFFICIENT_SIZE with the size reported."""
from __future__ import annotations

import math

import nnapi_harness
import numpy as np
import pytest
from nnapi_harness import F16T, F32T, I32T, Q8, Out, Tensor, build, collect_garbage, f16, f32, i32  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType
Q16A = nnapi.OperandType.TENSOR_QUANT16_ASYMM
nnapi_harness.DTYPE.setdefault(Q16A, np.uint16)


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def reference(scores, boxes, batches, score_thr, limit, method, iou_thr, sigma, nms_thr):
    """Rows (image, score, class, box) in the documented order: images ascending, then score descending (equal
    scores: class, then taking order)."""
    rows = []
    for image in sorted(set(batches.tolist())):
        found = []
        for c in range(scores.shape[1]):
            pending = {r: scores[r, c] for r in range(len(scores)) if batches[r] == image and scores[r, c] >= score_thr}
            while pending:
                best = max(pending, key=lambda r: (pending[r], -r))
                found.append((pending.pop(best), c, best))
                for r in list(pending):
                    overlap = iou(boxes[best, 4 * c:4 * c + 4], boxes[r, 4 * c:4 * c + 4])
                    if method == 0:
                        factor = 1.0 if overlap < iou_thr else 0.0
                    elif method == 1:
                        factor = 1.0 if overlap < iou_thr else 1.0 - overlap
                    else:
                        factor = math.exp(-overlap * overlap / sigma)
                    pending[r] *= factor
                    if pending[r] < nms_thr or (method == 0 and factor == 0.0):
                        del pending[r]
        found.sort(key=lambda row: -row[0])
        rows += [(image, s, c, boxes[r, 4 * c:4 * c + 4]) for s, c, r in (found if limit < 0 else found[:limit])]
    return rows


def execute(kind, scores, boxes, batches, params, capacity):
    real = f16 if kind == F16T else f32
    score_thr, limit, method, iou_thr, sigma, nms_thr = params
    if kind == Q8:
        ins = [Tensor(scores, 1 / 256, 0), Tensor(boxes, 0.125, 0, kind=Q16A)]
        outs = [Out(Q8, (0,), 1 / 256, 0), Out(Q16A, (0, 4), 0.125, 0)]
    else:
        ins, outs = [Tensor(scores), Tensor(boxes)], [Out(kind, (0,)), Out(kind, (0, 4))]
    m, feeds, _ = build(OP.BOX_WITH_NMS_LIMIT, ins + [Tensor(batches), real(score_thr), i32(limit), i32(method),
                                                      real(iou_thr), real(sigma), real(nms_thr)],
                        outs + [Out(I32T, (0,)), Out(I32T, (0,))])
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    arrays = [np.full(capacity, 7, scores.dtype), np.full((capacity, 4), 7, boxes.dtype), np.full(capacity, 7, np.int32),
              np.full(capacity, 7, np.int32)]
    for k, a in enumerate(arrays):
        e.set_output(k, a)
    return e, arrays


def random_case(rng, kind, n_rois, classes, images):
    corners = rng.uniform(0, 20, (n_rois, classes, 2))
    sizes = rng.uniform(1, 12, (n_rois, classes, 2))
    boxes = np.round(np.concatenate([corners, corners + sizes], axis=2).reshape(n_rois, classes * 4) * 8) / 8
    batches = np.sort(rng.integers(0, images, n_rois)).astype(np.int32)
    if kind == Q8:
        q = rng.integers(0, 256, (n_rois, classes), dtype=np.uint8)
        return q, q / 256, (boxes * 8).astype(np.uint16), boxes, batches
    dtype = np.float16 if kind == F16T else np.float32
    s = rng.random((n_rois, classes)).astype(dtype)
    return s, s.astype(np.float64), boxes.astype(dtype), boxes, batches


@pytest.mark.parametrize("kind", [F32T, F16T, Q8], ids=["float32", "float16", "quant8"])
@pytest.mark.parametrize("method", [0, 1, 2], ids=["hard", "linear", "gaussian"])
def test_soft_nms_per_image_and_class_keeps_the_best_and_reports_the_rows(kind, method):
    rng = np.random.default_rng(44 + 3 * kind + method)
    for trial in range(4):
        n_rois, classes, images = rng.integers(1, 12), rng.integers(1, 4), rng.integers(1, 3)
        raw_scores, scores, raw_boxes, boxes, batches = random_case(rng, kind, n_rois, classes, images)
        params = (rng.choice([0.0, 0.3]), [-1, 1, 3, 100][trial], method, float(rng.choice([0.3, 0.5])), 0.5,
                  float(rng.choice([0.0, 0.05, 0.2])))
        want = reference(scores, boxes, batches, *params)
        e, (out_scores, out_boxes, out_classes, out_batches) = execute(kind, raw_scores, raw_boxes, batches, params,
                                                                       n_rois * classes + 2)
        e.compute()
        n = len(want)
        assert [e.output_shape(k) for k in range(4)] == [(n,), (n, 4), (n,), (n,)]
        assert out_batches[:n].tolist() == [row[0] for row in want]
        assert out_classes[:n].tolist() == [row[2] for row in want]
        got_scores = out_scores[:n].astype(np.float64) / 256 if kind == Q8 else out_scores[:n].astype(np.float64)
        want_scores = np.array([row[1] for row in want])
        np.testing.assert_allclose(got_scores, want_scores, atol=1 / 256 if kind == Q8 else 1e-3 if kind == F16T
                                   else 1e-6)
        got_boxes = out_boxes[:n].astype(np.float64) / (8 if kind == Q8 else 1)
        np.testing.assert_array_equal(got_boxes, np.array([row[3] for row in want]).reshape(n, 4))
        assert (out_classes[n:] == 7).all()  # rows past the result are not written


def test_equal_scores_take_the_lower_index_first_and_the_limit_keeps_the_best_of_the_image():
    scores = np.array([[0.5], [0.5], [0.5], [0.9]], np.float32)
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 10], [50, 50, 60, 60], [100, 100, 110, 110]], np.float32)
    batches = np.zeros(4, np.int32)
    e, (out_scores, out_boxes, _, _) = execute(F32T, scores, boxes, batches, (0.0, 2, 0, 0.5, 1.0, 0.0), 4)
    e.compute()
    assert e.output_shape(0) == (2,)
    np.testing.assert_array_equal(out_scores[:2], np.float32([0.9, 0.5]))
    np.testing.assert_array_equal(out_boxes[1], [0, 0, 10, 10])  # of the two equal boxes, the first


def test_no_box_over_the_score_threshold_gives_zero_rows():
    scores = np.array([[0.1], [0.2]], np.float32)
    boxes = np.array([[0, 0, 1, 1], [2, 2, 3, 3]], np.float32)
    e, _ = execute(F32T, scores, boxes, np.zeros(2, np.int32), (0.5, -1, 0, 0.5, 1.0, 0.0), 2)
    e.compute()
    assert e.output_shape(0) == (0,) and e.output_shape(1) == (0, 4)


def test_a_buffer_too_small_for_the_rows_gets_output_insufficient_size_and_the_size():
    scores = np.array([[0.9], [0.8], [0.7]], np.float32)
    boxes = np.array([[0, 0, 1, 1], [5, 5, 6, 6], [9, 9, 10, 10]], np.float32)
    e, _ = execute(F32T, scores, boxes, np.zeros(3, np.int32), (0.0, -1, 0, 0.5, 1.0, 0.0), 2)
    with pytest.raises(nnapi.NNAPIError) as err:
        e.compute()
    assert err.value.status == nnapi.ErrorStatus.OUTPUT_INSUFFICIENT_SIZE
    assert e.output_shape(0) == (3,)


def test_an_operation_mixing_the_rows_the_data_decides_is_refused():
    m = nnapi.Model()
    T = nnapi.OperandType
    ks = [m.add_operand(T.TENSOR_FLOAT32, [2, 1]), m.add_operand(T.TENSOR_FLOAT32, [2, 4]),
          m.add_operand(T.TENSOR_INT32, [2])]
    scalars = [(T.FLOAT32, 0.0), (T.INT32, -1), (T.INT32, 0), (T.FLOAT32, 0.5), (T.FLOAT32, 1.0), (T.FLOAT32, 0.0)]
    for kind, value in scalars:
        ks.append(m.add_operand(kind))
        m.set_operand_value(ks[-1], value)
    outs = [m.add_operand(T.TENSOR_FLOAT32, [0]), m.add_operand(T.TENSOR_FLOAT32, [0, 4]),
            m.add_operand(T.TENSOR_INT32, [0]), m.add_operand(T.TENSOR_INT32, [0])]
    m.add_operation(OP.BOX_WITH_NMS_LIMIT, ks, outs)
    axes, keep = m.add_operand(T.TENSOR_INT32, [1]), m.add_operand(T.BOOL)
    m.set_operand_value(axes, np.int32([0]))
    m.set_operand_value(keep, False)
    summed = m.add_operand(T.TENSOR_FLOAT32, [4])
    m.add_operation(OP.REDUCE_SUM, [outs[1], axes, keep], [summed])
    m.identify_inputs_and_outputs(ks[:3], [summed, *outs])
    m.finish()
    with pytest.raises(nnapi.NNAPIError, match="as many rows as the data decides; REDUCE_SUM mixes rows"):
        nnapi.Compilation(m).finish()
