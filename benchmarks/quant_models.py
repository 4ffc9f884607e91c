"""MobileNet v1 in TENSOR_QUANT8_ASYMM for the model benchmark: post-training quantization of a
``models.MobileNetV1`` and the same uint8 network for NNAPI and for ONNX Runtime (QLinearConv)::

    from benchmarks.models import mobilenet_v1, sample_inputs
    from benchmarks.quant_models import quantize_mobilenet, nnapi_mobilenet_quant8, onnx_mobilenet_quant8
    net = mobilenet_v1(width=0.25, size=224)
    qnet = quantize_mobilenet(net, sample_inputs(net, 4))   # calibrated on the float64 reference
    model = nnapi_mobilenet_quant8(qnet)                    # a finished openvx_nn.nnapi.Model
    onnx_bytes = onnx_mobilenet_quant8(qnet)                # uint8 NCHW in, uint8 out
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmarks.models import (
    Layer,
    MobileNetV1,
    NNAPIBuilder,
    onnx_conv_attributes,
    onnx_weights,
    reference_forward,
    same_output,
    serialize,
)


@dataclass(frozen=True)
class Quantized:
    """A value range as uint8 (real = scale * (q - zero_point)), and optionally the quantized values."""

    scale: float
    zero_point: int
    values: np.ndarray | None = None


@dataclass(frozen=True)
class QuantLayer:
    """A convolution of the quantized network: uint8 filter, int32 bias (scale = input scale x filter scale,
    zero point 0, as NNAPI requires), its output's range."""

    layer: Layer
    weights: Quantized
    bias: np.ndarray
    output: Quantized


@dataclass(frozen=True)
class QuantMobileNetV1:
    """``float_net`` quantized per layer; ``pooled`` shares the last feature map's range (NNAPI's quant8
    AVERAGE_POOL_2D keeps its input's), ``probs`` is LOGISTIC's fixed 1/256, 0."""

    float_net: MobileNetV1
    input: Quantized
    features: list[QuantLayer]
    head: QuantLayer
    probs: Quantized = Quantized(1 / 256, 0)

    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        return quantize(x, self.input)


