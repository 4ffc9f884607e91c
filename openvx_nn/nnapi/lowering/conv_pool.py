"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the three pools: explicit
and implicit (SAME/VALID) padding, float32 and asymmetric uint8."""
from __future__ import annotations

from ..enums import OperandType, OperationType, PaddingScheme
from ..model_rules import BIAS_TOLERANCE
from .context import OpContext
from .registry import lowers

Q8 = OperandType.TENSOR_QUANT8_ASYMM
T = OperationType


def implicit_padding(op: OpContext, scheme: int, size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(before, after) padding of one axis: SAME keeps ceil(size / stride) outputs, VALID pads nothing."""
    if scheme == PaddingScheme.VALID:
        return 0, 0
    if scheme != PaddingScheme.SAME:
        op.fail(f"padding scheme {scheme} is not SAME (1) or VALID (2)")
    if stride < 1:
        op.fail(f"stride {stride} must be at least 1")
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def window(op: OpContext, first: int, explicit: bool, filter_hw: tuple[int, int]) -> tuple[dict, int]:
    """Padding and strides from input ``first`` on; returns them and the next input position."""
    if explicit:
        names = ("pad_left", "pad_right", "pad_top", "pad_bottom", "stride_w", "stride_h")
        return {n: op.scalar(first + i) for i, n in enumerate(names)}, first + 6
    scheme = op.scalar(first)
    stride_w, stride_h = op.scalar(first + 1), op.scalar(first + 2)
    _, h, w, _ = _nhwc(op)
    left, right = implicit_padding(op, scheme, w, filter_hw[1], stride_w)
    top, bottom = implicit_padding(op, scheme, h, filter_hw[0], stride_h)
    return {"pad_left": left, "pad_right": right, "pad_top": top, "pad_bottom": bottom,
            "stride_w": stride_w, "stride_h": stride_h}, first + 3


def _nhwc(op: OpContext) -> tuple[int, ...]:
    shape = op.shape(0)
    if len(shape) != 4:
        op.fail(f"input 0 has shape {list(shape)}, expected [batches, height, width, depth]")
    return shape


def check_bias(op: OpContext, k: int = 2) -> None:
    """A uint8 layer's TENSOR_INT32 bias has scale input_scale * filter_scale and zero point 0 (its type is the
    signature's)."""
    bias = op.operand(k)
    if op.kind(0) != Q8:
        return
    want = op.operand(0).scale * op.operand(1).scale
    if not abs(bias.scale - want) <= BIAS_TOLERANCE * min(bias.scale, want) or bias.zeroPoint != 0:
        op.fail(f"bias scale {bias.scale} (zero point {bias.zeroPoint}) must be input scale * filter scale = "
                f"{want} with zero point 0")


def lower_convolution(op: OpContext) -> None:
    """CONV_2D or DEPTHWISE_CONV_2D in NNAPI 1.0's form onto the NHWC kernels (``convolution_1_2`` sends its
    API level 29 forms here when they have nothing 1.0 lacks)."""
    depthwise = op.type == T.DEPTHWISE_CONV_2D
    check_bias(op)
    _nhwc(op)
    filt = op.shape(1)
    if len(filt) != 4:
        op.fail(f"filter has shape {list(filt)}, expected 4 dimensions")
    explicit = op.form.name.startswith("explicit")
    ints, nxt = window(op, 3, explicit, (filt[1], filt[2]))
    if depthwise:
        ints["depth_multiplier"] = op.scalar(nxt)
        nxt += 1
    ints["activation"] = op.scalar(nxt)
    name = "depthwise_conv_2d" if depthwise else "conv_2d"
    op.node(name, {"input": 0, "filter": 1, "bias": 2}, {"output": 0}, ints)


@lowers(T.FULLY_CONNECTED)
def lower_fully_connected(op: OpContext) -> None:
    check_bias(op)
    op.node("fully_connected", {"input": 0, "filter": 1, "bias": 2}, {"output": 0}, {"activation": op.scalar(3)})


MAX_WINDOW = 1 << 24
"""Values in one pooling window at most: the kernels index a window's offsets in arrays of its size."""
POOLS = {T.AVERAGE_POOL_2D: "average_pool_2d", T.MAX_POOL_2D: "max_pool_2d", T.L2_POOL_2D: "l2_pool_2d"}


@lowers(*POOLS)
def lower_pool(op: OpContext) -> None:
    _nhwc(op)
    explicit = op.form.name.startswith("explicit")
    at = 7 if explicit else 4
    filter_w, filter_h = op.scalar(at), op.scalar(at + 1)
    if filter_w * filter_h > MAX_WINDOW:
        op.fail(f"a filter of {filter_w} x {filter_h} holds more than {MAX_WINDOW} values, more than this driver pools")
    ints, _ = window(op, 1, explicit, (filter_h, filter_w))
    ints.update(filter_w=filter_w, filter_h=filter_h, activation=op.scalar(at + 2))
    op.node(POOLS[op.type], {"input": 0}, {"output": 0}, ints)
