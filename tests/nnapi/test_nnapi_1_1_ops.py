"""NNAPI 1.1's operations (API level 28) against references written from the header's text
(``NeuralNetworks.h`` of Android 10, the blocks marked "Available since API level 28") in plain loops and
Python slicing: TRANSPOSE, PAD, MEAN, SQUEEZE, STRIDED_SLICE, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SUB, DIV.

Many operations on one input share one model (one compilation): every permutation, axis subset, mask
combination or padding is one operation of it.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from nnapi_harness import F32T, I32T, Q8, Out, Tensor, build, collect_garbage, i32, run  # noqa: F401 - autouse

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType
DTYPE = {F32T: np.float32, Q8: np.uint8}


# -- running many operations of one input ------------------------------------------------------------------------
def build_many(x: np.ndarray, quant: tuple[float, int], ops: list[tuple[int, list, tuple]]) -> nnapi.Model:
    """One finished model: input ``x`` (float32, or uint8 of ``quant``) read by every ``(operation, parameters,
    output shape)``; parameters are ("ints", array) constant TENSOR_INT32, ("i32", v) INT32 scalars or ("none",)
    an omitted operand. Each output is typed and quantized like ``x``."""
    kind = Q8 if x.dtype == np.uint8 else F32T
    scale, zero = quant if kind == Q8 else (0.0, 0)
    m = nnapi.Model()
    xk = m.add_operand(kind, list(x.shape), scale, zero)
    outs = []
    for op, params, shape in ops:
        ins = [xk]
        for p in params:
            if p[0] == "ints":
                value = np.asarray(p[1], np.int32)
                k = m.add_operand(I32T, list(value.shape))
                m.set_operand_value(k, value)
            elif p[0] == "i32":
                k = m.add_operand(T.INT32)
                m.set_operand_value(k, p[1])
            else:
                k = m.add_operand(I32T, [0])
                m.set_operand_value(k, None)
            ins.append(k)
        out = m.add_operand(kind, list(shape), scale, zero)
        m.add_operation(op, ins, [out])
        outs.append(out)
    m.identify_inputs_and_outputs([xk], outs)
    m.finish()
    return m


def run_many(x: np.ndarray, quant: tuple[float, int], ops: list[tuple[int, list, tuple]],
             natively: bool = False) -> list[np.ndarray]:
    """The outputs of ``build_many``'s model run on ``x`` (``natively``: the last of three runs, which must run
    on the graph's native plan)."""
    m = build_many(x, quant, ops)
    kind = Q8 if x.dtype == np.uint8 else F32T
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [True] * len(ops)
    c = nnapi.Compilation(m)
    c.finish()
    graph = c.prepared.lowered.graph
    for _ in range(3 if natively else 1):
        e = nnapi.Execution(c)
        e.set_input(0, x)
        results = [np.full(shape, 7, DTYPE[kind]) for _, _, shape in ops]
        for k, r in enumerate(results):
            e.set_output(k, r)
        before = graph.native_runs
        e.compute()
    assert not natively or graph.native_runs > before
    c.release()
    return results


def refused(op: int, x: np.ndarray, params: list, shape: tuple, quant=(0.5, 3)) -> str:
    """The message of the NNAPIError the one-operation model gets (at finish or compilation)."""
    with pytest.raises(nnapi.NNAPIError) as info:
        m = build_many(x, quant, [(op, params, shape)])
        assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [False]
        nnapi.Compilation(m).finish()
    return str(info.value)


def random_input(rng, shape, kind):
    if kind == Q8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    return rng.standard_normal(shape).astype(np.float32)


def random_shape(rng, rank, low=1, high=5):
    return tuple(int(d) for d in rng.integers(low, high + 1, rank))


KINDS = [F32T, Q8]


# -- TRANSPOSE ---------------------------------------------------------------------------------------------------
def transpose_reference(x, perm):
    """"The returned tensor's dimension i corresponds to the input dimension perm[i]"."""
    out = np.empty([x.shape[p] for p in perm], x.dtype)
    for index in np.ndindex(*out.shape):
        source = [0] * x.ndim
        for i, p in enumerate(perm):
            source[p] = index[i]
        out[index] = x[tuple(source)]
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_transpose_by_every_permutation_and_by_default_reversed(rank, kind):
    rng = np.random.default_rng(rank * 7 + kind)
    x = random_input(rng, random_shape(rng, rank), kind)
    perms = list(itertools.permutations(range(rank)))
    ops = [(OP.TRANSPOSE, [("ints", list(p))], tuple(x.shape[i] for i in p)) for p in perms]
    ops.append((OP.TRANSPOSE, [("none",)], x.shape[::-1]))  # perm omitted: (n-1 ... 0)
    got = run_many(x, (0.25, 17), ops)
    for perm, result in zip(perms + [tuple(range(rank - 1, -1, -1))], got):
        np.testing.assert_array_equal(result, transpose_reference(x, perm))


