"""Sliding windows: ``conv`` and ``deconv`` (groups, ``groups = 0`` depthwise, automatic padding, stride,
dilation, a bias tensor or number) on the grouped convolution kernel; ``box``, ``avg_pool`` and ``rms_pool`` as
a depthwise convolution with a window of ones on the same kernel; ``max_pool`` on the channel-major pooling
kernel. Borders: ``constant`` (zeros) and ``ignore`` (the window's part inside the input) as window offsets,
``replicate`` and ``reflect`` as a pad node first."""
from __future__ import annotations

import math

import numpy as np

from ...operations.coreml.elementwise import COMBINE_OPERATIONS, POINTWISE_FUNCTIONS
from ...operations.coreml.layout import PAD_MODES
from ..builder import Blob, NNEFBuilder
from . import quant8
from .common import literal, result, shape_of
from .registry import lowers

PADDED_BORDERS = ("replicate", "reflect")


def _per_axis(g: NNEFBuilder, values, count: int, default: int, what: str) -> list[int]:
    values = [int(v) for v in values] if values else [default] * count
    if len(values) != count:
        raise g.fail(f"{what} {values} must give {count} values")
    return values


def padding(g: NNEFBuilder, op, extent, kernel, stride, dilation, out=None) -> tuple[list[int], list[int]]:
    """(before, after) per axis of ``extent``: the operation's, or NNEF's automatic padding (``padding = []``:
    output ``ceil(extent / stride)``, the total split with the smaller half before)."""
    given = op.attribs.get("padding") or []
    if given:
        if len(given) != len(extent):
            raise g.fail(f"padding {given} must give one (before, after) pair per axis of {list(extent)}")
        return [int(p[0]) for p in given], [int(p[1]) for p in given]
    before, after = [], []
    for n, k, s, d in zip(extent, kernel, stride, dilation):
        o = -(-n // s)
        total = max(0, (o - 1) * s + (k - 1) * d + 1 - n)
        before.append(total // 2), after.append(total - total // 2)
    return before, after


def _pad_node(g: NNEFBuilder, x: Blob, before, after, mode: str, value: float = 0.0) -> Blob:
    """``x`` padded by NNEF-order amounts (one per axis) in ``mode``."""
    shape = tuple(n + b + a for n, b, a in zip(x.shape, before, after))
    out = g.temp(shape)
    g.coreml("pad", (x.tensor, g.ints(list(reversed(before))), g.enum(PAD_MODES.index(mode)), g.f32(value), out))
    return Blob(out, shape)


def _constant(g: NNEFBuilder, value, what: str) -> np.ndarray:
    """The values of an operand known at load (a variable or a constant), for a kernel's static parameter."""
    if not isinstance(value, str):
        return np.asarray(value, np.float32)
    known = g.values.get(str(value))
    if known is None:
        raise g.fail(f"the {what} '{value}' must be a variable or a constant (computed {what}s are not supported)")
    return known


def _convolve(g: NNEFBuilder, x: Blob, weights: np.ndarray, bias, groups: int, stride, dilation, before, after,
              out_shape, name: str | None, transposed: bool = False) -> Blob:
    out = g.output(name, out_shape) if name else g.temp(out_shape)
    geometry = [groups, stride[0], stride[1], dilation[0], dilation[1], before[0], after[0], before[1], after[1],
                int(transposed)]
    g.coreml("convolution", (x.tensor, g.constant(weights), None if bias is None else g.constant(bias),
                             g.ints(geometry), None, None, out))
    return Blob(out, tuple(out_shape))


def _bias(g: NNEFBuilder, value, channels: int) -> np.ndarray | None:
    number = literal(value)
    if number is not None:
        return None if number == 0.0 else np.full(channels, number, np.float32)
    bias = _constant(g, value, "bias")
    if bias.size not in (1, channels):
        raise g.fail(f"bias of shape {list(bias.shape)} does not match {channels} output channels")
    return np.broadcast_to(bias.reshape(-1), (channels,)).astype(np.float32)


def _spatial(g: NNEFBuilder, x: Blob) -> None:
    if x.rank != 4:
        raise g.fail(f"input of shape {list(x.shape)}: only 2-D windows on [N, C, H, W] are supported")


def _border(g: NNEFBuilder, op, allowed) -> str:
    border = op.attribs.get("border", "constant")
    if border not in allowed:
        raise g.fail(f"border '{border}' is not supported here (expected one of {', '.join(allowed)})")
    return border


def _filtered(g: NNEFBuilder, op, fits):
    """(input, filter, result name, its shape, groups, stride, dilation) of ``conv`` or ``deconv``; ``fits(w,
    channels, groups)`` says whether the filter's shape fits the input's channels."""
    x = g.blob(str(op.inputs["input"]))
    _spatial(g, x)
    w = _constant(g, op.inputs["filter"], "filter")
    name = result(op)
    channels = x.shape[1]
    groups = int(op.attribs.get("groups", 1)) or channels
    if w.ndim != 4 or channels % groups or not fits(w, channels, groups):
        raise g.fail(f"filter {list(w.shape)} does not fit {channels} input channels in {groups} groups")
    stride = _per_axis(g, op.attribs.get("stride"), 2, 1, "stride")
    dilation = _per_axis(g, op.attribs.get("dilation"), 2, 1, "dilation")
    return x, w, name, shape_of(g, name), groups, stride, dilation


@lowers("conv")
def conv(g: NNEFBuilder, op) -> str:
    """Filter [O, C / groups, KH, KW]."""
    x, w, name, out_shape, groups, stride, dilation = _filtered(
        g, op, lambda w, c, groups: w.shape[0] % groups == 0 and w.shape[1] * groups == c)
    channels = x.shape[1]
    kernel = list(w.shape[2:])
    before, after = padding(g, op, x.shape[2:], kernel, stride, dilation)
    border = _border(g, op, ("constant", "ignore") + PADDED_BORDERS)
    on_uint8 = quant8.conv(g, op, x, groups, stride, dilation, before, after, border, out_shape, name)
    if on_uint8 is not None:
        return on_uint8
    if border in PADDED_BORDERS:
        x = _pad_node(g, x, [0, 0] + before, [0, 0] + after, border)
        before, after = [0, 0], [0, 0]
    _convolve(g, x, w, _bias(g, op.inputs["bias"], w.shape[0]), groups, stride, dilation, before, after,
              out_shape, name)
    kind = "depthwise" if groups == channels and groups > 1 else f"{groups} groups" if groups > 1 else "dense"
    return f"coreml.convolution({kind})"


@lowers("deconv")
def deconv(g: NNEFBuilder, op) -> str:
    """Filter [C, O / groups, KH, KW]."""
    x, w, name, out_shape, groups, stride, dilation = _filtered(g, op, lambda w, c, groups: w.shape[0] == c)
    _border(g, op, ("constant", "ignore"))
    kernel = list(w.shape[2:])
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(x.shape[2:], stride, kernel, dilation)]
    given = op.attribs.get("padding") or []
    if given:
        before = [int(p[0]) for p in given]
    else:
        before = [max(0, f - o) // 2 for f, o in zip(full, out_shape[2:])]
    after = [f - b - o for f, b, o in zip(full, before, out_shape[2:])]
    how = "coreml.convolution(transposed)"
    if dilation != [1, 1]:  # the kernel's transposed route has no dilation: the same taps with zeros between
        spread = np.zeros(w.shape[:2] + tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation)), np.float32)
        spread[:, :, ::dilation[0], ::dilation[1]] = w
        w, how = spread, f"{how}, the filter spread by the dilation {dilation}"
    _convolve(g, x, w, _bias(g, op.inputs["bias"], out_shape[1]), groups, stride, [1, 1], before, after,
              out_shape, name, transposed=True)
    return how


