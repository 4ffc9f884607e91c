"""The later spec's index layers: the gather and scatter families, TopK, ArgSort, CumSum, OneHot, SliceBySize,
ReverseSeq, SlidingWindows, the triangular and band masks, WhereBroadcastable and RangeStatic.

Index values are read at run time by the ``gather`` / ``scatter`` / ``slice_by_size`` / ``reverse_sequences``
kernels (an index that is not an integer or leaves its axis fails the run, naming it); everything whose addresses
are static (sliding windows, masks, one-hot's positions, a range) is a constant made here at load and run on
those same kernels or on ``select`` / ``combine``."""
from __future__ import annotations

import math

import numpy as np

from ...operations.coreml.indexing import INDEX_FORMS, SCATTER_MODES, begin_problem, indices_problem, lengths_problem
from ..builder import Blob, GraphBuilder
from .arithmetic import broadcast_shape, combine
from .common import axis_index, reshape, single
from .registry import lowers


def _inputs(g: GraphBuilder, layer, count: int) -> list[Blob]:
    if len(layer.input) != count or len(layer.output) != 1:
        raise g.fail(f"expected {count} inputs and 1 output, got {len(layer.input)} and {len(layer.output)}")
    return [g.blob(n) for n in layer.input]


def _parameter(g: GraphBuilder, layer, what: str, value: int) -> int:
    """The layer's own parameter ``value``, or the value of its second input when it has one: read at load when that
    blob is known there (a constant); a run-time value is refused, since the output's shape depends on it."""
    if len(layer.output) != (2 if layer.WhichOneof("layer") == "topK" else 1):
        raise g.fail(f"unexpected number of outputs: {len(layer.output)}")
    if len(layer.input) == 1:
        return value
    if len(layer.input) != 2:
        raise g.fail(f"expected 1 or 2 inputs, got {len(layer.input)}")
    name = layer.input[1]
    known = g.values.get(name)
    if known is None:
        g.blob(name)  # an unknown name is named as such
        raise g.fail(f"{what} given as the second input '{name}' is a run-time value; it must be known at load (a "
                     "constant such as loadConstantND's, or getShape's) or be the layer's own parameter")
    if known.size != 1 or not float(known.reshape(-1)[0]).is_integer():
        raise g.fail(f"{what} given as the second input '{name}' must be one integer, got {known.reshape(-1).tolist()}")
    return int(known.reshape(-1)[0])


def _known(g: GraphBuilder, name: str, problem) -> None:
    """Refuse at load a blob known at load (a constant) whose values would fail the run: ``problem(values)``."""
    values = g.values.get(name)
    reason = None if values is None else problem(values)
    if reason is not None:
        raise g.fail(f"input '{name}' is known at load and {reason}")


def _ranked(g: GraphBuilder, blob: Blob, rank: int) -> Blob:
    return blob if blob.rank == rank else reshape(g, blob, (1,) * (rank - blob.rank) + blob.shape)


_FORMS = {"gather": "axis", "gatherND": "nd", "gatherAlongAxis": "along_axis",
          "scatter": "axis", "scatterND": "nd", "scatterAlongAxis": "along_axis"}


@lowers("gather", "gatherND", "gatherAlongAxis")
def gather(g: GraphBuilder, layer, p) -> str:
    data, indices = _inputs(g, layer, 2)
    form = _FORMS[layer.WhichOneof("layer")]
    axis = axis_index(g, int(getattr(p, "axis", 0)), data.rank)
    if form == "along_axis" and (indices.rank != data.rank or any(
            a != b for j, (a, b) in enumerate(zip(indices.shape, data.shape)) if j != axis)):
        raise g.fail(f"indices {list(indices.shape)} must match the data {list(data.shape)} except on axis {axis}")
    if form == "nd" and indices.shape[-1] > data.rank:
        raise g.fail(f"indices {list(indices.shape)} hold points of {indices.shape[-1]} coordinates; "
                     f"the data {list(data.shape)} has rank {data.rank}")
    shape = _gathered(data.shape, indices.shape, form, axis)
    _known(g, layer.input[1], lambda v: indices_problem(data.shape, v, form, axis))
    g.coreml("gather", (data.tensor, indices.tensor, g.enum(INDEX_FORMS.index(form)),
                        g.i32(data.rank - 1 - axis), g.output(layer.output[0], shape)))
    return f"coreml.gather({form})"


def _gathered(data, indices, form: str, axis: int) -> tuple[int, ...]:
    """CoreML shape of what ``indices`` of ``form`` address in ``data`` (a gather's output, a scatter's updates)."""
    if form == "axis":
        shape = data[:axis] + indices + data[axis + 1:]
    elif form == "along_axis":
        shape = indices
    else:
        shape = indices[:-1] + data[indices[-1]:]
    return tuple(shape) or (1,)


