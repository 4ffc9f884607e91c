"""The later spec's layers whose output shape depends on data.

RangeDynamic, ReshapeDynamic, SliceDynamic, FillDynamic and BroadcastToDynamic take the shape (or the range, or the
slice) from input values: ``control.KEYED`` starts a segment at each, whose graph is built per signature of those
values, so here they are known (``GraphBuilder.values``) and the layer lowers as its static form does.
NonMaximumSuppression keeps a fixed output shape unless ``maxBoxes`` comes from an input (keyed too).
WhereNonZero's length is known only once it ran: it ends its segment (``control.COUNTED``), writing every
possible row and their count; the host keeps the rows filled."""
from __future__ import annotations

import math

import numpy as np

from ..builder import GraphBuilder
from ..control import count_blob
from .common import integer_values, known_value, shape_value, single
from .indexing import value_range
from .registry import lowers
from .shape_nd import broadcast_blob, slice_blob
from .tensor_nd import reshape_to


def _counts(g: GraphBuilder, layer, low: int, high: int, outputs: int = 1) -> None:
    if not low <= len(layer.input) <= high or len(layer.output) != outputs:
        takes = f"{low}" if low == high else f"{low} to {high}"
        raise g.fail(f"expected {takes} input(s) and {outputs} output(s), got {len(layer.input)} and "
                     f"{len(layer.output)}")


def _scalar(g: GraphBuilder, name: str, what: str) -> float:
    value = known_value(g, name)
    if value.size != 1:
        raise g.fail(f"the {what} input '{name}' holds {value.size} values; it must hold one")
    return float(value[0])


@lowers("rangeDynamic")
def range_dynamic(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 1, 3)
    end = _scalar(g, layer.input[0], "endValue")
    start = _scalar(g, layer.input[1], "startValue") if len(layer.input) > 1 else float(p.startValue)
    step = _scalar(g, layer.input[2], "stepSizeValue") if len(layer.input) > 2 else float(p.stepSizeValue)
    value_range(g, layer, start, end, step)
    return "a constant tensor (built per value of its inputs)"


@lowers("reshapeDynamic")
def reshape_dynamic(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 2, 2)
    target = integer_values(g, layer.input[1], "the shape input")
    if not 1 <= len(target) <= 6 or any(d < 1 and d != -1 for d in target):
        raise g.fail(f"the shape input '{layer.input[1]}' holds {target}; a shape has 1 to 6 sizes, each at least 1 "
                     "(or one -1)")
    return reshape_to(g, layer, g.blob(layer.input[0]), target) + " (built per target shape)"


@lowers("sliceDynamic")
def slice_dynamic(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 2, 7)
    x = g.blob(layer.input[0])
    names = ("beginIds", "endIds", "strides", "beginMasks", "endMasks", "squeezeMasks")
    fields = [None, list(p.endIds), list(p.strides), list(p.beginMasks), list(p.endMasks), list(p.squeezeMasks)]
    for i, name in enumerate(layer.input[1:]):
        fields[i] = integer_values(g, name, names[i])
    for i in range(3, 6):
        fields[i] = [bool(m) for m in fields[i]]
    if not fields[2]:
        fields[2] = [1] * x.rank
    if not fields[1] and fields[4] == [True] * x.rank:
        fields[1] = [0] * x.rank
    return slice_blob(g, x, *fields, layer.output[0]) + " (built per slice)"


@lowers("fillDynamic")
def fill_dynamic(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 1, 1)
    g.constant_blob(layer.output[0], np.full(shape_value(g, layer.input[0]), p.value, np.float32))
    return "a constant tensor (built per shape)"


@lowers("broadcastToDynamic")
def broadcast_to_dynamic(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 2, 2)
    return broadcast_blob(g, g.blob(layer.input[0]), shape_value(g, layer.input[1]), layer.output[0]) + \
        " (built per shape)"


@lowers("whereNonZero")
def where_nonzero(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer)
    name = layer.output[0]
    g.coreml("where_nonzero", (x.tensor, g.output(name, (math.prod(x.shape), x.rank)),
                               g.output(count_blob(name), (1,))))
    return "coreml.where_nonzero (every possible row; the host keeps the rows filled)"


@lowers("NonMaximumSuppression")
def non_maximum_suppression(g: GraphBuilder, layer, p) -> str:
    _counts(g, layer, 2, 5, outputs=4)
    boxes, scores = g.blob(layer.input[0]), g.blob(layer.input[1])
    if boxes.rank != 3 or boxes.shape[2] != 4:
        raise g.fail(f"boxes {list(boxes.shape)} must be [B, N, 4]")
    if scores.rank != 3 or scores.shape[:2] != boxes.shape[:2]:
        raise g.fail(f"scores {list(scores.shape)} must be [{boxes.shape[0]}, {boxes.shape[1]}, C]")
    n = len(layer.input)
    iou = _scalar(g, layer.input[2], "iouThreshold") if n > 2 else float(p.iouThreshold)
    least = _scalar(g, layer.input[3], "scoreThreshold") if n > 3 else float(p.scoreThreshold)
    most = _scalar(g, layer.input[4], "maxBoxes") if n > 4 else float(p.maxBoxes)
    if not (math.isfinite(iou) and math.isfinite(least)):
        raise g.fail(f"the thresholds (IoU {iou}, score {least}) must be finite")
    if not (math.isfinite(most) and most >= 1 and most == int(most)):
        raise g.fail(f"maxBoxes {most} must be an integer of at least 1")
    b, m = boxes.shape[0], int(most)
    out = [g.output(layer.output[0], (b, m, 4)), g.output(layer.output[1], (b, m, scores.shape[2])),
           g.output(layer.output[2], (b, m)), g.output(layer.output[3], (b,))]
    g.coreml("non_max_suppression", (boxes.tensor, scores.tensor, g.f32(iou), g.f32(least),
                                     g.i32(p.perClassSuppression), *out))
    return f"coreml.non_max_suppression(at most {m} boxes{', per class' if p.perClassSuppression else ''})"
