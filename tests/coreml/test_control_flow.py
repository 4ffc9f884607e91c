"""Control flow (branch, loop with a count or a condition network, loopBreak, loopContinue, nested loops)
against plain Python loops written from the seed's pseudo-code, and the models it refuses."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder

import openvx_nn.coreml as cm
from openvx_nn.coreml.errors import CoreMLError

from .harness import close


def _model(inputs: dict, outputs: list[str]) -> NeuralNetworkBuilder:
    return NeuralNetworkBuilder([(n, datatypes.Array(*s)) for n, s in inputs.items()], [(n, None) for n in outputs],
                                disable_rank5_shape_mapping=True)


def _nested(network) -> NeuralNetworkBuilder:
    """A builder writing into a nested network (a branch's or loop's) of a layer already added."""
    return NeuralNetworkBuilder(nn_spec=network, disable_rank5_shape_mapping=True)


def _predict(spec, feeds: dict) -> dict:
    model = cm.load(spec)
    try:
        return model.predict({n: np.asarray(v, np.float32) for n, v in feeds.items()})
    finally:
        model.close()


def _one(value) -> np.ndarray:
    return np.array([value], np.float32)


def _counter(b: NeuralNetworkBuilder, name: str, start: float = 0.0) -> None:
    b.add_load_constant_nd(f"{name}_start", name, np.array([start], np.float32), [1])


def _increment(b: NeuralNetworkBuilder, name: str) -> None:
    """name = name + 1 (a layer to a new blob, then a copy onto the carried name)."""
    b.add_elementwise(f"{name}_plus", [name], f"{name}_next", mode="ADD", alpha=1.0)
    b.add_copy(f"{name}_carry", f"{name}_next", name)


# -- branch ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("predicate", [1.0, 0.0, -3.0, 1e-7, 2e-6])
def test_branch_takes_if_or_else(rng, predicate):
    n = int(rng.integers(1, 9))
    b = _model({"x": (n,), "c": (1,)}, ["y"])
    b.add_activation("relu", "RELU", "x", "r")
    layer = b.add_branch("choose", "c")
    _nested(layer.branch.ifBranch).add_elementwise("twice", ["r"], "y", mode="MULTIPLY", alpha=2.0)
    _nested(layer.branch.elseBranch).add_elementwise("shift", ["r"], "y", mode="ADD", alpha=10.0)
    x = rng.standard_normal(n).astype(np.float32)
    r = np.maximum(x, 0)
    expected = 2 * r if abs(predicate) > 1e-6 else r + 10  # coremltools: the if branch runs when |c| > 1e-6
    close(_predict(b.spec, {"x": x, "c": _one(predicate)})["y"], expected)


@pytest.mark.parametrize("predicate", [1.0, 0.0])
def test_branch_without_else_leaves_the_blob(rng, predicate):
    """An empty elseBranch: the blob keeps the value written before the branch."""
    n = int(rng.integers(1, 9))
    b = _model({"x": (n,), "c": (1,)}, ["y"])
    b.add_elementwise("before", ["x"], "y", mode="ADD", alpha=1.0)
    layer = b.add_branch("maybe", "c")
    ifb = _nested(layer.branch.ifBranch)
    ifb.add_elementwise("neg", ["x"], "negx", mode="MULTIPLY", alpha=-1.0)
    ifb.add_copy("over", "negx", "y")
    x = rng.standard_normal(n).astype(np.float32)
    close(_predict(b.spec, {"x": x, "c": _one(predicate)})["y"], -x if predicate else x + 1)


def test_branch_in_a_rank5_model(rng):
    """Blobs of the rank-5 mapping ([C] inputs held as [1, 1, C, 1, 1]) pass between segments as they are."""
    n = int(rng.integers(1, 9))
    b = NeuralNetworkBuilder([("x", datatypes.Array(n)), ("c", datatypes.Array(1))], [("y", datatypes.Array(n))])
    b.add_activation("relu", "RELU", "x", "r")
    layer = b.add_branch("choose", "c")
    _nested(layer.branch.ifBranch).add_elementwise("twice", ["r"], "y", mode="MULTIPLY", alpha=2.0)
    _nested(layer.branch.elseBranch).add_elementwise("shift", ["r"], "y", mode="ADD", alpha=10.0)
    x = rng.standard_normal(n).astype(np.float32)
    r = np.maximum(x, 0).astype(np.float64)
    close(_predict(b.spec, {"x": x, "c": _one(1)})["y"], 2 * r)
    close(_predict(b.spec, {"x": x, "c": _one(0)})["y"], r + 10)


# -- loops -------------------------------------------------------------------------------------------------
def _accumulate_body(body: NeuralNetworkBuilder) -> None:
    """acc = acc * 0.5 + x"""
    body.add_elementwise("half", ["acc"], "acc_half", mode="MULTIPLY", alpha=0.5)
    body.add_add_broadcastable("plus_x", ["acc_half", "x"], "acc_next")
    body.add_copy("carry", "acc_next", "acc")


def _accumulate(x, acc, times):
    acc = np.array(acc, np.float64)
    for _ in range(times):
        acc = acc * 0.5 + x
    return acc


@pytest.mark.parametrize("count", [1, 2, 5])
def test_loop_with_max_iterations(rng, count):
    n = int(rng.integers(1, 7))
    b = _model({"x": (n,)}, ["out"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[3.0, 0.0])
    loop = b.add_loop("for", max_iterations=count)
    _accumulate_body(_nested(loop.loop.bodyNetwork))
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    x = rng.standard_normal(n).astype(np.float32)
    close(_predict(b.spec, {"x": x})["out"], _accumulate(x, 3 * x, count))


@pytest.mark.parametrize("count", [0, 1, 4])
def test_loop_count_from_an_input_overrides_max_iterations(rng, count):
    n = int(rng.integers(1, 7))
    b = _model({"x": (n,), "k": (1,)}, ["out"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 1.0])
    loop = b.add_loop("for", input_name="k", max_iterations=9)
    _accumulate_body(_nested(loop.loop.bodyNetwork))
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    x = rng.standard_normal(n).astype(np.float32)
    close(_predict(b.spec, {"x": x, "k": _one(count)})["out"], _accumulate(x, x + 1, count))


def _while_model(n: int, max_iterations: int | None) -> NeuralNetworkBuilder:
    """i = 0; while i < limit: i += 1; acc = acc * 0.5 + x (a condition network comparing a counter)."""
    b = _model({"x": (n,), "limit": (1,)}, ["out", "count"])
    _counter(b, "i")
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 0.0])
    loop = b.add_loop("while", condition="go", max_iterations=max_iterations)
    _nested(loop.loop.conditionNetwork).add_less_than("below", ["i", "limit"], "go")
    body = _nested(loop.loop.bodyNetwork)
    _increment(body, "i")
    _accumulate_body(body)
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    b.add_activation("seen", "LINEAR", "i", "count", params=[1.0, 0.0])
    return b


@pytest.mark.parametrize("limit", [0, 1, 3, 6])
def test_while_loop_with_a_condition_network(rng, limit):
    n = int(rng.integers(1, 7))
    x = rng.standard_normal(n).astype(np.float32)
    got = _predict(_while_model(n, None).spec, {"x": x, "limit": _one(limit)})
    i, acc = 0, x.astype(np.float64)
    while i < limit:
        i += 1
        acc = acc * 0.5 + x
    close(got["out"], acc)
    close(got["count"], [i])


@pytest.mark.parametrize("limit, most", [(2, 5), (6, 3), (4, 4)])
def test_condition_and_count_together(rng, limit, most):
    """Case 3: while conditionVar and loopIterator < maxLoopIterations."""
    n = int(rng.integers(1, 7))
    x = rng.standard_normal(n).astype(np.float32)
    got = _predict(_while_model(n, most).spec, {"x": x, "limit": _one(limit)})
    i, iterator, acc = 0, 0, x.astype(np.float64)
    while i < limit and iterator < most:
        i += 1
        acc = acc * 0.5 + x
        iterator += 1
    close(got["out"], acc)
    close(got["count"], [i])


@pytest.mark.parametrize("stop, skip", [(5, 2), (1, 0), (30, 3), (4, 9)])
def test_break_and_continue_inside_branches_of_the_body(rng, stop, skip):
    """for up to 20 times: i += 1; if i > stop: break; if i < skip: continue; acc += i * x"""
    n = int(rng.integers(1, 7))
    b = _model({"x": (n,), "stop": (1,), "skip": (1,)}, ["out", "count"])
    _counter(b, "i")
    b.add_activation("start", "LINEAR", "x", "acc", params=[0.0, 0.0])
    body = _nested(b.add_loop("loop", max_iterations=20).loop.bodyNetwork)
    _increment(body, "i")
    body.add_greater_than("past", ["i", "stop"], "done")
    _nested(body.add_branch("maybe_break", "done").branch.ifBranch).add_loop_break("break")
    body.add_less_than("early", ["i", "skip"], "skipping")
    _nested(body.add_branch("maybe_continue", "skipping").branch.ifBranch).add_loop_continue("continue")
    body.add_multiply_broadcastable("scaled", ["x", "i"], "ix")
    body.add_add_broadcastable("sum", ["acc", "ix"], "acc_next")
    body.add_copy("carry", "acc_next", "acc")
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    b.add_activation("seen", "LINEAR", "i", "count", params=[1.0, 0.0])
    x = rng.standard_normal(n).astype(np.float32)
    got = _predict(b.spec, {"x": x, "stop": _one(stop), "skip": _one(skip)})
    i, acc = 0, np.zeros(n)
    for _ in range(20):
        i += 1
        if i > stop:
            break
        if i < skip:
            continue
        acc = acc + i * x
    close(got["out"], acc)
    close(got["count"], [i])


@pytest.mark.parametrize("outer, inner", [(2, 3), (3, 0), (1, 1)])
def test_nested_loops(rng, outer, inner):
    """for outer: (for inner: acc = acc * 0.5 + x); acc = acc + 1 -- the inner count from an input."""
    n = int(rng.integers(1, 7))
    b = _model({"x": (n,), "m": (1,)}, ["out"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 0.0])
    outer_body = _nested(b.add_loop("outer", max_iterations=outer).loop.bodyNetwork)
    _accumulate_body(_nested(outer_body.add_loop("inner", input_name="m").loop.bodyNetwork))
    outer_body.add_elementwise("bump", ["acc"], "acc_bumped", mode="ADD", alpha=1.0)
    outer_body.add_copy("carry_outer", "acc_bumped", "acc")
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    x = rng.standard_normal(n).astype(np.float32)
    acc = x.astype(np.float64)
    for _ in range(outer):
        acc = _accumulate(x, acc, inner) + 1
    close(_predict(b.spec, {"x": x, "m": _one(inner)})["out"], acc)


def test_repeated_predicts_and_the_layer_list(rng):
    """The segments' graphs are built once and reused; each predict starts from its own inputs."""
    model = cm.load(_while_model(4, None).spec)
    try:
        for limit in (3, 0, 2):
            x = rng.standard_normal(4).astype(np.float32)
            got = model.predict({"x": x, "limit": _one(limit)})
            close(got["out"], _accumulate(x, x, limit))
        kinds = {info.name: info.lowering for info in model.layers}
        assert kinds["while"].startswith("host:") and not kinds["below"].startswith("(")
        with pytest.raises(CoreMLError, match="control flow"):
            model.graph  # noqa: B018
    finally:
        model.close()