def test_transpose_refuses_a_perm_that_is_not_a_permutation():
    x = np.zeros((2, 3), np.float32)
    assert "not a permutation" in refused(OP.TRANSPOSE, x, [("ints", [0, 0])], (2, 2))


# -- PAD ---------------------------------------------------------------------------------------------------------
def pad_reference(x, paddings, pad_value):
    """"output0.dimension[i] = padding[i, 0] + input0.dimension[i] + padding[i, 1]", the rest padded with zeros
    (for quant8 the logical zero, the zero point)."""
    shape = [p[0] + d + p[1] for p, d in zip(paddings, x.shape)]
    out = np.full(shape, pad_value, x.dtype)
    for index in np.ndindex(*x.shape):
        out[tuple(i + p[0] for i, p in zip(index, paddings))] = x[index]
    return out


@pytest.mark.parametrize("natively", [False, True])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_pad_with_every_padding_of_0_to_2_on_each_side(rank, kind, natively):
    rng = np.random.default_rng(rank * 11 + kind)
    x = random_input(rng, random_shape(rng, rank, high=3), kind)
    zero = 37
    if rank <= 2:  # every combination
        all_pads = [np.array(p).reshape(rank, 2) for p in itertools.product(range(3), repeat=2 * rank)]
    else:
        all_pads = [rng.integers(0, 3, (rank, 2)) for _ in range(24)]
        all_pads += [np.zeros((rank, 2), int), np.full((rank, 2), 2)]
    ops = [(OP.PAD, [("ints", p)], tuple(int(a + d + b) for (a, b), d in zip(p, x.shape))) for p in all_pads]
    got = run_many(x, (0.5, zero), ops, natively)
    for pads, result in zip(all_pads, got):
        np.testing.assert_array_equal(result, pad_reference(x, pads.tolist(), zero if kind == Q8 else 0.0))


def test_pad_refuses_negative_paddings_and_a_wrong_paddings_shape():
    x = np.zeros((2, 3), np.float32)
    assert "negative" in refused(OP.PAD, x, [("ints", [[0, 0], [-1, 1]])], (2, 3))
    assert "expected [2, 2]" in refused(OP.PAD, x, [("ints", [[0, 0, 1], [1, 0, 0]])], (3, 4))


# -- MEAN --------------------------------------------------------------------------------------------------------
def mean_reference(x, axes, keep_dims, quantized):
    """The mean over ``axes``; quant8 on the raw values (the output shares the input's scale and zero point),
    the exact mean rounded half to even (docs/fixed-point.md)."""
    axes = sorted({a % x.ndim for a in axes})
    kept = [1 if i in axes else d for i, d in enumerate(x.shape)]
    out = np.empty(kept, np.uint8 if quantized else np.float64)
    for index in np.ndindex(*kept):
        ranges = [range(x.shape[i]) if i in axes else [index[i]] for i in range(x.ndim)]
        values = [x[src] for src in itertools.product(*ranges)]
        if quantized:
            out[index] = round(Fraction(sum(int(v) for v in values), len(values)))  # half to even
        else:
            out[index] = float(sum(Fraction(float(v)) for v in values) / len(values))
    if not keep_dims:
        out = out.reshape([d for i, d in enumerate(x.shape) if i not in axes] or [1])
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_mean_over_every_axis_subset_with_and_without_keep_dims(rank, kind):
    rng = np.random.default_rng(rank * 13 + kind)
    x = random_input(rng, random_shape(rng, rank, 1, 4), kind)
    cases = []
    for n in range(1, rank + 1):
        for axes in itertools.combinations(range(rank), n):
            listed = [a - rank if rng.random() < 0.5 else a for a in axes]  # negative axes count from the end
            if rng.random() < 0.3:
                listed.append(listed[0])  # an axis listed twice is reduced once
            for keep in (0, 1):
                cases.append((listed, keep))
    ops = []
    for listed, keep in cases:
        shape = mean_reference(x, listed, keep, kind == Q8).shape
        ops.append((OP.MEAN, [("ints", listed), ("i32", keep * int(rng.integers(1, 5)))], shape))
    got = run_many(x, (0.1, 128), ops)
    for (listed, keep), result in zip(cases, got):
        want = mean_reference(x, listed, keep, kind == Q8)
        if kind == Q8:
            np.testing.assert_array_equal(result, want, err_msg=str(listed))
        else:  # float32: the exact mean within one rounding (and the float64 sum's far smaller error)
            np.testing.assert_allclose(result, want, rtol=2**-23, atol=1e-12, err_msg=str(listed))


