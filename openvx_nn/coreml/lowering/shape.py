"""Classic shape layers on rank-5 blobs: concat, split, reshape, flatten, permute,
padding, crop, slice, sequence repeat, reorganize data, plus load constant and
embedding. Splits, crops and unit-stride slices are views: no node at all."""
from __future__ import annotations

import math

from ...operations.coreml.layout import PAD_MODES, REORGANIZE_MODES
from ..builder import GraphBuilder
from ..weights import load_weights
from . import nhwc
from .common import concat, need_rank, only_input, permute, reshape, single, split_views, view
from .registry import lowers


@lowers("concat")
def concat_layer(g: GraphBuilder, layer, p) -> str:
    blobs = [g.held(n) for n in layer.input]
    if len(layer.output) != 1 or not blobs:
        raise g.fail("expected inputs and exactly 1 output")
    axis = -5 if p.sequenceConcat else -3
    for b in blobs:
        need_rank(g, b, -axis)
    early = axis == -3 and layer.output[0] in g.written  # made by a producer writing its slice: stays in NHWC
    if early or axis == -3 and all(n in g.nhwc and len(g.nhwc[n].tensor.dims) == 4 for n in layer.input):
        how = nhwc.concat(g, layer, [g.nhwc_blob(n) for n in layer.input])
        if how is not None:
            return how
    blobs = [g.blob(n) for n in layer.input]
    concat(g, blobs, blobs[0].rank + axis, layer.output[0])
    return f"{len(blobs)} x coreml.reshape into views along {'Seq' if p.sequenceConcat else 'C'}"