# -- refusals ----------------------------------------------------------------------------------------------
def test_a_loop_without_a_condition_is_refused():
    b = _model({"x": (2,)}, ["x2"])
    b.add_activation("copy", "LINEAR", "x", "x2", params=[1.0, 0.0])
    _nested(b.add_loop("forever").loop.bodyNetwork).add_loop_break("stop")
    with pytest.raises(CoreMLError, match=r"'forever'.*no condition"):
        cm.load(b.spec)


def test_break_outside_a_loop_body_is_refused():
    b = _model({"x": (2,), "c": (1,)}, ["y"])
    b.add_activation("copy", "LINEAR", "x", "y", params=[1.0, 0.0])
    _nested(b.add_branch("choose", "c").branch.ifBranch).add_loop_break("stray")
    with pytest.raises(CoreMLError, match=r"'stray'.*outside every loop"):
        cm.load(b.spec)


def test_a_condition_network_without_its_variable_is_refused():
    b = _model({"x": (2,)}, ["x"])
    loop = b.add_loop("while", condition="go")
    _nested(loop.loop.conditionNetwork).add_greater_than("pos", ["x"], "other")
    with pytest.raises(CoreMLError, match=r"'while'.*no blob 'go'"):
        cm.load(b.spec)


def test_a_body_changing_a_carried_shape_is_refused(rng):
    b = _model({"x": (3,)}, ["out"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 0.0])
    body = _nested(b.add_loop("grow", max_iterations=3).loop.bodyNetwork)
    body.add_concat_nd("longer", ["acc", "x"], "acc_longer", axis=0)
    body.add_copy("carry", "acc_longer", "acc")
    b.add_activation("last", "LINEAR", "acc", "out", params=[1.0, 0.0])
    with pytest.raises(CoreMLError, match=r"'grow'.*'acc' changes shape from \[3\] to \[6\]"):
        _predict(b.spec, {"x": rng.standard_normal(3)})


