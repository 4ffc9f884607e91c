"""NNAPI 1.2's operations with BOOL or TENSOR_BOOL8 operands (API level 29) against references written from the
header's text (``NeuralNetworks.h`` of Android 10) in plain loops: REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_SUM,
REDUCE_ALL, REDUCE_ANY (keep_dims a BOOL), INSTANCE_NORMALIZATION and RESIZE_NEAREST_NEIGHBOR (the NCHW flag a
BOOL), the comparisons, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and SELECT, in every tensor type the header lists."""
from __future__ import annotations

import itertools
import math
import operator

import numpy as np
import pytest
from nnapi_harness import B8, F32T, I32T, Q8, Out, Tensor, boolean, collect_garbage, f32, i32, refused, run  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType
QUANT = (0.25, 3)


def random_shape(rng, rank: int, low: int = 1, high: int = 5) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(low, high, size=rank))


def ints(values) -> Tensor:
    return Tensor(np.asarray(values, np.int32), const=True)


def real(q, scale, zero):
    return (np.asarray(q, np.float64) - zero) * float(np.float32(scale))


# -- reductions ----------------------------------------------------------------------------------------------------
def reduce_reference(x: np.ndarray, axes: set[int], keep: bool, combine, start):
    """Fold ``combine`` over the reduced axes for each kept index, element by element."""
    shape = x.shape
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else \
        (tuple(d for i, d in enumerate(shape) if i not in axes) or (1,))
    result = {}
    for index in np.ndindex(*shape):
        key = tuple(index[i] for i in range(len(shape)) if i not in axes)
        result[key] = combine(result.get(key, start), x[index].item())
    out = np.array([result[key] for key in sorted(result)], np.float64)
    return out.reshape(out_shape)


REDUCTIONS = {  # operation: (letters it takes, fold, start)
    OP.REDUCE_MAX: ("fq", max, -math.inf),
    OP.REDUCE_MIN: ("fq", min, math.inf),
    OP.REDUCE_PROD: ("f", operator.mul, 1.0),
    OP.REDUCE_SUM: ("f", operator.add, 0.0),
    OP.REDUCE_ALL: ("b", lambda a, b: a and b, True),
    OP.REDUCE_ANY: ("b", lambda a, b: a or b, False),
}
CASES = [(op, letter) for op, (letters, *_) in REDUCTIONS.items() for letter in letters]


@pytest.mark.parametrize("op, letter", CASES, ids=[f"{OP(op).name}-{letter}" for op, letter in CASES])
def test_reductions_over_every_axis_subset_negative_axes_and_repeats_with_and_without_keep_dims(op, letter):
    rng = np.random.default_rng(int(op) + ord(letter))
    _, fold, start = REDUCTIONS[op]
    for rank in (1, 2, 3, 4):
        shape = random_shape(rng, rank, 1, 4)
        if letter == "f":
            x = (rng.standard_normal(shape) * (0.9 if op == OP.REDUCE_PROD else 3)).astype(np.float32)
            kind, scale, zero = F32T, 0.0, 0
        elif letter == "q":
            x, (scale, zero), kind = rng.integers(0, 256, size=shape).astype(np.uint8), QUANT, Q8
        else:
            x, kind, scale, zero = rng.random(shape) < (0.8 if op == OP.REDUCE_ALL else 0.2), B8, 0.0, 0
        subsets = [s for n in range(1, rank + 1) for s in itertools.combinations(range(rank), n)]
        for subset in subsets[:6]:
            # each axis written once as a negative index; the first one listed twice (reduced once)
            listed = [a - rank for a in subset] + [subset[0]]
            for keep in (False, True):
                want = reduce_reference(x, set(subset), keep, fold, start)
                got = run(op, [Tensor(x, scale, zero), ints(listed), boolean(keep)],
                          [Out(kind, want.shape, scale, zero)])[0]
                if letter == "f" and op in (OP.REDUCE_PROD, OP.REDUCE_SUM):
                    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
                else:
                    np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{shape} {listed} {keep}")


def test_a_reduction_refuses_an_axis_out_of_range_and_an_output_quantized_unlike_its_input():
    x = np.zeros((2, 3), np.uint8)
    message = refused(OP.REDUCE_MAX, [Tensor(x, 0.5, 0), ints([2]), boolean(False)], [Out(Q8, (2,), 0.5, 0)])
    assert "axis 2 is outside [-2, 2)" in message
    message = refused(OP.REDUCE_MIN, [Tensor(x, 0.5, 0), ints([1]), boolean(False)], [Out(Q8, (2,), 0.25, 0)])
    assert "quantization (0.25, 0) differs from the input's (0.5, 0)" in message