def test_quant8_mean_rounds_halves_to_even():
    x = np.array([[1, 2], [2, 3], [0, 1], [254, 255]], np.uint8)  # means 1.5, 2.5, 0.5, 254.5
    (got,) = run_many(x, (0.5, 0), [(OP.MEAN, [("ints", [1]), ("i32", 0)], (4,))])
    np.testing.assert_array_equal(got, [2, 2, 0, 254])


def test_mean_refuses_an_axis_out_of_range():
    x = np.zeros((2, 3), np.float32)
    assert "outside [-2, 2)" in refused(OP.MEAN, x, [("ints", [2]), ("i32", 0)], (2,))


# -- SQUEEZE -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_squeeze_removes_the_listed_axes_of_size_1_or_all_of_them(kind):
    rng = np.random.default_rng(5 + kind)
    x = random_input(rng, (1, 3, 1, 2), kind)
    cases = [([0], (3, 1, 2)), ([2], (1, 3, 2)), ([0, 2], (3, 2)), ([-2], (1, 3, 2)), (None, (3, 2))]
    ops = [(OP.SQUEEZE, [("none",)] if axes is None else [("ints", axes)], shape) for axes, shape in cases]
    for (_, shape), result in zip(cases, run_many(x, (1.0, 0), ops)):
        np.testing.assert_array_equal(result, x.reshape(shape))  # the same data, fewer dimensions


def test_squeeze_refuses_an_axis_that_is_not_of_size_1():
    x = np.zeros((1, 3), np.float32)
    assert "axis 1 of size 3" in refused(OP.SQUEEZE, x, [("ints", [1])], (1,))


# -- STRIDED_SLICE -----------------------------------------------------------------------------------------------
def slice_reference(x, begin, end, strides, begin_mask, end_mask, shrink):
    """The header's text as Python slicing: from begin by stride until end (negative indices count from the
    end, out-of-range ones are clamped), a masked begin or end takes the fullest range, a shrunk axis must hold
    one element and is dropped. None where the result is empty or a shrunk axis does not hold one element."""
    index = []
    for i in range(x.ndim):
        start = None if begin_mask >> i & 1 else begin[i]
        stop = None if end_mask >> i & 1 else end[i]
        index.append(slice(start, stop, strides[i]))
    out = x[tuple(index)]
    if 0 in out.shape or any(shrink >> i & 1 and out.shape[i] != 1 for i in range(x.ndim)):
        return None
    return out.reshape([d for i, d in enumerate(out.shape) if not shrink >> i & 1] or [1])