def test_a_predicate_of_several_values_is_refused(rng):
    b = _model({"x": (3,)}, ["y"])
    b.add_activation("copy", "LINEAR", "x", "y", params=[1.0, 0.0])
    _nested(b.add_branch("choose", "x").branch.ifBranch).add_activation("neg", "LINEAR", "x", "z", params=[-1.0, 0])
    with pytest.raises(CoreMLError, match=r"'choose'.*'x' has shape \[3\]"):
        _predict(b.spec, {"x": rng.standard_normal(3)})


def test_a_blob_from_a_branch_not_taken_is_a_clear_error(rng):
    b = _model({"x": (3,), "c": (1,)}, ["y"])
    _nested(b.add_branch("choose", "c").branch.ifBranch).add_activation("made", "LINEAR", "x", "z", params=[2.0, 0])
    b.add_activation("use", "LINEAR", "z", "y", params=[1.0, 0.0])
    x = rng.standard_normal(3).astype(np.float32)
    close(_predict(b.spec, {"x": x, "c": _one(1)})["y"], 2 * x)
    with pytest.raises(CoreMLError, match=r"'use'.*'z' has not been produced"):
        _predict(b.spec, {"x": x, "c": _one(0)})


@pytest.mark.parametrize("count", [-1.0, 2.5, float("nan")])
def test_a_bad_count_is_refused(rng, count):
    b = _model({"x": (3,), "k": (1,)}, ["acc"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 0.0])
    _accumulate_body(_nested(b.add_loop("for", input_name="k").loop.bodyNetwork))
    with pytest.raises(CoreMLError, match=r"'for'.*non-negative integer"):
        _predict(b.spec, {"x": rng.standard_normal(3), "k": _one(count)})


