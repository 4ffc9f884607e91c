"""float32 layers bound once per node (weights packed at bind time): new weights are seen, repeated and
concurrent executions stay right."""
import threading

import numpy as np
from nnapi_harness import (
    F32T,
    Out,
    Tensor,
    assert_close,
    build,
    collect_garbage,  # noqa: F401 - an autouse fixture
    i32,
)
from nnapi_reference import activation, conv2d, depthwise

from openvx_nn import nnapi

OP = nnapi.OperationType


def _bounds(x, w, b, pads, strides, act):
    """The reference and docs/nnapi.md's float32 bound: (n + 3) * 2**-24 * the sum of |products| (n of
    them, and the bias)."""
    want = activation(conv2d(x.astype(np.float64), w, b, pads, strides), act)
    span = conv2d(np.abs(x.astype(np.float64)), np.abs(w), np.abs(b), pads, strides)
    return want, (w[0].size + 3) * 2.0 ** -24 * span


def _execute(compilation, feeds, shape):
    e = nnapi.Execution(compilation)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    out = np.zeros(shape, np.float32)
    e.set_output(0, out)
    e.compute()
    return out


def _compiled(op, inputs, shape):
    m, feeds, _ = build(op, inputs, [Out(F32T, shape)])
    c = nnapi.Compilation(m)
    c.finish()
    return c, feeds


def test_a_filter_given_as_a_model_input_is_packed_again_for_each_execution():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 7, 6, 5)).astype(np.float32)
    filters = [rng.standard_normal((9, 3, 3, 5)).astype(np.float32) for _ in range(3)]
    b = rng.standard_normal(9).astype(np.float32)
    pads, strides = (1, 0, 2, 1), (2, 1)
    inputs = [Tensor(x), Tensor(filters[0]), Tensor(b, const=True)] + [i32(p) for p in pads] + \
        [i32(strides[0]), i32(strides[1]), i32(3)]
    shape = activation(conv2d(x.astype(np.float64), filters[0], b, pads, strides), 3).shape
    c, _ = _compiled(OP.CONV_2D, inputs, shape)
    for w in filters + filters[:1]:
        want, bound = _bounds(x, w, b, pads, strides, 3)
        assert np.all(np.abs(_execute(c, [x, w], shape) - want) <= bound)
    c.release()


def test_a_depthwise_filter_given_as_a_model_input_is_packed_again_for_each_execution():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 6, 6, 8)).astype(np.float32)
    filters = [rng.standard_normal((1, 3, 3, 8)).astype(np.float32) for _ in range(2)]
    b = rng.standard_normal(8).astype(np.float32)
    pads = (1, 1, 1, 1)
    inputs = [Tensor(x), Tensor(filters[0]), Tensor(b, const=True)] + [i32(p) for p in pads] + \
        [i32(1), i32(1), i32(1), i32(0)]
    shape = (2, 6, 6, 8)
    c, _ = _compiled(OP.DEPTHWISE_CONV_2D, inputs, shape)
    for w in filters + filters[:1]:
        got = _execute(c, [x, w], shape)
        assert_close(got, depthwise(x.astype(np.float64), w, b, pads, (1, 1), 1), F32T)
    c.release()


