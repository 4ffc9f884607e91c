"""CoreML kernels that move data by index values read at run time: gather and scatter (three addressing forms,
seven scatter modes), sorting (top-K, argsort), the running sum, a slice whose begin is data, sequence reversal
by lengths, selection by a condition, and the positions of non-zero elements (at most one row per element, and
their count: the host keeps the rows filled).

Axes in the nodes' parameters are OpenVX axes, as in every other kernel; the index arithmetic is written on
row-major arrays (``kernels/frontend/indexing.py``), so these runners pass each tensor transposed, which is the
CoreML blob's own order."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...core.context import MAX_TENSOR_DIMS as MAX_DIMS
from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import indexing
from ...kernels.frontend.ordering import sort_first
from ...kernels.frontend.reduction import cumulative_sum
from .common import ENUM, INT32, describe, enum_value, float_input, output, same_output, scalar, tensor

INDEX_FORMS = indexing.FORMS
SCATTER_MODES = indexing.MODES


def _axis(v: Validation, index: int, rank: int) -> int:
    """Scalar ``index``, an OpenVX axis of a rank-``rank`` tensor, as the row-major axis of its transpose."""
    axis = v.scalar(index)
    v.require(isinstance(axis, int) and 0 <= axis < rank, index, Status.VX_ERROR_INVALID_VALUE,
              f"axis {axis!r} is outside a {rank}-D tensor")
    return rank - 1 - axis


def _rows(dims: Sequence[int]) -> tuple[int, ...]:
    """Row-major shape of OpenVX ``dims``."""
    return tuple(reversed(tuple(dims)))


def _gathered(v: Validation, data: tuple[int, ...], idx: tuple[int, ...], form: str, axis: int) -> tuple[int, ...]:
    """Row-major shape of the gather of indices of shape ``idx`` from data of shape ``data`` (index 1 the
    indices)."""
    if form == "axis":
        shape = data[:axis] + idx + data[axis + 1:]
    elif form == "along_axis":
        v.require(len(idx) == len(data) and all(a == b for j, (a, b) in enumerate(zip(idx, data)) if j != axis), 1,
                  Status.VX_ERROR_INVALID_DIMENSION,
                  f"indices {list(idx)} must match the data {list(data)} off axis {axis}")
        shape = idx
    else:
        k = idx[-1]
        v.require(k <= len(data), 1, Status.VX_ERROR_INVALID_DIMENSION,
                  f"points of {k} coordinates index data of rank {len(data)}")
        shape = idx[:-1] + data[k:]
    shape = shape or (1,)
    v.require(len(shape) <= MAX_DIMS, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"the result {list(shape)} has more than {MAX_DIMS} dimensions")
    return shape


def _validate_gather(v: Validation) -> None:
    data, idx = float_input(v, 0), float_input(v, 1)
    v.state["form"] = form = enum_value(v, 2, INDEX_FORMS, "index form")
    v.state["axis"] = axis = _axis(v, 3, data.rank)
    same_output(v, 4, _rows(_gathered(v, _rows(data.dims), _rows(idx.dims), form, axis)))


describe(80, "gather", (tensor("data"), tensor("indices"), scalar("form", ENUM), scalar("axis", INT32), output()),
         _validate_gather,
         lambda p, state: indexing.gather(p[0].array.T, p[1].array.T, p[4].array.T, state["form"], state["axis"]))


def _validate_scatter(v: Validation) -> None:
    data, idx, updates = float_input(v, 0), float_input(v, 1), float_input(v, 2)
    v.state["form"] = form = enum_value(v, 3, INDEX_FORMS, "index form")
    v.state["mode"] = enum_value(v, 4, SCATTER_MODES, "scatter mode")
    v.state["axis"] = axis = _axis(v, 5, data.rank)
    want = _gathered(v, _rows(data.dims), _rows(idx.dims), form, axis)
    v.require(_rows(updates.dims) == want, 2, Status.VX_ERROR_INVALID_DIMENSION,
              f"updates {list(_rows(updates.dims))} must have the shape {list(want)} the indices address")
    same_output(v, 6, data.dims)


describe(81, "scatter", (tensor("container"), tensor("indices"), tensor("updates"), scalar("form", ENUM),
                         scalar("mode", ENUM), scalar("axis", INT32), output()), _validate_scatter,
         lambda p, state: indexing.scatter(p[0].array.T, p[1].array.T, p[2].array.T, p[6].array.T, state["form"],
                                           state["mode"], state["axis"]))


def _validate_sort(v: Validation) -> None:
    x = float_input(v, 0)
    axis = v.scalar(1)
    v.require(isinstance(axis, int) and 0 <= axis < x.rank, 1, Status.VX_ERROR_INVALID_VALUE,
              f"axis {axis!r} is outside a {x.rank}-D tensor")
    k = v.scalar(2)
    v.require(1 <= k <= x.dims[axis], 2, Status.VX_ERROR_INVALID_VALUE, f"k = {k} is outside 1..{x.dims[axis]}")
    v.require(v.present(4) or v.present(5), 4, Status.VX_ERROR_INVALID_PARAMETERS, "neither output is given")
    dims = list(x.dims)
    dims[axis] = k
    for index in (4, 5):
        if v.present(index):
            same_output(v, index, dims)


describe(82, "sort", (tensor("input"), scalar("axis", INT32), scalar("k", INT32), scalar("descending", INT32),
                      output("values", optional=True), output("indices", optional=True)), _validate_sort,
         lambda p, state: sort_first(p[0].array, p[2].value, p[1].value, bool(p[3].value),
                                     None if p[4] is None else p[4].array, None if p[5] is None else p[5].array))


def _validate_cumulative_sum(v: Validation) -> None:
    x = float_input(v, 0)
    axis = v.scalar(1)
    v.require(isinstance(axis, int) and 0 <= axis < x.rank, 1, Status.VX_ERROR_INVALID_VALUE,
              f"axis {axis!r} is outside a {x.rank}-D tensor")
    same_output(v, 4, x.dims)


describe(83, "cumulative_sum", (tensor("input"), scalar("axis", INT32), scalar("exclusive", INT32),
                                scalar("reverse", INT32), output()), _validate_cumulative_sum,
         lambda p, state: cumulative_sum(p[0].array, p[4].array, p[1].value, bool(p[2].value), bool(p[3].value)))


def _validate_slice_by_size(v: Validation) -> None:
    x, begin = float_input(v, 0), float_input(v, 1)
    v.require(begin.rank == 1 and begin.dims[0] == 1, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"begin must hold one value, got {list(begin.dims)}")
    v.state["axis"] = axis = _axis(v, 2, x.rank)
    size = v.scalar(3)
    rows = list(_rows(x.dims))
    v.require(1 <= size <= rows[axis], 3, Status.VX_ERROR_INVALID_VALUE, f"size {size} is outside 1..{rows[axis]}")
    rows[axis] = size
    same_output(v, 4, _rows(rows))


describe(84, "slice_by_size", (tensor("input"), tensor("begin"), scalar("axis", INT32), scalar("size", INT32),
                               output()), _validate_slice_by_size,
         lambda p, state: indexing.slice_by_size(p[0].array.T, p[1].array, p[4].array.T, state["axis"], p[3].value))


def _validate_reverse_sequences(v: Validation) -> None:
    x, lengths = float_input(v, 0), float_input(v, 1)
    v.state["batch"] = batch = _axis(v, 2, x.rank)
    v.state["sequence"] = sequence = _axis(v, 3, x.rank)
    v.require(batch != sequence, 3, Status.VX_ERROR_INVALID_VALUE, "the batch and sequence axes are one axis")
    n = _rows(x.dims)[batch]
    v.require(lengths.rank == 1 and lengths.dims[0] == n, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"lengths must be [{n}] (one per batch item), got {list(lengths.dims)}")
    same_output(v, 4, x.dims)


describe(85, "reverse_sequences", (tensor("input"), tensor("lengths"), scalar("batch_axis", INT32),
                                   scalar("sequence_axis", INT32), output()), _validate_reverse_sequences,
         lambda p, state: indexing.reverse_sequences(p[0].array.T, p[1].array, p[4].array.T, state["batch"],
                                                     state["sequence"]))


def _validate_select(v: Validation) -> None:
    metas = [float_input(v, i) for i in range(3)]
    dims = tuple(max(m.dims[j] for m in metas) for j in range(metas[0].rank))
    for i, m in enumerate(metas):
        v.require(m.rank == len(dims) and all(d in (1, n) for d, n in zip(m.dims, dims)), i,
                  Status.VX_ERROR_INVALID_DIMENSION, f"{list(m.dims)} does not broadcast to {list(dims)}")
    same_output(v, 3, dims)


describe(86, "select", (tensor("condition"), tensor("x"), tensor("y"), output()), _validate_select,
         lambda p, state: indexing.select(p[0].array, p[1].array, p[2].array, p[3].array))


def _validate_where_nonzero(v: Validation) -> None:
    x = float_input(v, 0)
    rows = _rows(x.dims)
    same_output(v, 1, (len(rows), int(np.prod(rows))))
    same_output(v, 2, (1,))


describe(91, "where_nonzero", (tensor("input"), output(), output("count")), _validate_where_nonzero,
         lambda p, state: indexing.where_nonzero(p[0].array.T, p[1].array.T, p[2].array))


def static_problem(check: Callable[[], object]) -> str | None:
    """Why values known at load would fail a run (the kernel's own check, ``check``, made early), or None."""
    try:
        check()
    except (IndexError, ValueError) as err:
        return str(err)
    return None


def indices_problem(data_shape: Sequence[int], indices: np.ndarray, form: str, axis: int) -> str | None:
    """Why ``indices`` cannot address data of CoreML ``data_shape`` in ``form`` along ``axis``, or None."""
    return static_problem(lambda: indexing.positions(tuple(data_shape), np.asarray(indices), form, axis))


def begin_problem(length: int, size: int, begin: np.ndarray) -> str | None:
    """Why ``begin`` cannot start a slice of ``size`` in an axis of ``length``, or None."""
    return static_problem(lambda: indexing.slice_by_size(np.zeros(length), np.asarray(begin), np.empty(size), 0, size))


def lengths_problem(batch: int, length: int, lengths: np.ndarray) -> str | None:
    """Why ``lengths`` are not ``batch`` sequence lengths within ``length``, or None."""
    return static_problem(lambda: indexing.reverse_sequences(np.zeros((batch, length)), np.asarray(lengths),
                                                             np.empty((batch, length)), 0, 1))
