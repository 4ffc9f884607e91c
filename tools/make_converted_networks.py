"""Write ``tests/coreml/networks/``: small PyTorch modules after published architectures, converted by coremltools
to NeuralNetwork ``.mlmodel`` files, each beside an ``.npz`` of its inputs and PyTorch's outputs (by feature name),
so that the tests compare ``openvx_nn.coreml`` with PyTorch without PyTorch installed.

The architectures keep their published structure (stages, blocks, repeats, skip connections, attention) at
reduced widths and input sizes, so each file stays small: ShuffleNet v2 (Ma et al. 2018), a Transformer encoder
(Vaswani et al. 2017), a ViT-style patch model (Dosovitskiy et al. 2021), a GRU and a bidirectional LSTM tagger,
a U-Net (Ronneberger et al. 2015), EfficientNet-B0 (Tan and Le 2019), DenseNet-121 (Huang et al. 2017), ResNet-50
(He et al. 2016) and a DeepLab v3 head (Chen et al. 2017). ``benchmarks/torch_models.py`` builds the same modules
at their published sizes for the model benchmark.

    python tools/make_converted_networks.py [NAME ...]     (needs torch and coremltools)
"""
from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "coreml" / "networks"


# -- ShuffleNet v2 ------------------------------------------------------------------------------------------------
def _shuffle(x: torch.Tensor, groups: int = 2) -> torch.Tensor:
    # written without reading sizes off the tensor, which a trace would record as operations on shapes
    return x.unflatten(1, (groups, -1)).transpose(1, 2).flatten(1, 2)


class ShuffleUnit(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int):
        super().__init__()
        self.stride = stride
        half = c_out // 2
        if stride > 1:
            self.left = nn.Sequential(nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False),
                                      nn.BatchNorm2d(c_in), nn.Conv2d(c_in, half, 1, bias=False),
                                      nn.BatchNorm2d(half), nn.ReLU())
        c_right = c_in if stride > 1 else half
        self.right = nn.Sequential(nn.Conv2d(c_right, half, 1, bias=False), nn.BatchNorm2d(half), nn.ReLU(),
                                   nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False), nn.BatchNorm2d(half),
                                   nn.Conv2d(half, half, 1, bias=False), nn.BatchNorm2d(half), nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            a, b = x.chunk(2, dim=1)
            out = torch.cat((a, self.right(b)), 1)
        else:
            out = torch.cat((self.left(x), self.right(x)), 1)
        return _shuffle(out)


class ShuffleNetV2(nn.Module):
    def __init__(self, widths=(8, 16, 32, 64, 128), repeats=(4, 8, 4), classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        stages, c = [], widths[0]
        for c_out, n in zip(widths[1:4], repeats):
            stages += [ShuffleUnit(c, c_out, 2)] + [ShuffleUnit(c_out, c_out, 1) for _ in range(n - 1)]
            c = c_out
        self.stages = nn.Sequential(*stages)
        self.last = nn.Sequential(nn.Conv2d(c, widths[4], 1, bias=False), nn.BatchNorm2d(widths[4]), nn.ReLU())
        self.fc = nn.Linear(widths[4], classes)

    def forward(self, x):
        return self.fc(self.last(self.stages(self.stem(x))).mean((2, 3)))


# -- attention: a Transformer encoder and a ViT ---------------------------------------------------------------------
class SelfAttention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.scale = (d // heads) ** -0.5
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(x).unflatten(-1, (3, self.heads, -1)).permute(2, 0, 3, 1, 4)
        weights = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        return self.proj((weights @ v).transpose(1, 2).flatten(2))


class EncoderLayer(nn.Module):
    """Post-norm (the original Transformer) or pre-norm (ViT) encoder layer."""

    def __init__(self, d: int, heads: int, hidden: int, pre_norm: bool, act: type = nn.ReLU):
        super().__init__()
        self.pre_norm = pre_norm
        self.attention = SelfAttention(d, heads)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), act(), nn.Linear(hidden, d))

    def forward(self, x):
        if self.pre_norm:
            x = x + self.attention(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attention(x))
        return self.norm2(x + self.mlp(x))