@lowers("scatter", "scatterND", "scatterAlongAxis")
def scatter(g: GraphBuilder, layer, p) -> str:
    data, indices, updates = _inputs(g, layer, 3)
    form = _FORMS[layer.WhichOneof("layer")]
    axis = axis_index(g, int(getattr(p, "axis", 0)), data.rank)
    if form == "along_axis" and (indices.rank != data.rank or any(
            a != b for j, (a, b) in enumerate(zip(indices.shape, data.shape)) if j != axis)):
        raise g.fail(f"indices {list(indices.shape)} must match the container {list(data.shape)} except on axis "
                     f"{axis}")
    if form == "nd" and indices.shape[-1] > data.rank:
        raise g.fail(f"indices {list(indices.shape)} hold points of {indices.shape[-1]} coordinates; "
                     f"the container {list(data.shape)} has rank {data.rank}")
    want = _gathered(data.shape, indices.shape, form, axis)
    if updates.shape != want:
        raise g.fail(f"updates {list(updates.shape)} must have shape {list(want)} (what the indices "
                     f"{list(indices.shape)} address in {list(data.shape)})")
    mode = SCATTER_MODES[int(p.mode)]
    _known(g, layer.input[1], lambda v: indices_problem(data.shape, v, form, axis))
    g.coreml("scatter", (data.tensor, indices.tensor, updates.tensor, g.enum(INDEX_FORMS.index(form)),
                         g.enum(int(p.mode)), g.i32(data.rank - 1 - axis), g.output(layer.output[0], data.shape)))
    return f"coreml.scatter({form}, {mode})"


@lowers("topK")
def top_k(g: GraphBuilder, layer, p) -> str:
    k = _parameter(g, layer, "K", int(p.K))
    x = g.blob(layer.input[0])
    axis = axis_index(g, int(p.axis), x.rank)
    if not 1 <= k <= x.shape[axis]:
        raise g.fail(f"K = {k} is outside 1..{x.shape[axis]} (axis {axis} of {list(x.shape)})")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    g.coreml("sort", (x.tensor, g.i32(x.rank - 1 - axis), g.i32(k), g.i32(not p.useBottomK),
                      g.output(layer.output[0], shape), g.output(layer.output[1], shape)))
    return f"coreml.sort({'bottom' if p.useBottomK else 'top'} {k})"