def slice_parameters(begin, end, strides, begin_mask, end_mask, shrink) -> list:
    return [("ints", begin), ("ints", end), ("ints", strides), ("i32", begin_mask), ("i32", end_mask),
            ("i32", shrink)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_strided_slice_under_every_begin_and_end_mask(rank, kind):
    rng = np.random.default_rng(rank * 17 + kind)
    x = random_input(rng, random_shape(rng, rank, 1, 5), kind)
    cases = []
    for begin_mask, end_mask in itertools.product(range(1 << rank), repeat=2):
        while True:  # random bounds (negative, beyond the ends) and strides (either sign) with a non-empty slice
            begin = [int(rng.integers(-d - 2, d + 2)) for d in x.shape]
            end = [int(rng.integers(-d - 2, d + 2)) for d in x.shape]
            strides = [int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in x.shape]
            shrink = int(rng.integers(0, 1 << rank)) if rng.random() < 0.5 else 0
            want = slice_reference(x, begin, end, strides, begin_mask, end_mask, shrink)
            if want is not None:
                break
        cases.append(((begin, end, strides, begin_mask, end_mask, shrink), want))
    ops = [(OP.STRIDED_SLICE, slice_parameters(*spec), want.shape) for spec, want in cases]
    for (spec, want), result in zip(cases, run_many(x, (0.3, 9), ops)):
        np.testing.assert_array_equal(result, want, err_msg=str(spec))


@pytest.mark.parametrize("kind", KINDS)
def test_strided_slice_shrinks_every_subset_of_axes(kind):
    rng = np.random.default_rng(23 + kind)
    x = random_input(rng, (2, 3, 4), kind)
    cases = []
    for shrink in range(8):
        begin = [int(rng.integers(-d, d)) for d in x.shape]
        end = [b % d + 1 if shrink >> i & 1 else d for i, (b, d) in enumerate(zip(begin, x.shape))]
        cases.append((begin, end, [1, 1, 1], 0, 0, shrink))
    ops = [(OP.STRIDED_SLICE, slice_parameters(*spec), slice_reference(x, *spec).shape) for spec in cases]
    for spec, result in zip(cases, run_many(x, (0.3, 9), ops)):
        np.testing.assert_array_equal(result, slice_reference(x, *spec), err_msg=str(spec))


def test_strided_slice_refuses_a_shrunk_axis_of_more_than_one_element_an_empty_slice_and_a_zero_stride():
    x = np.zeros((4, 3), np.float32)
    params = [("ints", [0, 0]), ("ints", [2, 3]), ("ints", [1, 1]), ("i32", 0), ("i32", 0), ("i32", 1)]
    assert "it must have 1" in refused(OP.STRIDED_SLICE, x, params, (3,))
    params = [("ints", [3, 0]), ("ints", [1, 3]), ("ints", [1, 1]), ("i32", 0), ("i32", 0), ("i32", 0)]
    assert "empty" in refused(OP.STRIDED_SLICE, x, params, (1, 3))
    params = [("ints", [0, 0]), ("ints", [4, 3]), ("ints", [0, 1]), ("i32", 0), ("i32", 0), ("i32", 0)]
    assert "must not be 0" in refused(OP.STRIDED_SLICE, x, params, (4, 3))


# -- SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND ------------------------------------------------------------------------
def space_to_batch_reference(x, block, paddings, pad_value):
    """The padded spatial dimensions cut into blocks of ``block``; the batch combines the position within a
    block (outer) and the original batch (inner): out[(i * bw + j) * N + b, h, w, c] = padded[b, h*bh + i,
    w*bw + j, c]."""
    n, height, width, c = x.shape
    (top, bottom), (left, right) = paddings
    bh, bw = block
    padded = np.full((n, height + top + bottom, width + left + right, c), pad_value, x.dtype)
    for b, h, w, k in np.ndindex(*x.shape):
        padded[b, h + top, w + left, k] = x[b, h, w, k]
    oh, ow = padded.shape[1] // bh, padded.shape[2] // bw
    out = np.empty((n * bh * bw, oh, ow, c), x.dtype)
    for i, j, b, h, w, k in np.ndindex(bh, bw, n, oh, ow, c):
        out[(i * bw + j) * n + b, h, w, k] = padded[b, h * bh + i, w * bw + j, k]
    return out


def batch_to_space_reference(x, block):
    """"The reverse of SpaceToBatch": out[b, h*bh + i, w*bw + j, c] = x[(i * bw + j) * N + b, h, w, c]."""
    bh, bw = block
    n = x.shape[0] // (bh * bw)
    out = np.empty((n, x.shape[1] * bh, x.shape[2] * bw, x.shape[3]), x.dtype)
    for i, j, b, h, w, k in np.ndindex(bh, bw, n, *x.shape[1:]):
        out[b, h * bh + i, w * bw + j, k] = x[(i * bw + j) * n + b, h, w, k]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_space_to_batch_over_block_sizes_and_paddings(kind):
    rng = np.random.default_rng(29 + kind)
    x = random_input(rng, (2, 5, 4, 3), kind)
    zero = 200
    cases = []
    for bh, bw in itertools.product((1, 2, 3), repeat=2):
        for _ in range(3):
            top, left = int(rng.integers(0, 3)), int(rng.integers(0, 3))
            bottom = (-(5 + top)) % bh + bh * int(rng.integers(0, 2))
            right = (-(4 + left)) % bw
            cases.append(((bh, bw), ((top, bottom), (left, right))))
    ops = [(OP.SPACE_TO_BATCH_ND, [("ints", block), ("ints", pads)],
            space_to_batch_reference(x, block, pads, 0).shape) for block, pads in cases]
    for (block, pads), result in zip(cases, run_many(x, (0.5, zero), ops)):
        np.testing.assert_array_equal(result, space_to_batch_reference(x, block, pads, zero if kind == Q8 else 0))


@pytest.mark.parametrize("kind", KINDS)
def test_batch_to_space_over_block_sizes_undoes_space_to_batch(kind):
    rng = np.random.default_rng(31 + kind)
    x = random_input(rng, (12, 2, 3, 2), kind)
    blocks = [(1, 1), (2, 3), (3, 2), (1, 4), (6, 2), (2, 2), (3, 1)]
    ops = [(OP.BATCH_TO_SPACE_ND, [("ints", b)], batch_to_space_reference(x, b).shape) for b in blocks]
    got = run_many(x, (0.5, 3), ops)
    for block, result in zip(blocks, got):
        np.testing.assert_array_equal(result, batch_to_space_reference(x, block))
        np.testing.assert_array_equal(space_to_batch_reference(result, block, ((0, 0), (0, 0)), 0), x)


def test_space_to_batch_refuses_a_padded_size_the_block_does_not_divide():
    x = np.zeros((1, 5, 4, 1), np.float32)
    assert "multiples of the block sizes" in refused(OP.SPACE_TO_BATCH_ND, x, [("ints", [2, 2]),
                                                                                ("ints", [[0, 0], [0, 0]])], (4, 2, 2, 1))


# -- SUB, DIV ----------------------------------------------------------------------------------------------------
BROADCASTS = [((2, 3, 4), (4,)), ((4, 1, 2), (5, 4, 3, 1)), ((2, 1, 4), (3, 1)), ((3,), (2, 3)), ((2, 3), (2, 3)),
              ((1,), (2, 2, 2, 2))]
RANGES = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


def fused(real, act):
    """The FuseCode applied to real results."""
    low, high = RANGES[act]
    return np.minimum(np.maximum(real, low), high)


def broadcast_reference(function, a, b):
    """"The size of the output is the maximum size along each dimension ... starts with the trailing
    dimensions": a loop over the output, each input indexed at 0 where its dimension is 1."""
    rank = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (rank - a.ndim) + a.shape)
    b = b.reshape((1,) * (rank - b.ndim) + b.shape)
    shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape))
    out = np.empty(shape, object)
    for index in np.ndindex(*shape):
        ia = tuple(i if d > 1 else 0 for i, d in zip(index, a.shape))
        ib = tuple(i if d > 1 else 0 for i, d in zip(index, b.shape))
        out[index] = function(a[ia], b[ib])
    return out


