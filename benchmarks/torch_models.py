"""Networks as a user brings them: PyTorch modules written after the published architectures (torchvision's
shapes), seeded random weights and batch-norm statistics, eval mode, and their converted forms.

``coreml_file`` writes what coremltools' PyTorch converter makes of a module (``convert_to="neuralnetwork"``:
ReLU6 as ``clip``, batch norm folded or left as ``batchnorm``, ``flatten`` + ``innerProduct`` classifiers,
hard-swish and swish as the layers it chooses); ``onnx_file`` what ``torch.onnx.export`` makes of it. Nothing
here is written by hand as a graph::

    net = build("mobilenet_v2", width=1.0)     # a torch.nn.Module in eval mode
    coreml_file(net, 224, "m.mlmodel")         # input "image" [1, 3, 224, 224], output "logits"
    onnx_file(net, 224, "m.onnx")

DenseNet-121, the U-Net, the DeepLab v3 head, ResNet-50, the Transformer encoder and the recurrent taggers are
the modules of ``tools/make_converted_networks.py`` (whose small forms are the committed test networks), built
here at the sizes of ``SIZES``. A shape given as an int is an image's side ([1, 3, side, side]); a sequence
network takes [1, length, features] as ``x`` and gives ``y``.
"""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from tools import make_converted_networks as small

# MobileNet v2's inverted-residual stages: (expansion, output channels, blocks, first stride)
V2_STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
# MobileNet v3 small: (kernel, expanded, output, squeeze-and-excitation, activation, stride)
V3_SMALL = [(3, 16, 16, True, "RE", 2), (3, 72, 24, False, "RE", 2), (3, 88, 24, False, "RE", 1),
            (5, 96, 40, True, "HS", 2), (5, 240, 40, True, "HS", 1), (5, 240, 40, True, "HS", 1),
            (5, 120, 48, True, "HS", 1), (5, 144, 48, True, "HS", 1), (5, 288, 96, True, "HS", 2),
            (5, 576, 96, True, "HS", 1), (5, 576, 96, True, "HS", 1)]