@lowers("argSort")
def arg_sort(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axis = axis_index(g, int(p.axis), x.rank)
    g.coreml("sort", (x.tensor, g.i32(x.rank - 1 - axis), g.i32(x.shape[axis]), g.i32(p.descending), None,
                      g.output(layer.output[0], x.shape)))
    return "coreml.sort(indices)"


@lowers("cumSum")
def cum_sum(g: GraphBuilder, layer, p) -> str:
    x = g.blob(layer.input[0])
    axis = axis_index(g, _parameter(g, layer, "the axis", int(p.axis)), x.rank)
    g.coreml("cumulative_sum", (x.tensor, g.i32(x.rank - 1 - axis), g.i32(p.excludeFinalSum), g.i32(p.reverse),
                                g.output(layer.output[0], x.shape)))
    return "coreml.cumulative_sum"


@lowers("oneHot")
def one_hot(g: GraphBuilder, layer, p) -> str:
    size = _parameter(g, layer, "oneHotVectorSize", int(p.oneHotVectorSize))
    if size < 1:
        raise g.fail(f"oneHotVectorSize {size} is below 1")
    x = g.blob(layer.input[0])
    rank = x.rank + 1
    axis = axis_index(g, int(p.axis), rank)
    # position j along the new axis is on where the index equals j: compare with a constant 0..size-1 on that axis
    column = [1] * rank
    column[axis] = size
    positions = Blob(g.constant(np.arange(size, dtype=np.float32).reshape(column)), tuple(column))
    indices = reshape(g, x, x.shape[:axis] + (1,) + x.shape[axis:])
    hits = combine(g, indices, positions, "equal")
    on = Blob(g.constant(np.full((1,) * rank, p.onValue, np.float32)), (1,) * rank)
    off = Blob(g.constant(np.full((1,) * rank, p.offValue, np.float32)), (1,) * rank)
    _select(g, hits, on, off, layer.output[0])
    return "coreml.combine(equal) with the positions, coreml.select(on, off)"


def _select(g: GraphBuilder, condition: Blob, x: Blob, y: Blob, name: str) -> None:
    shape = broadcast_shape(g, [condition.shape, x.shape, y.shape])
    c, a, b = (_ranked(g, blob, len(shape)) for blob in (condition, x, y))
    g.coreml("select", (c.tensor, a.tensor, b.tensor, g.output(name, shape)))


@lowers("whereBroadcastable")
def where_broadcastable(g: GraphBuilder, layer, p) -> str:
    condition, x, y = _inputs(g, layer, 3)
    _select(g, condition, x, y, layer.output[0])
    return "coreml.select"


@lowers("sliceBySize")
def slice_by_size(g: GraphBuilder, layer, p) -> str:
    x, begin = _inputs(g, layer, 2)
    axis = axis_index(g, int(p.axis), x.rank)
    size = int(p.size)
    if not 1 <= size <= x.shape[axis]:
        raise g.fail(f"size {size} is outside 1..{x.shape[axis]} (axis {axis} of {list(x.shape)})")
    if math.prod(begin.shape) != 1:
        raise g.fail(f"the begin input must hold one value, got shape {list(begin.shape)}")
    _known(g, layer.input[1], lambda v: begin_problem(x.shape[axis], size, v))
    begin = begin if begin.rank == 1 else reshape(g, begin, (1,))
    shape = x.shape[:axis] + (size,) + x.shape[axis + 1:]
    g.coreml("slice_by_size", (x.tensor, begin.tensor, g.i32(x.rank - 1 - axis), g.i32(size),
                               g.output(layer.output[0], shape)))
    return "coreml.slice_by_size"


@lowers("reverseSeq")
def reverse_seq(g: GraphBuilder, layer, p) -> str:
    x, lengths = _inputs(g, layer, 2)
    batch, sequence = axis_index(g, int(p.batchAxis), x.rank), axis_index(g, int(p.sequenceAxis), x.rank)
    if batch == sequence:
        raise g.fail(f"batchAxis {p.batchAxis} and sequenceAxis {p.sequenceAxis} name one axis")
    if math.prod(lengths.shape) != x.shape[batch]:
        raise g.fail(f"lengths {list(lengths.shape)} must hold one length per batch item ({x.shape[batch]})")
    _known(g, layer.input[1], lambda v: lengths_problem(x.shape[batch], x.shape[sequence], v))
    lengths = lengths if lengths.rank == 1 else reshape(g, lengths, (x.shape[batch],))
    g.coreml("reverse_sequences", (x.tensor, lengths.tensor, g.i32(x.rank - 1 - batch), g.i32(x.rank - 1 - sequence),
                                   g.output(layer.output[0], x.shape)))
    return "coreml.reverse_sequences"


@lowers("slidingWindows")
def sliding_windows(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axis = axis_index(g, int(p.axis), x.rank)
    length, window, step = x.shape[axis], int(p.windowSize), int(p.step)
    if window > length:
        raise g.fail(f"windowSize {window} is longer than axis {axis} of {list(x.shape)}")
    count = (length - window) // step + 1
    # window m, element w is element m * step + w of the axis: a gather of constant indices [M, W]
    starts = np.arange(count).reshape(-1, 1) * step + np.arange(window)
    indices = Blob(g.constant(starts.astype(np.float32)), (count, window))
    shape = x.shape[:axis] + (count, window) + x.shape[axis + 1:]
    g.coreml("gather", (x.tensor, indices.tensor, g.enum(INDEX_FORMS.index("axis")), g.i32(x.rank - 1 - axis),
                        g.output(layer.output[0], shape)))
    return f"coreml.gather of {count} windows"


def _band(rows: int, columns: int, below: int | None, above: int | None) -> np.ndarray:
    """1.0 where ``-below <= j - i <= above`` (None: no bound that side), for a matrix of ``rows x columns``."""
    offset = np.arange(columns).reshape(1, -1) - np.arange(rows).reshape(-1, 1)
    keep = np.ones((rows, columns), bool)
    if below is not None:
        keep &= offset >= -below
    if above is not None:
        keep &= offset <= above
    return keep.astype(np.float32)


@lowers("matrixBandPart", "lowerTriangular", "upperTriangular")
def band(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    if x.rank < 2:
        raise g.fail(f"input of shape {list(x.shape)} has rank {x.rank}; the layer needs a matrix (rank 2 or more)")
    kind = layer.WhichOneof("layer")
    if kind == "matrixBandPart":  # a negative count keeps that whole triangle
        below = None if p.numLower < 0 else int(p.numLower)
        above = None if p.numUpper < 0 else int(p.numUpper)
    elif kind == "lowerTriangular":  # keep j - i <= k
        below, above = None, int(p.k)
    else:  # upperTriangular: keep j - i >= k
        below, above = -int(p.k), None
    mask = _band(x.shape[-2], x.shape[-1], below, above)
    zero = Blob(g.constant(np.zeros((1, 1), np.float32)), (1, 1))
    _select(g, Blob(g.constant(mask), mask.shape), x, zero, layer.output[0])
    return "coreml.select with a constant band"


@lowers("rangeStatic")
def range_static(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) != 0 or len(layer.output) != 1:
        raise g.fail(f"expected no input and 1 output, got {len(layer.input)} and {len(layer.output)}")
    return value_range(g, layer, float(p.startValue), float(p.endValue), float(p.stepSizeValue))


def value_range(g: GraphBuilder, layer, start: float, end: float, step: float) -> str:
    """The layer's output is ``numpy.arange(start, end, step)``, a constant tensor."""
    count = _range_count(start, end, step)
    if count is None:
        raise g.fail(f"the range from {start} to {end} by {step} holds no value")
    values = (start + np.arange(count, dtype=np.float64) * step).astype(np.float32)
    g.constant_blob(layer.output[0], values)
    return "a constant tensor"


def _range_count(start: float, end: float, step: float) -> int | None:
    """numpy.arange's length ``ceil((end - start) / step)``, None when not positive and finite."""
    if step == 0 or not all(map(math.isfinite, (start, end, step))):
        return None
    count = math.ceil((end - start) / step)
    return count if count >= 1 else None

