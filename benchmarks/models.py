"""Whole networks for the model benchmark, built the same way for us and for ONNX Runtime.

A network is a plain description (``MobileNetV1``: a list of ``Layer`` records with float weights in
NNAPI's layouts); the builders turn one description into an NNAPI ``Model`` (float32 or
TENSOR_QUANT8_ASYMM) and into an ONNX model with the same weights, so the two sides compute the same
function.  ``reference_forward`` is a plain NumPy float64 forward pass: it calibrates the quantized
network (per-layer activation ranges on sample inputs) and is a third opinion on the float outputs.

Other engineers import these to measure their work::

    from benchmarks.models import mobilenet_v1, nnapi_mobilenet_float, onnx_mobilenet_float
    net = mobilenet_v1(width=0.25, size=224)
    model = nnapi_mobilenet_float(net)            # a finished openvx_nn.nnapi.Model
    onnx_bytes = onnx_mobilenet_float(net)        # serialized ONNX (NCHW input)

The uint8 builders are in ``quant_models.py``, the CoreML MobileNet v2 and ResNet-18 in ``coreml_models.py``,
the OpenVX C API small CNN in ``vx_models.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RELU6, NONE = "relu6", "none"
# MobileNet v1's depthwise-separable blocks: (output channels at width 1.0, depthwise stride)
V1_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]


@dataclass(frozen=True)
class Layer:
    """One convolution: ``weights`` in NNAPI layout ([out, kh, kw, in], depthwise [1, kh, kw, C]), SAME padding."""

    depthwise: bool
    weights: np.ndarray
    bias: np.ndarray
    stride: int
    activation: str

    @property
    def channels_out(self) -> int:
        return self.weights.shape[3] if self.depthwise else self.weights.shape[0]

    @property
    def kernel(self) -> int:
        return self.weights.shape[1]


@dataclass(frozen=True)
class MobileNetV1:
    """MobileNet v1 shaped like NNAPI's ``mobilenet_224_gender_basic_fixed``: convolutions with fused ReLU6,
    a global average pool, a 1x1 convolution to ``classes`` and a logistic."""

    size: int
    channels: int
    features: list[Layer]
    head: Layer
    width: float = 1.0
    name: str = field(default="MobileNet v1")

    @property
    def input_shape(self) -> tuple[int, int, int, int]:
        """NHWC, batch 1."""
        return 1, self.size, self.size, self.channels

    @property
    def output_shape(self) -> tuple[int, int, int, int]:
        return 1, 1, 1, self.head.channels_out

    def macs(self) -> int:
        """Multiply-accumulates of one inference (convolutions only; the pool and logistic are noise)."""
        total, size = 0, self.size
        for layer in self.features:
            size = same_output(size, layer.stride)
            per_output = layer.kernel ** 2 * (1 if layer.depthwise else layer.weights.shape[3])
            total += size * size * layer.channels_out * per_output
        return total + self.head.weights.shape[0] * self.head.weights.shape[3]


def same_output(size: int, stride: int) -> int:
    return -(-size // stride)


def same_pads(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TensorFlow SAME padding (NNAPI's PADDING_SAME): the odd pixel goes after."""
    total = max((same_output(size, stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def mobilenet_v1(width: float = 0.25, size: int = 224, classes: int = 1, seed: int = 0) -> MobileNetV1:
    """A MobileNet v1 of ``width`` on ``size`` x ``size`` x 3 with He-initialised random weights (batch norm folded:
    a bias per channel).  ``width=0.25, size=224, classes=1`` is the gender model's shape (~41 MMAC)."""
    rng = np.random.default_rng(seed)

    def conv(c_in: int, c_out: int, k: int, stride: int, depthwise: bool, activation: str = RELU6) -> Layer:
        fan_in = k * k * (1 if depthwise else c_in)
        shape = (1, k, k, c_out) if depthwise else (c_out, k, k, c_in)
        w = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        return Layer(depthwise, w, (rng.standard_normal(c_out) * 0.1).astype(np.float32), stride, activation)

    channels = max(8, int(32 * width))
    features = [conv(3, channels, 3, 2, False)]
    for c, stride in V1_BLOCKS:
        c_out = max(8, int(c * width))
        features += [conv(channels, channels, 3, stride, True), conv(channels, c_out, 1, 1, False)]
        channels = c_out
    head = conv(channels, classes, 1, 1, False, NONE)
    # pooled features of random weights vary little from image to image and share a large common part:
    # a steeper, zero-mean head spreads the probabilities over the logistic's range, so a wrong input
    # path changes the outputs visibly
    steep = (head.weights - head.weights.mean(axis=3, keepdims=True)) * 8
    head = Layer(False, steep.astype(np.float32), head.bias, 1, NONE)
    return MobileNetV1(size, 3, features, head, width, f"MobileNet v1 {width:g} {size}²")


def sample_inputs(net: MobileNetV1, count: int, seed: int = 1) -> list[np.ndarray]:
    """Images in [-1, 1] (MobileNet's preprocessing), NHWC float32: smooth blobs of varying brightness and
    contrast plus noise, not pure noise, so activations look like a photo's and differ between images."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        low, high = np.sort(rng.uniform(-1, 1, 2))
        coarse = rng.uniform(low, high, (1, 4, 4, net.channels))
        image = np.kron(coarse, np.ones((1, -(-net.size // 4), -(-net.size // 4), 1)))[:, :net.size, :net.size]
        out.append(np.clip(image + rng.normal(0, 0.2, image.shape), -1, 1).astype(np.float32))
    return out


# -- the plain NumPy reference -------------------------------------------------------------------------------
def reference_conv(x: np.ndarray, layer: Layer) -> np.ndarray:
    """One SAME-padded convolution in float64 on x [H, W, C] (no activation)."""
    k, s = layer.kernel, layer.stride
    top, bottom = same_pads(x.shape[0], k, s)
    left, right = same_pads(x.shape[1], k, s)
    xp = np.pad(x, ((top, bottom), (left, right), (0, 0)))
    oh, ow = same_output(x.shape[0], s), same_output(x.shape[1], s)
    w = layer.weights.astype(np.float64)
    acc = np.zeros((oh, ow, layer.channels_out))
    for i in range(k):
        for j in range(k):
            window = xp[i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s, :]
            acc += window * w[0, i, j] if layer.depthwise else window @ w[:, i, j, :].T
    return acc + layer.bias


def reference_forward(net: MobileNetV1, x: np.ndarray) -> list[np.ndarray]:
    """Every activation of ``net`` on one NHWC image (float64, [H, W, C]): each feature layer's output,
    the pooled features, the head's output (before the logistic) and the probabilities."""
    h = x[0].astype(np.float64)
    outs = []
    for layer in net.features:
        h = np.clip(reference_conv(h, layer), 0.0, 6.0)
        outs.append(h)
    pooled = h.mean(axis=(0, 1), keepdims=True)
    logits = reference_conv(pooled, net.head)
    return outs + [pooled, logits, 1.0 / (1.0 + np.exp(-logits))]


# -- NNAPI ----------------------------------------------------------------------------------------------------
class NNAPIBuilder:
    """Adds operands to an ``openvx_nn.nnapi.Model`` with less ceremony."""

    def __init__(self):
        from openvx_nn import nnapi
        self.nnapi = nnapi
        self.model = nnapi.Model()

    def operand(self, kind, dims=(), value=None, scale: float = 0.0, zero_point: int = 0) -> int:
        k = self.model.add_operand(kind, dimensions=list(dims), scale=scale, zero_point=zero_point)
        if value is not None:
            self.model.set_operand_value(k, value)
        return k

    def ints(self, *values: int) -> list[int]:
        return [self.operand(self.nnapi.OperandType.INT32, value=np.int32(v)) for v in values]

    def conv(self, x: int, layer: Layer, weights: int, bias: int, out: int, activation: int) -> None:
        T = self.nnapi.OperationType
        multiplier = [1] if layer.depthwise else []  # depthwise: one filter per input channel
        args = self.ints(self.nnapi.PaddingScheme.SAME, layer.stride, layer.stride, *multiplier, activation)
        self.model.add_operation(T.DEPTHWISE_CONV_2D if layer.depthwise else T.CONV_2D,
                                 [x, weights, bias] + args, [out])


def nnapi_mobilenet_float(net: MobileNetV1):
    """``net`` as a finished float32 NNAPI model: CONV_2D / DEPTHWISE_CONV_2D with fused RELU6 (implicit SAME
    padding), AVERAGE_POOL_2D over the whole map, a 1x1 CONV_2D and LOGISTIC. Input and output NHWC."""
    b = NNAPIBuilder()
    F, T = b.nnapi.OperandType.TENSOR_FLOAT32, b.nnapi.OperationType
    relu6, none = b.nnapi.FusedActivationFunc.RELU6, b.nnapi.FusedActivationFunc.NONE
    x = first = b.operand(F, net.input_shape)
    size = net.size
    for layer in net.features:
        size = same_output(size, layer.stride)
        out = b.operand(F, (1, size, size, layer.channels_out))
        b.conv(x, layer, b.operand(F, layer.weights.shape, layer.weights),
               b.operand(F, layer.bias.shape, layer.bias), out, relu6)
        x = out
    pooled = b.operand(F, (1, 1, 1, net.features[-1].channels_out))
    b.model.add_operation(T.AVERAGE_POOL_2D, [x] + b.ints(b.nnapi.PaddingScheme.VALID, 1, 1, size, size, none),
                          [pooled])
    logits = b.operand(F, net.output_shape)
    b.conv(pooled, net.head, b.operand(F, net.head.weights.shape, net.head.weights),
           b.operand(F, net.head.bias.shape, net.head.bias), logits, none)
    probs = b.operand(F, net.output_shape)
    b.model.add_operation(T.LOGISTIC, [logits], [probs])
    b.model.identify_inputs_and_outputs([first], [probs])
    b.model.finish()
    return b.model


# -- ONNX -----------------------------------------------------------------------------------------------------
def onnx_weights(layer: Layer) -> np.ndarray:
    """NNAPI filter layout -> ONNX's [out, in / group, kh, kw]."""
    if layer.depthwise:
        return np.ascontiguousarray(layer.weights[0].transpose(2, 0, 1)[:, None])
    return np.ascontiguousarray(layer.weights.transpose(0, 3, 1, 2))


def onnx_conv_attributes(layer: Layer, size: int) -> dict:
    top, bottom = same_pads(size, layer.kernel, layer.stride)
    return {"kernel_shape": [layer.kernel] * 2, "strides": [layer.stride] * 2, "pads": [top, top, bottom, bottom],
            "group": layer.channels_out if layer.depthwise else 1}


def serialize(nodes, inputs, outputs, initializers, name: str, opsets=(("", 13),)) -> bytes:
    """An ONNX model from its parts, checked and serialized."""
    import onnx
    from onnx import helper
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def onnx_mobilenet_float(net: MobileNetV1) -> bytes:
    """``net`` as a float32 ONNX model: input ``x`` NCHW, output ``y`` [1, classes, 1, 1]."""
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                        numpy_helper.from_array(np.array(6, np.float32), "six")]
    x, size = "x", net.size
    for i, layer in enumerate(net.features):
        inits += [numpy_helper.from_array(onnx_weights(layer), f"w{i}"), numpy_helper.from_array(layer.bias, f"b{i}")]
        nodes += [helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], **onnx_conv_attributes(layer, size)),
                  helper.make_node("Clip", [f"c{i}", "zero", "six"], [f"r{i}"])]
        x, size = f"r{i}", same_output(size, layer.stride)
    inits += [numpy_helper.from_array(onnx_weights(net.head), "wh"), numpy_helper.from_array(net.head.bias, "bh")]
    nodes += [helper.make_node("GlobalAveragePool", [x], ["pooled"]),
              helper.make_node("Conv", ["pooled", "wh", "bh"], ["logits"], **onnx_conv_attributes(net.head, 1)),
              helper.make_node("Sigmoid", ["logits"], ["y"])]
    classes = net.head.channels_out
    return serialize(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, net.size, net.size])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes, 1, 1])], inits, net.name)


THREADS = 2
"""Threads a side in the model benchmark (``bench_models.py --threads``): ORT's intra-op threads, LiteRT's and
PyTorch's threads, and ``OPENVX_NN_THREADS`` for ours."""


def ort_session(model: bytes, threads: int | None = None):
    """An ONNX Runtime CPU session with defaults but ``threads`` intra-op threads (:data:`THREADS` if None)."""
    import onnxruntime as ort
    threads = THREADS if threads is None else threads
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def nchw(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))