class TransformerEncoder(nn.Module):
    def __init__(self, d: int = 32, heads: int = 4, hidden: int = 64, layers: int = 2, length: int = 16):
        super().__init__()
        self.position = nn.Parameter(torch.randn(1, length, d) * 0.1)
        self.layers = nn.Sequential(*[EncoderLayer(d, heads, hidden, pre_norm=False) for _ in range(layers)])

    def forward(self, x):
        return self.layers(x + self.position)


class ViT(nn.Module):
    def __init__(self, size: int = 32, patch: int = 4, d: int = 32, heads: int = 4, layers: int = 2, classes: int = 10):
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.position = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, d) * 0.1)
        self.layers = nn.Sequential(*[EncoderLayer(d, heads, 2 * d, pre_norm=True, act=nn.GELU)
                                      for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        patches = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls, patches), 1) + self.position  # one image
        return self.head(self.norm(self.layers(x))[:, 0])


# -- recurrent taggers ----------------------------------------------------------------------------------------------
class GRUTagger(nn.Module):
    def __init__(self, features: int = 12, hidden: int = 16, tags: int = 5):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def forward(self, x):
        return torch.log_softmax(self.out(self.gru(x)[0]), dim=-1)


class LSTMTagger(nn.Module):
    def __init__(self, features: int = 12, hidden: int = 16, tags: int = 5):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, x):
        return torch.log_softmax(self.out(self.lstm(x)[0]), dim=-1)


# -- U-Net ----------------------------------------------------------------------------------------------------------
def _double(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, 1, 1), nn.BatchNorm2d(c_out), nn.ReLU(),
                         nn.Conv2d(c_out, c_out, 3, 1, 1), nn.BatchNorm2d(c_out), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, widths=(8, 16, 32), classes: int = 3):
        super().__init__()
        self.down = nn.ModuleList([_double(3, widths[0])] + [_double(a, b) for a, b in itertools.pairwise(widths)])
        self.up = nn.ModuleList([nn.ConvTranspose2d(b, a, 2, 2) for a, b in itertools.pairwise(widths)])
        self.merge = nn.ModuleList([_double(2 * a, a) for a in widths[:-1]])
        self.out = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else nn.functional.max_pool2d(x, 2))
            skips.append(x)
        for i in reversed(range(len(self.up))):
            x = self.merge[i](torch.cat((skips[i], self.up[i](x)), 1))
        return self.out(x)


# -- EfficientNet-B0 ------------------------------------------------------------------------------------------------
B0_STAGES = ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
             (6, 5, 2, 192, 4), (6, 3, 1, 320, 1))
"""(expansion, kernel, stride, channels, repeats) of EfficientNet-B0's seven stages."""