def test_predicts_from_several_threads(rng):
    """The per-model lock covers the whole program: each call sees only its own blobs."""
    from concurrent.futures import ThreadPoolExecutor
    model = cm.load(_while_model(5, None).spec)
    cases = [(rng.standard_normal(5).astype(np.float32), int(rng.integers(0, 6))) for _ in range(24)]
    try:
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda case: model.predict({"x": case[0], "limit": _one(case[1])}), cases))
    finally:
        model.close()
    for (x, limit), out in zip(cases, got):
        close(out["out"], _accumulate(x, x, limit))
        close(out["count"], [limit])


def test_a_constant_reaches_a_later_segment_at_load(rng):
    """topK's K from a constant made before a branch: read at load by the branch's graph, as in one graph."""
    n = int(rng.integers(3, 9))
    b = _model({"x": (n,), "c": (1,)}, ["top"])
    b.add_load_constant_nd("k", "k", np.array([2.0], np.float32), [1])
    b.add_activation("start", "LINEAR", "x", "top", params=[0.0, 0.0])
    ifb = _nested(b.add_branch("choose", "c").branch.ifBranch)
    ifb.add_topk("best", ["x", "k"], ["best_values", "best_indices"], axis=0)
    ifb.add_copy("keep", "best_values", "top")
    x = rng.standard_normal(n).astype(np.float32)
    close(_predict(b.spec, {"x": x, "c": _one(1)})["top"], sorted(x.tolist(), reverse=True)[:2])
    close(_predict(b.spec, {"x": x, "c": _one(0)})["top"], np.zeros(n))


@pytest.mark.parametrize("change, pattern", [
    (lambda layer: layer.input.extend(["x", "x"]), r"'for'.*2 input\(s\) and 0 output\(s\); this layer type takes 0 or 1"),
    (lambda layer: layer.output.append("y"), r"'for'.*1 output\(s\)"),
])
def test_a_loop_with_outputs_or_two_inputs_is_refused(change, pattern):
    b = _model({"x": (3,)}, ["acc"])
    b.add_activation("start", "LINEAR", "x", "acc", params=[1.0, 0.0])
    loop = b.add_loop("for", max_iterations=2)
    _accumulate_body(_nested(loop.loop.bodyNetwork))
    change(loop)
    with pytest.raises(CoreMLError, match=pattern):
        cm.load(b.spec)


def test_a_bad_layer_inside_a_body_is_refused_at_load():
    """Nested layers get the same checks as top-level ones (here a pooling kernel of 0)."""
    b = _model({"x": (1, 4, 4)}, ["x"])
    body = _nested(b.add_loop("for", max_iterations=2).loop.bodyNetwork)
    body.add_pooling("pool", 0, 2, 1, 1, "MAX", "VALID", "x", "pooled")
    with pytest.raises(CoreMLError, match=r"'pool'"):
        cm.load(b.spec)


def test_timings_cover_every_segment(rng):
    model = cm.load(_while_model(4, None).spec)
    try:
        feeds = {"x": rng.standard_normal(4).astype(np.float32), "limit": _one(3)}
        model.predict(feeds)
        model.reset_timings()
        model.predict(feeds, bench=True)
        layers = {layer for layer, *_ in model.timings()}
    finally:
        model.close()
    assert {"below", "half", "plus_x", "last"} <= layers  # condition network, body, after the loop
