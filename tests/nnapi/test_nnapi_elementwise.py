"""ADD, MUL, the element-wise functions, DEQUANTIZE and the depth normalizations."""
import math

import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    Q8,
    Out,
    Tensor,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
    dequantize,
    f32,
    i32,
    quantize,
    random_q8,
    run,
)
from nnapi_reference import activation, sigmoid, softmax

from openvx_nn import nnapi

OP = nnapi.OperationType
SHAPES = [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((3,), (2, 3)), ((2, 3), (2, 3))]


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("op", [OP.ADD, OP.MUL])
@pytest.mark.parametrize("shapes", SHAPES)
def test_add_and_mul_broadcast_with_fused_activations(kind, op, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]) + int(op))
    act = int(rng.integers(0, 4))
    a_shape, b_shape = shapes
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    if kind == F32T:
        a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
        want = activation(a.astype(np.float64) + b if op == OP.ADD else a.astype(np.float64) * b, act)
        (got,) = run(op, [Tensor(a), Tensor(b), i32(act)], [Out(F32T, out_shape)])
    else:
        qa, qb = random_q8(rng, a_shape), random_q8(rng, b_shape)
        sa, sb, za, zb = 0.05, 0.03, 100, 140
        ra, rb = dequantize(qa, sa, za), dequantize(qb, sb, zb)
        real = activation(ra + rb if op == OP.ADD else ra * rb, act)
        so, zo = 0.06 if op == OP.ADD else 0.05, 128
        want = quantize(real, so, zo)
        (got,) = run(op, [Tensor(qa, sa, za), Tensor(qb, sb, zb), i32(act)], [Out(Q8, out_shape, so, zo)])
    assert_close(got, want, kind)


UNARY = {OP.FLOOR: np.floor, OP.RELU: lambda v: np.maximum(v, 0), OP.RELU1: lambda v: np.clip(v, -1, 1),
         OP.RELU6: lambda v: np.clip(v, 0, 6), OP.LOGISTIC: sigmoid, OP.TANH: np.tanh}


@pytest.mark.parametrize("op", list(UNARY))
def test_elementwise_functions_float32(op):
    rng = np.random.default_rng(int(op))
    x = (rng.standard_normal((2, 3, 5)) * 4).astype(np.float32)
    (got,) = run(op, [Tensor(x)], [Out(F32T, x.shape)])
    assert_close(got, UNARY[op](x.astype(np.float64)), F32T)


@pytest.mark.parametrize("op", [OP.RELU, OP.RELU1, OP.RELU6, OP.LOGISTIC])
def test_elementwise_functions_quant8(op):
    q = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    scale, zp = 0.05, 120
    so, zo = (1 / 256, 0) if op == OP.LOGISTIC else (scale, zp)
    want = quantize(UNARY[op](dequantize(q, scale, zp)), so, zo)
    (got,) = run(op, [Tensor(q, scale, zp)], [Out(Q8, q.shape, so, zo)])
    assert_close(got, want, Q8)


def test_dequantize_gives_exact_reals():
    q = np.arange(256, dtype=np.uint8).reshape(4, 64)
    (got,) = run(OP.DEQUANTIZE, [Tensor(q, 0.125, 3)], [Out(F32T, q.shape)])
    assert_close(got, (q.astype(np.float64) - 3) * 0.125, F32T)


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("shape,beta", [((3, 7), 1.0), ((3, 7), 0.5), ((1, 2, 3, 6), 1.5)])
def test_softmax_with_beta(kind, shape, beta):
    rng = np.random.default_rng(len(shape))
    if kind == F32T:
        x = rng.standard_normal(shape).astype(np.float32)
        (got,) = run(OP.SOFTMAX, [Tensor(x), f32(beta)], [Out(F32T, shape)])
        assert_close(got, softmax(x.astype(np.float64), beta), F32T)
    else:
        q = random_q8(rng, shape)
        (got,) = run(OP.SOFTMAX, [Tensor(q, 0.1, 128), f32(beta)], [Out(Q8, shape, 1 / 256, 0)])
        assert_close(got, quantize(softmax(dequantize(q, 0.1, 128), beta), 1 / 256, 0), Q8)


def test_l2_normalization_along_depth():
    x = np.random.default_rng(5).standard_normal((1, 2, 3, 8)).astype(np.float32)
    x[0, 0, 0] = 0  # an all-zero vector stays zero
    (got,) = run(OP.L2_NORMALIZATION, [Tensor(x)], [Out(F32T, x.shape)])
    want = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        v = x[idx].astype(np.float64)
        norm = math.sqrt(sum(e * e for e in v))
        want[idx] = v / norm if norm else 0
    assert_close(got, want, F32T)


def test_local_response_normalization_window_cut_at_edges():
    x = np.random.default_rng(6).standard_normal((1, 2, 2, 9)).astype(np.float32)
    radius, bias, alpha, beta = 2, 1.5, 0.3, 0.75
    (got,) = run(OP.LOCAL_RESPONSE_NORMALIZATION, [Tensor(x), i32(radius), f32(bias), f32(alpha), f32(beta)],
                 [Out(F32T, x.shape)])
    want = np.zeros(x.shape)
    for idx in np.ndindex(x.shape[:-1]):
        v = x[idx].astype(np.float64)
        for d in range(9):
            s = sum(v[j] ** 2 for j in range(max(0, d - radius), min(9, d + radius + 1)))
            want[idx + (d,)] = v[d] / (np.float32(bias) + np.float32(alpha) * s) ** np.float32(beta)
    assert_close(got, want, F32T)
