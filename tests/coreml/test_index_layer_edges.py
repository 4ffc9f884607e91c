"""The index layers' edges: parameters refused at load, run-time indices that fail the run with a CoreMLError,
getShape, and index inputs known at load (constants) checked there (tests/coreml/test_index_layers.py holds the
values)."""
from __future__ import annotations

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import builder, close, load, run
from .test_index_layers import ref_gather


# -- refusals -----------------------------------------------------------------------------------------
def _refused(tmp_path, inputs, outputs, add, *words):
    b = builder(inputs, outputs, exact=True)
    add(b)
    with pytest.raises(cm.CoreMLError) as caught:
        model = load(tmp_path, b)
        model.predict({n: np.zeros(s, np.float32) for n, s in inputs.items()})
    for w in words:
        assert w in str(caught.value)


@pytest.mark.parametrize("case", ["topk-k", "window", "along-shape", "scatter-updates", "range-step", "band-rank",
                                  "slice-size", "reverse-axes"])
def test_bad_parameters_are_refused_at_load(tmp_path, case):
    x3 = {"x": (3, 4, 5)}
    cases = {
        "topk-k": (x3, ["v", "i"], lambda b: b.add_topk("t", ["x"], ["v", "i"], k=6, axis=-1), ("t", "K = 6")),
        "window": (x3, ["y"], lambda b: b.add_sliding_windows("w", "x", "y", 1, 5), ("w", "windowSize 5")),
        "along-shape": ({"x": (3, 4), "i": (2, 2)}, ["y"],
                        lambda b: b.add_gather_along_axis("g", ["x", "i"], "y", 0), ("g", "must match")),
        "scatter-updates": ({"c": (3, 4), "i": (2,), "u": (2, 3)}, ["y"],
                            lambda b: b.add_scatter("s", ["c", "i", "u"], "y", 0), ("s", "updates [2, 3]")),
        "range-step": ({"x": (1,)}, ["y"], lambda b: b.add_range_static("r", "y", end=3, start=0, step=0),
                       ("r", "step")),
        "band-rank": ({"x": (4,)}, ["y"], lambda b: b.add_lower_triangular("l", "x", "y"), ("l", "rank 1")),
        "slice-size": ({"x": (3, 4), "b": (1,)}, ["y"], lambda b: b.add_slice_by_size("s", ["x", "b"], "y", 1, 5),
                       ("s", "size 5")),
        "reverse-axes": ({"x": (3, 4), "n": (3,)}, ["y"],
                         lambda b: b.add_reverse_sequence("r", ["x", "n"], "y", 0, -2), ("r", "one axis")),
    }
    inputs, outputs, add, words = cases[case]
    _refused(tmp_path, inputs, outputs, add, *words)


@pytest.mark.parametrize("bad", [3.0, -4.0, 0.5])
def test_a_run_time_index_outside_its_axis_fails_the_run(tmp_path, bad):
    b = builder({"d": (3, 2), "i": (2,)}, ["y"], exact=True)
    b.add_gather("g", ["d", "i"], "y", 0)
    model = load(tmp_path, b)
    good = model.predict({"d": np.ones((3, 2), np.float32), "i": np.array([0, -3], np.float32)})
    close(good["y"], np.ones((2, 2)))
    with pytest.raises(cm.CoreMLError, match="failed"):
        model.predict({"d": np.ones((3, 2), np.float32), "i": np.array([0, bad], np.float32)})


def test_a_slice_by_size_begin_past_the_end_fails_the_run(tmp_path):
    b = builder({"x": (3, 4), "b": (1,)}, ["y"], exact=True)
    b.add_slice_by_size("s", ["x", "b"], "y", 1, 3)
    model = load(tmp_path, b)
    with pytest.raises(cm.CoreMLError, match="failed"):
        model.predict({"x": np.ones((3, 4), np.float32), "b": np.array([2], np.float32)})


# -- values known at load ---------------------------------------------------------------------------
def test_get_shape_is_the_input_shape(tmp_path, rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    out, _ = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_get_shape("s", "x", "y"), exact=True)
    np.testing.assert_array_equal(out["y"], [2, 3, 4])


def test_constant_indices_within_range_run(tmp_path, rng):
    data = rng.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([3, -4, 1], np.float32)

    def add(b):
        b.add_load_constant_nd("k", "k", idx, idx.shape)
        b.add_gather("g", ["d", "k"], "y", 0)
    out, _ = run(tmp_path, {"d": data}, ["y"], add, exact=True)
    close(out["y"], ref_gather(data, idx, 0))


@pytest.mark.parametrize("case", ["gather", "scatter", "slice", "reverse", "not-integer"])
def test_constant_indices_that_would_fail_are_refused_at_load(tmp_path, case):
    def constant(b, values):
        values = np.asarray(values, np.float32)
        b.add_load_constant_nd("k", "k", values, values.shape)
    cases = {
        "gather": ({"d": (4, 3)}, lambda b: (constant(b, [0, 4]), b.add_gather("g", ["d", "k"], "y", 0)), "4"),
        "scatter": ({"d": (4, 3), "u": (4, 2)},
                    lambda b: (constant(b, [0, -4]), b.add_scatter("s", ["d", "k", "u"], "y", 1)), "-4"),
        "slice": ({"d": (4, 3)}, lambda b: (constant(b, [2]), b.add_slice_by_size("s", ["d", "k"], "y", 1, 2)),
                  "begin 2"),
        "reverse": ({"d": (2, 3)},
                    lambda b: (constant(b, [1, 4]), b.add_reverse_sequence("r", ["d", "k"], "y", 0, 1)), "0..3"),
        "not-integer": ({"d": (4, 3)}, lambda b: (constant(b, [0.5]), b.add_gather("g", ["d", "k"], "y", 0)),
                        "integer"),
    }
    inputs, add, word = cases[case]
    b = builder(inputs, ["y"], exact=True)
    add(b)
    with pytest.raises(cm.CoreMLError) as caught:
        load(tmp_path, b)
    assert "known at load" in str(caught.value) and word in str(caught.value)


def test_k_axis_and_size_from_a_second_input_known_at_load(tmp_path, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([0, 3, 1], np.float32)

    def add(b):
        for name, value in (("k", 2), ("axis", 0), ("size", 4)):
            b.add_load_constant_nd(name, name, np.array([value], np.float32), (1,))
        b.add_topk("t", ["x", "k"], ["v", "i"], axis=-1)
        b.add_cumsum("c", ["x", "axis"], "c")
        b.add_one_hot("o", ["idx", "size"], "o")
    out, _ = run(tmp_path, {"x": x, "idx": idx}, ["v", "i", "c", "o"], add, exact=True)
    order = [sorted(range(5), key=lambda j: (-float(row[j]), j))[:2] for row in x]
    np.testing.assert_array_equal(out["i"], order)
    close(out["v"], [[row[j] for j in o] for row, o in zip(x, order)])
    close(out["c"], [[sum(float(x[r, c]) for r in range(i + 1)) for c in range(5)] for i in range(3)])
    np.testing.assert_array_equal(out["o"], [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]])


def test_a_second_input_that_is_not_one_integer_is_refused(tmp_path):
    b = builder({"x": (3, 5)}, ["v", "i"], exact=True)
    b.add_load_constant_nd("k", "k", np.array([1.5], np.float32), (1,))
    b.add_topk("t", ["x", "k"], ["v", "i"])
    with pytest.raises(cm.CoreMLError, match="one integer"):
        load(tmp_path, b)