def _window(g: NNEFBuilder, op, x: Blob):
    """(kernel, stride, dilation, before, after) of a pooling operation's spatial axes (the window spans one
    item and one channel)."""
    _spatial(g, x)
    size = _per_axis(g, op.attribs.get("size"), 4, 1, "size")
    stride = _per_axis(g, op.attribs.get("stride"), 4, 1, "stride")
    dilation = _per_axis(g, op.attribs.get("dilation"), 4, 1, "dilation")
    before, after = padding(g, op, x.shape, size, stride, dilation)
    if size[:2] != [1, 1] or stride[:2] != [1, 1] or before[:2] != [0, 0] or after[:2] != [0, 0]:
        raise g.fail(f"windows over the batch or channel axes (size {size}, stride {stride}) are not supported")
    return size[2:], stride[2:], dilation[2:], before[2:], after[2:]


def window_sum(g: NNEFBuilder, op, x: Blob, out_shape, name: str | None, scale: float = 1.0,
               borders=("constant", "ignore") + PADDED_BORDERS) -> tuple[Blob, str]:
    """The sum of each window (times ``scale``) as a depthwise convolution with a window of ones; ``ignore``
    sums only the window's part inside the input."""
    kernel, stride, dilation, before, after = _window(g, op, x)
    border = _border(g, op, borders)
    if border in PADDED_BORDERS:
        x = _pad_node(g, x, [0, 0] + before, [0, 0] + after, border)
        before, after = [0, 0], [0, 0]
    channels = x.shape[1]
    ones = np.full((channels, 1, *kernel), scale, np.float32)
    summed = _convolve(g, x, ones, None, channels, stride, dilation, before, after, out_shape, name)
    return summed, border


