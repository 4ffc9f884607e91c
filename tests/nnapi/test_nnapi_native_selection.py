"""ARGMAX, ARGMIN, the comparisons, SELECT and GATHER run from C (native entries: ``axis_reduction``'s loop for the
two arg operations, ``comparison``'s loops, ``gather.gather_axis``): the same bits as the Python path's runners, and
the values of loops written from the header's text, over random shapes, axes (negative ones too), broadcasts,
element types and quantizations, with ties, NaN and infinities among the float values; a GATHER index out of
range fails the native run with an error naming it."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import B8, F32T, I32T, Q8, Out, Tensor, collect_garbage, i32  # noqa: F401 - an autouse fixture
from test_nnapi_native import DTYPES, _broadcast_shapes, _compiled, _native_result

from openvx_nn import nnapi

OP = nnapi.OperationType
DTYPES.setdefault(I32T, np.int32)


def _both(op, inputs, out):
    """(native result, Python path's result) of one operation; the Python graph has no native plan."""
    native = _native_result(*_compiled(op, inputs, out, True))
    compilation, execution, python = _compiled(op, inputs, out, False)
    execution.compute()
    assert compilation.prepared.graph.plan.native is None
    return native, python


def _values(rng, kind, shape, edges=False):
    """Random data of ``kind``: few distinct values (ties), and with ``edges`` a NaN and infinities."""
    if kind == Q8:
        return rng.integers(0, 256, shape).astype(np.uint8)
    if kind == I32T:
        return rng.integers(-5, 6, shape).astype(np.int32) * 100_000_000
    if kind == B8:
        return rng.random(shape) < 0.5
    x = rng.integers(-4, 5, shape).astype(np.float32) / 4
    if edges and x.size >= 3:
        x.flat[rng.choice(x.size, 3, replace=False)] = [np.nan, np.inf, -np.inf]
    return x


# -- ARGMAX, ARGMIN ------------------------------------------------------------------------------------------------------
def arg_reference(x, axis, largest):
    """The index of the largest (smallest) value along ``axis``, the first of equal ones (NaN: the first NaN)."""
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape[:-1] or (1,), np.int32)
    for index in np.ndindex(*moved.shape[:-1]):
        row = [float(v) for v in moved[index]]
        best = 0
        for j, v in enumerate(row):
            if math.isnan(row[best]):
                break
            if math.isnan(v) or (v > row[best] if largest else v < row[best]):
                best = j
        out[index if index else 0] = best
    return out


@pytest.mark.parametrize("kind", [F32T, I32T, Q8], ids=["float32", "int32", "uint8"])
@pytest.mark.parametrize("op", [OP.ARGMAX, OP.ARGMIN], ids=["ARGMAX", "ARGMIN"])
def test_argmax_and_argmin_run_natively_with_the_first_extreme(op, kind):
    for seed in range(6):
        rng = np.random.default_rng(5000 + 10 * int(op) + seed + 100 * int(kind))
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 6, rank))
        x = _values(rng, kind, shape, edges=seed == 5)
        axis = int(rng.integers(0, rank))
        listed = axis - rank if seed % 2 else axis
        want = arg_reference(x, axis, op == OP.ARGMAX)
        q = (0.25, 7) if kind == Q8 else (0.0, 0)
        native, python = _both(op, [Tensor(x, *q), i32(listed)], Out(I32T, want.shape))
        assert np.array_equal(native, python), f"seed {seed}: native and Python paths differ"
        assert np.array_equal(native, want), f"seed {seed}"


# -- the comparisons -------------------------------------------------------------------------------------------------------
COMPARISONS = {OP.EQUAL: lambda a, b: a == b, OP.NOT_EQUAL: lambda a, b: a != b, OP.GREATER: lambda a, b: a > b,
               OP.GREATER_EQUAL: lambda a, b: a >= b, OP.LESS: lambda a, b: a < b, OP.LESS_EQUAL: lambda a, b: a <= b}


def compare_reference(rule, a, b, qa, qb, shape):
    """Each output element the rule between the real values (uint8: ``(q - zero point) * scale``) of the two
    elements it broadcasts from (trailing dimensions aligned, a dimension of 1 repeated)."""
    def real(x, q, index):
        pick = tuple(0 if d == 1 else i for i, d in zip(index[len(index) - x.ndim:], x.shape))
        v = float(x[pick])
        return (v - q[1]) * q[0] if q else v
    out = np.zeros(shape, np.bool_)
    for index in np.ndindex(*shape):
        out[index] = rule(real(a, qa, index), real(b, qb, index))
    return out