def range_params(low: float, high: float) -> Quantized:
    """Asymmetric uint8 parameters covering [low, high] (widened to hold 0, so zero is exact)."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    scale = (high - low) / 255 if high > low else 1.0
    return Quantized(scale, int(np.clip(round(-low / scale), 0, 255)))


def quantize(x: np.ndarray, params: Quantized) -> np.ndarray:
    return np.clip(np.round(x / params.scale) + params.zero_point, 0, 255).astype(np.uint8)


def quantize_mobilenet(net: MobileNetV1, samples: list[np.ndarray]) -> QuantMobileNetV1:
    """Post-training quantization of ``net`` calibrated on ``samples`` (NHWC float images in [-1, 1]):
    per-tensor filter ranges, activation ranges from the float64 reference's min/max over the samples
    (ReLU6 outputs: [0, max], so the fused clamp is the uint8 range itself)."""
    runs = [reference_forward(net, x) for x in samples]

    def observed(k: int) -> Quantized:
        return range_params(min(r[k].min() for r in runs), max(r[k].max() for r in runs))

    def quant_layer(layer: Layer, input_scale: float, output: Quantized) -> QuantLayer:
        w = range_params(layer.weights.min(), layer.weights.max())
        w = Quantized(w.scale, w.zero_point, quantize(layer.weights, w))
        bias = np.round(layer.bias.astype(np.float64) / (input_scale * w.scale)).astype(np.int32)
        # NNAPI 1.0 needs input_scale * filter_scale < output_scale (a multiplier below 1)
        if output.scale <= input_scale * w.scale:
            output = Quantized(input_scale * w.scale * 1.001, output.zero_point)
        return QuantLayer(layer, w, bias, output)

    image = Quantized(2 / 255, 128)  # [-1, 1]
    features, scale = [], image.scale
    for k, layer in enumerate(net.features):
        features.append(quant_layer(layer, scale, observed(k)))
        scale = features[-1].output.scale
    pooled = features[-1].output
    head = quant_layer(net.head, pooled.scale, observed(len(net.features) + 1))
    return QuantMobileNetV1(net, image, features, head)


def nnapi_mobilenet_quant8(qnet: QuantMobileNetV1):
    """``qnet`` as a finished TENSOR_QUANT8_ASYMM NNAPI model (same operations as the float one)."""
    b = NNAPIBuilder()
    Q8, I32, T = b.nnapi.OperandType.TENSOR_QUANT8_ASYMM, b.nnapi.OperandType.TENSOR_INT32, b.nnapi.OperationType
    relu6, none = b.nnapi.FusedActivationFunc.RELU6, b.nnapi.FusedActivationFunc.NONE
    net = qnet.float_net

    def conv(x: int, in_scale: float, q: QuantLayer, dims, activation) -> int:
        w, out = q.weights, q.output
        weights = b.operand(Q8, w.values.shape, w.values, w.scale, w.zero_point)
        bias = b.operand(I32, q.bias.shape, q.bias, in_scale * w.scale)
        y = b.operand(Q8, dims, scale=out.scale, zero_point=out.zero_point)
        b.conv(x, q.layer, weights, bias, y, activation)
        return y

    x = first = b.operand(Q8, net.input_shape, scale=qnet.input.scale, zero_point=qnet.input.zero_point)
    size, scale = net.size, qnet.input.scale
    for q in qnet.features:
        size = same_output(size, q.layer.stride)
        x, scale = conv(x, scale, q, (1, size, size, q.layer.channels_out), relu6), q.output.scale
    last = qnet.features[-1].output
    pooled = b.operand(Q8, (1, 1, 1, net.features[-1].channels_out), scale=last.scale, zero_point=last.zero_point)
    b.model.add_operation(T.AVERAGE_POOL_2D, [x] + b.ints(b.nnapi.PaddingScheme.VALID, 1, 1, size, size, none),
                          [pooled])
    logits = conv(pooled, last.scale, qnet.head, net.output_shape, none)
    probs = b.operand(Q8, net.output_shape, scale=qnet.probs.scale, zero_point=qnet.probs.zero_point)
    b.model.add_operation(T.LOGISTIC, [logits], [probs])
    b.model.identify_inputs_and_outputs([first], [probs])
    b.model.finish()
    return b.model


def onnx_mobilenet_quant8(qnet: QuantMobileNetV1) -> bytes:
    """``qnet`` as ONNX with the same uint8 weights and parameters: QLinearConv per convolution (uint8 filters,
    int32 bias), the pool and the logistic between DequantizeLinear and QuantizeLinear (ORT fuses them).
    Input ``x`` uint8 NCHW, output ``y`` uint8 [1, classes, 1, 1]."""
    from onnx import TensorProto, helper, numpy_helper
    net = qnet.float_net
    nodes, inits = [], []

    def params(name: str, q: Quantized) -> list[str]:
        inits.extend([numpy_helper.from_array(np.array(q.scale, np.float32), f"{name}_s"),
                      numpy_helper.from_array(np.array(q.zero_point, np.uint8), f"{name}_z")])
        return [f"{name}_s", f"{name}_z"]

    def conv(x: str, x_params: list[str], q: QuantLayer, name: str, size: int) -> list[str]:
        w = Quantized(q.weights.scale, q.weights.zero_point, onnx_weights(Layer(
            q.layer.depthwise, q.weights.values, q.layer.bias, q.layer.stride, q.layer.activation)))
        inits.extend([numpy_helper.from_array(w.values, f"{name}_w"), numpy_helper.from_array(q.bias, f"{name}_b")])
        y_params = params(f"{name}_y", q.output)
        nodes.append(helper.make_node("QLinearConv", [x, *x_params, f"{name}_w", *params(f"{name}_w", w), *y_params,
                                                      f"{name}_b"], [name], **onnx_conv_attributes(q.layer, size)))
        return y_params

    x, x_params, size = "x", params("x", qnet.input), net.size
    for i, q in enumerate(qnet.features):
        x_params = conv(x, x_params, q, f"c{i}", size)
        x, size = f"c{i}", same_output(size, q.layer.stride)
    nodes += [helper.make_node("DequantizeLinear", [x, *x_params], ["features"]),
              helper.make_node("GlobalAveragePool", ["features"], ["pooled_f"]),
              helper.make_node("QuantizeLinear", ["pooled_f", *x_params], ["pooled"])]
    logits = conv("pooled", x_params, qnet.head, "logits", 1)
    nodes += [helper.make_node("DequantizeLinear", ["logits", *logits], ["logits_f"]),
              helper.make_node("Sigmoid", ["logits_f"], ["probs_f"]),
              helper.make_node("QuantizeLinear", ["probs_f", *params("y", qnet.probs)], ["y"])]
    classes = net.head.channels_out
    return serialize(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, net.size, net.size])],
                     [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, classes, 1, 1])], inits,
                     net.name + " uint8")