def _divide_by_count(g: NNEFBuilder, op, x: Blob, summed: Blob, out_shape, name: str) -> None:
    """``summed`` over the number of input elements each window covers (the ``ignore`` border's average)."""
    kernel, stride, dilation, before, after = _window(g, op, x)
    plane = (1, 1) + tuple(x.shape[2:])
    ones = Blob(g.constant(np.ones(plane, np.float32)), plane)
    counts = _convolve(g, ones, np.ones((1, 1, *kernel), np.float32), None, 1, stride, dilation, before, after,
                       (1, 1) + tuple(out_shape[2:]), None)
    g.coreml("combine", (summed.tensor, counts.tensor, g.enum(COMBINE_OPERATIONS.index("divide")), g.f32(0.0),
                         g.output(name, out_shape)))


@lowers("box")
def box(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    out_shape = shape_of(g, name)
    if op.attribs.get("normalize"):
        return _average(g, op, x, name, out_shape)
    window_sum(g, op, x, out_shape, name)
    return "coreml.convolution(depthwise, window of ones)"


def _average(g: NNEFBuilder, op, x: Blob, name: str, out_shape) -> str:
    kernel = _window(g, op, x)[0]
    if op.attribs.get("border", "constant") == "ignore":
        summed, _ = window_sum(g, op, x, out_shape, None)
        _divide_by_count(g, op, x, summed, out_shape, name)
        return "coreml.convolution(depthwise, window of ones) over the count inside the input"
    window_sum(g, op, x, out_shape, name, 1.0 / math.prod(kernel))
    return "coreml.convolution(depthwise, window of 1 / area)"


@lowers("avg_pool")
def avg_pool(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    kernel, stride, dilation, before, after = _window(g, op, x)
    on_uint8 = quant8.pool(g, op, x, "avg", kernel, stride, dilation, before, after,
                           op.attribs.get("border", "constant"), shape_of(g, name), name)
    return on_uint8 or _average(g, op, x, name, shape_of(g, name))


@lowers("rms_pool")
def rms_pool(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    out_shape = shape_of(g, name)
    squares = Blob(g.temp(x.shape), x.shape)
    g.coreml("pointwise", (x.tensor, g.enum(POINTWISE_FUNCTIONS.index("power")), g.floats([1, 0, 2, 0, 0]), None,
                           None, squares.tensor))
    mean = f"{name} mean square"
    how = _average(g, op, squares, mean, out_shape)
    g.coreml("pointwise", (g.blob(mean).tensor, g.enum(POINTWISE_FUNCTIONS.index("sqrt")), g.floats([1, 0, 0, 0, 0]),
                           None, None, g.output(name, out_shape)))
    return f"coreml.pointwise(square), {how}, coreml.pointwise(sqrt)"


@lowers("max_pool")
def max_pool(g: NNEFBuilder, op) -> str:
    x = g.blob(str(op.inputs["input"]))
    name = result(op)
    out_shape = shape_of(g, name)
    kernel, stride, dilation, before, after = _window(g, op, x)
    if dilation != [1, 1]:
        raise g.fail(f"max_pool with dilation {dilation} is not supported")
    border = _border(g, op, ("ignore", "constant") + PADDED_BORDERS)
    on_uint8 = quant8.pool(g, op, x, "max", kernel, stride, dilation, before, after, border, out_shape, name)
    if on_uint8 is not None:
        return on_uint8
    how = "coreml.max_pool"
    if border != "ignore":
        x = _pad_node(g, x, [0, 0] + before, [0, 0] + after, border)
        before = [0, 0]
        how = f"coreml.pad({border}), {how}"
    g.coreml("max_pool", (x.tensor, g.ints([kernel[0], kernel[1], stride[0], stride[1], before[0], before[1]]),
                          g.output(name, out_shape)))
    return how
