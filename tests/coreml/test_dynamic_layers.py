"""The layers whose output shape depends on data (RangeDynamic, ReshapeDynamic, SliceDynamic, FillDynamic,
BroadcastToDynamic, the three random Dynamic layers, WhereNonZero, NonMaximumSuppression), each against a NumPy
reference written from the seed's text over randomized shapes and values; the same model run with other shape
values gives outputs of the other shapes (a graph per value signature)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import builder, close, load
from .test_random_layers import _documented_uniforms

RNG = np.random.default_rng(20261129)


def _model(tmp_path, inputs, outputs, add, name="model"):
    b = builder(inputs, outputs, exact=True)
    add(b)
    return load(tmp_path, b, name)


@pytest.mark.parametrize("inputs", [1, 2, 3])
def test_range_dynamic_is_numpy_arange(tmp_path, inputs):
    names = ["end", "start", "step"][:inputs]
    model = _model(tmp_path, {n: (1,) for n in names}, ["r"],
                   lambda b: b.add_range_dynamic("range", names, "r", start=2.0, step=1.5))
    for _ in range(4):
        end, start, step = RNG.uniform(5, 40), RNG.uniform(-5, 4), RNG.uniform(0.25, 3)
        values = {"end": end, "start": start, "step": step}
        s = start if inputs > 1 else 2.0
        d = step if inputs > 2 else 1.5
        expected = [s + i * d for i in range(math.ceil((end - s) / d))]
        got = model.predict({n: np.array([values[n]], np.float32) for n in names})["r"]
        close(got, np.array(expected, np.float32), atol=1e-4)


def test_reshape_dynamic_takes_its_shape_from_the_second_input(tmp_path):
    model = _model(tmp_path, {"x": (4, 6, 5), "shape": (3,)}, ["y"],
                   lambda b: b.add_reshape_dynamic("reshape", ["x", "shape"], "y"))
    x = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    for target in [(5, 4, 6), (2, 60, 1), (120, 1, 1), (3, -1, 10)]:
        got = model.predict({"x": x, "shape": np.array(target, np.float32)})["y"]
        assert got.shape == tuple(d if d != -1 else 4 for d in target)
        close(got, x.reshape(-1).reshape(got.shape))
    with pytest.raises(cm.CoreMLError, match="reshape.*cannot reshape"):
        model.predict({"x": x, "shape": np.array([7, 7, 7], np.float32)})


def _slice_reference(x, begin, end, strides, bmask, emask, smask):
    out = x
    index = []
    for i in range(x.ndim):
        if smask[i]:
            index.append(int(begin[i]) % x.shape[i])
        else:
            index.append(slice(None if bmask[i] else int(begin[i]), None if emask[i] else int(end[i]), int(strides[i])))
    return out[tuple(index)]


@pytest.mark.parametrize("trial", range(6))
def test_slice_dynamic_with_every_input(tmp_path, trial):
    shape = tuple(int(d) for d in RNG.integers(3, 7, size=3))
    x = RNG.standard_normal(shape).astype(np.float32)
    inputs = ["x", "begin", "end", "strides", "bmask", "emask", "smask"][:2 + trial % 6]
    begin = [int(RNG.integers(-d, d - 1)) for d in shape]
    strides = [int(RNG.choice([1, 2, -1])) for _ in shape]
    end = [(-d - 1 if s < 0 else d) for d, s in zip(shape, strides)]
    end = [int(RNG.integers(b % d + 1, d + 1)) if s > 0 else int(RNG.integers(-d - 1, b % d - d))
           for b, d, s in zip(begin, shape, strides)]
    bmask = [bool(RNG.integers(2)) for _ in shape]
    emask = [bool(RNG.integers(2)) for _ in shape]
    smask = [False, bool(RNG.integers(2)), False]
    values = {"begin": begin, "end": end, "strides": strides, "bmask": bmask, "emask": emask, "smask": smask}
    static = {"end_ids": end, "strides": strides, "begin_masks": bmask, "end_masks": emask, "squeeze_masks": smask}
    model = _model(tmp_path, {"x": shape, **{n: (3,) for n in inputs[1:]}}, ["y"],
                   lambda b: b.add_slice_dynamic("slice", inputs, "y", **static))
    got = model.predict({"x": x, **{n: np.array(values[n], np.float32) for n in inputs[1:]}})["y"]
    expected = _slice_reference(x, begin, end, strides, bmask, emask, smask)
    close(got, expected)


def test_fill_and_broadcast_to_dynamic(tmp_path):
    def add(b):
        b.add_fill_dynamic("fill", "shape", "f", value=2.5)
        b.add_broadcast_to_dynamic("broadcast", ["x", "shape"], "y")
    model = _model(tmp_path, {"x": (3, 1), "shape": (3,)}, ["f", "y"], add)
    x = RNG.standard_normal((3, 1)).astype(np.float32)
    for target in [(2, 3, 4), (1, 3, 7), (5, 3, 1)]:
        got = model.predict({"x": x, "shape": np.array(target, np.float32)})
        close(got["f"], np.full(target, 2.5))
        expected = np.empty(target)
        for i, j, k in itertools.product(*map(range, target)):
            expected[i, j, k] = x[j, 0]
        close(got["y"], expected)
    with pytest.raises(cm.CoreMLError, match="does not broadcast"):
        model.predict({"x": x, "shape": np.array([2, 4, 4], np.float32)})
    with pytest.raises(cm.CoreMLError, match="each value must be an integer"):
        model.predict({"x": x, "shape": np.array([2, 3.5, 4], np.float32)})


@pytest.mark.parametrize("kind", ["normal", "uniform", "bernoulli"])
def test_random_dynamic_is_the_static_layers_stream(tmp_path, kind):
    add = {"normal": lambda b: b.add_random_normal_dynamic("r", ["shape"], "r", 1.5, 2.0, 77),
           "uniform": lambda b: b.add_random_uniform_dynamic("r", ["shape"], "r", -1.0, 3.0, 77),
           "bernoulli": lambda b: b.add_random_bernoulli_dynamic("r", ["shape"], "r", 0.3, 77)}[kind]
    model = _model(tmp_path, {"shape": (2,)}, ["r"], add)
    for shape in [(30, 40), (7, 3)]:
        n = math.prod(shape)
        got = model.predict({"shape": np.array(shape, np.float32)})["r"]
        assert got.shape == shape
        if kind == "normal":
            u = _documented_uniforms(77, 2 * n)
            expected = [1.5 + 2.0 * math.sqrt(-2 * math.log(1 - u[2 * k])) * math.cos(2 * math.pi * u[2 * k + 1])
                        for k in range(n)]
        elif kind == "uniform":
            expected = [-1.0 + 4.0 * v for v in _documented_uniforms(77, n)]
        else:
            expected = [1.0 if v < np.float32(0.3) else 0.0 for v in _documented_uniforms(77, n)]
        close(got.reshape(-1), np.array(expected))


def test_unseeded_random_dynamic_draws_fresh_values(tmp_path):
    model = _model(tmp_path, {"shape": (1,)}, ["r"],
                   lambda b: b.add_random_uniform_dynamic("r", ["shape"], "r", 0.0, 1.0, -1))
    shape = np.array([1000], np.float32)
    assert not np.array_equal(model.predict({"shape": shape})["r"], model.predict({"shape": shape})["r"])


def _nonzero_reference(x):
    rows = [index for index in itertools.product(*map(range, x.shape)) if x[index] != 0]
    return np.array(rows, np.float64).reshape(len(rows), x.ndim)


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_where_nonzero_lists_the_indices_of_nonzero_elements(tmp_path, rank):
    shape = tuple(int(d) for d in RNG.integers(1, 6, size=rank))
    model = _model(tmp_path, {"x": shape}, ["y", "z"], lambda b: (
        b.add_where_nonzero("nz", "x", "idx"),
        b.add_activation("y", "LINEAR", "idx", "y", params=[1.0, 0.0]),  # a layer reading the trimmed rows
        b.add_activation("z", "LINEAR", "x", "z")))
    for density in (0.0, 0.3, 1.0):
        x = (RNG.random(shape) < density) * RNG.integers(1, 5, size=shape).astype(np.float32)
        expected = _nonzero_reference(x)
        if len(expected) == 0:  # a blob of no rows cannot be made: the layer after it says so
            with pytest.raises(cm.CoreMLError, match="cannot be made"):
                model.predict({"x": x})
            continue
        close(model.predict({"x": x})["y"], expected)


def test_where_nonzero_seed_example(tmp_path):
    model = _model(tmp_path, {"x": (3, 3)}, ["idx"], lambda b: b.add_where_nonzero("nz", "x", "idx"))
    got = model.predict({"x": np.array([[1, 2, 1], [0, 2, 2], [2, 1, 0]], np.float32)})["idx"]
    close(got, [[0, 0], [0, 1], [0, 2], [1, 1], [1, 2], [2, 0], [2, 1]])


def _nms_reference(boxes, scores, iou_threshold, score_threshold, max_boxes, per_class):
    """The seed's text: per box the max of its class scores; greedy by score; suppression by IoU of centre-format
    boxes, within a class when per_class; padding 0, 0, -1; when no box passes, the best box alone."""
    out = []
    for b in range(boxes.shape[0]):
        best = [max(row) for row in scores[b]]
        cls = [int(np.argmax(row)) for row in scores[b]]
        order = sorted(range(len(best)), key=lambda i: (-best[i], i))
        keep = []
        candidates = [i for i in order if best[i] >= score_threshold]
        if not candidates:
            keep = order[:1]
        for i in candidates:
            if len(keep) == max_boxes:
                break
            if all(_iou(boxes[b, i], boxes[b, j]) <= iou_threshold or (per_class and cls[i] != cls[j]) for j in keep):
                keep.append(i)
        out.append(keep)
    m = max_boxes
    rb = np.zeros((boxes.shape[0], m, 4))
    rs = np.zeros((boxes.shape[0], m, scores.shape[2]))
    ri = -np.ones((boxes.shape[0], m))
    rn = np.zeros(boxes.shape[0])
    for b, keep in enumerate(out):
        for k, i in enumerate(keep):
            rb[b, k], rs[b, k], ri[b, k] = boxes[b, i], scores[b, i], i
        rn[b] = len(keep)
    return rb, rs, ri, rn


def _iou(a, c):
    ax0, ay0, ax1, ay1 = a[0] - a[2] / 2, a[1] - a[3] / 2, a[0] + a[2] / 2, a[1] + a[3] / 2
    cx0, cy0, cx1, cy1 = c[0] - c[2] / 2, c[1] - c[3] / 2, c[0] + c[2] / 2, c[1] + c[3] / 2
    w = max(0.0, min(ax1, cx1) - max(ax0, cx0))
    h = max(0.0, min(ay1, cy1) - max(ay0, cy0))
    inter = w * h
    union = a[2] * a[3] + c[2] * c[3] - inter
    return inter / union if union > 0 else 0.0


@pytest.mark.parametrize("per_class", [False, True])
@pytest.mark.parametrize("inputs", [2, 5])
def test_non_maximum_suppression(tmp_path, per_class, inputs):
    bsz, n, c = int(RNG.integers(1, 4)), int(RNG.integers(15, 30)), 3 if per_class else int(RNG.integers(1, 4))
    names = ["boxes", "scores", "iou", "least", "most"][:inputs]
    shapes = {"boxes": (bsz, n, 4), "scores": (bsz, n, c), "iou": (1,), "least": (1,), "most": (1,)}
    outs = ["ob", "os", "oi", "on"]
    model = _model(tmp_path, {k: shapes[k] for k in names}, outs, lambda b: b.add_nms(
        "nms", names, outs, iou_threshold=0.3, score_threshold=0.7, max_boxes=10, per_class_suppression=per_class))
    for iou, least, most in [(0.3, 0.7, 10), (0.5, 0.85, 12), (0.2, 0.5, 3), (0.1, 2.0, 4)]:
        if inputs == 2:
            iou, least, most = 0.3, 0.7, 10
        boxes = np.concatenate([RNG.uniform(0, 5, (bsz, n, 2)), RNG.uniform(1, 4, (bsz, n, 2))], -1)
        boxes = boxes.astype(np.float32)
        scores = RNG.random((bsz, n, c)).astype(np.float32)
        feed = {"boxes": boxes, "scores": scores, "iou": np.array([iou], np.float32),
                "least": np.array([least], np.float32), "most": np.array([most], np.float32)}
        got = model.predict({k: feed[k] for k in names})
        for name, expected in zip(outs, _nms_reference(boxes.astype(np.float64), scores.astype(np.float64), iou,
                                                       least, most, per_class)):
            close(got[name], expected)


def test_nms_refuses_boxes_of_the_wrong_shape(tmp_path):
    b = builder({"boxes": (1, 5, 3), "scores": (1, 5, 2)}, ["a", "b", "c", "d"], exact=True)
    b.add_nms("nms", ["boxes", "scores"], ["a", "b", "c", "d"])
    with pytest.raises(cm.CoreMLError, match=r"'nms'.*boxes \[1, 5, 3\] must be \[B, N, 4\]"):
        load(tmp_path, b)  # with its parameters in the layer, its shapes are fixed: refused at load


def test_k_axis_and_size_from_a_run_time_second_input(tmp_path):
    """TopK's K, CumSum's axis and OneHot's size read from model inputs: a graph per value."""
    def add(b):
        b.add_topk("t", ["x", "k"], ["v", "i"], axis=-1)
        b.add_cumsum("c", ["x", "axis"], "c")
        b.add_one_hot("o", ["idx", "size"], "o")
    model = _model(tmp_path, {"x": (3, 5), "k": (1,), "axis": (1,), "idx": (3,), "size": (1,)}, ["v", "i", "c", "o"],
                   add)
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([0, 3, 1], np.float32)
    for k, axis, size in [(2, 0, 4), (4, 1, 6)]:
        out = model.predict({"x": x, "k": np.array([k], np.float32), "axis": np.array([axis], np.float32),
                             "idx": idx, "size": np.array([size], np.float32)})
        order = [sorted(range(5), key=lambda j: (-float(row[j]), j))[:k] for row in x]
        np.testing.assert_array_equal(out["i"], order)
        close(out["v"], [[row[j] for j in o] for row, o in zip(x, order)])
        expected = np.zeros((3, 5))
        for r, c in itertools.product(range(3), range(5)):
            expected[r, c] = sum(float(x[q, c]) for q in range(r + 1)) if axis == 0 else \
                sum(float(x[r, q]) for q in range(c + 1))
        close(out["c"], expected)
        np.testing.assert_array_equal(out["o"], [[1.0 if j == v else 0.0 for j in range(size)] for v in idx])