@pytest.mark.parametrize("kind", [F32T, I32T, Q8, B8], ids=["float32", "int32", "uint8", "bool8"])
@pytest.mark.parametrize("op", list(COMPARISONS), ids=lambda o: nnapi.OperationType(o).name)
def test_comparisons_run_natively_on_real_values_with_broadcast(op, kind):
    for seed in range(5):
        rng = np.random.default_rng(6000 + 10 * int(op) + seed + 1000 * int(kind))
        a_shape, b_shape, shape = _broadcast_shapes(rng)
        a, b = _values(rng, kind, a_shape, seed == 4), _values(rng, kind, b_shape, seed == 4)
        qa, qb = ((0.5, 100), (0.25, 72)) if kind == Q8 else (None, None)  # equal reals from unequal raw values
        want = compare_reference(COMPARISONS[op], a, b, qa, qb, shape)
        native, python = _both(op, [Tensor(a, *(qa or (0.0, 0))), Tensor(b, *(qb or (0.0, 0)), const=bool(seed % 2))],
                               Out(B8, shape))
        assert np.array_equal(native, python), f"seed {seed}: native and Python paths differ"
        assert np.array_equal(native, want), f"seed {seed}"


# -- SELECT --------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [F32T, I32T, Q8], ids=["float32", "int32", "uint8"])
def test_select_runs_natively_taking_input1_where_the_condition_holds(kind):
    for seed in range(5):
        rng = np.random.default_rng(7000 + seed + 100 * int(kind))
        shape = tuple(int(d) for d in rng.integers(1, 5, int(rng.integers(1, 5))))
        condition = rng.random(shape) < 0.5
        a, b = _values(rng, kind, shape, seed == 4), _values(rng, kind, shape, seed == 4)
        q = (0.5, 9) if kind == Q8 else (0.0, 0)
        want = np.empty(shape, a.dtype)
        for index in np.ndindex(*shape):
            want[index] = a[index] if condition[index] else b[index]
        native, python = _both(OP.SELECT, [Tensor(condition), Tensor(a, *q), Tensor(b, *q, const=bool(seed % 2))],
                               Out(kind, shape, *q))
        assert np.array_equal(native, python, equal_nan=kind == F32T), f"seed {seed}: native and Python paths differ"
        assert np.array_equal(native, want, equal_nan=kind == F32T), f"seed {seed}"


def test_select_of_operands_quantized_differently_keeps_the_python_path():
    condition = np.array([True, False, True])
    a, b = np.array([10, 20, 30], np.uint8), np.array([40, 50, 60], np.uint8)
    inputs = [Tensor(condition), Tensor(a, 0.5, 0), Tensor(b, 0.25, 0)]
    compilation, execution, result = _compiled(OP.SELECT, inputs, Out(Q8, (3,), 0.5, 0), True)
    execution.compute()
    assert compilation.prepared.graph.plan.native is None  # its real values are requantized in NumPy
    assert result.tolist() == [10, 25, 30]


# -- GATHER --------------------------------------------------------------------------------------------------------------
def gather_reference(x, indices, axis):
    """``out[i..., j..., k...] = x[i..., indices[j...], k...]``: the indices' dimensions replace the axis's."""
    shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    out = np.empty(shape, x.dtype)
    for index in np.ndindex(*shape):
        before, picked, after = index[:axis], index[axis:axis + indices.ndim], index[axis + indices.ndim:]
        out[index] = x[before + (int(indices[picked]),) + after]
    return out


@pytest.mark.parametrize("kind", [F32T, I32T, Q8], ids=["float32", "int32", "uint8"])
def test_gather_runs_natively_along_every_axis_by_indices_of_any_rank(kind):
    for seed in range(6):
        rng = np.random.default_rng(8000 + seed + 100 * int(kind))
        rank = int(rng.integers(1, 4))
        shape = tuple(int(d) for d in rng.integers(1, 5, rank))
        x = _values(rng, kind, shape, seed == 5)
        axis = int(rng.integers(0, rank))
        index_shape = tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(1, 3))))
        indices = rng.integers(0, shape[axis], index_shape).astype(np.int32)
        want = gather_reference(x, indices, axis)
        q = (0.5, 3) if kind == Q8 else (0.0, 0)
        listed = axis - rank if seed % 2 else axis
        native, python = _both(OP.GATHER, [Tensor(x, *q), i32(listed), Tensor(indices)], Out(kind, want.shape, *q))
        assert np.array_equal(native, python, equal_nan=kind == F32T), f"seed {seed}: native and Python paths differ"
        assert np.array_equal(native, want, equal_nan=kind == F32T), f"seed {seed}"


def test_a_gather_index_out_of_range_fails_the_native_run_naming_it():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    good, bad = np.array([2, 0], np.int32), np.array([1, 3], np.int32)
    compilation, execution, result = _compiled(OP.GATHER, [Tensor(x), i32(0), Tensor(good)], Out(F32T, (2, 4)), True)
    _native_result(compilation, execution, result)  # the native plan is published and runs
    messages = []
    for _ in range(2):  # the native run fails, and the execution runs once more on the Python path to name it
        execution = nnapi.Execution(compilation)
        execution.set_input(0, x)
        execution.set_input(1, bad)
        execution.set_output(0, result)
        with pytest.raises(nnapi.NNAPIError) as error:
            execution.compute()
        messages.append(str(error.value))
    assert all("GATHER" in m and "index 3 is outside 0..2 (axis 0 of the input)" in m for m in messages), messages
    execution = nnapi.Execution(compilation)  # good indices run again
    execution.set_input(0, x)
    execution.set_input(1, good)
    execution.set_output(0, result)
    execution.compute()
    assert np.array_equal(result, x[[2, 0]])
