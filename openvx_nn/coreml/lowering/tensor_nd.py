"""The later spec's rank-N shape and matrix layers: ConcatND, Transpose,
ReshapeStatic, Squeeze, ExpandDims, FlattenTo2D, BatchedMatMul."""
from __future__ import annotations

import math

from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from .common import axis_index, concat, permute, reshape, single
from .registry import lowers


@lowers("concatND")
def concat_nd(g: GraphBuilder, layer, p) -> str:
    blobs = [g.blob(n) for n in layer.input]
    axis = axis_index(g, int(p.axis), blobs[0].rank)
    if not getattr(p, "interleave", False):
        concat(g, blobs, axis, layer.output[0])
        return f"{len(blobs)} x coreml.reshape into views"
    # interleaved (ShuffleNet's channel shuffle): along the axis, row i of input k lands at i * n + k, which is
    # element (i, k) of the output seen as [.., size, n, ..]: each input fills one column of that view
    shape = blobs[0].shape
    if any(b.shape != shape for b in blobs):
        raise g.fail(f"interleaved inputs must have one shape, got {[list(b.shape) for b in blobs]}")
    n = len(blobs)
    column = shape[:axis + 1] + (1,) + shape[axis + 1:]
    grid = f"{layer.output[0]} (interleaved)"
    concat(g, [reshape(g, b, column) for b in blobs], axis + 1, grid)
    reshape(g, g.blob(grid), shape[:axis] + (shape[axis] * n,) + shape[axis + 1:], layer.output[0])
    return f"{n} x coreml.reshape into the columns of [.., {shape[axis]}, {n}, ..], then coreml.reshape"


@lowers("transpose")
def transpose(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axes = [axis_index(g, int(a), x.rank) for a in p.axes]
    if sorted(axes) != list(range(x.rank)):
        raise g.fail(f"axes {list(p.axes)} are not a permutation of 0..{x.rank - 1}")
    permute(g, x, axes, layer.output[0])
    return "coreml.permute"


def _reshaped(g: GraphBuilder, layer, x: Blob, shape) -> str:
    if math.prod(shape) != math.prod(x.shape):
        raise g.fail(f"cannot reshape {list(x.shape)} to {list(shape)}")
    reshape(g, x, shape, layer.output[0])
    return "coreml.reshape"


@lowers("reshapeStatic")
def reshape_static(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    return reshape_to(g, layer, x, [int(d) for d in p.targetShape])


def reshape_to(g: GraphBuilder, layer, x: Blob, target) -> str:
    """The layer's output is ``x`` reshaped to ``target`` (one -1 may stand for the remaining size)."""
    if target.count(-1) > 1:
        raise g.fail(f"targetShape {target} has more than one -1")
    known = math.prod(d for d in target if d != -1)
    shape = [math.prod(x.shape) // known if d == -1 else d for d in target]
    return _reshaped(g, layer, x, shape)


@lowers("squeeze")
def squeeze(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axes = {axis_index(g, int(a), x.rank) for a in p.axes}
    if p.squeezeAll:
        axes = {i for i, d in enumerate(x.shape) if d == 1}
    if any(x.shape[a] != 1 for a in axes):
        raise g.fail(f"axes {sorted(axes)} of {list(x.shape)} are not all of size 1")
    shape = [d for i, d in enumerate(x.shape) if i not in axes] or [1]
    return _reshaped(g, layer, x, shape)


@lowers("expandDims")
def expand_dims(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    rank = x.rank + len(p.axes)
    axes = {axis_index(g, int(a), rank) for a in p.axes}
    if len(axes) != len(p.axes):
        raise g.fail(f"axes {list(p.axes)} name one axis of the rank-{rank} output twice; allowed distinct axes")
    dims = iter(x.shape)
    shape = [1 if i in axes else next(dims) for i in range(rank)]
    return _reshaped(g, layer, x, shape)


@lowers("flattenTo2D")
def flatten_to_2d(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    axis = int(p.axis) % (x.rank + 1) if p.axis >= -x.rank else 0
    return _reshaped(g, layer, x, [math.prod(x.shape[:axis]), math.prod(x.shape[axis:])])


@lowers("batchedMatmul")
def batched_matmul(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) == 2:
        a, b = g.blob(layer.input[0]), g.blob(layer.input[1])
        bias = None
    elif len(layer.input) == 1:
        a = g.blob(layer.input[0])
        k, n = int(p.weightMatrixFirstDimension), int(p.weightMatrixSecondDimension)
        # stored like an inner product's, [X2, X1] row-major (what coremltools writes)
        b = Blob(g.constant(load_weights(p.weights, (n, k), "weights").T), (k, n))
        bias = g.constant(load_weights(p.bias, (n,), "bias")) if p.hasBias else None
    else:
        raise g.fail(f"batched matmul takes 1 or 2 inputs, got {len(layer.input)}")
    vector = a.rank == 1 and len(layer.input) == 1  # (X1,) -> (1, X1); the output (X2,) keeps the rank
    if a.rank == 1:  # the seed: a 1-D first tensor gets a 1 prepended, a 1-D second one a 1 appended (both kept)
        a = reshape(g, a, (1,) + a.shape)
    if b.rank == 1:
        b = reshape(g, b, b.shape + (1,))
    m = a.shape[-1] if p.transposeA else a.shape[-2]
    n = b.shape[-2] if p.transposeB else b.shape[-1]
    batch_a, batch_b = a.shape[:-2], b.shape[:-2]
    r = max(len(batch_a), len(batch_b))
    pa, pb = (1,) * (r - len(batch_a)) + batch_a, (1,) * (r - len(batch_b)) + batch_b
    if any(x != y and 1 not in (x, y) for x, y in zip(pa, pb)):
        raise g.fail(f"batch shapes {list(batch_a)} and {list(batch_b)} do not broadcast")
    shape = tuple(max(x, y) for x, y in zip(pa, pb)) + (m, n)
    out = g.temp(shape) if vector else g.output(layer.output[0], shape)
    g.coreml("batched_matmul", (a.tensor, b.tensor, g.i32(p.transposeA), g.i32(p.transposeB), bias, out))
    if vector:
        reshape(g, Blob(out, shape), (n,), layer.output[0])
    return "coreml.batched_matmul"
