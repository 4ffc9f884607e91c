"""The later spec's 3-D layers on rank-5 blobs ``[batch, channels, depth, height, width]``: Convolution3D and
Pooling3D (``convolution3d`` / ``pool3d`` kernels), GlobalPooling3D (``reduce`` over depth, height and width).

Padding: CUSTOM takes the layer's six amounts; VALID none; SAME gives ``ceil(in / stride)`` outputs and pads
``max((out - 1) * stride + span - in, 0)`` in all, half (rounded down) before and the rest after (the seed's
example: depth 3, kernel 3, stride 2 pads 1 and 1; height 8 pads 0 and 1)."""
from __future__ import annotations

from ...operations.coreml.volume import POOL_MODES
from ..builder import GraphBuilder
from ..weights import load_weights
from .common import single
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
    if len(layer.input) != 1:
        raise g.fail("weights from a second input are not supported: the layer's weights must be stored in it")
    if getattr(p, "isDeconvolution", False):
        raise g.fail("3-D deconvolution is not part of the specification's Convolution3D layer")
    x = _volume(g, layer)
    c_in, c_out, groups = int(p.inputChannels), int(p.outputChannels), int(p.nGroups)
    if x.shape[1] != c_in:
        raise g.fail(f"input {list(x.shape)} has {x.shape[1]} channels, inputChannels is {c_in}")
    if c_in % groups or c_out % groups:
        raise g.fail(f"nGroups {groups} divides neither inputChannels {c_in} nor outputChannels {c_out} evenly")
    kernel = [int(getattr(p, f"kernel{a}")) for a in AXES]
    stride = [int(getattr(p, f"stride{a}")) for a in AXES]
    dilation = [int(getattr(p, f"dilation{a}")) for a in AXES]
    mode = type(p).PaddingType.Name(p.paddingType)
    pads = _pads(g, p, mode, x.shape[2:], kernel, stride, dilation)
    shape = (x.shape[0], c_out) + _out_sizes(g, x.shape[2:], kernel, stride, dilation, pads)
    weights = g.constant(load_weights(p.weights, [c_out, c_in // groups] + kernel, "weights"))
    bias = g.constant(load_weights(p.bias, (c_out,), "bias")) if p.hasBias else None
    g.coreml("convolution3d", (x.tensor, weights, bias, g.ints(stride + dilation + pads), g.i32(groups),
                               g.output(layer.output[0], shape)))
    return f"coreml.convolution3d({mode.lower()} padding, {groups} group(s))"
