"""A detection head of NNAPI 1.2's region operations (AXIS_ALIGNED_BBOX_TRANSFORM refining proposals, ROI_ALIGN and
ROI_POOLING on the refined boxes, BOX_WITH_NMS_LIMIT keeping the best of them) through the Python front end and
through the C API, against the references written from the header's text; the suppressed outputs' rows come from
the data, read in C with ANeuralNetworksExecution_getOutputOperandDimensions."""
from __future__ import annotations

import os
import subprocess

import numpy as np
from conftest import ROOT, compile_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_1_2_box_with_nms_limit import reference as nms_reference
from test_nnapi_1_2_detection import bbox_reference, roi_align_reference, roi_pooling_reference
from test_nnapi_1_2_models import C_MAIN, Spec
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
F32, I32, F32T, I32T, BOOL = T.FLOAT32, T.INT32, T.TENSOR_FLOAT32, T.TENSOR_INT32, T.BOOL
ROIS, RATIO, SIDE = 5, 4.0, 6
INFO = np.array([[24.0, 24.0]], np.float32)
NMS = (0.1, -1, 1, 0.5, 0.5, 0.05)  # score threshold, no limit, linear kernel, IoU threshold, sigma, NMS threshold


def inputs():
    rng = np.random.default_rng(4429)
    x = rng.standard_normal((1, SIDE, SIDE, 2)).astype(np.float32)
    corners = rng.uniform(0, 14, (ROIS, 2))
    rois = np.round(np.concatenate([corners, corners + rng.uniform(2, 10, (ROIS, 2))], 1) * 8).astype(np.float32) / 8
    deltas = rng.uniform(-0.3, 0.3, (ROIS, 4)).astype(np.float32)
    scores = rng.random((ROIS, 1)).astype(np.float32)
    return [x, rois, deltas, scores]


def build() -> Spec:
    s = Spec()

    def scalar(kind, value):
        return s.operand(kind, value=value)
    x, rois, deltas, scores = (s.operand(F32T, list(a.shape)) for a in inputs())
    batches = s.operand(I32T, [ROIS], value=np.zeros(ROIS, np.int32))
    info = s.operand(F32T, [1, 2], value=INFO)
    refined = s.operand(F32T, [ROIS, 4])
    s.op(OP.AXIS_ALIGNED_BBOX_TRANSFORM, [x_ for x_ in (rois, deltas, batches, info)], [refined])
    aligned, pooled = s.operand(F32T, [ROIS, 2, 2, 2]), s.operand(F32T, [ROIS, 2, 2, 2])
    two, ratio, layout = scalar(I32, 2), scalar(F32, RATIO), scalar(BOOL, False)
    s.op(OP.ROI_ALIGN, [x, refined, batches, two, two, ratio, ratio, two, two, layout], [aligned])
    s.op(OP.ROI_POOLING, [x, refined, batches, two, two, ratio, ratio, layout], [pooled])
    kinds = (F32, I32, I32, F32, F32, F32)
    kept = [s.operand(F32T, [0]), s.operand(F32T, [0, 4]), s.operand(I32T, [0]), s.operand(I32T, [0])]
    s.op(OP.BOX_WITH_NMS_LIMIT, [scores, refined, batches, *(scalar(k, v) for k, v in zip(kinds, NMS))], kept)
    s.inputs, s.outputs = [x, rois, deltas, scores], [aligned, pooled, *kept]
    return s


def reference(x, rois, deltas, scores):
    batches = np.zeros(ROIS, np.int64)
    refined = bbox_reference(rois.astype(np.float64), deltas.astype(np.float64), batches, INFO.astype(np.float64))
    refined = refined.astype(np.float32).astype(np.float64)  # a float32 temporary between the operations
    aligned = roi_align_reference(x.astype(np.float64), refined, batches, 2, 2, RATIO, RATIO, 2, 2)
    pooled = roi_pooling_reference(x, refined, batches, 2, 2, RATIO, RATIO)
    rows = nms_reference(scores.astype(np.float64), refined, batches, NMS[0], NMS[1], NMS[2], NMS[3], NMS[4], NMS[5])
    return aligned, pooled, rows


