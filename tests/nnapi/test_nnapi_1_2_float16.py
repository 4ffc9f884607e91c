"""The TENSOR_FLOAT16 forms of NNAPI 1.2's operations (API level 29): each is computed from the exact values of its
float16 inputs (in float64) and rounded once to float16, so it equals the float32 path's reference rounded to
float16 (to one float16 step where the reference is a transcendental function: NumPy's and the header's
definitions may differ in the last float64 bit). The references are the other 1.2 test modules' plain-loop ones."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import B8, F16T, I32T, Q8, Out, Tensor, boolean, collect_garbage, f16, i32, run  # noqa: F401
from test_nnapi_1_2_booleans import COMPARE, REDUCTIONS, elementwise_reference, nearest_reference, reduce_reference
from test_nnapi_1_2_elementwise import FUNCTIONS, RULES, reference_binary

from openvx_nn import nnapi

OP = nnapi.OperationType


def half(rng, shape, scale: float = 2.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def ints(values) -> Tensor:
    return Tensor(np.asarray(values, np.int32), const=True)


def assert_half(got: np.ndarray, want: np.ndarray, steps: int = 0) -> None:
    """``got`` (float16) is ``want`` (float64) rounded once to float16, or within ``steps`` float16 steps."""
    assert got.dtype == np.float16
    rounded = np.asarray(want, np.float64).astype(np.float16)
    if steps == 0:
        np.testing.assert_array_equal(got, rounded)
    else:
        spacing = np.spacing(np.abs(rounded).astype(np.float16)).astype(np.float64)
        diff = np.abs(got.astype(np.float64) - rounded.astype(np.float64))
        finite = np.isfinite(rounded)
        assert np.array_equal(np.isnan(got), np.isnan(rounded))
        assert (diff[finite & ~np.isnan(got)] <= steps * spacing[finite & ~np.isnan(got)]).all()


@pytest.mark.parametrize("op", list(FUNCTIONS), ids=lambda op: OP(op).name)
def test_float16_functions(op):
    rng = np.random.default_rng(int(op))
    x = half(rng, (3, 4, 5))
    if op in (OP.LOG, OP.RSQRT, OP.SQRT):
        x = np.abs(x) + np.float16(0.01)
    got = run(op, [Tensor(x)], [Out(F16T, x.shape)])[0]
    assert_half(got, FUNCTIONS[op](x.astype(np.float64)), steps=0 if op in (OP.ABS, OP.NEG) else 1)


@pytest.mark.parametrize("op", list(RULES), ids=lambda op: OP(op).name)
def test_float16_binary_operations_broadcast(op):
    rng = np.random.default_rng(int(op) + 1)
    a, b = half(rng, (2, 3, 4)), half(rng, (3, 1))
    if op == OP.POW:
        a = np.abs(a)
    got = run(op, [Tensor(a), Tensor(b)], [Out(F16T, (2, 3, 4))])[0]
    assert_half(got, reference_binary(RULES[op], a, b), steps=1 if op == OP.POW else 0)


@pytest.mark.parametrize("op", list(COMPARE), ids=lambda op: OP(op).name)
def test_float16_comparisons(op):
    rng = np.random.default_rng(int(op) + 2)
    a, b = np.round(half(rng, (3, 4))), np.round(half(rng, (4,)))
    want = elementwise_reference(COMPARE[op], a, b).astype(bool)
    np.testing.assert_array_equal(run(op, [Tensor(a), Tensor(b)], [Out(B8, (3, 4))])[0], want)


def test_float16_select_argmax_argmin_expand_dims_gather_slice_split_tile_and_topk_move_values_exactly():
    rng = np.random.default_rng(3)
    x = half(rng, (3, 4, 5))
    c = rng.random((3, 4, 5)) < 0.5
    y = half(rng, (3, 4, 5))
    np.testing.assert_array_equal(run(OP.SELECT, [Tensor(c), Tensor(x), Tensor(y)], [Out(F16T, x.shape)])[0],
                                  np.where(c, x, y))
    np.testing.assert_array_equal(run(OP.ARGMAX, [Tensor(x), i32(-2)], [Out(I32T, (3, 5))])[0], x.argmax(axis=1))
    np.testing.assert_array_equal(run(OP.ARGMIN, [Tensor(x), i32(0)], [Out(I32T, (4, 5))])[0], x.argmin(axis=0))
    np.testing.assert_array_equal(run(OP.EXPAND_DIMS, [Tensor(x), i32(1)], [Out(F16T, (3, 1, 4, 5))])[0],
                                  x[:, None])
    indices = np.array([4, 0, 2], np.int32)
    np.testing.assert_array_equal(run(OP.GATHER, [Tensor(x), i32(-1), Tensor(indices)], [Out(F16T, (3, 4, 3))])[0],
                                  x[..., indices])
    np.testing.assert_array_equal(run(OP.SLICE, [Tensor(x), ints([1, 0, 2]), ints([2, -1, 3])],
                                      [Out(F16T, (2, 4, 3))])[0], x[1:3, :, 2:5])
    parts = run(OP.SPLIT, [Tensor(x), i32(1), i32(2)], [Out(F16T, (3, 2, 5))] * 2)
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), x)
    np.testing.assert_array_equal(run(OP.TILE, [Tensor(x), ints([1, 2, 1])], [Out(F16T, (3, 8, 5))])[0],
                                  np.concatenate([x, x], axis=1))
    values, where = run(OP.TOPK_V2, [Tensor(x), i32(2)], [Out(F16T, (3, 4, 2)), Out(I32T, (3, 4, 2))])
    np.testing.assert_array_equal(values, -np.sort(-x, axis=-1)[..., :2])
    np.testing.assert_array_equal(np.take_along_axis(x, where, axis=-1), values)


def test_float16_pad_v2_and_channel_shuffle():
    rng = np.random.default_rng(4)
    x = half(rng, (1, 2, 3, 4))
    got = run(OP.PAD_V2, [Tensor(x), ints([[0, 0], [1, 0], [0, 2], [0, 0]]), f16(-0.5)], [Out(F16T, (1, 3, 5, 4))])[0]
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (1, 0), (0, 2), (0, 0)], constant_values=-0.5))
    got = run(OP.CHANNEL_SHUFFLE, [Tensor(x), i32(2), i32(-1)], [Out(F16T, x.shape)])[0]
    np.testing.assert_array_equal(got, x[..., [0, 2, 1, 3]])


def test_float16_log_softmax_and_instance_normalization_round_once():
    rng = np.random.default_rng(5)
    x = half(rng, (2, 3, 4, 5))
    got = run(OP.LOG_SOFTMAX, [Tensor(x), f16(0.5), i32(-1)], [Out(F16T, x.shape)])[0]
    v = x.astype(np.float64) * 0.5
    assert_half(got, v - np.log(np.exp(v).sum(axis=-1, keepdims=True)), steps=1)
    got = run(OP.INSTANCE_NORMALIZATION, [Tensor(x), f16(1.5), f16(0.25), f16(0.001), boolean(False)],
              [Out(F16T, x.shape)])[0]
    v = x.astype(np.float64)
    mean = v.mean(axis=(1, 2), keepdims=True)
    var = ((v - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    epsilon = float(np.float16(0.001))
    assert_half(got, (v - mean) * 1.5 / np.sqrt(var + epsilon) + 0.25, steps=1)


@pytest.mark.parametrize("op", [OP.REDUCE_MAX, OP.REDUCE_MIN, OP.REDUCE_PROD, OP.REDUCE_SUM],
                         ids=lambda op: OP(op).name)
def test_float16_reductions_round_once(op):
    rng = np.random.default_rng(int(op))
    x = half(rng, (2, 3, 4), 0.9)
    _, fold, start = REDUCTIONS[op]
    for axes, keep in (([0, -1], False), ([1], True), ([0, 1, 2], False)):
        want = reduce_reference(x.astype(np.float64), {a % 3 for a in axes}, keep, fold, start)
        got = run(op, [Tensor(x), ints(axes), boolean(keep)], [Out(F16T, want.shape)])[0]
        assert_half(got, want)


def test_float16_cast_quantize_and_resize_nearest_neighbor_by_a_float16_scale():
    x = np.array([-2.75, -0.5, 0.0, 1.999, 300.0, 65504.0, -70000.0, np.inf], np.float32)
    got = run(OP.CAST, [Tensor(x)], [Out(F16T, x.shape)])[0]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(np.float16))  # one rounding; beyond 65504: infinity
    h = x[:6].astype(np.float16)
    np.testing.assert_array_equal(run(OP.CAST, [Tensor(h)], [Out(I32T, h.shape)])[0],
                                  [math.trunc(float(v)) for v in h])
    got = run(OP.QUANTIZE, [Tensor(np.array([0.25, -0.25, 10.0], np.float16))], [Out(Q8, (3,), 0.5, 128)])[0]
    np.testing.assert_array_equal(got, [129, 127, 148])  # halves away from zero
    rng = np.random.default_rng(6)
    image = half(rng, (1, 3, 5, 2))
    got = run(OP.RESIZE_NEAREST_NEIGHBOR, [Tensor(image), f16(1.5), f16(2.0), boolean(False)],
              [Out(F16T, (1, 6, 7, 2))])[0]
    np.testing.assert_array_equal(got, nearest_reference(image, 6, 7))