def test_two_compilations_of_one_model_run_at_once_from_two_threads():
    rng = np.random.default_rng(8)
    w = rng.standard_normal((24, 3, 3, 16)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    pads = (1, 1, 1, 1)
    x0 = rng.standard_normal((1, 14, 14, 16)).astype(np.float32)
    inputs = [Tensor(x0), Tensor(w, const=True), Tensor(b, const=True)] + [i32(p) for p in pads] + \
        [i32(1), i32(1), i32(1)]
    shape = (1, 14, 14, 24)
    compilations = [_compiled(OP.CONV_2D, inputs, shape)[0] for _ in range(2)]
    images = [rng.standard_normal((1, 14, 14, 16)).astype(np.float32) for _ in range(2)]
    results: dict[int, list] = {0: [], 1: []}

    def work(k):
        for _ in range(6):
            results[k].append(_execute(compilations[k], [images[k]], shape))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for k in range(2):
        want, bound = _bounds(images[k], w, b, pads, (1, 1), 1)
        assert len(results[k]) == 6
        for got in results[k]:
            assert np.all(np.abs(got - want) <= bound)
    for c in compilations:
        c.release()


def _skip_chain(rng):
    """x -> conv 1x1 (RELU) t1 -> depthwise 3x3 SAME t2 -> conv 1x1 t3 -> ADD(t1, t3) t4 -> depthwise 3x3 SAME
    (RELU6) y: t1 is read two nodes after t2 is made, so their bytes may not be shared, while t4 may take t2's."""
    m = nnapi.Model()
    f32t = nnapi.OperandType.TENSOR_FLOAT32

    def operand(shape, value=None):
        k = m.add_operand(f32t, list(shape))
        if value is not None:
            m.set_operand_value(k, value)
        return k

    def scalar(v):
        k = m.add_operand(nnapi.OperandType.INT32)
        m.set_operand_value(k, v)
        return k
    weights = {"w1": rng.standard_normal((8, 1, 1, 4)), "b1": rng.standard_normal(8),
               "w2": rng.standard_normal((1, 3, 3, 8)), "b2": rng.standard_normal(8),
               "w3": rng.standard_normal((8, 1, 1, 8)), "b3": rng.standard_normal(8),
               "w5": rng.standard_normal((1, 3, 3, 8)), "b5": rng.standard_normal(8)}
    weights = {name: w.astype(np.float32) for name, w in weights.items()}
    x = operand((1, 6, 7, 4))
    t1, t2, t3, t4 = (operand((1, 6, 7, 8)) for _ in range(4))
    y = operand((1, 6, 7, 8))
    same = [scalar(1)] * 4 + [scalar(1), scalar(1)]
    valid = [scalar(0)] * 4 + [scalar(1), scalar(1)]
    w = {name: operand(v.shape, v) for name, v in weights.items()}
    m.add_operation(OP.CONV_2D, [x, w["w1"], w["b1"], *valid, scalar(1)], [t1])
    m.add_operation(OP.DEPTHWISE_CONV_2D, [t1, w["w2"], w["b2"], *same, scalar(1), scalar(0)], [t2])
    m.add_operation(OP.CONV_2D, [t2, w["w3"], w["b3"], *valid, scalar(0)], [t3])
    m.add_operation(OP.ADD, [t1, t3, scalar(0)], [t4])
    m.add_operation(OP.DEPTHWISE_CONV_2D, [t4, w["w5"], w["b5"], *same, scalar(1), scalar(3)], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m, weights, (t1, t2, t3, t4)


def _skip_chain_reference(x, w):
    same, valid, one = (1, 1, 1, 1), (0, 0, 0, 0), (1, 1)
    t1 = activation(conv2d(x, w["w1"], w["b1"], valid, one), 1)
    t2 = depthwise(t1, w["w2"], w["b2"], same, one, 1)
    t4 = t1 + conv2d(t2, w["w3"], w["b3"], valid, one)
    return activation(depthwise(t4, w["w5"], w["b5"], same, one, 1), 3)


def test_temporaries_share_the_graph_arena_and_every_execution_stays_right(monkeypatch):
    # The plan's passes fold the ADD into the convolution that reads t2 (it then writes t4 while reading t2, so
    # no two temporaries could share bytes); the arena's reuse is what this test is about.
    monkeypatch.setenv("OPENVX_NN_REWRITES", "0")
    rng = np.random.default_rng(11)
    m, weights, temporaries = _skip_chain(rng)
    c = nnapi.Compilation(m)
    c.finish()
    lowered = c.prepared.lowered
    memory = lowered.graph.plan.memory
    for k in temporaries:
        tensor = lowered.builder.tensors[k]
        assert tensor.virtual and id(tensor) in memory.offsets, f"operand {k} is not in the memory plan"
    assert memory.arena_bytes < memory.virtual_bytes  # t4 reuses the bytes of t2
    for _ in range(3):  # each run over what the last one left in the arena
        x = rng.standard_normal((1, 6, 7, 4)).astype(np.float32)
        got = _execute(c, [x], (1, 6, 7, 8))
        want = _skip_chain_reference(x.astype(np.float64), {k: v.astype(np.float64) for k, v in weights.items()})
        assert_close(got, want, "float")
    c.release()
