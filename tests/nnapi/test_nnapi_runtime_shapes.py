"""Dimensions and parameters an execution gives: a CNN compiled with unknown batch and spatial sizes run
at three sizes (one graph per shape, reused), RESHAPE and a fused activation given as model inputs;
LOCAL_RESPONSE_NORMALIZATION with bias 0; CONCATENATION of more inputs than one kernel node joins."""
import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    I32T,
    Q8,
    Out,
    Tensor,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
    f32,
    i32,
    random_q8,
    run,
)
from nnapi_reference import conv2d, pool, same_padding

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType


def _scalar(m, value):
    k = m.add_operand(T.INT32)
    m.set_operand_value(k, value)
    return k


def _cnn(weights, bias):
    """input [0, 0, 0, C] -> CONV_2D 3x3 SAME RELU -> MAX_POOL_2D 2x2 stride 2 VALID -> [0, 0, 0, O]."""
    m = nnapi.Model()
    x = m.add_operand(F32T, [0, 0, 0, weights.shape[3]])
    w = m.add_operand(F32T, list(weights.shape))
    b = m.add_operand(F32T, [weights.shape[0]])
    m.set_operand_value(w, weights)
    m.set_operand_value(b, bias)
    conv = m.add_operand(F32T, [0, 0, 0, weights.shape[0]])
    m.add_operation(OP.CONV_2D, [x, w, b] + [_scalar(m, v) for v in (1, 1, 1, 1)], [conv])
    y = m.add_operand(F32T, [0, 0, 0, 0])
    m.add_operation(OP.MAX_POOL_2D, [conv] + [_scalar(m, v) for v in (2, 2, 2, 2, 2, 0)], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    return c


def test_cnn_of_unknown_batch_and_spatial_sizes_runs_at_three_sizes_one_graph_each():
    rng = np.random.default_rng(21)
    weights = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    c = _cnn(weights, bias)
    graphs = {}
    for n, h, w in [(1, 5, 7), (2, 8, 6), (3, 4, 4), (1, 5, 7)]:
        x = rng.standard_normal((n, h, w, 2)).astype(np.float32)
        pads = same_padding(w, 3, 1) + same_padding(h, 3, 1)
        conv = np.maximum(conv2d(x.astype(np.float64), weights, bias, pads, (1, 1)), 0)
        want = pool(conv, "max", (0, 0, 0, 0), (2, 2), (2, 2))
        e = nnapi.Execution(c)
        e.set_input(0, x)
        got = np.zeros(want.shape, np.float32)
        e.set_output(0, got)
        e.compute()
        assert_close(got, want, F32T)
        graphs.setdefault((n, h, w), c.prepared.graph)
        assert c.prepared.graph is graphs[(n, h, w)]  # the fourth run reuses the first size's graph
    assert len({id(g) for g in graphs.values()}) == 3


def test_a_given_shape_must_agree_with_the_known_dimensions():
    c = _cnn(np.ones((1, 3, 3, 2), np.float32), np.zeros(1, np.float32))
    for shape, pattern in [((1, 4, 4, 3), r"given dimensions \[1, 4, 4, 3\]; the model declares \[0, 0, 0, 2\]"),
                           ((4, 4, 2), r"given dimensions \[4, 4, 2\]")]:
        e = nnapi.Execution(c)
        e.set_input(0, np.zeros(shape, np.float32))
        e.set_output(0, np.zeros((1, 2, 2, 1), np.float32))
        with pytest.raises(nnapi.NNAPIError, match=pattern) as err:
            e.compute()
        assert err.value.status == nnapi.ErrorStatus.INVALID_ARGUMENT


def test_an_output_buffer_too_small_for_the_shape_the_inputs_give():
    c = _cnn(np.ones((1, 3, 3, 2), np.float32), np.zeros(1, np.float32))
    e = nnapi.Execution(c)
    e.set_input(0, np.zeros((2, 6, 6, 2), np.float32))
    e.set_output(0, np.zeros((1, 3, 3, 1), np.float32))
    with pytest.raises(nnapi.NNAPIError, match="it needs 72") as err:
        e.compute()
    assert err.value.status == nnapi.ErrorStatus.OUTPUT_INSUFFICIENT_SIZE


def _reshape_model(kind, q):
    m = nnapi.Model()
    x = m.add_operand(kind, [2, 3, 4], *q)
    shape = m.add_operand(I32T, [0])
    y = m.add_operand(kind, [0, 0], *q)
    m.add_operation(OP.RESHAPE, [x, shape], [y])
    m.identify_inputs_and_outputs([x, shape], [y])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    return c


@pytest.mark.parametrize("kind", [F32T, Q8])
def test_reshape_with_its_shape_given_at_execution(kind):
    rng = np.random.default_rng(22)
    q = (0.5, 3) if kind == Q8 else (0.0, 0)
    c = _reshape_model(kind, q)
    graphs = []
    for wanted, result in [([4, 6], (4, 6)), ([-1, 2], (12, 2)), ([4, 6], (4, 6)), ([3, -1], (3, 8))]:
        x = rng.standard_normal((2, 3, 4)).astype(np.float32) if kind == F32T else random_q8(rng, (2, 3, 4))
        e = nnapi.Execution(c)
        e.set_input(0, x)
        e.set_input(1, np.array(wanted, np.int32))
        got = np.zeros(result, x.dtype)
        e.set_output(0, got)
        e.compute()
        # the seed: the output holds the input's values in the same order, in the given shape
        np.testing.assert_array_equal(got.reshape(-1), x.reshape(-1))
        graphs.append(c.prepared.graph)
    assert graphs[2] is graphs[0] and graphs[1] is not graphs[0]


def test_a_fused_activation_given_at_execution():
    m = nnapi.Model()
    a = m.add_operand(F32T, [3])
    act = m.add_operand(T.INT32)
    out = m.add_operand(F32T, [3])
    m.add_operation(OP.ADD, [a, a, act], [out])
    m.identify_inputs_and_outputs([a, act], [out])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    x = np.array([-2.0, 0.25, 4.0], np.float32)
    for code, want in [(0, 2 * x), (1, np.maximum(2 * x, 0)), (2, np.clip(2 * x, -1, 1)), (3, np.clip(2 * x, 0, 6))]:
        e = nnapi.Execution(c)
        e.set_input(0, x)
        e.set_input(1, np.int32(code))
        got = np.zeros(3, np.float32)
        e.set_output(0, got)
        e.compute()
        assert_close(got, want, F32T)


def test_a_parameter_written_by_an_operation_is_refused():
    m = nnapi.Model()
    a = m.add_operand(F32T, [4])
    lookups, keys, values = (m.add_operand(I32T, [2]) for _ in range(3))
    for k, v in ((lookups, [1, 2]), (keys, [1, 2]), (values, [2, 2])):
        m.set_operand_value(k, np.array(v, np.int32))
    made, hits = m.add_operand(I32T, [2]), m.add_operand(Q8, [2], 1.0, 0)
    out = m.add_operand(F32T, [2, 2])
    m.add_operation(OP.HASHTABLE_LOOKUP, [lookups, keys, values], [made, hits])
    m.add_operation(OP.RESHAPE, [a, made], [out])
    m.identify_inputs_and_outputs([a], [out])
    m.finish()
    with pytest.raises(nnapi.NNAPIError, match=r"operation 1 \(RESHAPE\): input 1 \(TENSOR_INT32\) must be a "
                                                r"constant or a model input"):
        nnapi.Compilation(m).finish()


def test_local_response_normalization_takes_bias_zero():
    """The seed: sqr_sum = sum(input[d - r .. d + r] ** 2); output = input / (bias + alpha * sqr_sum) ** beta."""
    x = np.random.default_rng(23).uniform(0.5, 2.0, (1, 1, 2, 5)).astype(np.float32)
    radius, alpha, beta = 1, 0.5, 0.75
    (got,) = run(OP.LOCAL_RESPONSE_NORMALIZATION, [Tensor(x), i32(radius), f32(0.0), f32(alpha), f32(beta)],
                 [Out(F32T, x.shape)])
    want = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        d = idx[-1]
        window = x[idx[:-1]][max(0, d - radius):d + radius + 1].astype(np.float64)
        want[idx] = x[idx] / (np.float32(alpha) * float(np.sum(window ** 2))) ** np.float32(beta)
    assert_close(got, want, F32T)


@pytest.mark.parametrize("kind", [F32T, Q8])
def test_concatenation_of_forty_inputs(kind):
    rng = np.random.default_rng(24)
    extents = rng.integers(1, 4, size=40)
    xs = [rng.standard_normal((2, int(e))).astype(np.float32) if kind == F32T else random_q8(rng, (2, int(e)))
          for e in extents]
    if kind == Q8:  # every input quantized its own way: each is rescaled to the output's quantization
        quant = [(float(rng.uniform(0.05, 0.2)), int(rng.integers(0, 256))) for _ in xs]
        inputs = [Tensor(x, s, z) for x, (s, z) in zip(xs, quant)]
        real = np.concatenate([(x.astype(np.float64) - z) * s for x, (s, z) in zip(xs, quant)], axis=1)
        want = np.clip(np.round(real / 0.1) + 128, 0, 255)
        out = Out(Q8, want.shape, 0.1, 128)
    else:
        inputs = [Tensor(x) for x in xs]
        want = np.concatenate(xs, axis=1)
        out = Out(F32T, want.shape)
    (got,) = run(OP.CONCATENATION, inputs + [i32(1)], [out])
    assert_close(got, want, kind)
