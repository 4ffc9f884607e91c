"""The convolutions in API level 29's forms: CONV_2D and DEPTHWISE_CONV_2D with the NCHW-layout flag, dilation
or float16, GROUPED_CONV_2D and TRANSPOSE_CONV_2D.

What NNAPI 1.0 could already say (NHWC, no dilation, float32 or uint8) still lowers onto the NHWC kernels
(``conv_pool``); the float forms with anything more lower onto ``grouped_conv_2d`` and ``transpose_conv_2d``
(``operations/nnapi/windowed_float``). A uint8 CONV_2D or DEPTHWISE_CONV_2D in NCHW runs on the NHWC engine
with transposes at its edges; with a per-channel filter on ``conv_2d_per_channel`` (``operations/nnapi/
per_channel``: exact sums, a multiplier per channel); a uint8 GROUPED_CONV_2D as one of those per group; a uint8
convolution dilated or transposed as an undilated one (``quant8_convolution_1_2``).
"""
from __future__ import annotations

import numpy as np

from ...operations.nnapi.windowed_float import CONV, DEPTHWISE
from ..enums import OperandType, OperationType, PaddingScheme
from .context import NHWC_FROM_NCHW, OpContext
from .conv_pool import check_bias, lower_convolution, window
from .quant8_convolution_1_2 import dilated, finish_layout, nhwc_edges, transposed
from .registry import lowers
from .reshaping import join

T = OperationType
Q8, PC = OperandType.TENSOR_QUANT8_ASYMM, OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL


def _same_padding(op: OpContext, scheme: int, size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(before, after) of one axis: SAME keeps ceil(size / stride) outputs of a (dilated) ``kernel``, VALID pads
    nothing."""
    if scheme not in (PaddingScheme.SAME, PaddingScheme.VALID):
        op.fail(f"padding scheme {scheme} is not SAME (1) or VALID (2)")
    if stride < 1:
        op.fail(f"stride {stride} must be at least 1")
    if scheme == PaddingScheme.VALID:
        return 0, 0
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _layout(op: OpContext) -> int:
    """1 when the operation's trailing layout flag says NCHW (the flag is the input after the activation)."""
    if "layout" not in op.form.name and op.type not in (T.GROUPED_CONV_2D, T.TRANSPOSE_CONV_2D):
        return 0
    at = len(op.inputs) - (3 if "dilation" in op.form.name else 1)
    return int(bool(op.scalar(at)))


def _hw(op: OpContext, nchw: int) -> tuple[int, int]:
    shape = op.shape(0)
    if len(shape) != 4:
        op.fail(f"input 0 has shape {list(shape)}, expected 4 dimensions")
    return (shape[2], shape[3]) if nchw else (shape[1], shape[2])


def _window(op: OpContext, explicit: bool, first: int, kernel_hw: tuple[int, int], dilation: tuple[int, int],
            nchw: int) -> tuple[dict, int]:
    """Padding and strides from input ``first`` on, and the position after them."""
    if explicit:
        names = ("pad_left", "pad_right", "pad_top", "pad_bottom", "stride_w", "stride_h")
        return {n: op.scalar(first + i) for i, n in enumerate(names)}, first + 6
    scheme, stride_w, stride_h = (op.scalar(first + i) for i in range(3))
    h, w = _hw(op, nchw)
    top, bottom = _same_padding(op, scheme, h, (kernel_hw[0] - 1) * dilation[0] + 1, stride_h)
    left, right = _same_padding(op, scheme, w, (kernel_hw[1] - 1) * dilation[1] + 1, stride_w)
    return {"pad_left": left, "pad_right": right, "pad_top": top, "pad_bottom": bottom,
            "stride_w": stride_w, "stride_h": stride_h}, first + 3


@lowers(T.CONV_2D, T.DEPTHWISE_CONV_2D)
def lower_convolution_1_2(op: OpContext) -> None:
    depthwise = op.type == T.DEPTHWISE_CONV_2D
    nchw = _layout(op)
    dilation = (1, 1)
    if "dilation" in op.form.name:
        dilation = (op.scalar(len(op.inputs) - 1), op.scalar(len(op.inputs) - 2))  # (height, width)
        if min(dilation) < 1:
            op.fail(f"dilation factors {dilation[1]} (width), {dilation[0]} (height) must be at least 1")
    per_channel = op.kind(1) == PC
    if op.kind(0) != OperandType.TENSOR_FLOAT16 and not nchw and dilation == (1, 1) and not per_channel:
        lower_convolution(op)
        return
    if op.kind(0) == Q8 and dilation == (1, 1):  # NCHW: transposes at the NHWC node's edges
        if nchw:
            op.perm = NHWC_FROM_NCHW
        (_per_channel if per_channel else lower_convolution)(op)
        return
    filt = op.shape(1)
    if len(filt) != 4:
        op.fail(f"filter has shape {list(filt)}, expected 4 dimensions")
    ints, nxt = _window(op, op.form.name.startswith("explicit"), 3, (filt[1], filt[2]), dilation, nchw)
    channels = op.shape(0)[1 if nchw else 3]
    if depthwise:
        multiplier = op.scalar(nxt)
        nxt += 1
        if multiplier < 1 or filt[3] != channels * multiplier:
            op.fail(f"filter depth {filt[3]} is not input depth {channels} times depth multiplier {multiplier}")
        if op.kind(0) == Q8:
            ints["depth_multiplier"] = multiplier
    if op.kind(0) == Q8:
        if not per_channel:
            check_bias(op)
        dilated(op, {**ints, "activation": op.scalar(nxt)}, dilation, nchw)
        return
    ints.update(dilation_h=dilation[0], dilation_w=dilation[1], groups=channels if depthwise else 1,
                filter_kind=DEPTHWISE if depthwise else CONV, activation=op.scalar(nxt), nchw=nchw)
    op.node("grouped_conv_2d", {"input": 0, "filter": 1, "bias": 2}, {"output": 0}, ints)


def _per_channel(op: OpContext) -> None:
    """A uint8 CONV_2D or DEPTHWISE_CONV_2D with a per-channel filter: its scales become a constant input of
    ``conv_2d_per_channel``."""
    depthwise = op.type == T.DEPTHWISE_CONV_2D
    filt = op.shape(1)
    if len(filt) != 4:
        op.fail(f"filter has shape {list(filt)}, expected 4 dimensions")
    ints, nxt = window(op, 3, op.form.name.startswith("explicit"), (filt[1], filt[2]))
    ints["depth_multiplier"] = op.scalar(nxt) if depthwise else 0
    if depthwise and ints["depth_multiplier"] < 1:
        op.fail(f"depth multiplier {ints['depth_multiplier']} must be at least 1")
    ints["activation"] = op.scalar(nxt + depthwise)
    scales, _ = op.channel_quant(1)
    made = {"scales": op.b.constant_operand(scales, OperandType.TENSOR_FLOAT32)}
    op.node("conv_2d_per_channel", {"input": 0, "filter": 1, "bias": 2}, {"output": 0}, ints, made=made)


def _grouped_quant8(op: OpContext, ints: dict, groups: int, nchw: int) -> None:
    """A uint8 GROUPED_CONV_2D as one uint8 convolution per group on the NHWC engine (a per-channel filter:
    ``conv_2d_per_channel``; NCHW: transposes at the edges): the group's input channels sliced, its filters and
    bias made constants, the outputs concatenated along depth. The filter and bias are read as parameters
    (constants or the request's values)."""
    data, result = nhwc_edges(op, nchw)
    n, h, w, c = op.shape(0)
    filt, bias = np.asarray(op.constant(1)), np.asarray(op.constant(2))
    units = filt.shape[0]
    if c % groups or units % groups or filt.shape[3] * groups != c or bias.shape != (units,):
        op.fail(f"filter {list(filt.shape)} and bias {list(bias.shape)} do not fit {c} input channels in {groups} "
                "groups")
    cg, og = c // groups, units // groups
    per_channel = op.kind(1) == PC
    scales = op.channel_quant(1)[0] if per_channel else None
    b = op.b
    parts = []
    for g in range(groups):
        part_in, part_out = b.temporary(op.inputs[0]), b.temporary(op.outputs[0])
        op.node_on("slice", {"input": data}, {"output": part_in},
                   {**{f"begin{i}": v for i, v in enumerate((0, 0, 0, g * cg, 0, 0))},
                    **{f"size{i}": v for i, v in enumerate((n, h, w, cg, 1, 1))}})
        rows = slice(g * og, (g + 1) * og)
        k_filter = b.constant_operand(filt[rows], op.kind(1))
        b.operands[k_filter].scale, b.operands[k_filter].zeroPoint = op.operand(1).scale, op.operand(1).zeroPoint
        inputs = {"input": part_in, "filter": k_filter, "bias": b.constant_operand(bias[rows], op.kind(2))}
        if per_channel:
            inputs["scales"] = b.constant_operand(scales[rows], OperandType.TENSOR_FLOAT32)
            op.node_on("conv_2d_per_channel", inputs, {"output": part_out}, {**ints, "depth_multiplier": 0})
        else:
            op.node_on("conv_2d", inputs, {"output": part_out}, ints)
        parts.append(part_out)
    join(op, parts, result, 3)
    finish_layout(op, result, nchw)


@lowers(T.GROUPED_CONV_2D)
def lower_grouped(op: OpContext) -> None:
    nchw = _layout(op)
    filt = op.shape(1)
    explicit = op.form.name.startswith("explicit")
    ints, nxt = _window(op, explicit, 3, (filt[1], filt[2]), (1, 1), nchw)
    groups = op.scalar(nxt)
    if groups < 1:
        op.fail(f"number of groups {groups} must be at least 1")
    if op.kind(0) == Q8:
        _grouped_quant8(op, {**ints, "activation": op.scalar(nxt + 1)}, groups, nchw)
        return
    ints.update(dilation_h=1, dilation_w=1, groups=groups, filter_kind=CONV, activation=op.scalar(nxt + 1),
                nchw=nchw)
    op.node("grouped_conv_2d", {"input": 0, "filter": 1, "bias": 2}, {"output": 0}, ints)


@lowers(T.TRANSPOSE_CONV_2D)
def lower_transposed(op: OpContext) -> None:
    check_bias(op)
    nchw = _layout(op)
    h, w = _hw(op, nchw)
    filt = op.shape(1)
    if len(filt) != 4:
        op.fail(f"filter has shape {list(filt)}, expected 4 dimensions")
    if op.form.name.startswith("explicit"):
        left, right, top, bottom, stride_w, stride_h = (op.scalar(k) for k in range(3, 9))
        if min(stride_w, stride_h) < 1 or min(left, right, top, bottom) < 0:
            op.fail(f"strides {stride_w}, {stride_h} must be at least 1 and paddings {left}, {right}, {top}, "
                    f"{bottom} not negative")
        out_h, out_w = (h - 1) * stride_h + filt[1] - top - bottom, (w - 1) * stride_w + filt[2] - left - right
        at = 9
    else:
        shape = [int(v) for v in np.asarray(op.constant(3)).reshape(-1)]
        if len(shape) != 4:
            op.fail(f"input 3 (output shape) is {shape}, expected 4 values")
        out_h, out_w = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
        scheme, stride_w, stride_h = op.scalar(4), op.scalar(5), op.scalar(6)
        if scheme not in (PaddingScheme.SAME, PaddingScheme.VALID):
            op.fail(f"padding scheme {scheme} is not SAME (1) or VALID (2)")
        if min(stride_w, stride_h) < 1:
            op.fail(f"strides {stride_w}, {stride_h} must be at least 1")
        # The header's SAME: the padding the transposed window overhangs the requested output by, split with
        # the smaller half first; VALID pads nothing.
        same = scheme == PaddingScheme.SAME
        top = max((h - 1) * stride_h + filt[1] - out_h, 0) // 2 if same else 0
        left = max((w - 1) * stride_w + filt[2] - out_w, 0) // 2 if same else 0
        at = 7
    if out_h < 1 or out_w < 1:
        op.fail(f"the output would be {out_h} x {out_w} (height x width): the paddings leave nothing")
    if op.kind(0) == Q8:
        transposed(op, nchw, top, left, (stride_w, stride_h), (out_h, out_w), op.scalar(at))
        return
    op.node("transpose_conv_2d", {"input": 0, "filter": 1, "bias": 2}, {"output": 0},
            {"pad_left": left, "pad_top": top, "stride_w": stride_w, "stride_h": stride_h, "out_w": out_w,
             "out_h": out_h, "activation": op.scalar(at), "nchw": nchw})
