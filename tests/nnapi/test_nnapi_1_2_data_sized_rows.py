"""Rows the data decides, read by the operations after: the second stage of Faster R-CNN as NNAPI 1.2 writes it
(BOX_WITH_NMS_LIMIT keeping proposals -> ROI_ALIGN and ROI_POOLING on the kept boxes -> FULLY_CONNECTED heads ->
AXIS_ALIGNED_BBOX_TRANSFORM refining the kept boxes, SOFTMAX scoring them -> BOX_WITH_NMS_LIMIT again), through
the Python front end and the C API, against the references written from the header's text. When the first NMS
keeps no box, every operation after it gets the header's empty ROIs (zero num_rois) and every output reports a
first dimension of 0 (``Execution.output_shape``, ``ANeuralNetworksExecution_getOutputOperandDimensions``).
Operations that would mix such rows are refused with an error naming the input."""
from __future__ import annotations

import math
import os
import subprocess

import numpy as np
import pytest
from conftest import ROOT, compile_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_1_2_box_with_nms_limit import reference as nms_reference
from test_nnapi_1_2_detection import bbox_reference, keypoint_reference, roi_align_reference, roi_pooling_reference
from test_nnapi_1_2_generate_proposals import reference as proposals_reference
from test_nnapi_1_2_models import C_MAIN, Spec
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
F32, I32, F32T, I32T, BOOL = T.FLOAT32, T.INT32, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.BOOL
ROIS, SIDE, CHANNELS, RATIO, CLASSES = 6, 6, 2, 4.0, 2
FEATURES = 2 * 2 * CHANNELS
INFO = np.array([[24.0, 24.0]], np.float32)
FIRST = (0.3, -1, 0, 0.5, 0.5, 0.0)  # score threshold, no limit, hard NMS, IoU threshold, sigma, NMS threshold
SECOND = (0.2, 3, 1, 0.4, 0.5, 0.1)  # at most 3 per image, linear kernel


def weights():
    rng = np.random.default_rng(4312)
    return (rng.uniform(-0.2, 0.2, (4 * CLASSES, FEATURES)).astype(np.float32),
            rng.uniform(-0.1, 0.1, 4 * CLASSES).astype(np.float32),
            rng.uniform(-1, 1, (CLASSES, FEATURES)).astype(np.float32), rng.uniform(-0.5, 0.5, CLASSES).astype(np.float32))


