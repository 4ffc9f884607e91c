"""uint8 convolutions in forms API level 29 adds that the integer kernels take no parameter for (dilation,
transposition), written as the plain convolutions those kernels run.

A dilated filter equals the undilated filter of its full extent with the filter's zero point in the taps between
(a zero-point tap adds a zero offset: the sums are the same integers). A transposed convolution equals a plain
one, stride 1 and no padding, of the spatially flipped filter over the input spread onto its stride grid with
zero points between and around (``spread_2d``). Both run on the undilated uint8 kernels (one filter scale: the
NHWC engine's ``conv_2d`` and ``depthwise_conv_2d``; per-channel: ``conv_2d_per_channel``), so their sums and their
rounding are those kernels'. The filter is read as a parameter (a constant, or the request's value); the price
is the taps the spreading adds (dilation: ((kh - 1) * dh + 1) * ((kw - 1) * dw + 1) / (kh * kw) times the
products; transposed: stride_h * stride_w times).
"""
from __future__ import annotations

import numpy as np

from ..enums import OperandType
from .context import NHWC_FROM_NCHW, OpContext

PC = OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL


def nhwc_edges(op: OpContext, nchw: int) -> tuple[int, int]:
    """Input 0 and the operand output 0 is computed into, both NHWC: for an NCHW operation, a transpose of the
    input and a temporary that :func:`finish_layout` transposes back."""
    if not nchw:
        return op.inputs[0], op.outputs[0]
    op.perm = NHWC_FROM_NCHW
    return op.permuted_edges()


def finish_layout(op: OpContext, out: int, nchw: int) -> None:
    if nchw:
        op.restore_layout(out)


def _filter_operand(op: OpContext, values: np.ndarray) -> int:
    """A constant filter holding ``values``, typed and quantized as input 1."""
    b = op.b
    k = b.constant_operand(np.ascontiguousarray(values), op.kind(1))
    b.operands[k].scale, b.operands[k].zeroPoint = op.operand(1).scale, op.operand(1).zeroPoint
    return k


def convolve(op: OpContext, data: int, out: int, filt: np.ndarray, bias: int, ints: dict, depthwise: bool) -> None:
    """One undilated NHWC uint8 convolution of ``data`` into ``out`` with filter values ``filt`` quantized as input 1
    (per tensor, or per channel with input 1's scales) and bias operand ``bias``."""
    made = {"filter": _filter_operand(op, filt)}
    if op.kind(1) == PC:
        made["scales"] = op.b.constant_operand(op.channel_quant(1)[0], OperandType.TENSOR_FLOAT32)
        name, ints = "conv_2d_per_channel", {"depth_multiplier": 0, **ints}
    else:
        name = "depthwise_conv_2d" if depthwise else "conv_2d"
    op.node_on(name, {"input": data, "bias": bias, **made}, {"output": out}, ints)


def _zero_tap(op: OpContext) -> int:
    """The raw filter value of a real 0: the zero point of a per-tensor filter, 0 of a symmetric one."""
    return 0 if op.kind(1) == PC else int(op.operand(1).zeroPoint)


def dilated(op: OpContext, ints: dict, dilation: tuple[int, int], nchw: int) -> None:
    """A uint8 CONV_2D or DEPTHWISE_CONV_2D dilated by ``dilation`` (height, width), ``ints`` its window (padding
    already of the dilated extent), activation and depth multiplier: the spread filter on the undilated kernels."""
    filt = np.asarray(op.constant(1))
    if filt.ndim != 4:
        op.fail(f"filter has shape {list(filt.shape)}, expected 4 dimensions")
    dh, dw = dilation
    o, kh, kw, c = filt.shape
    spread = np.full((o, (kh - 1) * dh + 1, (kw - 1) * dw + 1, c), _zero_tap(op), filt.dtype)
    spread[:, ::dh, ::dw] = filt
    data, out = nhwc_edges(op, nchw)
    convolve(op, data, out, spread, op.inputs[2], ints, "depth_multiplier" in ints)
    finish_layout(op, out, nchw)


def transposed(op: OpContext, nchw: int, top: int, left: int, strides: tuple[int, int], out_hw: tuple[int, int],
               activation: int) -> None:
    """A uint8 TRANSPOSE_CONV_2D: output (y, x) = sum over input pixels at (y + top - ky) / sh, (x + left - kx) / sw
    of x * filter[ky, kx], as a stride-1 convolution of the flipped filter over the input spread with
    kh - 1 - top rows (kw - 1 - left columns) ahead of it, on a grid out_h + kh - 1 by out_w + kw - 1."""
    filt = np.asarray(op.constant(1))
    _, kh, kw, _ = filt.shape
    sw, sh = strides
    data, out = nhwc_edges(op, nchw)
    spread = op.b.temporary(op.inputs[0])
    op.node_on("spread_2d", {"input": data}, {"output": spread},
               {"stride_h": sh, "stride_w": sw, "offset_top": kh - 1 - top, "offset_left": kw - 1 - left,
                "out_h": out_hw[0] + kh - 1, "out_w": out_hw[1] + kw - 1})
    window = {"pad_left": 0, "pad_right": 0, "pad_top": 0, "pad_bottom": 0, "stride_w": 1, "stride_h": 1}
    convolve(op, spread, out, filt[:, ::-1, ::-1], op.inputs[2], {**window, "activation": activation}, False)
    finish_layout(op, out, nchw)