@lowers("split")
def split(g: GraphBuilder, layer, p) -> str:
    x = only_input(g, layer)
    need_rank(g, x, 3)
    n = len(layer.output)
    if int(p.nOutputs) not in (0, n) or x.shape[-3] % n:
        raise g.fail(f"{x.shape[-3]} channels do not split into {n} outputs (nOutputs {p.nOutputs})")
    return split_views(g, x, x.rank - 3, [x.shape[-3] // n] * n, layer.output)


@lowers("reshape")
def reshape_layer(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 5, 5)
    target = [int(d) for d in p.targetShape]
    if len(target) == 3:
        shape = x.shape[:2] + tuple(target)
    elif len(target) == 4:
        shape = (target[0], x.shape[1]) + tuple(target[1:])
    else:
        raise g.fail(f"targetShape {target} must have 3 ([C, H, W]) or 4 ([Seq, C, H, W]) values")
    if math.prod(shape) != math.prod(x.shape) or min(shape) < 1:
        raise g.fail(f"cannot reshape {list(x.shape)} to {list(shape)}")
    if p.mode == 0:
        reshape(g, x, shape, layer.output[0])
        return "coreml.reshape"
    # channel last: to [.., H, W, C], reshape as [.., H', W', C'], back to [.., C', H', W']
    hwc = permute(g, x, (0, 1, 3, 4, 2))
    flat = reshape(g, hwc, shape[:2] + (shape[3], shape[4], shape[2]))
    permute(g, flat, (0, 1, 4, 2, 3), layer.output[0])
    return "coreml.permute, coreml.reshape, coreml.permute"


@lowers("flatten")
def flatten(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    shape = x.shape[:-3] + (math.prod(x.shape[-3:]), 1, 1)
    if p.mode == 0:
        reshape(g, x, shape, layer.output[0])
        return "coreml.reshape"
    lead = tuple(range(x.rank - 3))
    hwc = permute(g, x, lead + (x.rank - 2, x.rank - 1, x.rank - 3))
    reshape(g, hwc, shape, layer.output[0])
    return "coreml.permute, coreml.reshape"


@lowers("permute")
def permute_layer(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 5, 5)
    axes = [int(a) for a in p.axis] or [0, 1, 2, 3]
    if sorted(axes) != [0, 1, 2, 3]:
        raise g.fail(f"axis {axes} is not a permutation of [Seq, C, H, W] = 0..3")
    to5 = {0: 0, 1: 2, 2: 3, 3: 4}
    perm = (to5[axes[0]], 1, to5[axes[1]], to5[axes[2]], to5[axes[3]])
    permute(g, x, perm, layer.output[0])
    return "coreml.permute"


@lowers("padding")
def padding_layer(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    edges = p.paddingAmounts.borderAmounts
    amounts = [(int(e.startEdgeSize), int(e.endEdgeSize)) for e in edges] + [(0, 0)] * (2 - len(edges))
    (top, bottom), (left, right) = amounts[:2]
    kind = p.WhichOneof("PaddingType") or "constant"
    mode = {"constant": "constant", "reflection": "reflect", "replication": "replicate"}[kind]
    if mode == "reflect" and (max(top, bottom) >= x.shape[-2] or max(left, right) >= x.shape[-1]):
        raise g.fail(f"reflection padding {amounts} needs more than {list(x.shape[-2:])} inputs")
    shape = x.shape[:-2] + (x.shape[-2] + top + bottom, x.shape[-1] + left + right)
    value = p.constant.value if kind == "constant" else 0.0
    g.coreml("pad", (x.tensor, g.ints([left, top] + [0] * (x.rank - 2)), g.enum(PAD_MODES.index(mode)),
                     g.f32(value), g.output(layer.output[0], shape)))
    return f"coreml.pad({mode})"


@lowers("crop")
def crop(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) not in (1, 2):
        raise g.fail(f"crop takes 1 or 2 inputs, got {len(layer.input)}")
    x = g.blob(layer.input[0])
    need_rank(g, x, 3)
    if len(layer.input) == 2:
        ref = g.blob(layer.input[1])
        offset = [int(o) for o in p.offset] or [0, 0]
        top, left = offset
        h, w = ref.shape[-2:]
    else:
        edges = p.cropAmounts.borderAmounts
        amounts = [(int(e.startEdgeSize), int(e.endEdgeSize)) for e in edges] + [(0, 0)] * (2 - len(edges))
        (top, bottom), (left, right) = amounts[:2]
        h, w = x.shape[-2] - top - bottom, x.shape[-1] - left - right
    if h < 1 or w < 1 or top + h > x.shape[-2] or left + w > x.shape[-1]:
        raise g.fail(f"crop of {h}x{w} at ({top}, {left}) does not fit {list(x.shape)}")
    view(g, x, [0] * (x.rank - 2) + [top, left], x.shape[:-2] + (h, w), layer.output[0])
    return "a view of the input"


@lowers("slice")
def slice_layer(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    cm_axis = x.rank - 3 + int(p.axis)
    n = x.shape[cm_axis]
    start = p.startIndex + n if p.startIndex < 0 else p.startIndex
    end = p.endIndex + n if p.endIndex < 0 else p.endIndex
    step = int(p.stride) or 1
    count = len(range(start, min(end, n), step))
    if not 0 <= start < n or count < 1:
        raise g.fail(f"slice [{p.startIndex}:{p.endIndex}:{step}] of an axis of {n} is empty or out of range")
    shape = list(x.shape)
    shape[cm_axis] = count
    begin = [0] * x.rank
    begin[cm_axis] = start
    if step == 1:
        view(g, x, begin, shape, layer.output[0])
        return "a view of the input"
    steps = [1] * x.rank
    steps[cm_axis] = step
    g.coreml("slice", (x.tensor, g.ints(begin[::-1]), g.ints(steps[::-1]), g.output(layer.output[0], shape)))
    return "coreml.slice"


@lowers("sequenceRepeat")
def sequence_repeat(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 5, 5)
    n = int(p.nRepetitions) or 1
    g.coreml("tile", (x.tensor, g.output(layer.output[0], (x.shape[0] * n,) + x.shape[1:])))
    return "coreml.tile"


@lowers("reorganizeData")
def reorganize(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    need_rank(g, x, 3)
    b = int(p.blockSize)
    mode = REORGANIZE_MODES[p.mode] if p.mode < len(REORGANIZE_MODES) else None
    c, h, w = x.shape[-3:]
    if mode is None or b < 1:
        raise g.fail(f"reorganize mode {p.mode} with block size {b} is not defined")
    if mode == "space_to_depth":
        ok, chw = h % b == 0 and w % b == 0, (c * b * b, h // b, w // b)
    else:
        ok, chw = c % (b * b) == 0, (c // (b * b), h * b, w * b)
    if not ok:
        raise g.fail(f"block size {b} does not fit [C, H, W] = {[c, h, w]} for {mode}")
    g.coreml("reorganize", (x.tensor, g.i32(b), g.enum(REORGANIZE_MODES.index(mode)),
                            g.output(layer.output[0], x.shape[:-3] + chw)))
    return f"coreml.reorganize({mode})"


@lowers("loadConstant")
def load_constant(g: GraphBuilder, layer, p) -> str:
    shape = tuple(int(d) for d in p.shape)
    if len(shape) != 3:
        raise g.fail(f"shape {list(shape)} must be [C, H, W]")
    data = load_weights(p.data, shape, "data").reshape((1, 1) + shape)
    g.constant_blob(layer.output[0], data)
    return "a constant tensor"


@lowers("loadConstantND")
def load_constant_nd(g: GraphBuilder, layer, p) -> str:
    shape = tuple(int(d) for d in p.shape)
    g.constant_blob(layer.output[0], load_weights(p.data, shape, "data"))
    return "a constant tensor"


@lowers("embedding")
def embedding(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    if x.rank != 5 or x.shape[2:] != (1, 1, 1):
        raise g.fail(f"input must be [Seq, Batch, 1, 1, 1] indices, got {list(x.shape)}")
    table = load_weights(p.weights, (int(p.outputChannels), int(p.inputDim)), "weights")
    bias = load_weights(p.bias, (int(p.outputChannels),), "bias") if p.hasBias else None
    shape = x.shape[:2] + (int(p.outputChannels), 1, 1)
    g.coreml("embedding", (x.tensor, g.constant(table), None if bias is None else g.constant(bias),
                           g.output(layer.output[0], shape)))
    return "coreml.embedding"


