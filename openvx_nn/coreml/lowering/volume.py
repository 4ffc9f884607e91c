"""The later spec's 3-D layers on rank-5 blobs ``[batch, channels, depth, height, width]``: Convolution3D (and its
transposed form, ``deconvolution3d``) and Pooling3D (``convolution3d`` / ``pool3d`` kernels), GlobalPooling3D (``reduce`` over depth, height and width).

Padding: CUSTOM takes the layer's six amounts; VALID none; SAME gives ``ceil(in / stride)`` outputs and pads
``max((out - 1) * stride + span - in, 0)`` in all, half (rounded down) before and the rest after (the seed's
example: depth 3, kernel 3, stride 2 pads 1 and 1; height 8 pads 0 and 1)."""
from __future__ import annotations

from ...operations.coreml.volume import POOL_MODES
from ..builder import GraphBuilder
from ..weights import load_weights
from .common import single, weights_input
from .normalization import reduce
from .registry import lowers

AXES = ("Depth", "Height", "Width")
EDGES = (("Front", "Back"), ("Top", "Bottom"), ("Left", "Right"))


def _volume(g: GraphBuilder, layer):
    x = single(g, layer)
    if x.rank != 5:
        raise g.fail(f"input of shape {list(x.shape)} has rank {x.rank}; the layer needs rank 5 "
                     "[batch, channels, depth, height, width]")
    return x