def case(seed: int, kept: str):
    """Inputs (feature map, proposal scores, proposal boxes): ``kept`` "some" (random), "ties" (equal scores, two
    boxes identical, one the same score elsewhere) or "none" (every score under the first threshold)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, SIDE, SIDE, CHANNELS)).astype(np.float32)
    corners = rng.uniform(0, 14, (ROIS, 2))
    boxes = np.round(np.concatenate([corners, corners + rng.uniform(2, 10, (ROIS, 2))], 1) * 8) / 8
    scores = rng.uniform(0.0, 1.0, (ROIS, 1))
    if kept == "ties":
        boxes[1] = boxes[0]
        scores[:3], scores[3:] = 0.625, rng.uniform(0.0, 0.6, (ROIS - 3, 1))
    elif kept == "none":
        scores = rng.uniform(0.0, 0.29, (ROIS, 1))
    return [x, scores.astype(np.float32), boxes.astype(np.float32)]


def build() -> Spec:
    s = Spec()

    def scalar(kind, value):
        return s.operand(kind, value=value)

    def nms_scalars(params):
        return [scalar(k, v) for k, v in zip((F32, I32, I32, F32, F32, F32), params)]
    x = s.operand(F32T, [1, SIDE, SIDE, CHANNELS])
    scores, boxes = s.operand(F32T, [ROIS, 1]), s.operand(F32T, [ROIS, 4])
    batches = s.operand(I32T, [ROIS], value=np.zeros(ROIS, np.int32))
    kept = [s.operand(F32T, [0]), s.operand(F32T, [0, 4]), s.operand(I32T, [0]), s.operand(I32T, [0])]
    s.op(OP.BOX_WITH_NMS_LIMIT, [scores, boxes, batches, *nms_scalars(FIRST)], kept)
    two, ratio, layout, none = scalar(I32, 2), scalar(F32, RATIO), scalar(BOOL, False), scalar(I32, 0)
    aligned, pooled = s.operand(F32T, [0, 2, 2, CHANNELS]), s.operand(F32T, [0, 2, 2, CHANNELS])
    s.op(OP.ROI_ALIGN, [x, kept[1], kept[3], two, two, ratio, ratio, two, two, layout], [aligned])
    s.op(OP.ROI_POOLING, [x, kept[1], kept[3], two, two, ratio, ratio, layout], [pooled])
    w_box, b_box, w_cls, b_cls = (s.operand(F32T, list(a.shape), value=a) for a in weights())
    deltas, logits = s.operand(F32T, [0, 4 * CLASSES]), s.operand(F32T, [0, CLASSES])
    s.op(OP.FULLY_CONNECTED, [aligned, w_box, b_box, none], [deltas])
    s.op(OP.FULLY_CONNECTED, [aligned, w_cls, b_cls, none], [logits])
    info = s.operand(F32T, [1, 2], value=INFO)
    refined, probabilities = s.operand(F32T, [0, 4 * CLASSES]), s.operand(F32T, [0, CLASSES])
    s.op(OP.AXIS_ALIGNED_BBOX_TRANSFORM, [kept[1], deltas, kept[3], info], [refined])
    s.op(OP.SOFTMAX, [logits, scalar(F32, 1.0)], [probabilities])
    final = [s.operand(F32T, [0]), s.operand(F32T, [0, 4]), s.operand(I32T, [0]), s.operand(I32T, [0])]
    s.op(OP.BOX_WITH_NMS_LIMIT, [probabilities, refined, kept[3], *nms_scalars(SECOND)], final)
    s.inputs = [x, scores, boxes]
    s.outputs = [kept[1], aligned, pooled, refined, probabilities, *final]
    return s


SHAPES = [(4,), (2, 2, CHANNELS), (2, 2, CHANNELS), (4 * CLASSES,), (CLASSES,), (), (4,), (), ()]
"""Each output's dimensions after its first, the rows."""


def reference(x, scores, boxes):
    """Every model output (arrays of the reported rows) from the header's text, in float64."""
    first = nms_reference(scores.astype(np.float64), boxes.astype(np.float64), np.zeros(ROIS, np.int64), *FIRST)
    n = len(first)
    kept = np.array([r[3] for r in first]).reshape(n, 4)
    batches = np.array([r[0] for r in first], np.int64)
    aligned = roi_align_reference(x.astype(np.float64), kept, batches, 2, 2, RATIO, RATIO, 2, 2)
    pooled = roi_pooling_reference(x, kept, batches, 2, 2, RATIO, RATIO)
    w_box, b_box, w_cls, b_cls = (a.astype(np.float64) for a in weights())
    flat = aligned.reshape(n, FEATURES)
    deltas, logits = flat @ w_box.T + b_box, flat @ w_cls.T + b_cls
    refined = bbox_reference(kept, deltas, batches, INFO.astype(np.float64))
    e = np.exp(logits - logits.max(axis=1, keepdims=True)) if n else logits
    probabilities = e / e.sum(axis=1, keepdims=True) if n else logits
    second = nms_reference(probabilities, refined, batches, *SECOND)
    m = len(second)
    final = [np.array([r[1] for r in second]), np.array([r[3] for r in second]).reshape(m, 4),
             np.array([r[2] for r in second], np.int32), np.array([r[0] for r in second], np.int32)]
    return [kept, aligned, pooled, refined, probabilities, *final]


def check(got, want):
    assert [a.shape for a in got] == [w.shape for w in want]
    for k, (a, w) in enumerate(zip(got, want)):
        if k == 2:
            np.testing.assert_array_equal(a, w)  # maxima of the same float32 values
        elif a.dtype == np.int32:
            assert a.tolist() == w.tolist()
        else:
            np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-5, err_msg=f"output {k}")


