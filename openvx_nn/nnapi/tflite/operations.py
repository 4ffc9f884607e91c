"""Each TFLite builtin operator as the NNAPI 1.2 operation(s) TFLite's NNAPI delegate adds for it.

One function per operator family, registered by name in ``MAPPINGS``; each reads the operator's options and
adds operations through the ``Mapper`` (the builder's public API).  Options NNAPI 1.2 cannot express raise
``Unsupported`` naming the option (the delegate leaves such an operator on the CPU; here there is no CPU
fallback, so the model is refused).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..enums import OperandType, OperationType, PaddingScheme
from .flatbuffer import Operator
from .mapper import INT8_SHIFT, Mapper, Unsupported

OP = OperationType
MAPPINGS: dict[str, Callable[[Mapper, Operator], None]] = {}
FUSED = {0: 0, 1: 1, 2: 2, 3: 3}
"""TFLite's fused activations NONE, RELU, RELU_N1_TO_1, RELU6 have NNAPI's codes; TANH and SIGN_BIT have none."""
PADDING = {0: PaddingScheme.SAME, 1: PaddingScheme.VALID}


def maps(*names: str):
    def register(function):
        for name in names:
            MAPPINGS[name] = function
        return function
    return register


def activation(m: Mapper, op: Operator) -> int:
    """The operator's fused activation as an NNAPI INT32 operand."""
    code = getattr(op.options, "fusedActivationFunction", 0)
    if code not in FUSED:
        raise Unsupported(f"operator {op.index} ({op.name}): fused activation {code} (TANH or SIGN_BIT) has no "
                          "NNAPI form")
    return m.int32(FUSED[code])


def constant(m: Mapper, op: Operator, position: int, what: str) -> np.ndarray:
    """Input ``position``'s value, which NNAPI needs as a constant."""
    value = m.constant_value(op.inputs[position])
    if value is None:
        raise Unsupported(f"operator {op.index} ({op.name}): its {what} must be a constant")
    return value


def single(m: Mapper, op: Operator, kind: OperationType, extra: list[int]) -> None:
    """Add ``kind`` on the operator's first input and its output, with ``extra`` operands after the input."""
    m.model.add_operation(kind, [m.operand(op.inputs[0])] + extra, [m.operand(op.outputs[0])])


def rank(m: Mapper, k: int) -> int:
    return len(m.tensor(k).shape)


def axes(m: Mapper, op: Operator, values) -> list[int]:
    """Negative axes counted from the end, as NNAPI's own rule allows but the delegate writes them."""
    n = rank(m, op.inputs[0])
    return [int(a) + n if a < 0 else int(a) for a in np.ravel(values)]


def window(m: Mapper, op: Operator) -> list[int]:
    o = op.options
    return [m.int32(PADDING[o.padding]), m.int32(o.strideW), m.int32(o.strideH)]


def bias(m: Mapper, op: Operator, channels: int) -> int:
    """The convolution's bias operand: the file's, or zeros where it is omitted.  A quantized bias has the
    scale NNAPI requires (input x filter; 0 beside a per-channel filter)."""
    x, w = m.tensor(op.inputs[0]), m.tensor(op.inputs[1])
    k = op.inputs[2] if len(op.inputs) > 2 else -1
    if not x.quantized:
        if k >= 0:
            return m.operand(k)
        return m.new(OperandType.TENSOR_FLOAT32, (channels,), np.zeros(channels, np.float32))
    scale = 0.0 if w.per_channel else float(x.scales[0] * w.scales[0])
    value = m.constant_value(k) if k >= 0 else np.zeros(channels, np.int32)
    if value is None:
        raise Unsupported(f"operator {op.index} ({op.name}): a quantized bias must be a constant")
    return m.new(OperandType.TENSOR_INT32, (channels,), value.astype(np.int32), scale=scale)


def dilation(m: Mapper, op: Operator) -> list[int]:
    """NNAPI 1.2's layout flag and dilation factors, where the operator dilates."""
    dw, dh = getattr(op.options, "dilationWFactor", 1), getattr(op.options, "dilationHFactor", 1)
    return [] if dw == dh == 1 else [m.boolean(False), m.int32(dw), m.int32(dh)]


@maps("CONV_2D")
def conv_2d(m: Mapper, op: Operator) -> None:
    channels = m.tensor(op.inputs[1]).shape[0]
    single(m, op, OP.CONV_2D, [m.operand(op.inputs[1]), bias(m, op, channels)] + window(m, op)
           + [activation(m, op)] + dilation(m, op))