def _pads(g: GraphBuilder, p, mode: str, sizes, kernel, stride, dilation) -> list[int]:
    """[front, back, top, bottom, left, right] for padding ``mode`` (CUSTOM, VALID or SAME)."""
    if mode == "CUSTOM":
        return [int(getattr(p, f"customPadding{edge}")) for pair in EDGES for edge in pair]
    if mode == "VALID":
        return [0] * 6
    pads = []
    for n, k, s, d in zip(sizes, kernel, stride, dilation):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads += [total // 2, total - total // 2]
    return pads


def _out_sizes(g: GraphBuilder, sizes, kernel, stride, dilation, pads) -> tuple[int, ...]:
    out = []
    for i, (n, k, s, d) in enumerate(zip(sizes, kernel, stride, dilation)):
        span = (k - 1) * d + 1
        m = (n + pads[2 * i] + pads[2 * i + 1] - span) // s + 1
        if m < 1:
            raise g.fail(f"a window of {span} along {AXES[i].lower()} does not fit the padded extent "
                         f"{n + pads[2 * i] + pads[2 * i + 1]}")
        out.append(m)
    return tuple(out)


@lowers("pooling3d")
def pooling3d(g: GraphBuilder, layer, p) -> str:
    x = _volume(g, layer)
    kernel = [int(getattr(p, f"kernel{a}")) for a in AXES]
    stride = [int(getattr(p, f"stride{a}")) for a in AXES]
    mode = type(p).Pooling3DPaddingType.Name(p.paddingType)
    pads = _pads(g, p, mode, x.shape[2:], kernel, stride, (1, 1, 1))
    if any(pads[2 * i + j] >= k for i, k in enumerate(kernel) for j in (0, 1)):
        raise g.fail(f"paddings {pads} (front, back, top, bottom, left, right) must each be less than the window "
                     f"{kernel} on its axis (a window over padding alone has no value)")
    shape = x.shape[:2] + _out_sizes(g, x.shape[2:], kernel, stride, (1, 1, 1), pads)
    kind = POOL_MODES[int(p.type)]
    g.coreml("pool3d", (x.tensor, g.ints(kernel + stride + pads), g.enum(int(p.type)), g.i32(p.countExcludePadding),
                        g.output(layer.output[0], shape)))
    return f"coreml.pool3d({kind}, {mode.lower()} padding)"


@lowers("globalPooling3d")
def global_pooling3d(g: GraphBuilder, layer, p) -> str:
    x = _volume(g, layer)
    return reduce(g, x, layer.output[0], (-3, -2, -1), ("max", "mean")[int(p.type)], 0.0, keep=True)


@lowers("convolution3d")
def convolution3d(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) not in (1, 2) or len(layer.output) != 1:
        raise g.fail(f"expected 1 or 2 inputs (the second the weights) and 1 output, got {len(layer.input)} and "
                     f"{len(layer.output)}")
    x = g.blob(layer.input[0])
    if x.rank != 5:
        raise g.fail(f"input of shape {list(x.shape)} has rank {x.rank}; the layer needs rank 5 "
                     "[batch, channels, depth, height, width]")
    if getattr(p, "isDeconvolution", False):
        return _deconvolution3d(g, layer, p, x)
    c_in, c_out, groups, kernel, stride, dilation, mode = _layer_geometry(g, p, x)
    pads = _pads(g, p, mode, x.shape[2:], kernel, stride, dilation)
    shape = (x.shape[0], c_out) + _out_sizes(g, x.shape[2:], kernel, stride, dilation, pads)
    weights = weights_input(g, layer, [c_out, c_in // groups] + kernel) if len(layer.input) == 2 else \
        g.constant(load_weights(p.weights, [c_out, c_in // groups] + kernel, "weights"))
    bias = g.constant(load_weights(p.bias, (c_out,), "bias")) if p.hasBias else None
    g.coreml("convolution3d", (x.tensor, weights, bias, g.ints(stride + dilation + pads), g.i32(groups),
                               g.output(layer.output[0], shape)))
    return f"coreml.convolution3d({mode.lower()} padding, {groups} group(s))"


def _layer_geometry(g: GraphBuilder, p, x):
    """Convolution3D's channels (checked against the input), groups, kernel, strides, dilations and padding mode."""
    c_in, c_out, groups = int(p.inputChannels), int(p.outputChannels), int(p.nGroups)
    if x.shape[1] != c_in:
        raise g.fail(f"input {list(x.shape)} has {x.shape[1]} channels, inputChannels is {c_in}")
    if c_in % groups or c_out % groups:
        raise g.fail(f"nGroups {groups} divides neither inputChannels {c_in} nor outputChannels {c_out} evenly")
    kernel, stride, dilation = ([int(getattr(p, f"{what}{a}")) for a in AXES]
                                for what in ("kernel", "stride", "dilation"))
    return c_in, c_out, groups, kernel, stride, dilation, type(p).PaddingType.Name(p.paddingType)


def _deconvolution3d(g: GraphBuilder, layer, p, x) -> str:
    """The transposed 3-D convolution coremltools writes (``isDeconvolution``, ``outputShape``): weights stored
    ``[inputChannels, outputChannels / nGroups, kd, kh, kw]`` (PyTorch's order; its builder takes them the other way
    round and transposes); the full result ``(in - 1) * stride + span`` per axis
    is cropped by the CUSTOM paddings (front / top / left from the start, the others from the end), by nothing
    (VALID) or to ``in * stride`` (SAME: half the excess, rounded down, from the start); ``outputShape`` when given
    sets the extent, positions past the full result holding the bias alone."""
    if len(layer.input) != 1:
        raise g.fail("a transposed convolution takes its weights from the layer, not from a second input (the "
                     "seed allows a weights input only when isDeconvolution is false)")
    c_in, c_out, groups, kernel, stride, dilation, mode = _layer_geometry(g, p, x)
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(x.shape[2:], stride, kernel, dilation)]
    if mode == "CUSTOM":
        pads = [int(getattr(p, f"customPadding{edge}")) for pair in EDGES for edge in pair]
        before, sizes = pads[0::2], [f - a - b for f, a, b in zip(full, pads[0::2], pads[1::2])]
    elif mode == "VALID":
        before, sizes = [0, 0, 0], full
    else:
        sizes = [n * s for n, s in zip(x.shape[2:], stride)]
        before = [max(f - n, 0) // 2 for f, n in zip(full, sizes)]
    if len(p.outputShape):
        if len(p.outputShape) != 3:
            raise g.fail(f"outputShape {list(p.outputShape)} must give depth, height and width")
        sizes = [int(d) for d in p.outputShape]
    if min(sizes) < 1:
        raise g.fail(f"the output extent {sizes} (full result {full}, cropped) is empty")
    weights = g.constant(load_weights(p.weights, [c_in, c_out // groups] + kernel, "weights"))
    bias = g.constant(load_weights(p.bias, (c_out,), "bias")) if p.hasBias else None
    geometry = stride + dilation + [v for b in before for v in (b, 0)]
    g.coreml("deconvolution3d", (x.tensor, weights, bias, g.ints(geometry), g.i32(groups),
                                 g.output(layer.output[0], (x.shape[0], c_out, *sizes))))
    return f"coreml.deconvolution3d({mode.lower()} padding, {groups} group(s))"
