"""Convolution, deconvolution, pooling and inner product onto the NN extension's
layers. The NN extension pads symmetrically and infers the stride (the smallest
that gives the output size); where CoreML's padding is asymmetric, or its stride
is not the one the NN extension would infer, the layer runs as an explicit pad
node, the NN layer at stride 1, and a strided slice. Convolution and deconvolution,
grouped or not, are one ``coreml.convolution`` node each: it takes CoreML's groups,
padding and cropping as they are."""
from __future__ import annotations

import math
import struct

import numpy as np

from ...core.enums import ConvertPolicy, NNPooling, NNRounding, RoundPolicy
from ...operations.coreml.layout import PAD_MODES
from ...operations.geometry import infer_stride, output_size
from ..builder import Blob, GraphBuilder
from ..weights import load_weights
from . import nhwc
from .common import need_rank, reshape, single, weights_input
from .fusion import take_stages
from .registry import lowers

CONV_PARAMS = struct.Struct("<QQiii4xQQ")
SATURATE = ConvertPolicy.VX_CONVERT_POLICY_SATURATE
NEAREST = RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN
FLOOR, CEILING = NNRounding.VX_NN_DS_SIZE_ROUNDING_FLOOR, NNRounding.VX_NN_DS_SIZE_ROUNDING_CEILING
LOWEST = float(np.finfo(np.float32).min)