def _divisible(c: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible: a multiple of 8, never down by more than 10 %."""
    rounded = max(divisor, int(c + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * c else rounded


def conv_bn(c_in: int, c_out: int, k: int, stride: int = 1, groups: int = 1, act: type | None = nn.ReLU6):
    layers = [nn.Conv2d(c_in, c_out, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, *([act()] if act else []))


class InvertedResidual(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int, expansion: int):
        super().__init__()
        hidden = c_in * expansion
        layers = [conv_bn(c_in, hidden, 1)] if expansion != 1 else []
        layers += [conv_bn(hidden, hidden, 3, stride, hidden), conv_bn(hidden, c_out, 1, act=None)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000):
        super().__init__()
        c = _divisible(32 * width)
        layers = [conv_bn(3, c, 3, 2)]
        for expansion, channels, blocks, stride in V2_STAGES:
            c_out = _divisible(channels * width)
            for i in range(blocks):
                layers.append(InvertedResidual(c, c_out, stride if i == 0 else 1, expansion))
                c = c_out
        last = _divisible(1280 * max(1.0, width))
        self.features = nn.Sequential(*layers, conv_bn(c, last, 1))
        self.classifier = nn.Linear(last, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(conv_bn(c_in, c_out, 3, stride, act=nn.ReLU), conv_bn(c_out, c_out, 3, act=None))
        self.shortcut = conv_bn(c_in, c_out, 1, stride, act=None) if stride != 1 or c_in != c_out else nn.Identity()

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, width: float = 1.0, classes: int = 1000):
        super().__init__()
        c = max(8, int(64 * width))
        layers = [conv_bn(3, c, 7, 2, act=nn.ReLU), nn.MaxPool2d(3, 2, 1)]
        for stage, stride in enumerate((1, 2, 2, 2)):
            c_out = max(8, int(64 * width * 2 ** stage))
            layers += [BasicBlock(c, c_out, stride), BasicBlock(c_out, c_out, 1)]
            c = c_out
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class SqueezeExcitation(nn.Module):
    """Global average pool -> 1x1 conv -> activation -> 1x1 conv -> gate -> channel-wise multiply."""

    def __init__(self, c: int, squeezed: int, act: type = nn.ReLU, gate: type = nn.Hardsigmoid):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, squeezed, 1), nn.Conv2d(squeezed, c, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class V3Block(nn.Module):
    def __init__(self, c_in: int, k: int, hidden: int, c_out: int, se: bool, act: str, stride: int):
        super().__init__()
        a = nn.ReLU if act == "RE" else nn.Hardswish
        layers = [conv_bn(c_in, hidden, 1, act=a)] if hidden != c_in else []
        layers.append(conv_bn(hidden, hidden, k, stride, hidden, act=a))
        if se:
            layers.append(SqueezeExcitation(hidden, _divisible(hidden // 4)))
        layers.append(conv_bn(hidden, c_out, 1, act=None))
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV3Small(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers, c = [conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
        for k, hidden, c_out, se, act, stride in V3_SMALL:
            layers.append(V3Block(c, k, hidden, c_out, se, act, stride))
            c = c_out
        self.features = nn.Sequential(*layers, conv_bn(c, 576, 1, act=nn.Hardswish))
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(), nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


NETWORKS = {"mobilenet_v2": ("MobileNet v2", MobileNetV2), "resnet18": ("ResNet-18", ResNet18),
            "mobilenet_v3_small": ("MobileNet v3 small", MobileNetV3Small),
            "efficientnet_b0": ("EfficientNet-B0", small.EfficientNetB0), "resnet50": ("ResNet-50", small.ResNet50),
            "densenet121": ("DenseNet-121", small.DenseNet121), "unet": ("U-Net", small.UNet),
            "deeplab_head": ("DeepLab v3 head", small.DeepLabHead),
            "transformer_encoder": ("Transformer encoder", small.TransformerEncoder),
            "lstm_tagger": ("LSTM tagger", small.LSTMTagger), "gru_tagger": ("GRU tagger", small.GRUTagger)}


class Size(NamedTuple):
    """A network's build options and input shape (an int: an image's side) in the benchmark and in its smoke
    form (CI: seconds a row)."""

    options: dict
    shape: int | tuple[int, ...]
    smoke_options: dict
    smoke_shape: int | tuple[int, ...]


SIZES = {
    "mobilenet_v2": Size({"classes": 10}, 224, {"width": 0.25, "classes": 10}, 32),
    "resnet18": Size({"classes": 10}, 224, {"width": 0.125, "classes": 10}, 32),
    "mobilenet_v3_small": Size({"classes": 10}, 224, {"classes": 10}, 32),
    "efficientnet_b0": Size({"width": 1.0, "classes": 10}, 224, {"width": 1.0, "classes": 10}, 32),
    "resnet50": Size({"width": 1.0, "classes": 10}, 224, {"width": 0.0625, "classes": 10}, 32),
    "densenet121": Size({"growth": 32, "stem": 64, "bottleneck": 4, "classes": 10}, 224, {}, 32),
    "unet": Size({"widths": (16, 32, 64, 128, 256), "classes": 3}, 224, {}, 32),
    "deeplab_head": Size({"size": 224, "width": 0.25, "classes": 21}, 224, {"size": 32}, 32),
    "transformer_encoder": Size({"d": 256, "heads": 4, "hidden": 1024, "layers": 4, "length": 128}, (1, 128, 256),
                                {}, (1, 16, 32)),
    "lstm_tagger": Size({"features": 64, "hidden": 128, "tags": 10}, (1, 100, 64), {}, (1, 10, 12)),
    "gru_tagger": Size({"features": 64, "hidden": 128, "tags": 10}, (1, 100, 64), {}, (1, 10, 12)),
}
"""The benchmark's sizes: the published networks at 224² with 10 classes (the U-Net at a quarter of its widths with five levels,
the DeepLab head at a quarter of ResNet-50's widths), a four-layer encoder of width 256 over 128 tokens, and
taggers of 128 hidden units over 100 steps of 64 features."""


def example_shape(shape: int | tuple[int, ...]) -> tuple[int, ...]:
    return (1, 3, shape, shape) if isinstance(shape, int) else tuple(shape)


def names(shape: int | tuple[int, ...]) -> tuple[str, str]:
    """(input, output) feature names: an image's ``image`` and ``logits``, a sequence's ``x`` and ``y``."""
    return ("image", "logits") if len(example_shape(shape)) == 4 else ("x", "y")


def build(key: str, seed: int = 0, **kwargs) -> nn.Module:
    """``NETWORKS[key]`` with seeded weights and batch-norm statistics (the running mean and variance random
    too, so folding them is exercised), in eval mode."""
    torch.manual_seed(seed)
    net = NETWORKS[key][1](**kwargs)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                c = module.num_features
                module.weight.uniform_(0.5, 1.5, generator=generator)
                module.bias.normal_(0, 0.1, generator=generator)
                module.running_mean.normal_(0, 0.1, generator=generator)
                module.running_var.uniform_(0.5, 1.5, generator=generator)
                assert module.running_var.shape == (c,)
    return net.eval()


def macs(net: nn.Module, shape: int | tuple[int, ...]) -> int:
    """Multiply-accumulates of the convolutions, linear and recurrent layers for one input (not the attention's
    products of activations)."""
    total = 0

    def count(module, inputs, output):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            total += output.numel() * module.in_channels // module.groups * module.kernel_size[0] * module.kernel_size[1]
        elif isinstance(module, nn.ConvTranspose2d):
            total += inputs[0].numel() * module.out_channels * module.kernel_size[0] * module.kernel_size[1]
        elif isinstance(module, nn.Linear):
            total += inputs[0].numel() // module.in_features * module.in_features * module.out_features
        elif isinstance(module, (nn.LSTM, nn.GRU)):
            gates = 4 if isinstance(module, nn.LSTM) else 3
            steps = inputs[0].shape[1] if module.batch_first else inputs[0].shape[0]
            h = module.hidden_size
            total += steps * gates * h * (module.input_size + h) * (2 if module.bidirectional else 1)
    kinds = (nn.Conv2d, nn.ConvTranspose2d, nn.Linear, nn.LSTM, nn.GRU)
    hooks = [m.register_forward_hook(count) for m in net.modules() if isinstance(m, kinds)]
    with torch.no_grad():
        net(torch.zeros(example_shape(shape)))
    for hook in hooks:
        hook.remove()
    return total


def coreml_file(net: nn.Module, shape: int | tuple[int, ...], path: str) -> None:
    """``net`` converted by coremltools from its TorchScript trace to a NeuralNetwork ``.mlmodel`` at ``path``
    (feature names: ``names(shape)``)."""
    import coremltools as ct
    example = torch.zeros(example_shape(shape))
    first, last = names(shape)
    with torch.no_grad():
        traced = torch.jit.trace(net, example)
    model = ct.convert(traced, inputs=[ct.TensorType(name=first, shape=example.shape)],
                       outputs=[ct.TensorType(name=last)], convert_to="neuralnetwork")
    model.save(path)


def onnx_file(net: nn.Module, shape: int | tuple[int, ...], path: str) -> None:
    """``net`` exported by ``torch.onnx.export`` (feature names: ``names(shape)``)."""
    first, last = names(shape)
    with torch.no_grad():
        torch.onnx.export(net, (torch.zeros(example_shape(shape)),), path, input_names=[first],
                          output_names=[last], opset_version=17, dynamo=False)