# -- INSTANCE_NORMALIZATION ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("nchw", [False, True])
def test_instance_normalization_per_image_and_channel_in_both_layouts(nchw):
    rng = np.random.default_rng(int(nchw) + 3)
    for _ in range(3):
        n, h, w, c = random_shape(rng, 4, 1, 6)
        x = (rng.standard_normal((n, h, w, c)) * 2 + 1).astype(np.float32)
        gamma, beta, epsilon = float(rng.random() + 0.5), float(rng.standard_normal()), 1e-3
        data = x.transpose(0, 3, 1, 2).copy() if nchw else x
        got = run(OP.INSTANCE_NORMALIZATION, [Tensor(data), f32(gamma), f32(beta), f32(epsilon), boolean(nchw)],
                  [Out(F32T, data.shape)])[0]
        want = np.zeros((n, h, w, c))
        g, bt, e = (float(np.float32(v)) for v in (gamma, beta, epsilon))
        for b in range(n):
            for ch in range(c):
                values = [float(x[b, i, j, ch]) for i in range(h) for j in range(w)]
                mean = sum(values) / len(values)
                var = sum((v - mean) ** 2 for v in values) / len(values)
                for i in range(h):
                    for j in range(w):
                        want[b, i, j, ch] = (x[b, i, j, ch] - mean) * g / math.sqrt(var + e) + bt
        np.testing.assert_allclose(got, want.transpose(0, 3, 1, 2) if nchw else want, rtol=1e-5, atol=1e-5)


# -- RESIZE_NEAREST_NEIGHBOR ---------------------------------------------------------------------------------------
def nearest_reference(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """NHWC: output (y, x) reads input (min(floor(y * in_h / out_h), in_h - 1), likewise x), the ratio a float32
    (no corner alignment, no half-pixel centres: NNAPI 1.2 has neither flag)."""
    n, h, w, c = x.shape
    out = np.zeros((n, out_h, out_w, c), x.dtype)
    sy, sx = np.float32(h) / np.float32(out_h), np.float32(w) / np.float32(out_w)
    for y in range(out_h):
        for xx in range(out_w):
            source_y = min(math.floor(np.float32(y) * sy), h - 1)
            source_x = min(math.floor(np.float32(xx) * sx), w - 1)
            out[:, y, xx, :] = x[:, source_y, source_x, :]
    return out


@pytest.mark.parametrize("letter", "fq")
@pytest.mark.parametrize("nchw", [False, True])
def test_resize_nearest_neighbor_by_shape_and_by_scale_in_both_layouts(letter, nchw):
    rng = np.random.default_rng(ord(letter) + int(nchw))
    for _ in range(3):
        n, h, w, c = random_shape(rng, 4, 1, 6)
        x = rng.standard_normal((n, h, w, c)).astype(np.float32) if letter == "f" else \
            rng.integers(0, 256, (n, h, w, c)).astype(np.uint8)
        kind, scale, zero = (F32T, 0.0, 0) if letter == "f" else (Q8, *QUANT)
        data = x.transpose(0, 3, 1, 2).copy() if nchw else x
        for by_scale in (False, True):
            if by_scale:
                ws, hs = float(rng.choice([0.5, 1.5, 2.0, 3.0])), float(rng.choice([0.5, 1.0, 2.5]))
                out_w, out_h = math.floor(w * np.float32(ws)), math.floor(h * np.float32(hs))
                if out_w < 1 or out_h < 1:
                    continue
                params = [f32(ws), f32(hs)]
            else:
                out_w, out_h = int(rng.integers(1, 9)), int(rng.integers(1, 9))
                params = [i32(out_w), i32(out_h)]
            want = nearest_reference(x, out_h, out_w)
            if nchw:
                want = want.transpose(0, 3, 1, 2)
            got = run(OP.RESIZE_NEAREST_NEIGHBOR, [Tensor(data, scale, zero), *params, boolean(nchw)],
                      [Out(kind, want.shape, scale, zero)])[0]
            np.testing.assert_array_equal(got, want)


# -- comparisons, logic, SELECT -------------------------------------------------------------------------------------
COMPARE = {OP.EQUAL: operator.eq, OP.NOT_EQUAL: operator.ne, OP.GREATER: operator.gt, OP.GREATER_EQUAL: operator.ge,
           OP.LESS: operator.lt, OP.LESS_EQUAL: operator.le}


def elementwise_reference(rule, *arrays) -> np.ndarray:
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    views = [np.broadcast_to(a, shape) for a in arrays]
    out = np.empty(shape, object)
    for index in np.ndindex(*shape):
        out[index] = rule(*(v[index].item() for v in views))
    return out


def pairs(rng, count: int):
    for _ in range(count):
        rank = int(rng.integers(1, 5))
        out = random_shape(rng, rank, 1, 4)
        a = tuple(1 if rng.random() < 0.3 else d for d in out)[int(rng.integers(0, rank)):] or (1,)
        b = tuple(1 if rng.random() < 0.3 else d for d in out)
        yield a, b


@pytest.mark.parametrize("letter", "bfnq")
@pytest.mark.parametrize("op", list(COMPARE), ids=lambda op: OP(op).name)
def test_comparisons_broadcast_and_compare_real_values(op, letter):
    rng = np.random.default_rng(int(op) * 10 + ord(letter))
    for sa, sb in pairs(rng, 4):
        if letter == "f":
            a, b = (np.round(rng.standard_normal(s) * 2).astype(np.float32) for s in (sa, sb))  # equal values too
            ta, tb, ra, rb = Tensor(a), Tensor(b), a, b
        elif letter == "n":
            a, b = (rng.integers(-3, 3, size=s).astype(np.int32) for s in (sa, sb))
            ta, tb, ra, rb = Tensor(a), Tensor(b), a, b
        elif letter == "b":
            a, b = (rng.random(s) < 0.5 for s in (sa, sb))
            ta, tb, ra, rb = Tensor(a), Tensor(b), a.astype(int), b.astype(int)
        else:  # different quantizations: 0.5 * (a - 10) against 0.25 * (b - 4): real values compared
            a, b = rng.integers(8, 14, size=sa).astype(np.uint8), rng.integers(0, 12, size=sb).astype(np.uint8)
            ta, tb, ra, rb = Tensor(a, 0.5, 10), Tensor(b, 0.25, 4), real(a, 0.5, 10), real(b, 0.25, 4)
        want = elementwise_reference(COMPARE[op], ra, rb).astype(bool)
        got = run(op, [ta, tb], [Out(B8, want.shape)])[0]
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want, err_msg=f"{sa} {sb}")