def check(aligned, pooled, kept_scores, kept_boxes, kept_classes, kept_batches):
    want_aligned, want_pooled, rows = reference(*inputs())
    np.testing.assert_allclose(aligned, want_aligned, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(pooled, want_pooled)
    assert len(kept_scores) == len(rows) >= 2
    np.testing.assert_allclose(kept_scores, [r[1] for r in rows], rtol=1e-6)
    np.testing.assert_allclose(kept_boxes, np.array([r[3] for r in rows]), rtol=1e-6, atol=1e-6)
    assert list(kept_classes) == [r[2] for r in rows] and list(kept_batches) == [r[0] for r in rows]


def run_python():
    c = nnapi.Compilation(build().python())
    c.finish()
    e = nnapi.Execution(c)
    for k, value in enumerate(inputs()):
        e.set_input(k, value)
    outs = [np.zeros((ROIS, 2, 2, 2), np.float32), np.zeros((ROIS, 2, 2, 2), np.float32), np.zeros(ROIS, np.float32),
            np.zeros((ROIS, 4), np.float32), np.zeros(ROIS, np.int32), np.zeros(ROIS, np.int32)]
    for k, a in enumerate(outs):
        e.set_output(k, a)
    e.compute()
    n = e.output_shape(2)[0]
    assert [e.output_shape(k) for k in range(2, 6)] == [(n,), (n, 4), (n,), (n,)]
    return outs[:2] + [a[:n] for a in outs[2:]]


def test_the_detection_head_matches_the_references_through_the_python_front_end():
    check(*run_python())


PROGRAM = C_MAIN + r"""
    static const uint32_t inputs[] = {INPUTS}, outputs[] = {OUTPUTS};
    static float x[XSIZE], rois[ROIS * 4], deltas[ROIS * 4], scores[ROIS];
    static float aligned[ROIS * 8], pooled[ROIS * 8], kept_scores[ROIS], kept_boxes[ROIS * 4];
    static int32_t kept_classes[ROIS], kept_batches[ROIS];
    uint32_t rows[2] = {0, 0};
    int i;

    check(ANeuralNetworksModel_create(&model), "create");
BODY
    check(ANeuralNetworksModel_identifyInputsAndOutputs(model, 4, inputs, 6, outputs), "identify");
    check(ANeuralNetworksModel_finish(model), "finish");
    check(ANeuralNetworksCompilation_create(model, &compilation), "compilation");
    check(ANeuralNetworksCompilation_finish(compilation), "compile");
    if (fread(x, sizeof x, 1, stdin) != 1 || fread(rois, sizeof rois, 1, stdin) != 1 ||
        fread(deltas, sizeof deltas, 1, stdin) != 1 || fread(scores, sizeof scores, 1, stdin) != 1)
        return 2;
    check(ANeuralNetworksExecution_create(compilation, &execution), "execution");
    check(ANeuralNetworksExecution_setInput(execution, 0, NULL, x, sizeof x), "setInput");
    check(ANeuralNetworksExecution_setInput(execution, 1, NULL, rois, sizeof rois), "setInput");
    check(ANeuralNetworksExecution_setInput(execution, 2, NULL, deltas, sizeof deltas), "setInput");
    check(ANeuralNetworksExecution_setInput(execution, 3, NULL, scores, sizeof scores), "setInput");
    check(ANeuralNetworksExecution_setOutput(execution, 0, NULL, aligned, sizeof aligned), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 1, NULL, pooled, sizeof pooled), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 2, NULL, kept_scores, sizeof kept_scores), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 3, NULL, kept_boxes, sizeof kept_boxes), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 4, NULL, kept_classes, sizeof kept_classes), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 5, NULL, kept_batches, sizeof kept_batches), "setOutput");
    check(ANeuralNetworksExecution_compute(execution), "compute");
    check(ANeuralNetworksExecution_getOutputOperandDimensions(execution, 3, rows), "dimensions");
    printf("%u %u\n", rows[0], rows[1]);
    for (i = 0; i < ROIS * 8; i++) printf("%.9g\n", aligned[i]);
    for (i = 0; i < ROIS * 8; i++) printf("%.9g\n", pooled[i]);
    for (i = 0; i < (int)rows[0]; i++) printf("%.9g\n", kept_scores[i]);
    for (i = 0; i < (int)rows[0] * 4; i++) printf("%.9g\n", kept_boxes[i]);
    for (i = 0; i < (int)rows[0]; i++) printf("%d %d\n", kept_classes[i], kept_batches[i]);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""


def test_the_detection_head_through_the_c_api_matches_the_references_and_python():
    spec = build()
    source = (spec.c_source(PROGRAM)
              .replace("XSIZE", str(SIDE * SIDE * 2)).replace("ROIS", str(ROIS)))
    feed = b"".join(a.tobytes() for a in inputs())
    exe = compile_c(source, "nnapi_1_2_detection", nnapi_flags())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([str(exe)], input=feed, capture_output=True, timeout=300, env=env)
    stdout = run.stdout.decode()
    assert run.returncode == 0, stdout + run.stderr.decode()
    lines = stdout.split("\n")
    n, four = map(int, lines[0].split())
    assert four == 4
    values = lines[1:]
    aligned = np.array(values[:ROIS * 8], np.float32).reshape(ROIS, 2, 2, 2)
    pooled = np.array(values[ROIS * 8:ROIS * 16], np.float32).reshape(ROIS, 2, 2, 2)
    start = ROIS * 16
    kept_scores = np.array(values[start:start + n], np.float32)
    kept_boxes = np.array(values[start + n:start + 5 * n], np.float32).reshape(n, 4)
    pairs = [tuple(map(int, v.split())) for v in values[start + 5 * n:start + 6 * n]]
    got = [aligned, pooled, kept_scores, kept_boxes, [p[0] for p in pairs], [p[1] for p in pairs]]
    check(*got)
    for mine, python in zip(got, run_python()):
        np.testing.assert_array_equal(np.asarray(mine), python)  # the same graph: the same bits
