"""More of the later spec's rank-N layers, all data movement or constants: Copy, Tile,
Stack, SplitND, SliceStatic, Reverse, ConstantPad, ArgMax/ArgMin,
RankPreservingReshape, ReshapeLike, BroadcastTo{Static,Like}, Fill{Static,Like},
EmbeddingND."""
from __future__ import annotations

import math

import numpy as np

from ...operations.coreml.layout import PAD_MODES
from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from .common import axis_index, concat, only_input, reshape, single, split_views, view
from .normalization import reduce
from .registry import lowers


@lowers("copy")
def copy(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    reshape(g, x, x.shape, layer.output[0])
    return "coreml.reshape (a copy)"


def _tile_to(g: GraphBuilder, x: Blob, shape, name: str) -> None:
    if x.rank < len(shape):
        x = reshape(g, x, (1,) * (len(shape) - x.rank) + x.shape)
    if len(shape) != x.rank or any(t % s for t, s in zip(shape, x.shape)):
        raise g.fail(f"{list(x.shape)} does not tile or broadcast to {list(shape)}")
    g.coreml("tile", (x.tensor, g.output(name, shape)))


@lowers("tile")
def tile(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    reps = [int(r) for r in p.reps]
    if len(reps) < x.rank:
        reps = [1] * (x.rank - len(reps)) + reps
    shape = tuple(r * d for r, d in zip(reps, (1,) * (len(reps) - x.rank) + x.shape))
    _tile_to(g, x, shape, layer.output[0])
    return "coreml.tile"


@lowers("broadcastToStatic", "broadcastToLike")
def broadcast_to(g: GraphBuilder, layer, p) -> str:
    x = g.blob(layer.input[0])
    if layer.WhichOneof("layer") == "broadcastToLike":
        target = g.blob(layer.input[1]).shape
    else:
        target = tuple(int(d) for d in p.targetShape)
    return broadcast_blob(g, x, target, layer.output[0])


def broadcast_blob(g: GraphBuilder, x: Blob, target, name: str) -> str:
    """Blob ``name`` is ``x`` broadcast to ``target`` (NumPy's rules)."""
    rank = max(len(target), x.rank)
    padded = (1,) * (rank - x.rank) + x.shape
    target = (1,) * (rank - len(target)) + tuple(target)
    if any(d not in (1, t) for d, t in zip(padded, target)):
        raise g.fail(f"{list(x.shape)} does not broadcast to {list(target)}")
    _tile_to(g, x, target, name)
    return "coreml.tile"


@lowers("fillStatic", "fillLike")
def fill(g: GraphBuilder, layer, p) -> str:
    if layer.WhichOneof("layer") == "fillLike":
        shape = single(g, layer).shape
    else:
        shape = tuple(int(d) for d in p.targetShape)
    g.constant_blob(layer.output[0], np.full(shape, p.value, np.float32))
    return "a constant tensor"


@lowers("getShape")
def get_shape(g: GraphBuilder, layer, p) -> str:
    # every blob's shape is fixed when the graph is built (one graph per set of input shapes): a constant
    g.constant_blob(layer.output[0], np.asarray(single(g, layer, held=True).shape, np.float32))
    return "a constant tensor (the input's shape)"


@lowers("stack")
def stack(g: GraphBuilder, layer, p) -> str:
    blobs = [g.blob(n) for n in layer.input]
    rank = blobs[0].rank + 1
    axis = axis_index(g, int(p.axis), rank)
    lifted = [Blob(b.tensor, b.shape[:axis] + (1,) + b.shape[axis:]) for b in blobs]
    concat(g, lifted, axis, layer.output[0])
    return f"{len(blobs)} x coreml.reshape into views"


@lowers("splitND")
def split_nd(g: GraphBuilder, layer, p) -> str:
    x = only_input(g, layer)
    axis = axis_index(g, int(p.axis), x.rank)
    sizes = [int(s) for s in p.splitSizes]
    if not sizes:
        n = int(p.numSplits) or len(layer.output)
        if x.shape[axis] % n:
            raise g.fail(f"axis of {x.shape[axis]} does not split into {n} equal parts")
        sizes = [x.shape[axis] // n] * n
    if len(sizes) != len(layer.output) or sum(sizes) != x.shape[axis]:
        raise g.fail(f"split sizes {sizes} do not fit {len(layer.output)} outputs of an axis of {x.shape[axis]}")
    return split_views(g, x, axis, sizes, layer.output)


def _strided(g: GraphBuilder, x: Blob, spans, name: str, squeeze=()) -> str:
    """Output = x at (start, count, step) per CoreML axis; ``squeeze`` axes are dropped after."""
    shape = tuple(c for _, c, _ in spans)
    final = tuple(d for i, d in enumerate(shape) if i not in squeeze) or (1,)
    if all(s == 1 for _, _, s in spans) and not squeeze:
        view(g, x, [b for b, _, _ in spans], shape, name)
        return "a view of the input"
    out = g.temp(shape) if squeeze else g.output(name, shape)
    g.coreml("slice", (x.tensor, g.ints([b for b, _, _ in spans][::-1]), g.ints([s for _, _, s in spans][::-1]),
                       out))
    if squeeze:
        reshape(g, Blob(out, shape), final, name)
        return "coreml.slice, coreml.reshape"
    return "coreml.slice"


@lowers("sliceStatic")
def slice_static(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    return slice_blob(g, x, p.beginIds, p.endIds, p.strides, p.beginMasks, p.endMasks, p.squeezeMasks,
                      layer.output[0])


def slice_blob(g: GraphBuilder, x: Blob, begin, end, strides, begin_masks, end_masks, squeeze_masks,
               name: str) -> str:
    """Blob ``name`` is ``x`` sliced as SliceStatic says (masks shorter than the rank are padded with False)."""
    n = x.rank
    fields = [list(begin), list(end), list(strides)]
    if any(len(f) != n for f in fields):
        raise g.fail(f"beginIds, endIds and strides need {n} values each, got {[len(f) for f in fields]}")
    masks = [list(m) + [False] * (n - len(m)) for m in (begin_masks, end_masks, squeeze_masks)]
    if any(len(m) != n for m in masks):
        raise g.fail(f"the masks need {n} values each, got {[len(m) for m in masks]}")
    spans, squeeze = [], []
    for i in range(n):
        step = int(strides[i]) or 1
        if masks[2][i]:
            start = int(begin[i]) % x.shape[i]
            spans.append((start, 1, 1))
            squeeze.append(i)
            continue
        sl = slice(None if masks[0][i] else int(begin[i]), None if masks[1][i] else int(end[i]), step)
        indices = range(*sl.indices(x.shape[i]))
        if not indices:
            raise g.fail(f"axis {i} of {x.shape[i]} is sliced empty")
        spans.append((indices.start, len(indices), indices.step))
    return _strided(g, x, spans, name, tuple(squeeze))


@lowers("reverse")
def reverse(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    flags = list(p.reverseDim) + [False] * (x.rank - len(p.reverseDim))
    spans = [(d - 1, d, -1) if f else (0, d, 1) for d, f in zip(x.shape, flags)]
    return _strided(g, x, spans, layer.output[0])


@lowers("constantPad")
def constant_pad(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    amounts = [int(a) for a in p.padAmounts]
    if len(amounts) != 2 * x.rank:
        raise g.fail(f"padAmounts needs {2 * x.rank} values, got {len(amounts)}")
    pairs = [(amounts[2 * i], amounts[2 * i + 1]) for i in range(x.rank)]
    if p.padToGivenOutputSizeMode:
        # the amounts name the output size; the side given a non-zero amount receives the padding
        if any(a and b for a, b in pairs):
            raise g.fail(f"padAmounts {amounts} give both sides of an axis in padToGivenOutputSizeMode")
        grow = [max(0, a + b - d) for d, (a, b) in zip(x.shape, pairs)]
        pairs = [(n, 0) if a else (0, n) for n, (a, _) in zip(grow, pairs)]
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, pairs))
    if any(b < 0 for _, b in pairs):
        raise g.fail(f"padAmounts {amounts} do not fit {list(x.shape)}")
    g.coreml("pad", (x.tensor, g.ints([a for a, _ in pairs][::-1]), g.enum(PAD_MODES.index("constant")),
                     g.f32(p.value), g.output(layer.output[0], shape)))
    return "coreml.pad(constant)"


@lowers("argMax", "argMin")
def arg_extreme(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    operation = "argmax" if layer.WhichOneof("layer") == "argMax" else "argmin"
    return reduce(g, x, layer.output[0], (int(p.axis),), operation, 0.0, keep=not p.removeDim or x.rank == 1)


def _resolve(g: GraphBuilder, x: Blob, target) -> tuple[int, ...]:
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(target)]
    if shape.count(-1) > 1:
        raise g.fail(f"targetShape {list(target)} has more than one -1")
    known = math.prod(d for d in shape if d != -1)
    shape = [math.prod(x.shape) // known if d == -1 else d for d in shape]
    if math.prod(shape) != math.prod(x.shape):
        raise g.fail(f"cannot reshape {list(x.shape)} to {list(target)}")
    return tuple(shape)


@lowers("rankPreservingReshape")
def rank_preserving_reshape(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    if len(p.targetShape) != x.rank:
        raise g.fail(f"targetShape {list(p.targetShape)} does not keep rank {x.rank}")
    reshape(g, x, _resolve(g, x, [int(d) for d in p.targetShape]), layer.output[0])
    return "coreml.reshape"


@lowers("reshapeLike")
def reshape_like(g: GraphBuilder, layer, p) -> str:
    x, like = g.blob(layer.input[0]), g.blob(layer.input[1])
    reshape(g, x, _resolve(g, x, like.shape), layer.output[0])
    return "coreml.reshape"


@lowers("embeddingND")
def embedding_nd(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    if x.rank < 2 or x.shape[-1] != 1:
        raise g.fail(f"indices must have rank 2 or more and a last dimension of 1, got {list(x.shape)}")
    size, vocab = int(p.embeddingSize), int(p.vocabSize)
    table = load_weights(p.weights, (size, vocab), "weights")
    bias = load_weights(p.bias, (size,), "bias") if p.hasBias else None
    g.coreml("embedding", (x.tensor, g.constant(table), None if bias is None else g.constant(bias),
                           g.output(layer.output[0], x.shape[:-1] + (size,))))
    return "coreml.embedding"