def _scaled(c: int, width: float) -> int:
    return max(8, int(c * width + 4) // 8 * 8)


class MBConv(nn.Module):
    def __init__(self, c_in: int, c_out: int, k: int, stride: int, expansion: int):
        super().__init__()
        hidden = c_in * expansion
        layers = [] if expansion == 1 else [nn.Conv2d(c_in, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU()]
        layers += [nn.Conv2d(hidden, hidden, k, stride, k // 2, groups=hidden, bias=False), nn.BatchNorm2d(hidden),
                   nn.SiLU()]
        self.expand = nn.Sequential(*layers)
        squeezed = max(1, c_in // 4)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(hidden, squeezed, 1), nn.SiLU(),
                                nn.Conv2d(squeezed, hidden, 1), nn.Sigmoid())
        self.project = nn.Sequential(nn.Conv2d(hidden, c_out, 1, bias=False), nn.BatchNorm2d(c_out))
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x):
        h = self.expand(x)
        h = self.project(h * self.se(h))
        return x + h if self.residual else h


class EfficientNetB0(nn.Module):
    def __init__(self, width: float = 0.125, classes: int = 10):
        super().__init__()
        c = _scaled(32, width)
        layers = [nn.Sequential(nn.Conv2d(3, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c), nn.SiLU())]
        for expansion, k, stride, channels, repeats in B0_STAGES:
            for i in range(repeats):
                layers.append(MBConv(c, _scaled(channels, width), k, stride if i == 0 else 1, expansion))
                c = _scaled(channels, width)
        head = _scaled(1280, width)
        self.features = nn.Sequential(*layers, nn.Conv2d(c, head, 1, bias=False), nn.BatchNorm2d(head), nn.SiLU())
        self.classifier = nn.Linear(head, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


# -- DenseNet-121 ---------------------------------------------------------------------------------------------------
class DenseLayer(nn.Module):
    def __init__(self, c_in: int, growth: int, bottleneck: int):
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(c_in), nn.ReLU(), nn.Conv2d(c_in, bottleneck * growth, 1, bias=False),
                                  nn.BatchNorm2d(bottleneck * growth), nn.ReLU(),
                                  nn.Conv2d(bottleneck * growth, growth, 3, 1, 1, bias=False))

    def forward(self, x):
        return torch.cat((x, self.body(x)), 1)


class DenseNet121(nn.Module):
    def __init__(self, growth: int = 4, blocks=(6, 12, 24, 16), stem: int = 8, bottleneck: int = 2, classes: int = 10):
        super().__init__()
        layers = [nn.Conv2d(3, stem, 7, 2, 3, bias=False), nn.BatchNorm2d(stem), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        c = stem
        for i, n in enumerate(blocks):
            for _ in range(n):
                layers.append(DenseLayer(c, growth, bottleneck))
                c += growth
            if i < len(blocks) - 1:  # transition: halve the channels and the plane
                layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False), nn.AvgPool2d(2, 2)]
                c //= 2
        self.features = nn.Sequential(*layers, nn.BatchNorm2d(c), nn.ReLU())
        self.classifier = nn.Linear(c, classes)

    def forward(self, x):
        return self.classifier(self.features(x).mean((2, 3)))


# -- ResNet-50 ------------------------------------------------------------------------------------------------------
def _conv_bn(c_in: int, c_out: int, k: int, stride: int = 1, dilation: int = 1, relu: bool = True) -> nn.Sequential:
    layers = [nn.Conv2d(c_in, c_out, k, stride, dilation * (k // 2), dilation, bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, *([nn.ReLU()] if relu else []))


class Bottleneck(nn.Module):
    """1x1 down, 3x3 (the stride, as torchvision's v1.5; or a dilation), 1x1 up by 4, projected shortcut."""

    def __init__(self, c_in: int, inner: int, stride: int = 1, dilation: int = 1):
        super().__init__()
        c_out = 4 * inner
        self.body = nn.Sequential(_conv_bn(c_in, inner, 1), _conv_bn(inner, inner, 3, stride, dilation),
                                  _conv_bn(inner, c_out, 1, relu=False))
        self.shortcut = (_conv_bn(c_in, c_out, 1, stride, relu=False) if stride != 1 or c_in != c_out
                         else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet50(nn.Module):
    def __init__(self, width: float = 0.0625, classes: int = 10, blocks=(3, 4, 6, 3)):
        super().__init__()
        c = max(4, int(64 * width))
        layers = [_conv_bn(3, c, 7, 2), nn.MaxPool2d(3, 2, 1)]
        for stage, n in enumerate(blocks):
            inner = max(4, int(64 * width * 2 ** stage))
            for i in range(n):
                layers.append(Bottleneck(c, inner, 2 if i == 0 and stage > 0 else 1))
                c = 4 * inner
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


# -- DeepLab v3 -----------------------------------------------------------------------------------------------------
class DeepLabHead(nn.Module):
    """DeepLab v3 at output stride 8 on a small residual backbone: the last two stages dilated (2, 4) instead of
    strided, atrous spatial pyramid pooling (a 1x1 branch, three 3x3 at ``rates``, and image pooling: adaptive
    average pool to 1x1, 1x1 conv, bilinear upsampling back), a 1x1 projection of their concatenation, a 3x3 conv,
    the classifier, and bilinear upsampling by 8 to the input's size. ``size``: the input's side (the pooling
    branch's upsampling is to a fixed size, so the trace records no operations on shapes)."""

    def __init__(self, size: int = 64, width: float = 0.0625, classes: int = 3, rates=(6, 12, 18)):
        super().__init__()
        c0, a = max(4, int(64 * width)), max(4, int(256 * width))
        inner = [max(1, int(v * width)) for v in (64, 128, 256)]
        self.backbone = nn.Sequential(_conv_bn(3, c0, 3, 2), _conv_bn(c0, c0, 3), nn.MaxPool2d(3, 2, 1),
                                      Bottleneck(c0, inner[0], 2), Bottleneck(4 * inner[0], inner[1], 1, 2),
                                      Bottleneck(4 * inner[1], inner[2], 1, 4))
        c3 = 4 * inner[2]
        self.branches = nn.ModuleList([_conv_bn(c3, a, 1)] + [_conv_bn(c3, a, 3, 1, r) for r in rates])
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c3, a, 1, bias=False), nn.BatchNorm2d(a),
                                  nn.ReLU())
        self.plane = (size // 8, size // 8)
        self.project = _conv_bn((len(rates) + 2) * a, a, 1)
        self.head = nn.Sequential(_conv_bn(a, a, 3), nn.Conv2d(a, classes, 1))

    def forward(self, x):
        f = self.backbone(x)
        pooled = nn.functional.interpolate(self.pool(f), size=self.plane, mode="bilinear", align_corners=False)
        y = self.head(self.project(torch.cat([b(f) for b in self.branches] + [pooled], 1)))
        return nn.functional.interpolate(y, scale_factor=8, mode="bilinear", align_corners=False)


NETWORKS = {  # name: (module, input shape)
    "shufflenet_v2": (ShuffleNetV2, (1, 3, 64, 64)),
    "transformer_encoder": (TransformerEncoder, (1, 16, 32)),
    "vit": (ViT, (1, 3, 32, 32)),
    "gru_tagger": (GRUTagger, (1, 10, 12)),
    "lstm_tagger": (LSTMTagger, (1, 10, 12)),
    "unet": (UNet, (1, 3, 32, 32)),
    "efficientnet_b0": (EfficientNetB0, (1, 3, 64, 64)),
    "densenet121": (DenseNet121, (1, 3, 64, 64)),
    "resnet50": (ResNet50, (1, 3, 64, 64)),
    "deeplab_head": (DeepLabHead, (1, 3, 64, 64)),
}


def build(name: str, seed: int = 0) -> nn.Module:
    """``NETWORKS[name]`` with seeded weights and random batch-norm statistics (so folding them is exercised)."""
    torch.manual_seed(seed)
    net = NETWORKS[name][0]()
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0, 0.1)
                module.running_mean.normal_(0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return net.eval()


def write(name: str) -> Path:
    import coremltools as ct
    net = build(name)
    shape = NETWORKS[name][1]
    x = torch.from_numpy(np.random.default_rng(sum(map(ord, name))).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        traced = torch.jit.trace(net, x)
        want = net(x).numpy()
    model = ct.convert(traced, inputs=[ct.TensorType(name="x", shape=shape)], outputs=[ct.TensorType(name="y")],
                       convert_to="neuralnetwork")
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.mlmodel"
    model.save(str(path))
    np.savez_compressed(OUT / f"{name}.npz", x=x.numpy(), y=want)
    return path


def main(argv: list[str]) -> int:
    for name in argv or list(NETWORKS):
        path = write(name)
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
