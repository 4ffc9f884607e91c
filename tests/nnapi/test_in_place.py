"""A model input read in place (``core/in_place.py``): the native run reads the caller's array, the input tensor is not
written, the results are the reference's; where a node does not read the tensor through its block (a filter packed
at bind) or the run is not native, the input is copied as before."""
import nnapi_reference as ref
import numpy as np
import pytest
from nnapi_harness import F32T, Out, Tensor, build, collect_garbage, i32  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.core import native_plan
from openvx_nn.core.in_place import InPlace, process_fed

OP = nnapi.OperationType


def _compiled(model):
    c = nnapi.Compilation(model)
    c.finish()
    return c


def _compute(c, x, out) -> None:
    e = nnapi.Execution(c)
    e.set_input(0, x)
    e.set_output(0, out)
    e.compute()


def _conv_model(rng, filter_is_input: bool = False):
    x = rng.standard_normal((1, 9, 8, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    m, _, _ = build(OP.CONV_2D, [Tensor(x), Tensor(w, const=not filter_is_input), Tensor(b, const=True), i32(1),
                                 i32(1), i32(1), i32(1), i32(1), i32(1), i32(0)], [Out(F32T, (1, 9, 8, 4))])
    return m, x, w, b


def _lowered(c):
    return c.prepared.plans.last


def _bound(seed: int):
    """(compilation, input, lowered graph, input tensor) of a conv model run twice: bound, its words found."""
    m, x, _, _ = _conv_model(np.random.default_rng(seed))
    c = _compiled(m)
    for _ in range(2):
        _compute(c, x, np.zeros((1, 9, 8, 4), np.float32))
    lowered = _lowered(c)
    return c, x, lowered, lowered._inputs[0][1]


def test_a_model_input_is_read_in_place_and_gives_the_references_values():
    rng = np.random.default_rng(41)
    m, x, w, b = _conv_model(rng)
    c = _compiled(m)
    out = np.zeros((1, 9, 8, 4), np.float32)
    _compute(c, x, out)  # binds the plan
    _compute(c, x, out)  # finds the words pointing into the input
    lowered = _lowered(c)
    tensor = lowered._inputs[0][1]
    assert lowered._in_place is not None and lowered._in_place.covers(tensor)
    for _ in range(3):
        x = rng.standard_normal(x.shape).astype(np.float32)
        tensor.array[...] = np.nan  # a copy would overwrite it; a read of it would make NaNs
        _compute(c, x, out)
        assert np.isnan(tensor.array).all()
        np.testing.assert_allclose(out, ref.conv2d(x, w, b, (1, 1, 1, 1), (1, 1)), rtol=1e-5, atol=1e-5)
    x = rng.standard_normal(x.shape).astype(np.float32)
    x.flags.writeable = False  # read in place too (its address found another way)
    tensor.array[...] = np.nan
    _compute(c, x, out)
    assert np.isnan(tensor.array).all()
    np.testing.assert_allclose(out, ref.conv2d(x, w, b, (1, 1, 1, 1), (1, 1)), rtol=1e-5, atol=1e-5)
    c.release()


def test_an_input_read_as_a_filter_is_copied():
    # CONV_2D's filter given at run time: a kernel packs it at bind; no block points into it, so it is copied
    rng = np.random.default_rng(42)
    m, x, w, b = _conv_model(rng, filter_is_input=True)
    c = _compiled(m)
    for _ in range(2):
        x = rng.standard_normal(x.shape).astype(np.float32)
        w = rng.standard_normal(w.shape).astype(np.float32)
        e = nnapi.Execution(c)
        e.set_input(0, x)
        e.set_input(1, w)
        out = np.zeros((1, 9, 8, 4), np.float32)
        e.set_output(0, out)
        e.compute()
        np.testing.assert_allclose(out, ref.conv2d(x, w, b, (1, 1, 1, 1), (1, 1)), rtol=1e-5, atol=1e-5)
    lowered = _lowered(c)
    filters = [slot[1] for slot in lowered._inputs if slot is not None and slot[1].array.ndim == 4
               and slot[1].array.T.shape == w.shape]
    assert filters and (lowered._in_place is None or not lowered._in_place.covers(filters[0]))
    c.release()


def test_a_run_that_is_not_native_moves_no_word_and_the_words_come_back_after_a_failure():
    c, x, lowered, tensor = _bound(43)
    in_place = lowered._in_place
    blocks = [call.native.block.copy() for call in lowered.graph.plan.calls]
    seen = []

    def look() -> int:
        seen.append([call.native.block.copy() for call in lowered.graph.plan.calls])
        return native_plan.NOT_NATIVE
    assert in_place.run([(tensor, x)], look) == native_plan.NOT_NATIVE
    moved = [not np.array_equal(a, b) for a, b in zip(seen[0], blocks)]
    assert any(moved)  # during the run, some word pointed into x
    assert all(np.array_equal(call.native.block, a) for call, a in zip(lowered.graph.plan.calls, blocks))

    def fail() -> int:
        raise RuntimeError("stop")
    with pytest.raises(RuntimeError):
        in_place.run([(tensor, x)], fail)
    assert all(np.array_equal(call.native.block, a) for call, a in zip(lowered.graph.plan.calls, blocks))
    with pytest.raises(ValueError, match="dtype, shape and C order"):
        in_place.run([(tensor, np.asfortranarray(x[0]))], fail)
    c.release()


def test_a_graph_without_a_native_plan_reads_nothing_in_place():
    class Plan:
        native = None

    class Graph:
        plan = Plan()
    assert InPlace.of(Graph(), []) is None


def test_an_input_the_caller_reads_after_the_run_is_not_read_in_place():
    # NNAPI refuses a model input that is also an output; a CoreML model may hand an input blob back, read from
    # the tensor after the run, which must then hold the values
    c, _, lowered, tensor = _bound(44)
    assert InPlace.of(lowered.graph, [tensor]).covers(tensor)
    assert InPlace.of(lowered.graph, [tensor], [tensor]) is None
    c.release()


def test_an_array_that_does_not_fit_is_copied():
    # another order (or dtype, or shape) than the tensor's: the copy path, not an error
    c, x, lowered, tensor = _bound(45)
    copied = []

    def copy(t, array):
        copied.append(t)
        t.array.T[...] = array
    fortran = np.asfortranarray(x)
    assert not lowered._in_place.fits(tensor, fortran) and lowered._in_place.fits(tensor, x)
    assert process_fed(lowered.graph, lowered._in_place, [(tensor, fortran)], copy) == 0
    assert copied == [tensor] and np.array_equal(tensor.array.T, x)
    c.release()