@pytest.mark.parametrize("op", [OP.SUB, OP.DIV])
@pytest.mark.parametrize("shapes", BROADCASTS)
def test_float32_sub_and_div_broadcast_with_every_fused_activation(op, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]) + int(op))
    a, b = (rng.standard_normal(s).astype(np.float32) * 3 for s in shapes)
    exact = broadcast_reference((lambda u, v: u - v) if op == OP.SUB else (lambda u, v: u / v),
                                a.astype(np.float64), b.astype(np.float64)).astype(np.float64)
    for act in range(4):
        (got,) = run(op, [Tensor(a), Tensor(b), i32(act)], [Out(F32T, exact.shape)])
        # one IEEE operation on float32 values: correctly rounded, so the float64 result rounded once equals it
        np.testing.assert_array_equal(got, fused(exact, act).astype(np.float32))


def test_float32_div_by_zero_gives_ieee_infinities_and_nan():
    a = np.array([[1.0, -2.0, 0.0], [np.inf, -0.0, 3.0]], np.float32)
    b = np.array([[0.0], [-0.0]], np.float32)
    (got,) = run(OP.DIV, [Tensor(a), Tensor(b), i32(0)], [Out(F32T, (2, 3))])
    np.testing.assert_array_equal(got, np.array([[np.inf, -np.inf, np.nan], [-np.inf, np.nan, -np.inf]], np.float32))
    (relu6,) = run(OP.DIV, [Tensor(a), Tensor(b), i32(3)], [Out(F32T, (2, 3))])
    np.testing.assert_array_equal(relu6, np.array([[6.0, 0.0, np.nan], [0.0, np.nan, 0.0]], np.float32))


def refused_one(op, inputs, outputs) -> str:
    """``refused`` for the harness's one-operation models."""
    with pytest.raises(nnapi.NNAPIError) as info:
        m, _, _ = build(op, inputs, outputs)
        assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [False]
        nnapi.Compilation(m).finish()
    return str(info.value)


@pytest.mark.parametrize("op", [OP.SUB, OP.DIV])
def test_sub_and_div_refuse_quant8_as_api_level_28_does(op):
    x = np.zeros((2,), np.uint8)
    assert "TENSOR_FLOAT32" in refused_one(op, [Tensor(x, 0.5, 0), Tensor(x, 0.5, 0), i32(0)],
                                           [Out(Q8, (2,), 0.5, 0)])


def test_data_movement_refuses_an_output_quantized_unlike_its_input():
    x = np.zeros((2, 3), np.uint8)
    message = refused_one(OP.TRANSPOSE, [Tensor(x, 0.5, 3), Tensor(np.array([1, 0], np.int32), const=True)],
                          [Out(Q8, (3, 2), 0.25, 3)])
    assert "differs from the input's" in message