def run_python(spec: Spec, feeds):
    c = nnapi.Compilation(spec.python())
    c.finish()
    e = nnapi.Execution(c)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    outs = [np.full((ROIS * CLASSES, *shape), 7, np.int32 if k in (7, 8) else np.float32)
            for k, shape in enumerate(SHAPES)]
    for k, a in enumerate(outs):
        e.set_output(k, a)
    e.compute()
    got = []
    for k, a in enumerate(outs):
        shape = e.output_shape(k)
        assert shape[1:] == SHAPES[k]
        got.append(a[:shape[0]])
    return got


@pytest.mark.parametrize("kept", ["some", "ties", "none"])
def test_the_second_stage_reads_the_boxes_nms_kept_and_reports_their_rows(kept):
    spec = build()
    for seed in (1, 2, 3):
        feeds = case(seed, kept)
        want = reference(*feeds)
        if kept == "none":
            assert [len(w) for w in want] == [0] * 9
        else:
            assert len(want[0]) >= 2
        check(run_python(spec, feeds), want)


def test_ties_keep_the_lower_index_first_and_drop_its_twin():
    x, scores, boxes = case(5, "ties")
    got = run_python(build(), [x, scores, boxes])
    kept = got[0]
    np.testing.assert_array_equal(kept[0], boxes[0])  # of three equal scores, index 0 first
    assert sum((row == boxes[0]).all() for row in kept) == 1  # its identical twin (IoU 1) suppressed
    np.testing.assert_array_equal(kept[1], boxes[2])  # then index 2, of the same score (it overlaps box 0 little)


def test_one_compilation_runs_some_then_no_then_some_rows():
    spec = build()
    c = nnapi.Compilation(spec.python())
    c.finish()
    for kept in ("some", "none", "some", "none"):
        feeds = case(9, kept)
        e = nnapi.Execution(c)
        for k, value in enumerate(feeds):
            e.set_input(k, value)
        outs = [np.zeros((ROIS * CLASSES, *shape), np.int32 if k in (7, 8) else np.float32)
                for k, shape in enumerate(SHAPES)]
        for k, a in enumerate(outs):
            e.set_output(k, a)
        e.compute()
        want = reference(*feeds)
        check([a[:e.output_shape(k)[0]] for k, a in enumerate(outs)], want)


