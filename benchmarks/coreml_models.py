"""CoreML networks for the model benchmark, and the same networks as ONNX.

A network is a list of plain ops (``Op``) with float weights; ``coreml_spec`` writes it with coremltools'
``NeuralNetworkBuilder`` the way the PyTorch converter writes a model (convolution with explicit padding,
batch norm, ReLU6 as relu / linear -1 / threshold -6 / linear -1), ``onnx_model`` as ONNX (Conv,
BatchNormalization, Clip...: ORT folds the batch norms itself), so both sides compute the same function::

    from benchmarks.coreml_models import mobilenet_v2, coreml_spec, onnx_model
    net = mobilenet_v2(width=1.0, size=224)
    spec = coreml_spec(net)       # a Model_pb2.Model; coremltools.models.utils.save_spec writes a .mlmodel
    onnx_bytes = onnx_model(net)  # input "image" [1, 3, size, size], output "logits" [1, classes]
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from benchmarks.models import serialize

# MobileNet v2's inverted-residual stages: (expansion, output channels at width 1.0, blocks, first stride)
V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


@dataclass(frozen=True)
class Op:
    """One layer: ``kind`` is conv, bn, relu, relu6, add, maxpool, gap (global average pool) or fc.
    conv weights are [out, in / groups, kh, kw] (ONNX's layout); fc weights [out, in]."""

    kind: str
    inputs: tuple[str, ...]
    output: str
    params: dict = field(default_factory=dict)


@dataclass
class Network:
    """Ops in execution order from ``input`` ([channels, size, size]) to ``output``."""

    name: str
    channels: int
    size: int
    ops: list[Op] = field(default_factory=list)
    output: str = ""
    macs: int = 0
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0), repr=False)
    _shapes: dict = field(default_factory=dict, repr=False)

    input = "image"

    def shape(self, blob: str) -> tuple[int, int, int]:
        return self._shapes.get(blob, (self.channels, self.size, self.size))

    def add(self, kind: str, inputs: tuple[str, ...], shape: tuple[int, int, int], **params) -> str:
        name = f"{kind}{len(self.ops)}"
        self.ops.append(Op(kind, inputs, name, params))
        self._shapes[name] = shape
        self.output = name
        return name

    def conv(self, x: str, c_out: int, k: int, stride: int = 1, groups: int = 1) -> str:
        """A bias-free k x k convolution, padding k // 2 on every side (PyTorch's), He-initialised."""
        c_in, h, w = self.shape(x)
        pad = k // 2
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        fan_in = k * k * c_in // groups
        weights = (self.rng.standard_normal((c_out, c_in // groups, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        self.macs += oh * ow * c_out * fan_in
        return self.add("conv", (x,), (c_out, oh, ow), weights=weights, stride=stride, pad=pad, groups=groups)

    def bn(self, x: str) -> str:
        c = self.shape(x)[0]
        r = self.rng
        return self.add("bn", (x,), self.shape(x), gamma=r.uniform(0.5, 1.5, c).astype(np.float32),
                        beta=r.normal(0, 0.1, c).astype(np.float32), mean=r.normal(0, 0.1, c).astype(np.float32),
                        variance=r.uniform(0.5, 1.5, c).astype(np.float32), epsilon=1e-5)

    def unary(self, kind: str, x: str) -> str:
        return self.add(kind, (x,), self.shape(x))

    def conv_bn(self, x: str, c_out: int, k: int, stride: int = 1, groups: int = 1, activation: str | None = None):
        y = self.bn(self.conv(x, c_out, k, stride, groups))
        return self.unary(activation, y) if activation else y

    def head(self, x: str, classes: int) -> None:
        """Global average pool and a fully connected layer to ``classes`` logits."""
        c = self.shape(x)[0]
        pooled = self.add("gap", (x,), (c, 1, 1))
        weights = (self.rng.standard_normal((classes, c)) / np.sqrt(c)).astype(np.float32)
        self.macs += classes * c
        self.add("fc", (pooled,), (classes, 1, 1), weights=weights,
                 bias=self.rng.normal(0, 0.1, classes).astype(np.float32))


def _channels(c: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible: round to a multiple of 8, never down by more than 10 %."""
    rounded = max(divisor, int(c + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * c else rounded


def mobilenet_v2(width: float = 1.0, size: int = 224, classes: int = 1000, seed: int = 0, stages: int = 7) -> Network:
    """MobileNet v2 (torchvision's shape): 3x3/2 conv, 17 inverted-residual blocks with depthwise convolutions
    (groups = channels), batch norm, ReLU6, a 1x1 conv to 1,280, global average pool, inner product.
    ``stages`` < 7 keeps only the first inverted-residual stages (a quick test model)."""
    part = "" if stages == len(V2_STAGES) else f" ({stages} of {len(V2_STAGES)} stages)"
    net = Network(f"CoreML MobileNet v2 {width:g} {size}²{part}", 3, size, rng=np.random.default_rng(seed))
    c = _channels(32 * width)
    x = net.conv_bn(net.input, c, 3, 2, activation="relu6")
    for expansion, channels, blocks, first_stride in V2_STAGES[:stages]:
        c_out = _channels(channels * width)
        for i in range(blocks):
            stride, hidden = (first_stride if i == 0 else 1), c * expansion
            y = net.conv_bn(x, hidden, 1, activation="relu6") if expansion != 1 else x
            y = net.conv_bn(y, hidden, 3, stride, groups=hidden, activation="relu6")
            y = net.conv_bn(y, c_out, 1)
            x = net.add("add", (x, y), net.shape(y)) if stride == 1 and c == c_out else y
            c = c_out
    x = net.conv_bn(x, _channels(1280 * max(1.0, width)), 1, activation="relu6")
    net.head(x, classes)
    return net


def resnet18(width: float = 1.0, size: int = 224, classes: int = 1000, seed: int = 0) -> Network:
    """ResNet-18 (torchvision's shape): 7x7/2 conv, 3x3/2 max pool, four stages of two basic blocks, global
    average pool, inner product; ``width`` scales the channels (64 ... 512 at 1.0)."""
    net = Network(f"CoreML ResNet-18 {width:g} {size}²", 3, size, rng=np.random.default_rng(seed))
    c = max(8, int(64 * width))
    x = net.conv_bn(net.input, c, 7, 2, activation="relu")
    _, h, w = net.shape(x)
    x = net.add("maxpool", (x,), (c, (h - 1) // 2 + 1, (w - 1) // 2 + 1))
    for stage, stride in enumerate((1, 2, 2, 2)):
        c_out = max(8, int(64 * width * 2 ** stage))
        for i in range(2):
            s = stride if i == 0 else 1
            y = net.conv_bn(net.conv_bn(x, c_out, 3, s, activation="relu"), c_out, 3)
            shortcut = net.conv_bn(x, c_out, 1, s) if s != 1 or c != c_out else x
            x = net.unary("relu", net.add("add", (shortcut, y), net.shape(y)))
            c = c_out
    net.head(x, classes)
    return net


def sample_images(net: Network, count: int, seed: int = 1) -> list[np.ndarray]:
    """Normalised images [3, size, size] float32."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((net.channels, net.size, net.size)).astype(np.float32) for _ in range(count)]


# -- CoreML ---------------------------------------------------------------------------------------------------
def coreml_spec(net: Network):
    """``net`` as a CoreML NeuralNetwork spec (input ``image`` [3, size, size], output the logits)."""
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
    classes = net.shape(net.output)[0]
    b = NeuralNetworkBuilder([(net.input, datatypes.Array(net.channels, net.size, net.size))],
                             [(net.output, datatypes.Array(classes))])
    for op in net.ops:
        x, y, p = op.inputs[0], op.output, op.params
        if op.kind == "conv":
            w = p["weights"]
            pad = p["pad"]
            b.add_convolution(y, kernel_channels=w.shape[1], output_channels=w.shape[0], height=w.shape[2],
                              width=w.shape[3], stride_height=p["stride"], stride_width=p["stride"],
                              border_mode="valid", groups=p["groups"], W=w.transpose(2, 3, 1, 0), b=None,
                              has_bias=False, input_name=x, output_name=y, padding_top=pad, padding_bottom=pad,
                              padding_left=pad, padding_right=pad)
        elif op.kind == "bn":
            b.add_batchnorm(y, len(p["gamma"]), p["gamma"], p["beta"], p["mean"], p["variance"], input_name=x,
                            output_name=y, epsilon=p["epsilon"])
        elif op.kind == "relu":
            b.add_activation(y, "RELU", x, y)
        elif op.kind == "relu6":  # as coremltools' MIL-to-NN backend writes relu6
            b.add_activation(y + "_relu", "RELU", x, y + "_relu")
            b.add_activation(y + "_neg", "LINEAR", y + "_relu", y + "_neg", params=[-1.0, 0.0])
            b.add_unary(y + "_threshold6", y + "_neg", y + "_threshold6", mode="threshold", alpha=-6.0)
            b.add_activation(y, "LINEAR", y + "_threshold6", y, params=[-1.0, 0.0])
        elif op.kind == "add":
            b.add_elementwise(y, list(op.inputs), y, mode="ADD")
        elif op.kind == "maxpool":
            b.add_pooling(y, 3, 3, 2, 2, layer_type="MAX", padding_type="VALID", input_name=x, output_name=y,
                          padding_top=1, padding_bottom=1, padding_left=1, padding_right=1)
        elif op.kind == "gap":
            b.add_pooling(y, 1, 1, 1, 1, layer_type="AVERAGE", padding_type="VALID", input_name=x, output_name=y,
                          is_global=True)
        elif op.kind == "fc":
            w = p["weights"]
            b.add_inner_product(y, w, p["bias"], input_channels=w.shape[1], output_channels=w.shape[0],
                                has_bias=True, input_name=x, output_name=y)
        else:
            raise ValueError(f"op kind {op.kind!r} has no CoreML form")
    return b.spec


# -- ONNX -----------------------------------------------------------------------------------------------------
def onnx_model(net: Network) -> bytes:
    """``net`` as ONNX: input ``image`` [1, 3, size, size], output ``logits`` [1, classes]."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    if any(op.kind == "relu6" for op in net.ops):
        inits += [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                  numpy_helper.from_array(np.array(6, np.float32), "six")]

    def constant(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    for op in net.ops:
        x, y, p = op.inputs[0], op.output, op.params
        if op.kind == "conv":
            k, pad = p["weights"].shape[2], p["pad"]
            nodes.append(helper.make_node("Conv", [x, constant(y + "_w", p["weights"])], [y], kernel_shape=[k, k],
                                          strides=[p["stride"]] * 2, pads=[pad] * 4, group=p["groups"]))
        elif op.kind == "bn":
            names = [constant(f"{y}_{key}", p[key]) for key in ("gamma", "beta", "mean", "variance")]
            nodes.append(helper.make_node("BatchNormalization", [x, *names], [y], epsilon=p["epsilon"]))
        elif op.kind == "relu":
            nodes.append(helper.make_node("Relu", [x], [y]))
        elif op.kind == "relu6":
            nodes.append(helper.make_node("Clip", [x, "zero", "six"], [y]))
        elif op.kind == "add":
            nodes.append(helper.make_node("Add", list(op.inputs), [y]))
        elif op.kind == "maxpool":
            nodes.append(helper.make_node("MaxPool", [x], [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
        elif op.kind == "gap":
            nodes += [helper.make_node("GlobalAveragePool", [x], [y + "_4d"]),
                      helper.make_node("Flatten", [y + "_4d"], [y])]
        elif op.kind == "fc":
            nodes.append(helper.make_node("Gemm", [x, constant(y + "_w", p["weights"]), constant(y + "_b", p["bias"])],
                                          [y], transB=1))
        else:
            raise ValueError(f"op kind {op.kind!r} has no ONNX form")
    classes = net.shape(net.output)[0]
    return serialize(nodes, [helper.make_tensor_value_info(net.input, TensorProto.FLOAT,
                                                           [1, net.channels, net.size, net.size])],
                     [helper.make_tensor_value_info(net.output, TensorProto.FLOAT, [1, classes])], inits, net.name)
