"""The NHWC route: CoreML layers on the NHWC float engines NNAPI's float operations use.

Convolution (dense or depthwise; a folded batchnorm and a ReLU / ReLU1 / ReLU6 clip in the kernel's epilogue),
a transposed convolution whose square kernel is its stride (a 1 x 1 convolution and depth-to-space),
pooling and inner product run as nodes of the ``org.openvx_nn.nnapi.*`` kernels (``float_convolution``,
``float_depthwise``, ``float_pooling``: FMA register tiles, weights packed once, shared with the engine's
helpers, native entries) on blobs held in NHWC. A residual add folded into a dense convolution (and the clip
after it) runs in the kernel's epilogue (``nnapi.conv_2d_residual``: one pass over the output instead of three);
after a depthwise one, and a ReLU or add of their own, on the OpenVX tensor addition and activation layer
(element-wise, so layout-blind, and with native entries: the whole graph can run from C).
A blob changes layout only at the edge of such a region (``GraphBuilder.nhwc_blob`` / ``blob``: one
``coreml.to_nhwc`` / ``coreml.to_chw`` node, once per blob), so the layers between keep NHWC.

A dilated dense convolution (DeepLab's atrous layers) takes it as ``nnapi.grouped_conv_2d`` of one group in NHWC,
which runs on the same float engine with the dilation (``operations/nnapi/windowed_float``); a dilated depthwise one
as ``nnapi.grouped_conv_2d`` of one group per channel, on the depthwise kernel with the dilation; a residual add
after either is a separate add.

A convolution takes this route whenever it fits; pooling, the activations of scalar parameters (ReLU, sigmoid,
hard sigmoid ...), add, multiply and inner product only when an input is already held in NHWC (a conversion for them alone would cost more than it saves). What does not fit --
grouped convolutions other than depthwise, other deconvolutions, paddings whose output extent NNAPI's
arithmetic does not give, L2 pooling, an average counting the padding -- returns None and lowers on CoreML's
layout as before; a clip other than ReLU / ReLU1 / ReLU6 is left to its own layer.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...api.builder_nodes import nnapi_node as node
from ...core.enums import ConvertPolicy, NNActivation, RoundPolicy
from ..builder import Blob, GraphBuilder, nhwc_dims
from . import concat_chains
from .fusion import CLIP_CODES, take_stages

NONE, RELU, RELU1, RELU6 = 0, 1, 2, 3  # NNAPI's fused activation codes


def _sum(g: GraphBuilder, a, b, out, act: int) -> str:
    """``out = act(a + b)`` of two NHWC tensors of one shape, on kernels with native entries (so the graph may run
    from C): the OpenVX tensor addition, then for ReLU or ReLU6 the OpenVX activation layer; ``nnapi.add`` with
    the activation fused for ReLU1 (no OpenVX activation computes it)."""
    if act == RELU1:
        node(g, "add", {"input1": a, "input2": b, "output": out}, {"activation": act})
        return "nnapi.add"
    total = out if act == NONE else g.temp_dims(a.dims)
    g.node("org.khronos.openvx.tensor_add", (a, b, g.enum(ConvertPolicy.VX_CONVERT_POLICY_SATURATE), total))
    if act == NONE:
        return "vxTensorAdd"
    return "vxTensorAdd, " + _activation(g, total, out, act)


def _activation(g: GraphBuilder, x, out, act: int) -> str:
    """``out = act(x)`` for ReLU or ReLU6 by the OpenVX activation layer (any layout: element-wise)."""
    function = NNActivation.VX_NN_ACTIVATION_RELU if act == RELU else NNActivation.VX_NN_ACTIVATION_BRELU
    g.node("org.khronos.nn_extension.activation_layer", (x, g.enum(function), g.f32(6.0), g.f32(0.0), out))
    return "vxActivationLayer(" + ("relu)" if act == RELU else "brelu 6)")


def _window(before: Sequence[int], after: Sequence[int], stride: Sequence[int]) -> dict[str, int]:
    """NNAPI's explicit padding and strides from CoreML's [H, W] amounts."""
    return {"pad_left": before[1], "pad_right": after[1], "pad_top": before[0], "pad_bottom": after[0],
            "stride_w": stride[1], "stride_h": stride[0]}


def _extents_fit(x: Blob, kernel, stride, before, after, out_hw) -> bool:
    """Whether NNAPI's ``(in + pads - k) // stride + 1`` gives CoreML's output extents, pads not negative and every
    value an INT32 scalar (absurd ones are left to CoreML's layout, which names them)."""
    values = [*before, *after, *kernel, *stride]
    return min(values) >= 0 and max(values) < 2**31 and all(
        (x.shape[-2 + i] + before[i] + after[i] - kernel[i]) // stride[i] + 1 == out_hw[i] for i in range(2))


def convolution(g: GraphBuilder, layer, x: Blob, w: np.ndarray, bias, groups: int, stride, dilation, before,
                after, out_shape: tuple[int, ...]) -> str | None:
    """Dense or depthwise convolution on the NHWC engines, or None when it does not fit (module doc)."""
    c_out, k_chan, kh, kw = w.shape
    c_in = x.shape[-3]
    depthwise = groups == c_in and k_chan == 1 and groups > 1
    dilated = list(dilation) != [1, 1]
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    if x.rank < 3 or not (groups == 1 or depthwise) or min(dilation) < 1 or \
            not _extents_fit(x, span, stride, before, after, out_shape[-2:]):
        return None
    w, bias, clip, residual, name, folded = take_stages(g, w, bias, layer.output[0], out_shape, clip_codes=True)
    act = CLIP_CODES[clip] if clip is not None else NONE
    source = g.nhwc_blob(layer.input[0])
    shortcut = g.nhwc_blob(residual) if residual is not None else None
    window = _window(before, after, stride)
    b = None if bias is None else g.constant(np.asarray(bias, np.float32))
    if shortcut is not None and not depthwise and not dilated:  # the add (and the clip) in the kernel's epilogue
        node(g, "conv_2d_residual", {"input": source.tensor, "filter": g.constant(w.transpose(0, 2, 3, 1)), "bias": b,
                                     "residual": shortcut.tensor, "output": _dense_output(g, name, out_shape)},
             {**window, "activation": act})
        how = "nnapi.conv_2d_residual (NHWC, the add in the epilogue)"
        return how + (f" with {', '.join(folded)} folded in" if folded else "") + _into_slice(g, name)
    result = g.temp_dims(nhwc_dims(out_shape)) if shortcut is not None else \
        g.nhwc_output(name, out_shape) if depthwise else _dense_output(g, name, out_shape)
    if depthwise and dilated:  # the same filter, the depthwise kernel with the dilation
        node(g, "grouped_conv_2d", {"input": source.tensor, "filter": g.constant(w.transpose(1, 2, 3, 0)), "bias": b,
                                    "output": result},
             {**window, "dilation_w": dilation[1], "dilation_h": dilation[0], "groups": c_in, "filter_kind": 1,
              "activation": NONE if shortcut is not None else act, "nchw": 0})
    elif depthwise:  # filter [1, kh, kw, C * multiplier]: output o reads channel o // multiplier, as CoreML's groups
        node(g, "depthwise_conv_2d", {"input": source.tensor, "filter": g.constant(w.transpose(1, 2, 3, 0)),
                                      "bias": b, "output": result},
             {**window, "depth_multiplier": c_out // c_in, "activation": NONE if shortcut is not None else act})
    elif dilated:  # filter [O, kh, kw, C], one group, NHWC: the float engine with the dilation
        node(g, "grouped_conv_2d", {"input": source.tensor, "filter": g.constant(w.transpose(0, 2, 3, 1)), "bias": b,
                                    "output": result},
             {**window, "dilation_w": dilation[1], "dilation_h": dilation[0], "groups": 1, "filter_kind": 0,
              "activation": NONE if shortcut is not None else act, "nchw": 0})
    else:  # filter [O, kh, kw, C]
        node(g, "conv_2d", {"input": source.tensor, "filter": g.constant(w.transpose(0, 2, 3, 1)), "bias": b,
                            "output": result}, {**window, "activation": NONE if shortcut is not None else act})
    kind = "depthwise_conv_2d" + (f", multiplier {c_out // c_in}" if depthwise and c_out != c_in else "") \
        if depthwise and not dilated else f"grouped_conv_2d, dilation {list(dilation)}" if dilated else "conv_2d"
    how = f"nnapi.{kind} (NHWC)"
    if shortcut is not None:
        how += " then " + _sum(g, result, shortcut.tensor, g.nhwc_output(name, out_shape), act)
    return how + (f" with {', '.join(folded)} folded in" if folded else "") + _into_slice(g, name)


def _dense_output(g: GraphBuilder, name: str, out_shape: tuple[int, ...]):
    """The tensor a dense convolution writes blob ``name`` into: its slice of a concatenation chain's buffer where
    the plan places it there (``concat_chains.producer_slice``: the float engine writes pixels wider than its
    channels), else a tensor of its own."""
    placed = concat_chains.producer_slice(g, name, out_shape)
    if placed is None:
        placed = concat_chains.early_slot(g, name, out_shape)
    return placed if placed is not None else g.nhwc_output(name, out_shape)


def _into_slice(g: GraphBuilder, name: str) -> str:
    """The lowering's note where blob ``name`` went into a concatenation's slice (:func:`_dense_output`)."""
    return ", into the concatenation's slice" if g.nhwc[name].tensor.parent is not None else ""


def deconvolution(g: GraphBuilder, layer, x: Blob, w: np.ndarray, bias, groups: int, kernel, stride, before,
                  after) -> str | None:
    """A transposed convolution whose square kernel is its stride (U-Net's up-sampling), no groups and no
    cropping: each input pixel alone makes its ``k x k`` block of outputs, so it is a 1 x 1 ``nnapi.conv_2d`` to
    ``k * k * C_out`` channels ordered as ``nnapi.depth_to_space`` reads them, then that rearrangement (no sums
    of its own). ``w``: CoreML's ``[C_in, C_out, kh, kw]``. None when it does not fit."""
    c_in, c_out, kh, kw = w.shape
    if x.rank < 3 or groups != 1 or kh != kw or list(stride) != [kh, kw] or any(before) or any(after):
        return None
    # filter [(i * k + j) * C_out + o, 1, 1, C_in] = w[C_in, o, i, j]: depth_to_space's channel order
    filter_ = np.ascontiguousarray(w.transpose(2, 3, 1, 0)).reshape(kh * kw * c_out, 1, 1, c_in)
    b = None if bias is None else g.constant(np.tile(np.asarray(bias, np.float32), kh * kw))
    out_shape = x.shape[:-3] + (c_out, x.shape[-2] * kh, x.shape[-1] * kw)
    source = g.nhwc_blob(layer.input[0])
    blocks = g.temp_dims((kh * kw * c_out,) + tuple(source.tensor.dims[1:]))
    node(g, "conv_2d", {"input": source.tensor, "filter": g.constant(filter_), "bias": b, "output": blocks},
         {**_window([0, 0], [0, 0], [1, 1]), "activation": NONE})
    slot_view = slot(g, layer.output[0], out_shape)
    node(g, "depth_to_space", {"input": blocks, "output": slot_view if slot_view is not None else
                               g.nhwc_output(layer.output[0], out_shape)}, {"block_size": kh})
    return f"nnapi.conv_2d 1 x 1 to {kh * kw} x {c_out} channels, nnapi.depth_to_space {kh} (NHWC" + \
        (", into the concatenation's slice)" if slot_view is not None else ")")


def slot(g: GraphBuilder, name: str, shape: tuple[int, ...]):
    """The view of the NHWC concatenation that alone reads blob ``name`` (``GraphBuilder.slots``) where ``name``
    goes, the concatenation's output made now; None unless every other input is made, held in NHWC and of its
    extent, so that the concatenation will run in NHWC (``concat``)."""
    layer = g.slots.get(name)
    if layer is None:
        return None
    shapes = [shape if n == name else g.shape_of(n) for n in layer.input]
    if any(s is None or len(s) != len(shape) or s[:-3] != shape[:-3] or s[-2:] != shape[-2:] for s in shapes) or \
            any(n != name and (n not in g.nhwc or len(g.nhwc[n].tensor.dims) != 4) for n in layer.input):
        return None
    target = layer.output[0]
    if target not in g.written:
        if g.known(target):
            return None
        g.nhwc_output(target, shape[:-3] + (sum(s[-3] for s in shapes),) + shape[-2:])
        g.written[target] = set()
    out = g.nhwc[target].tensor
    offset = sum(s[-3] for s in shapes[:list(layer.input).index(name)])
    view = g.view(out, [offset, 0, 0, 0], [offset + shape[-3], *out.dims[1:]])
    g.nhwc[name] = Blob(view, shape)
    g.blobs.pop(name, None)
    g.written[target].add(name)
    return view


def pooling(g: GraphBuilder, layer, x: Blob, kind: str, global_pool: bool, exclude_padding: bool, kernel, stride,
            before, after, out_hw) -> str | None:
    """Max or average pooling of a blob held in NHWC, or None (module doc)."""
    name = layer.input[0]
    if name not in g.nhwc or kind not in ("max", "average") or x.rank < 3:
        return None
    padded = any(before) or any(after)
    if not _extents_fit(x, kernel, stride, before, after, out_hw) or \
            any(before[i] >= kernel[i] or after[i] >= kernel[i] for i in range(2)) or \
            (kind == "average" and padded and not exclude_padding):
        return None  # NNAPI leaves padded positions out of a window; an average counting them is CoreML's own
    out_shape = x.shape[:-2] + tuple(out_hw)
    op = "max_pool_2d" if kind == "max" else "average_pool_2d"
    node(g, op, {"input": g.nhwc_blob(name).tensor, "output": g.nhwc_output(layer.output[0], out_shape)},
         {**_window(before, after, stride), "filter_w": kernel[1], "filter_h": kernel[0], "activation": NONE})
    return f"nnapi.{op} (NHWC{', global' if global_pool else ''})"


def activation(g: GraphBuilder, layer, function: int, a: float, b: float) -> str | None:
    """An OpenVX activation (element-wise, so layout-blind) of a blob held in NHWC, written in NHWC: a swish's
    sigmoid or a ReLU keeps the region in NHWC instead of converting before and after it; None when the input
    is not held in NHWC."""
    name = layer.input[0]
    if name not in g.nhwc:
        return None
    x = g.nhwc[name]
    g.node("org.khronos.nn_extension.activation_layer",
           (x.tensor, g.enum(function), g.f32(a), g.f32(b), g.nhwc_output(layer.output[0], x.shape, x.tensor.dims)))
    return f"vxActivationLayer({NNActivation(function).name.replace('VX_NN_ACTIVATION_', '').lower()}) (NHWC)"


def pointwise(g: GraphBuilder, layer, code: int, function: str, alpha: float, beta: float) -> str | None:
    """A ``coreml.pointwise`` function of scalar parameters (MobileNet v3's hard-swish as thresholded ReLU and
    hard sigmoid) on a blob held in NHWC, written in NHWC; None when the input is not held in NHWC."""
    name = layer.input[0]
    if name not in g.nhwc:
        return None
    x = g.nhwc[name]
    g.coreml("pointwise", (x.tensor, g.enum(code), g.floats([1.0, 0.0, alpha, beta, 0.0]), None, None,
                           g.nhwc_output(layer.output[0], x.shape, x.tensor.dims)))
    return f"coreml.pointwise({function}) (NHWC)"


def multiply(g: GraphBuilder, layer) -> str | None:
    """A product of two blobs of one rank (3 or more) whose shapes broadcast, one of them held in NHWC:
    ``vxTensorMultiply`` on their NHWC tensors (a swish's ``x * sigmoid(x)``, squeeze-and-excitation's
    ``x * gate`` with the gate ``[C, 1, 1]``: OpenVX broadcasts each dim of length 1, and ``[C, W, H, N]`` keeps
    the channels aligned); None otherwise."""
    if len(layer.input) != 2 or len(layer.output) != 1 or not any(n in g.nhwc for n in layer.input) or \
            not all(g.known(n) for n in layer.input):
        return None
    shapes = [g.shape_of(n) for n in layer.input]
    if len(shapes[0]) < 3 or len(shapes[0]) != len(shapes[1]) or \
            any(x != y and 1 not in (x, y) for x, y in zip(*shapes)):
        return None
    a, b = (g.nhwc_blob(n) for n in layer.input)
    if len(a.tensor.dims) != 4 or len(b.tensor.dims) != 4:  # a fully connected layer's [units, N]
        return None
    shape = tuple(max(x, y) for x, y in zip(*shapes))
    g.node("org.khronos.openvx.tensor_multiply", (a.tensor, b.tensor, g.f32(1.0),
                                                   g.enum(ConvertPolicy.VX_CONVERT_POLICY_SATURATE),
                                                   g.enum(RoundPolicy.VX_ROUND_POLICY_TO_NEAREST_EVEN),
                                                   g.nhwc_output(layer.output[0], shape)))
    return "vxTensorMultiply (NHWC)"


def add(g: GraphBuilder, layer) -> str | None:
    """An add of two blobs of one shape, one of them held in NHWC: ``nnapi.add``, or None."""
    if len(layer.input) != 2 or len(layer.output) != 1 or not any(n in g.nhwc for n in layer.input) or \
            not all(g.known(n) for n in layer.input):
        return None
    shapes = {n: (g.nhwc[n] if n in g.nhwc else g.blobs[n]).shape for n in layer.input}
    shape = shapes[layer.input[0]]
    if len(shape) < 3 or shapes[layer.input[1]] != shape:
        return None
    a, b = (g.nhwc_blob(n) for n in layer.input)
    return _sum(g, a.tensor, b.tensor, g.nhwc_output(layer.output[0], shape), NONE) + " (NHWC)"


def inner_product(g: GraphBuilder, layer, w: np.ndarray, bias, features: tuple[int, ...]) -> str | None:
    """An inner product of a ``[C, H, W]`` blob held in NHWC: ``nnapi.fully_connected`` with the weights'
    columns reordered to the NHWC flattening (H, W, C); its ``[units, N]`` output is the NHWC form of the
    ``[units, 1, 1]`` blob. None when the input is not held in NHWC."""
    name = layer.input[0]
    if name not in g.nhwc or len(features) != 3:
        return None
    x = g.nhwc[name]
    c, h, wd = features
    units = w.shape[0]
    columns = w.reshape(units, c, h, wd).transpose(0, 2, 3, 1).reshape(units, h * wd * c)
    out_shape = x.shape[:-3] + (units, 1, 1)
    n = nhwc_dims(out_shape)[3]
    node(g, "fully_connected", {"input": x.tensor, "filter": g.constant(columns),
                                "bias": None if bias is None else g.constant(np.asarray(bias, np.float32)),
                                "output": g.nhwc_output(layer.output[0], out_shape, (units, n))},
         {"activation": NONE})
    return "nnapi.fully_connected (NHWC)"


def concat(g: GraphBuilder, layer, blobs: Sequence[Blob]) -> str | None:
    """A concatenation along C of blobs all held in NHWC, written in NHWC: each copied into its slice of the
    output's first dim (each pixel's channels side by side), so a DenseNet block's ``concat -> batchnorm -> ReLU ->
    convolution`` stays in NHWC instead of converting every layer's input back; an input its producer already
    wrote into its slice (a transposed convolution, a resampling: ``slot``) is not copied."""
    first = blobs[0].shape
    for b in blobs[1:]:
        if len(b.shape) != len(first) or b.shape[:-3] != first[:-3] or b.shape[-2:] != first[-2:]:
            raise g.fail(f"inputs {list(first)} and {list(b.shape)} differ off the concatenation axis")
    shape = first[:-3] + (sum(b.shape[-3] for b in blobs),) + first[-2:]
    written = g.written.pop(layer.output[0], set())  # inputs their producers wrote into their slices (``slot``)
    placed = g.placed.pop(layer.output[0], set())  # into a chain's buffer (``concat_chains.producer_slice``)
    grown, in_place = (None, False) if written else concat_chains.output(g, layer, shape)
    if in_place:  # the first input is the first channels of this buffer already (``concat_chains``)
        written = {layer.input[0]}
    out = grown if grown is not None else g.nhwc[layer.output[0]].tensor if written else \
        g.nhwc_output(layer.output[0], shape)
    if written and not in_place and out.dims[0] != shape[-3]:
        raise g.fail(f"the inputs' {shape[-3]} channels are not the {out.dims[0]} their layers state")
    offset, produced = 0, 0
    for name, b in zip(layer.input, blobs):
        dims = b.tensor.dims
        if in_place and name in placed and b.tensor.parent is out and b.tensor.view_start[0] == offset:
            produced += 1  # its producer wrote it there
        elif name in written and not in_place and (b.tensor.parent is not out or b.tensor.view_start[0] != offset):
            raise g.fail(f"input '{name}' was written at channel {b.tensor.view_start[0]}, not {offset}")
        elif name not in written:
            g.coreml("reshape", (b.tensor, g.view(out, [offset, 0, 0, 0], [offset + dims[0], *dims[1:]])))
        offset += dims[0]
    copies = len(blobs) - len(written) - produced
    how = f"{copies} x coreml.reshape into views along C"
    if in_place:
        how += ", the first input in place (a prefix of one buffer)"
    elif written:
        how += f", {len(written)} written there"
    if produced:
        how += f", {produced} written there by {'its' if produced == 1 else 'their'} producer"
    return how + (", the output a prefix of one buffer" if grown is not None and grown.dims[0] > shape[-3] else "") \
        + " (NHWC)"