def test_comparisons_of_nan_are_false_but_not_equal():
    a = np.array([np.nan, 1.0], np.float32)
    b = np.array([np.nan, np.nan], np.float32)
    for op, want in ((OP.EQUAL, [False, False]), (OP.NOT_EQUAL, [True, True]), (OP.LESS, [False, False]),
                     (OP.GREATER_EQUAL, [False, False])):
        np.testing.assert_array_equal(run(op, [Tensor(a), Tensor(b)], [Out(B8, (2,))])[0], want)


@pytest.mark.parametrize("op, rule", [(OP.LOGICAL_AND, lambda x, y: x and y), (OP.LOGICAL_OR, lambda x, y: x or y)],
                         ids=["AND", "OR"])
def test_logical_and_and_or_broadcast(op, rule):
    rng = np.random.default_rng(int(op))
    for sa, sb in pairs(rng, 5):
        a, b = rng.random(sa) < 0.5, rng.random(sb) < 0.5
        want = elementwise_reference(rule, a, b).astype(bool)
        np.testing.assert_array_equal(run(op, [Tensor(a), Tensor(b)], [Out(B8, want.shape)])[0], want)


def test_logical_not_and_a_boolean_input_read_from_any_non_zero_byte():
    rng = np.random.default_rng(5)
    x = rng.random((3, 4, 2)) < 0.5
    np.testing.assert_array_equal(run(OP.LOGICAL_NOT, [Tensor(x)], [Out(B8, x.shape)])[0], ~x)
    raw = np.array([0, 1, 2, 255], np.uint8).view(np.bool_)  # NNAPI reads any non-zero byte as true
    got = run(OP.LOGICAL_NOT, [Tensor(raw)], [Out(B8, (4,))])[0]
    np.testing.assert_array_equal(got, [True, False, False, False])


@pytest.mark.parametrize("letter", "fnq")
def test_select_takes_input1_where_the_condition_holds_else_input2(letter):
    rng = np.random.default_rng(ord(letter))
    for rank in (1, 2, 3, 4):
        shape = random_shape(rng, rank)
        c = rng.random(shape) < 0.5
        if letter == "f":
            x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
            tx, ty, out, rx, ry = Tensor(x), Tensor(y), Out(F32T, shape), x, y
        elif letter == "n":
            x, y = (rng.integers(-2 ** 31, 2 ** 31, shape, dtype=np.int64).astype(np.int32) for _ in range(2))
            tx, ty, out, rx, ry = Tensor(x), Tensor(y), Out(I32T, shape), x, y
        else:  # "the scales and zeroPoint can be different": the selected real value, requantized
            x, y = (rng.integers(0, 256, shape).astype(np.uint8) for _ in range(2))
            tx, ty, out = Tensor(x, 0.5, 100), Tensor(y, 0.25, 20), Out(Q8, shape, 0.3, 128)
            rx, ry = real(x, 0.5, 100), real(y, 0.25, 20)
        want = elementwise_reference(lambda cond, p, q: p if cond else q, c, rx, ry).astype(np.float64)
        if letter == "q":
            s = float(np.float32(0.3))
            want = np.clip(np.rint(want / s) + 128, 0, 255)
        got = run(OP.SELECT, [Tensor(c), tx, ty], [out])[0]
        np.testing.assert_array_equal(got, want.astype(got.dtype))