# -- geometry -------------------------------------------------------------------------------
def padding(g: GraphBuilder, params, size, stride, extent, kernel) -> tuple[list[int], list[int], list[int]]:
    """(before, after, out) per spatial axis [H, W] for valid, same or include-last-pixel padding."""
    kind = params.WhichOneof("ConvolutionPaddingType") if hasattr(params, "isDeconvolution") else \
        params.WhichOneof("PoolingPaddingType")
    before, after, out = [], [], []
    for i in range(2):
        n, k, s = extent[i], kernel[i], stride[i]
        if kind == "same":
            o = -(-n // s)
            total = max(0, (o - 1) * s + k - n)
            small = total // 2
            b = small if params.same.asymmetryMode == 0 else total - small
            before.append(b), after.append(total - b), out.append(o)
        elif kind == "includeLastPixel":
            amounts = list(params.includeLastPixel.paddingAmounts) or [0, 0]
            p = int(amounts[i])
            o = -(-(n + 2 * p - k) // s) + 1
            if p > 0 and (o - 1) * s >= n + p:
                o -= 1
            before.append(p), after.append(max(p, (o - 1) * s + k - n - p)), out.append(o)
        else:
            edges = params.valid.paddingAmounts.borderAmounts if kind == "valid" else []
            b = int(edges[i].startEdgeSize) if len(edges) > i else 0
            a = int(edges[i].endEdgeSize) if len(edges) > i else 0
            before.append(b), after.append(a), out.append((n + b + a - k) // s + 1)
        if out[-1] < 1:
            raise g.fail(f"the window of {k} does not fit an input of {n} with padding {before[-1]}+{after[-1]}")
    return before, after, out


def fit(extent: int, k: int, s: int, before: int, after: int, out: int, max_pad: int | None = None):
    """(pad, rounding) when the NN layer computes exactly this window directly, else None."""
    if before != after or (max_pad is not None and before >= max_pad):
        return None
    for rounding, ceiling in ((FLOOR, False), (CEILING, True)):
        if output_size(extent, before, k, s, ceiling) == out and (
                out == 1 or infer_stride(extent, before, k, out, ceiling) == s):
            return before, rounding
    return None


def pad_blob(g: GraphBuilder, x: Blob, before, after, value: float) -> Blob:
    """x padded by [H, W] amounts with a constant."""
    shape = x.shape[:-2] + (x.shape[-2] + before[0] + after[0], x.shape[-1] + before[1] + after[1])
    out = g.temp(shape)
    vx_before = [before[1], before[0]] + [0] * (x.rank - 2)
    g.coreml("pad", (x.tensor, g.ints(vx_before), g.enum(PAD_MODES.index("constant")), g.f32(value), out))
    return Blob(out, shape)


# -- convolution ------------------------------------------------------------------------------
def _pairs(values, default):
    values = [int(v) for v in values]
    return values if len(values) == 2 else [default, default]


@lowers("convolution")
def convolution(g: GraphBuilder, layer, p) -> str:
    if len(layer.input) == 2 and len(layer.output) == 1:
        return _weights_from_input(g, layer, p)
    x = single(g, layer, held=True)
    need_rank(g, x, 3)
    groups = int(p.nGroups) or 1
    kernel, stride, dilation = _pairs(p.kernelSize, 3), _pairs(p.stride, 1), _pairs(p.dilationFactor, 1)
    c_in, c_out = x.shape[-3], int(p.outputChannels)
    # convolution weights are [O, C/groups, kh, kw]; deconvolution weights [C, O/groups, kh, kw]
    k_chan = c_in // groups
    declared = int(p.kernelChannels) or (c_in if p.isDeconvolution else k_chan)
    if c_in % groups or c_out % groups or declared != (c_in if p.isDeconvolution else k_chan):
        raise g.fail(f"{c_in} input channels, {c_out} outputs and {groups} groups with kernelChannels {k_chan} "
                     "do not divide evenly")
    bias = load_weights(p.bias, (c_out,), "bias") if p.hasBias else None
    if p.isDeconvolution:
        return _deconvolution(g, layer, p, x, groups, kernel, stride, dilation, c_out, bias)
    w = load_weights(p.weights, (c_out, k_chan, kernel[0], kernel[1]), "weights")
    span = [(kernel[i] - 1) * dilation[i] + 1 for i in range(2)]
    before, after, out_hw = padding(g, p, span, stride, x.shape[-2:], span)
    out_shape = x.shape[:-3] + (c_out, out_hw[0], out_hw[1])
    if g.nhwc_route:
        how = nhwc.convolution(g, layer, x, w, bias, groups, stride, dilation, before, after, out_shape)
        if how is not None:
            return how
    x = g.blob(layer.input[0])
    w, bias, clip, residual, name, folded = take_stages(g, w, bias, layer.output[0], out_shape)
    residual = None if residual is None else g.blob(residual)
    out = g.output(name, out_shape)
    geometry = [groups, stride[0], stride[1], dilation[0], dilation[1], before[0], after[0], before[1], after[1], 0]
    g.coreml("convolution", (x.tensor, g.constant(w), None if bias is None else g.constant(bias), g.ints(geometry),
                             None if clip is None else g.floats(list(clip)),
                             None if residual is None else residual.tensor, out))
    folded = f" with {', '.join(folded)} folded in" if folded else ""
    return f"coreml.convolution({_kind(groups, k_chan, c_out)}){folded}"


def _kind(groups: int, per_group: int, c_out: int) -> str:
    if groups == 1:
        return "dense"
    if per_group == 1:
        return "depthwise" + (f", multiplier {c_out // groups}" if c_out != groups else "")
    return f"{groups} groups"


def windowed(g: GraphBuilder, x: Blob, kernel, stride, before, after, out_hw, run, pad_value: float, target,
             channels: int, max_pad: int | None = None) -> str:
    """Run a sliding-window NN layer into ``target``: ``run(x_blob, (pad_x, pad_y), rounding, out)``
    adds the node; directly when the NN layer's geometry matches, else pad, stride 1 and slice."""
    plans = [fit(x.shape[-2 + i], kernel[i], stride[i], before[i], after[i], out_hw[i], max_pad) for i in range(2)]
    if all(pl is not None and pl[1] == plans[0][1] for pl in plans):
        run(x, (plans[1][0], plans[0][0]), plans[0][1], target)
        return "direct"
    if any(before) or any(after):
        extra = [max(0, (out_hw[i] - 1) * stride[i] + kernel[i] - x.shape[-2 + i] - before[i]) for i in range(2)]
        x = pad_blob(g, x, before, extra, pad_value)
    full = [x.shape[-2 + i] - kernel[i] + 1 for i in range(2)]
    dense = g.temp(x.shape[:-3] + (channels, full[0], full[1]))
    run(x, (0, 0), FLOOR, dense)
    step = [stride[1], stride[0]] + [1] * (x.rank - 2)
    g.coreml("slice", (dense, g.ints([0] * x.rank), g.ints(step), target))
    return "padded, stride 1, then coreml.slice"


def _as_volume(g: GraphBuilder, x: Blob) -> Blob:
    """``x`` (``[*lead, C, H, W]``) as the rank-5 ``[lead, C, 1, H, W]`` the 3-D kernels take."""
    return reshape(g, x, (math.prod(x.shape[:-3]), x.shape[-3], 1) + x.shape[-2:])


def _weights_from_input(g: GraphBuilder, layer, p) -> str:
    """A convolution whose weights ``[outputChannels, kernelChannels, kh, kw]`` are its second input (the seed
    allows it when not a deconvolution): the 3-D convolution kernel over a depth of 1, which reads its weights
    at run time."""
    if p.isDeconvolution:
        raise g.fail("a deconvolution takes its weights from the layer, not from a second input (the seed allows "
                     "a weights input only when isDeconvolution is false)")
    x = g.blob(layer.input[0])
    need_rank(g, x, 3)
    groups = int(p.nGroups) or 1
    kernel, stride, dilation = _pairs(p.kernelSize, 3), _pairs(p.stride, 1), _pairs(p.dilationFactor, 1)
    c_in, c_out = x.shape[-3], int(p.outputChannels)
    if c_in % groups or c_out % groups:
        raise g.fail(f"{c_in} input channels and {c_out} outputs do not divide into {groups} groups")
    span = [(kernel[i] - 1) * dilation[i] + 1 for i in range(2)]
    before, after, out_hw = padding(g, p, span, stride, x.shape[-2:], span)
    w = weights_input(g, layer, [c_out, c_in // groups, 1, kernel[0], kernel[1]])
    bias = g.constant(load_weights(p.bias, (c_out,), "bias")) if p.hasBias else None
    lead = math.prod(x.shape[:-3])
    out = g.temp((lead, c_out, 1, out_hw[0], out_hw[1]))
    geometry = [1, stride[0], stride[1], 1, dilation[0], dilation[1], 0, 0, before[0], after[0], before[1], after[1]]
    g.coreml("convolution3d", (_as_volume(g, x).tensor, w, bias, g.ints(geometry), g.i32(groups), out))
    reshape(g, Blob(out, (lead, c_out, 1, out_hw[0], out_hw[1])), x.shape[:-3] + (c_out, out_hw[0], out_hw[1]),
            layer.output[0])
    return "coreml.convolution3d over a depth of 1 (weights from the second input)"


def _deconvolution(g, layer, p, held: Blob, groups, kernel, stride, dilation, c_out, bias) -> str:
    """``held``: the input in whichever layout it is held (its shape; converted only where CoreML's layout runs)."""
    x = held
    og = c_out // groups
    w = load_weights(p.weights, (x.shape[-3], og, kernel[0], kernel[1]), "weights", channel_axis=1)
    full = [(x.shape[-2 + i] - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 for i in range(2)]
    kind = p.WhichOneof("ConvolutionPaddingType")
    if len(p.outputShape) == 2:
        out_hw = [int(v) for v in p.outputShape]
        crop = [full[i] - out_hw[i] for i in range(2)]
        if kind == "valid" and len(p.valid.paddingAmounts.borderAmounts) == 2:
            before = [int(p.valid.paddingAmounts.borderAmounts[i].startEdgeSize) for i in range(2)]
        else:
            before = [c // 2 for c in crop]
    elif kind == "same":
        out_hw = [x.shape[-2 + i] * stride[i] for i in range(2)]
        crop = [full[i] - out_hw[i] for i in range(2)]
        before = [c // 2 if p.same.asymmetryMode == 0 else c - c // 2 for c in crop]
    else:
        edges = p.valid.paddingAmounts.borderAmounts
        before = [int(edges[i].startEdgeSize) if len(edges) > i else 0 for i in range(2)]
        after = [int(edges[i].endEdgeSize) if len(edges) > i else 0 for i in range(2)]
        out_hw = [full[i] - before[i] - after[i] for i in range(2)]
    before = [max(0, v) for v in before]
    if min(out_hw) < 1:
        raise g.fail(f"output {out_hw} at offset {before} does not fit the full deconvolution {full}")
    # outputs past the full transposed convolution (a negative crop at the end) hold the bias alone
    after = [full[i] - before[i] - out_hw[i] for i in range(2)]
    if g.nhwc_route and dilation == [1, 1]:
        how = nhwc.deconvolution(g, layer, x, w, bias, groups, kernel, stride, before, after)
        if how is not None:
            return how
    x = g.blob(layer.input[0])
    bias = None if bias is None else g.constant(bias)
    if dilation != [1, 1]:  # the 3-D transposed convolution over a depth of 1 (it dilates its taps)
        lead = math.prod(x.shape[:-3])
        out = g.temp((lead, c_out, 1, out_hw[0], out_hw[1]))
        geometry = [1, stride[0], stride[1], 1, dilation[0], dilation[1], 0, 0, before[0], 0, before[1], 0]
        g.coreml("deconvolution3d", (_as_volume(g, x).tensor, g.constant(w.reshape(w.shape[:2] + (1,) + w.shape[2:])),
                                     bias, g.ints(geometry), g.i32(groups), out))
        reshape(g, Blob(out, (lead, c_out, 1, out_hw[0], out_hw[1])), x.shape[:-3] + (c_out, out_hw[0], out_hw[1]),
                layer.output[0])
        return f"coreml.deconvolution3d over a depth of 1 (dilation {dilation})"
    out = g.output(layer.output[0], x.shape[:-3] + (c_out, out_hw[0], out_hw[1]))
    geometry = [groups, stride[0], stride[1], 1, 1, before[0], after[0], before[1], after[1], 1]
    g.coreml("convolution", (x.tensor, g.constant(w), bias, g.ints(geometry), None, None, out))
    return f"coreml.convolution(transposed, {_kind(groups, x.shape[-3] // groups, c_out)})"


# -- pooling ------------------------------------------------------------------------------------
@lowers("pooling")
def pooling(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer, held=True)
    need_rank(g, x, 3)
    if p.globalPooling:
        kernel, stride = list(x.shape[-2:]), [1, 1]
        before, after, out_hw = [0, 0], [0, 0], [1, 1]
    else:
        kernel, stride = _pairs(p.kernelSize, 3), _pairs(p.stride, 1)
        before, after, out_hw = padding(g, p, kernel, stride, x.shape[-2:], kernel)
    kind = {0: "max", 1: "average", 2: "l2"}.get(p.type)
    if kind is None:
        raise g.fail(f"pooling type {p.type} is not defined")
    if g.nhwc_route:
        how = nhwc.pooling(g, layer, x, kind, p.globalPooling, p.avgPoolExcludePadding, kernel, stride, before,
                           after, out_hw)
        if how is not None:
            return how
    source = x = g.blob(layer.input[0])
    if kind == "l2":
        source = Blob(g.temp(x.shape), x.shape)
        g.coreml("pointwise", (x.tensor, g.enum(_function("power")), g.floats([1, 0, 2, 0, 0]), None, None,
                               source.tensor))
    if kind == "max" and not p.globalPooling and min(before) >= 0:
        # one kernel at any stride and padding (the NN layer takes neither every stride nor uneven padding,
        # and its max walks strided views: several times slower on a CNN's first pool)
        out = g.output(layer.output[0], x.shape[:-3] + (x.shape[-3], out_hw[0], out_hw[1]))
        g.coreml("max_pool", (x.tensor, g.ints([kernel[0], kernel[1], stride[0], stride[1], before[0], before[1]]),
                              out))
        return "coreml.max_pool"
    vx_kind = NNPooling.VX_NN_POOLING_MAX if kind == "max" else NNPooling.VX_NN_POOLING_AVG

    def run(xb, pad, rounding, out):
        g.node("org.khronos.nn_extension.pooling_layer",
               (xb.tensor, g.enum(vx_kind), g.size(kernel[1]), g.size(kernel[0]), g.size(pad[0]), g.size(pad[1]),
                g.enum(rounding), out))

    out_shape = x.shape[:-3] + (x.shape[-3], out_hw[0], out_hw[1])
    value = LOWEST if kind == "max" else 0.0
    exclude = kind == "average" and p.avgPoolExcludePadding and (any(before) or any(after))
    if kind == "max" or (kind == "average" and not exclude):
        how = windowed(g, source, kernel, stride, before, after, out_hw, run, value,
                       g.output(layer.output[0], out_shape), x.shape[-3], max_pad=min(kernel))
        return f"vxPoolingLayer({kind}), {how}"
    pooled = g.temp(out_shape)
    how = windowed(g, source, kernel, stride, before, after, out_hw, run, value, pooled, x.shape[-3],
                   max_pad=min(kernel))
    if exclude:
        # the NN layer divides by the whole window; divide again by the share of it inside the input
        plane = (1,) * (x.rank - 2) + x.shape[-2:]
        ones = Blob(g.constant(np.ones(plane, np.float32)), plane)
        share = g.temp((1,) * (x.rank - 2) + (out_hw[0], out_hw[1]))
        windowed(g, ones, kernel, stride, before, after, out_hw, run, 0.0, share, 1, max_pad=min(kernel))
        g.coreml("combine", (pooled, share, g.enum(_combine("divide")), g.f32(0.0),
                             g.output(layer.output[0], out_shape)))
        return f"vxPoolingLayer(avg) of the input and of ones, {how}, then coreml.combine(divide)"
    g.coreml("pointwise", (pooled, g.enum(_function("sqrt")), g.floats([math.prod(kernel), 0, 0, 0, 0]),
                           None, None, g.output(layer.output[0], out_shape)))
    return f"coreml.pointwise(square), vxPoolingLayer(avg), coreml.pointwise(sqrt of area * mean); {how}"


def _function(name: str) -> int:
    from ...operations.coreml.elementwise import POINTWISE_FUNCTIONS
    return POINTWISE_FUNCTIONS.index(name)


def _combine(name: str) -> int:
    from ...operations.coreml.elementwise import COMBINE_OPERATIONS
    return COMBINE_OPERATIONS.index(name)


# -- inner product ---------------------------------------------------------------------------
@lowers("innerProduct")
def inner_product(g: GraphBuilder, layer, p) -> str:
    x = single(g, layer, held=True)
    c_in, c_out = int(p.inputChannels), int(p.outputChannels)
    # the seed's matrix of each rank: (x1, x2, x3) is (x1 * x2, x3), a Transformer's tokens; ranks 4 and 5 take
    # the last three dims as the features ([C, H, W]); ranks 1 and 2 the last
    dense = x.rank <= 3
    features = x.shape[-1:] if dense else x.shape[-3:]
    if math.prod(features) != c_in:
        raise g.fail(f"input {list(x.shape)} has {math.prod(features)} features per item, inputChannels is {c_in}")
    w = load_weights(p.weights, (c_out, c_in), "weights")
    bias = load_weights(p.bias, (c_out,), "bias") if p.hasBias else None
    if g.nhwc_route:
        how = nhwc.inner_product(g, layer, w, bias, features)
        if how is not None:
            return how
    x = g.blob(layer.input[0])
    b = None if bias is None else g.constant(bias)
    lead = x.shape[:-1] if dense else x.shape[:-3]
    if not dense:  # the NN layer reads [W, H, C, *lead] against weights [W, H, C, O] and writes [O, *lead]
        vector = g.temp((*lead, c_out)) if lead else g.temp((c_out,))
        g.node("org.khronos.nn_extension.fully_connected_layer",
               (x.tensor, g.constant(w.reshape((c_out,) + features)), b, g.enum(SATURATE), g.enum(NEAREST), vector))
        g.coreml("reshape", (vector, g.output(layer.output[0], lead + (c_out, 1, 1))))
        return "vxFullyConnectedLayer over [C, H, W], then coreml.reshape"
    out = g.output(layer.output[0], lead + (c_out,))
    g.node("org.khronos.nn_extension.fully_connected_layer",
           (x.tensor, g.constant(w), b, g.enum(SATURATE), g.enum(NEAREST), out))
    return "vxFullyConnectedLayer"