@maps("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(m: Mapper, op: Operator) -> None:
    channels = m.tensor(op.inputs[1]).shape[3]
    multiplier = channels // m.tensor(op.inputs[0]).shape[3]  # the delegate's rule: the option may read 0
    if pointwise_scale(m, op, multiplier):
        return
    single(m, op, OP.DEPTHWISE_CONV_2D, [m.operand(op.inputs[1]), bias(m, op, channels)] + window(m, op)
           + [m.int32(multiplier), activation(m, op)] + dilation(m, op))


def pointwise_scale(m: Mapper, op: Operator, multiplier: int) -> bool:
    """A float32 1x1 depthwise convolution of stride 1 (a scale and a shift per channel) as MUL by the filter's
    row then ADD of the bias with the fused activation: the broadcast loop's two passes instead of a window
    loop over one pixel (the same products and sums).  False where it does not apply."""
    x, w = m.tensor(op.inputs[0]), m.tensor(op.inputs[1])
    weights = m.constant_value(op.inputs[1])
    o = op.options
    if (x.type != "FLOAT32" or weights is None or w.shape[1:3] != (1, 1) or multiplier != 1
            or (o.strideW, o.strideH) != (1, 1)):
        return False
    scale = m.new(OperandType.TENSOR_FLOAT32, (w.shape[3],), weights.reshape(-1).astype(np.float32))
    bias_k = op.inputs[2] if len(op.inputs) > 2 else -1
    out = m.operand(op.outputs[0])
    if bias_k < 0:
        m.model.add_operation(OP.MUL, [m.operand(op.inputs[0]), scale, activation(m, op)], [out])
        return True
    scaled = m.like(op.outputs[0])
    m.model.add_operation(OP.MUL, [m.operand(op.inputs[0]), scale, m.int32(0)], [scaled])
    m.model.add_operation(OP.ADD, [scaled, m.operand(bias_k), activation(m, op)], [out])
    return True


@maps("TRANSPOSE_CONV")
def transpose_conv(m: Mapper, op: Operator) -> None:
    _, weights, x = op.inputs[:3]
    channels = m.tensor(weights).shape[0]
    ordered = Operator(op.index, op.name, [x, weights] + op.inputs[3:], op.outputs, op.options)
    extra = [m.operand(weights), bias(m, ordered, channels), m.ints(constant(m, op, 0, "output shape"))]
    m.model.add_operation(OP.TRANSPOSE_CONV_2D, [m.operand(x)] + extra + window(m, op)
                          + [activation(m, op), m.boolean(False)], [m.operand(op.outputs[0])])


@maps("FULLY_CONNECTED")
def fully_connected(m: Mapper, op: Operator) -> None:
    o = op.options
    if o is not None and o.weightsFormat != 0:
        raise Unsupported(f"operator {op.index} (FULLY_CONNECTED): shuffled weights have no NNAPI form")
    units = m.tensor(op.inputs[1]).shape[0]
    out = op.outputs[0]
    args = [m.operand(op.inputs[0]), m.operand(op.inputs[1]), bias(m, op, units), activation(m, op)]
    shape = m.tensor(out).shape
    if len(shape) == 2:
        m.model.add_operation(OP.FULLY_CONNECTED, args, [m.operand(out)])
        return
    kind, _, scale, zero = m.forms[m.operand(out)]  # keep_num_dims: NNAPI's [batch, units], then the file's shape
    flat = m.new(kind, (int(np.prod(shape)) // units, units), scale=scale, zero_point=zero)
    m.model.add_operation(OP.FULLY_CONNECTED, args, [flat])
    m.model.add_operation(OP.RESHAPE, [flat, m.ints(shape)], [m.operand(out)])


@maps("AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D")
def pool(m: Mapper, op: Operator) -> None:
    o = op.options
    single(m, op, OP[op.name], window(m, op) + [m.int32(o.filterWidth), m.int32(o.filterHeight),
                                                  activation(m, op)])


@maps("ADD", "MUL", "SUB", "DIV")
def binary(m: Mapper, op: Operator) -> None:
    m.model.add_operation(OP[op.name], [m.operand(op.inputs[0]), m.operand(op.inputs[1]), activation(m, op)],
                          [m.operand(op.outputs[0])])


@maps("MAXIMUM", "MINIMUM", "PRELU")
def pair(m: Mapper, op: Operator) -> None:
    m.model.add_operation(OP[op.name], [m.operand(op.inputs[0]), m.operand(op.inputs[1])],
                          [m.operand(op.outputs[0])])


UNARY = {"RELU": OP.RELU, "RELU6": OP.RELU6, "RELU_N1_TO_1": OP.RELU1, "LOGISTIC": OP.LOGISTIC, "TANH": OP.TANH,
         "EXP": OP.EXP, "LOG": OP.LOG, "ABS": OP.ABS, "NEG": OP.NEG, "SQRT": OP.SQRT, "RSQRT": OP.RSQRT,
         "SIN": OP.SIN, "FLOOR": OP.FLOOR, "L2_NORMALIZATION": OP.L2_NORMALIZATION}


@maps(*UNARY)
def unary(m: Mapper, op: Operator) -> None:
    if getattr(op.options, "fusedActivationFunction", 0):
        raise Unsupported(f"operator {op.index} ({op.name}): a fused activation has no NNAPI form")
    single(m, op, UNARY[op.name], [])


@maps("LEAKY_RELU")
def leaky_relu(m: Mapper, op: Operator) -> None:
    """PRELU with the one slope as a constant, as the delegate writes it."""
    t = m.tensor(op.inputs[0])
    if t.quantized:
        raise Unsupported(f"operator {op.index} (LEAKY_RELU): quantized LEAKY_RELU is not mapped")
    alpha = m.new(OperandType.TENSOR_FLOAT32, (1,), np.array([op.options.alpha], np.float32))
    m.model.add_operation(OP.PRELU, [m.operand(op.inputs[0]), alpha], [m.operand(op.outputs[0])])


@maps("HARD_SWISH")
def hard_swish(m: Mapper, op: Operator) -> None:
    """x * relu6(x + 3) / 6 in ADD (RELU6 fused), MUL, MUL: NNAPI 1.2 has no HARD_SWISH (the delegate's
    decomposition below API level 30)."""
    x = op.inputs[0]
    if m.tensor(x).quantized:
        raise Unsupported(f"operator {op.index} (HARD_SWISH): quantized HARD_SWISH is not mapped")
    three = m.new(OperandType.TENSOR_FLOAT32, (1,), np.array([3.0], np.float32))
    sixth = m.new(OperandType.TENSOR_FLOAT32, (1,), np.array([1 / 6], np.float32))
    shifted, scaled = m.like(x), m.like(x)
    m.model.add_operation(OP.ADD, [m.operand(x), three, m.int32(3)], [shifted])
    m.model.add_operation(OP.MUL, [shifted, sixth, m.int32(0)], [scaled])
    m.model.add_operation(OP.MUL, [m.operand(x), scaled, m.int32(0)], [m.operand(op.outputs[0])])


@maps("PAD", "PADV2")
def pad(m: Mapper, op: Operator) -> None:
    paddings = m.ints(constant(m, op, 1, "paddings").astype(np.int32))
    if op.name == "PAD" or len(op.inputs) < 3:
        single(m, op, OP.PAD, [paddings])
        return
    t = m.tensor(op.inputs[0])
    value = constant(m, op, 2, "pad value").ravel()[0]
    if t.quantized:
        shift = INT8_SHIFT if t.type == "INT8" else 0
        fill = m.int32(int(value) + shift)
    else:
        fill = m.float32(float(value))
    single(m, op, OP.PAD_V2, [paddings, fill])


@maps("RESHAPE")
def reshape(m: Mapper, op: Operator) -> None:
    single(m, op, OP.RESHAPE, [m.ints(m.tensor(op.outputs[0]).shape)])


@maps("EXPAND_DIMS")
def expand_dims(m: Mapper, op: Operator) -> None:
    """EXPAND_DIMS as the RESHAPE to its output's (known) shape."""
    single(m, op, OP.RESHAPE, [m.ints(m.tensor(op.outputs[0]).shape)])


@maps("SQUEEZE")
def squeeze(m: Mapper, op: Operator) -> None:
    dims = getattr(op.options, "squeezeDims", None)
    dims = [] if dims is None else [int(d) for d in dims]
    if not dims:
        dims = [k for k, d in enumerate(m.tensor(op.inputs[0]).shape) if d == 1]
    single(m, op, OP.SQUEEZE, [m.ints(axes(m, op, dims))])


@maps("CONCATENATION")
def concatenation(m: Mapper, op: Operator) -> None:
    if op.options.fusedActivationFunction != 0:
        raise Unsupported(f"operator {op.index} (CONCATENATION): a fused activation has no NNAPI form")
    axis = axes(m, op, [op.options.axis])[0]
    m.model.add_operation(OP.CONCATENATION, [m.operand(k) for k in op.inputs] + [m.int32(axis)],
                          [m.operand(op.outputs[0])])


@maps("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def resize(m: Mapper, op: Operator) -> None:
    o = op.options
    for option, text in (("alignCorners", "align_corners"), ("halfPixelCenters", "half_pixel_centers")):
        if getattr(o, option, False):
            raise Unsupported(f"operator {op.index} ({op.name}): {text} needs NNAPI 1.3 (API level 30); "
                              "NNAPI 1.2 resizes with neither")
    height, width = (int(v) for v in constant(m, op, 1, "size"))
    layout = [m.boolean(False)] if op.name == "RESIZE_NEAREST_NEIGHBOR" else []
    single(m, op, OP[op.name], [m.int32(width), m.int32(height)] + layout)


@maps("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD")
def reduce(m: Mapper, op: Operator) -> None:
    over = sorted(set(axes(m, op, constant(m, op, 1, "axes"))))
    keep = bool(getattr(op.options, "keepDims", False))
    x = m.tensor(op.inputs[0])
    if op.name == "MEAN" and over == [1, 2] and len(x.shape) == 4 and x.type == "FLOAT32":
        global_average(m, op, keep)
        return
    reduced = m.ints(over)
    if op.name == "MEAN":
        single(m, op, OP.MEAN, [reduced, m.int32(int(keep))])
        return
    kind = {"SUM": OP.REDUCE_SUM, "REDUCE_MAX": OP.REDUCE_MAX, "REDUCE_MIN": OP.REDUCE_MIN,
            "REDUCE_PROD": OP.REDUCE_PROD}[op.name]
    single(m, op, kind, [reduced, m.boolean(keep)])


def global_average(m: Mapper, op: Operator, keep: bool) -> None:
    """A float32 MEAN over height and width as AVERAGE_POOL_2D over the whole map (the pooling engine's
    channels-last loop), then RESHAPE where the dimensions are not kept; the same sum divided by the same
    count."""
    _, height, width, _ = m.tensor(op.inputs[0]).shape
    out = m.operand(op.outputs[0])
    pooled = out if keep else m.new(OperandType.TENSOR_FLOAT32, (m.tensor(op.inputs[0]).shape[0], 1, 1,
                                                                 m.tensor(op.inputs[0]).shape[3]))
    window = [m.int32(PaddingScheme.VALID), m.int32(1), m.int32(1), m.int32(width), m.int32(height), m.int32(0)]
    m.model.add_operation(OP.AVERAGE_POOL_2D, [m.operand(op.inputs[0])] + window, [pooled])
    if not keep:
        m.model.add_operation(OP.RESHAPE, [pooled, m.ints(m.tensor(op.outputs[0]).shape)], [out])


@maps("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def block(m: Mapper, op: Operator) -> None:
    single(m, op, OP[op.name], [m.int32(op.options.blockSize)])


@maps("SOFTMAX")
def softmax(m: Mapper, op: Operator) -> None:
    single(m, op, OP.SOFTMAX, [m.float32(op.options.beta)])


@maps("TRANSPOSE")
def transpose(m: Mapper, op: Operator) -> None:
    single(m, op, OP.TRANSPOSE, [m.ints(constant(m, op, 1, "permutation"))])


@maps("STRIDED_SLICE")
def strided_slice(m: Mapper, op: Operator) -> None:
    o = op.options
    for option in ("ellipsisMask", "newAxisMask", "offset"):
        if getattr(o, option, 0):
            raise Unsupported(f"operator {op.index} (STRIDED_SLICE): {option} has no NNAPI 1.2 form")
    bounds = [m.ints(constant(m, op, k, what)) for k, what in ((1, "begin"), (2, "end"), (3, "strides"))]
    single(m, op, OP.STRIDED_SLICE, bounds + [m.int32(o.beginMask), m.int32(o.endMask), m.int32(o.shrinkAxisMask)])


@maps("DEQUANTIZE")
def dequantize(m: Mapper, op: Operator) -> None:
    """A float16 constant becomes a float32 constant on the host; a quantized tensor goes through NNAPI's
    DEQUANTIZE."""
    source, out = op.inputs[0], op.outputs[0]
    t = m.tensor(source)
    if t.type == "FLOAT16" and t.data is not None:
        m.widened[out] = t.data.astype(np.float32)
        return
    if not t.quantized:
        raise Unsupported(f"operator {op.index} (DEQUANTIZE): a {t.type} tensor computed at run time is not "
                          "mapped (NNAPI 1.2's DEQUANTIZE reads 8-bit tensors)")
    single(m, op, OP.DEQUANTIZE, [])


@maps("QUANTIZE")
def quantize(m: Mapper, op: Operator) -> None:
    if m.tensor(op.inputs[0]).quantized:
        raise Unsupported(f"operator {op.index} (QUANTIZE): requantizing a quantized tensor is not mapped")
    single(m, op, OP.QUANTIZE, [])