@pytest.mark.parametrize("kept", ["some", "none"])
def test_heatmap_max_keypoint_reads_the_kept_boxes_and_their_aligned_heatmaps(kept):
    s = Spec()
    ins, boxes = nms_front(s)
    x = s.operand(F32T, [1, SIDE, SIDE, CHANNELS])
    three, ratio, layout = s.operand(I32, value=3), s.operand(F32, value=RATIO), s.operand(BOOL, value=False)
    heatmaps = s.operand(F32T, [0, 3, 3, CHANNELS])
    s.op(OP.ROI_ALIGN, [x, boxes[1], boxes[3], three, three, ratio, ratio, three, three, layout], [heatmaps])
    scores, points = s.operand(F32T, [0, CHANNELS]), s.operand(F32T, [0, CHANNELS, 2])
    s.op(OP.HEATMAP_MAX_KEYPOINT, [heatmaps, boxes[1], layout], [scores, points])
    s.inputs, s.outputs = [x, *ins], [boxes[1], heatmaps, scores, points]
    c = nnapi.Compilation(s.python())
    c.finish()
    for seed in (21, 22):
        x_value, score_value, box_value = case(seed, kept)
        e = nnapi.Execution(c)
        for k, value in enumerate((x_value, score_value, box_value)):
            e.set_input(k, value)
        outs = [np.zeros((ROIS, 4), np.float32), np.zeros((ROIS, 3, 3, CHANNELS), np.float32),
                np.zeros((ROIS, CHANNELS), np.float32), np.zeros((ROIS, CHANNELS, 2), np.float32)]
        for k, a in enumerate(outs):
            e.set_output(k, a)
        e.compute()
        rows = nms_reference(score_value.astype(np.float64), box_value.astype(np.float64), np.zeros(ROIS, np.int64),
                             *FIRST)
        n = len(rows)
        assert (n == 0) == (kept == "none")
        assert [e.output_shape(k) for k in range(4)] == [(n, 4), (n, 3, 3, CHANNELS), (n, CHANNELS), (n, CHANNELS, 2)]
        want_boxes = np.array([r[3] for r in rows]).reshape(n, 4)
        want_maps = roi_align_reference(x_value.astype(np.float64), want_boxes, np.zeros(n, np.int64), 3, 3, RATIO,
                                        RATIO, 3, 3)
        np.testing.assert_allclose(outs[1][:n], want_maps, rtol=1e-5, atol=1e-5)
        want_scores, want_points = keypoint_reference(outs[1][:n].astype(np.float64), want_boxes)
        np.testing.assert_allclose(outs[2][:n], want_scores, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(outs[3][:n], want_points, rtol=1e-5, atol=1e-4)


# -- refusals --------------------------------------------------------------------------------------------------------
def nms_front(s: Spec):
    """A model's first stage: inputs (scores, boxes) and the four kept outputs."""
    scores, boxes = s.operand(F32T, [ROIS, 1]), s.operand(F32T, [ROIS, 4])
    batches = s.operand(I32T, [ROIS], value=np.zeros(ROIS, np.int32))
    kept = [s.operand(F32T, [0]), s.operand(F32T, [0, 4]), s.operand(I32T, [0]), s.operand(I32T, [0])]
    s.op(OP.BOX_WITH_NMS_LIMIT, [scores, boxes, batches] + [s.operand(k, value=v) for k, v in
                                                            zip((F32, I32, I32, F32, F32, F32), FIRST)], kept)
    return [scores, boxes], kept


def refused(s: Spec, inputs, outputs, match):
    s.inputs, s.outputs = inputs, outputs
    with pytest.raises(nnapi.NNAPIError, match=match):
        nnapi.Compilation(s.python()).finish()


def test_roi_align_on_kept_boxes_with_fixed_batch_indices_is_refused():
    s = Spec()
    ins, kept = nms_front(s)
    x = s.operand(F32T, [1, SIDE, SIDE, CHANNELS])
    fixed = s.operand(I32T, [ROIS * 1], value=np.zeros(ROIS, np.int32))
    aligned = s.operand(F32T, [0, 2, 2, CHANNELS])
    two, ratio = s.operand(I32, value=2), s.operand(F32, value=RATIO)
    s.op(OP.ROI_ALIGN, [x, kept[1], fixed, two, two, ratio, ratio, two, two, s.operand(BOOL, value=False)], [aligned])
    refused(s, [x, *ins], [aligned], "input 2 .* has fixed rows while input 1's rows the data decides")


def test_a_softmax_across_the_rows_the_data_decides_is_refused():
    s = Spec()
    ins, kept = nms_front(s)
    out = s.operand(F32T, [0, 4])
    s.op(OP.SOFTMAX, [kept[1], s.operand(F32, value=1.0), s.operand(I32, value=0)], [out])
    refused(s, ins, [out], "input 2 \\(axis\\) is 0: the axis of the rows the data decides")


def test_an_add_of_fixed_rows_to_rows_the_data_decides_is_refused():
    s = Spec()
    ins, kept = nms_front(s)
    other = s.operand(F32T, [ROIS, 4], value=np.ones((ROIS, 4), np.float32))
    out = s.operand(F32T, [0, 4])
    s.op(OP.ADD, [kept[1], other, s.operand(I32, value=0)], [out])
    refused(s, ins, [out], "input 1 has shape \\[6, 4\\] while input 0's rows the data decides; it must broadcast")


def test_an_add_broadcast_over_the_rows_keeps_them():
    s = Spec()
    ins, kept = nms_front(s)
    other = s.operand(F32T, [1, 4], value=np.float32([[1, 2, 3, 4]]))
    out = s.operand(F32T, [0, 4])
    s.op(OP.ADD, [kept[1], other, s.operand(I32, value=0)], [out])
    s.inputs, s.outputs = ins, [out]
    c = nnapi.Compilation(s.python())
    c.finish()
    _, scores, boxes = case(4, "some")
    e = nnapi.Execution(c)
    e.set_input(0, scores)
    e.set_input(1, boxes)
    got = np.zeros((ROIS, 4), np.float32)
    e.set_output(0, got)
    e.compute()
    rows = nms_reference(scores.astype(np.float64), boxes.astype(np.float64), np.zeros(ROIS, np.int64), *FIRST)
    assert e.output_shape(0) == (len(rows), 4)
    np.testing.assert_array_equal(got[:len(rows)], np.array([r[3] for r in rows], np.float32) + [1, 2, 3, 4])


# -- the C API ---------------------------------------------------------------------------------------------------------
PROGRAM = C_MAIN + r"""
    static const uint32_t inputs[] = {INPUTS}, outputs[] = {OUTPUTS};
    static const int widths[] = {WIDTHS};
    static float x[SIDE * SIDE * CHANNELS], scores[ROIS], boxes[ROIS * 4];
    static float buffers[9][ROIS * CLASSES * 8];
    int run, k, i;

    check(ANeuralNetworksModel_create(&model), "create");
BODY
    check(ANeuralNetworksModel_identifyInputsAndOutputs(model, 3, inputs, 9, outputs), "identify");
    check(ANeuralNetworksModel_finish(model), "finish");
    check(ANeuralNetworksCompilation_create(model, &compilation), "compilation");
    check(ANeuralNetworksCompilation_finish(compilation), "compile");
    for (run = 0; run < RUNS; run++) {
        if (fread(x, sizeof x, 1, stdin) != 1 || fread(scores, sizeof scores, 1, stdin) != 1 ||
            fread(boxes, sizeof boxes, 1, stdin) != 1)
            return 2;
        check(ANeuralNetworksExecution_create(compilation, &execution), "execution");
        check(ANeuralNetworksExecution_setInput(execution, 0, NULL, x, sizeof x), "setInput");
        check(ANeuralNetworksExecution_setInput(execution, 1, NULL, scores, sizeof scores), "setInput");
        check(ANeuralNetworksExecution_setInput(execution, 2, NULL, boxes, sizeof boxes), "setInput");
        for (k = 0; k < 9; k++)
            check(ANeuralNetworksExecution_setOutput(execution, k, NULL, buffers[k], sizeof buffers[k]), "setOutput");
        check(ANeuralNetworksExecution_compute(execution), "compute");
        for (k = 0; k < 9; k++) {
            uint32_t rank = 0, dims[4] = {0, 0, 0, 0};
            check(ANeuralNetworksExecution_getOutputOperandRank(execution, k, &rank), "rank");
            check(ANeuralNetworksExecution_getOutputOperandDimensions(execution, k, dims), "dimensions");
            printf("%u", rank);
            for (i = 0; i < (int)rank; i++) printf(" %u", dims[i]);
            printf("\n");
            for (i = 0; i < (int)dims[0] * widths[k]; i++) {
                if (k >= 7) printf("%d\n", ((int32_t *)buffers[k])[i]);
                else printf("%.9g\n", buffers[k][i]);
            }
        }
        ANeuralNetworksExecution_free(execution);
    }
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""


def test_the_second_stage_through_the_c_api_reports_its_rows_zero_included():
    spec = build()
    runs = [case(11, "some"), case(12, "none"), case(13, "ties")]
    widths = [math.prod(shape) for shape in SHAPES]
    source = (spec.c_source(PROGRAM).replace("WIDTHS", ", ".join(map(str, widths))).replace("RUNS", str(len(runs)))
              .replace("SIDE", str(SIDE)).replace("CHANNELS", str(CHANNELS)).replace("ROIS", str(ROIS))
              .replace("CLASSES", str(CLASSES)))
    feed = b"".join(a.tobytes() for feeds in runs for a in feeds)
    exe = compile_c(source, "nnapi_1_2_data_sized_rows", nnapi_flags())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([str(exe)], input=feed, capture_output=True, timeout=300, env=env)
    stdout = result.stdout.decode()
    assert result.returncode == 0, stdout + result.stderr.decode()
    lines = iter(stdout.split("\n"))
    for feeds in runs:
        want = reference(*feeds)
        got = []
        for k, shape in enumerate(SHAPES):
            rank, *dims = map(int, next(lines).split())
            assert rank == 1 + len(shape) and tuple(dims[1:]) == shape
            values = [next(lines) for _ in range(dims[0] * widths[k])]
            dtype = np.int32 if k >= 7 else np.float32
            got.append(np.array([int(v) if k >= 7 else float(v) for v in values], dtype).reshape(dims))
        check(got, want)
        if feeds is runs[1]:
            assert all(len(a) == 0 for a in got)
        for mine, python in zip(got, run_python(spec, feeds)):
            np.testing.assert_array_equal(mine, python)  # the same graph: the same bits


# -- GENERATE_PROPOSALS -> ROI_ALIGN ------------------------------------------------------------------------------------
def test_roi_align_reads_the_proposals_generate_proposals_kept_none_included():
    side, anchors, pre, post, iou_thr, min_size = 4, 2, 10, 5, 0.6, 2.0
    s = Spec()
    x = s.operand(F32T, [1, side, side, CHANNELS])
    scores, deltas = s.operand(F32T, [1, side, side, anchors]), s.operand(F32T, [1, side, side, 4 * anchors])
    anchor_boxes = np.float32([[0, 0, 8, 8], [0, 0, 6, 10]])
    info = np.float32([[16, 16]])
    kept = [s.operand(F32T, [0]), s.operand(F32T, [0, 4]), s.operand(I32T, [0])]
    s.op(OP.GENERATE_PROPOSALS, [scores, deltas, s.operand(F32T, [anchors, 4], value=anchor_boxes),
                                 s.operand(F32T, [1, 2], value=info), s.operand(F32, value=RATIO),
                                 s.operand(F32, value=RATIO), s.operand(I32, value=pre), s.operand(I32, value=post),
                                 s.operand(F32, value=iou_thr), s.operand(F32, value=min_size),
                                 s.operand(BOOL, value=False)], kept)
    two = s.operand(I32, value=2)
    aligned = s.operand(F32T, [0, 2, 2, CHANNELS])
    s.op(OP.ROI_ALIGN, [x, kept[1], kept[2], two, two, s.operand(F32, value=RATIO), s.operand(F32, value=RATIO), two,
                        two, s.operand(BOOL, value=False)], [aligned])
    s.inputs, s.outputs = [x, scores, deltas], [kept[1], aligned]
    c = nnapi.Compilation(s.python())
    c.finish()
    rng = np.random.default_rng(77)
    for shrink in (False, True, False):
        feeds = [rng.standard_normal((1, side, side, CHANNELS)).astype(np.float32),
                 rng.random((1, side, side, anchors)).astype(np.float32),
                 rng.uniform(-0.2, 0.2, (1, side, side, 4 * anchors)).astype(np.float32)]
        if shrink:  # every proposal narrower than min_size: none kept, ROI_ALIGN gets empty ROIs
            feeds[2].reshape(-1, 4)[:, 2:] = -3.0
        rows = proposals_reference(*(a.astype(np.float64) for a in feeds[1:]), anchor_boxes.astype(np.float64),
                                   info.astype(np.float64), RATIO, RATIO, pre, post, iou_thr, min_size)
        assert (len(rows) == 0) == shrink
        e = nnapi.Execution(c)
        for k, value in enumerate(feeds):
            e.set_input(k, value)
        boxes, got = np.zeros((post, 4), np.float32), np.zeros((post, 2, 2, CHANNELS), np.float32)
        e.set_output(0, boxes)
        e.set_output(1, got)
        e.compute()
        n = len(rows)
        assert e.output_shape(0) == (n, 4) and e.output_shape(1) == (n, 2, 2, CHANNELS)
        want_boxes = np.array([r[2] for r in rows]).reshape(n, 4)
        np.testing.assert_allclose(boxes[:n], want_boxes, rtol=1e-5, atol=1e-4)
        want = roi_align_reference(feeds[0].astype(np.float64), boxes[:n].astype(np.float64), np.zeros(n, np.int64),
                                   2, 2, RATIO, RATIO, 2, 2)
        np.testing.assert_allclose(got[:n], want, rtol=1e-5, atol=1e-5)
