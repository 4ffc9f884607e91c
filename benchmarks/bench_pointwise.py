"""Float32 1x1 convolutions on small maps (4x4 to 28x28), ours against ONNX Runtime's Conv, one thread, CPU time.

The shapes are the 1x1 layers that take most of the time of MediaPipe's iris, face and hand landmark models,
MobileNet v1, EfficientNet-B0 (whose shapes hand landmark full shares) and ResNet-50 at their small maps (printed
from the models). Each row is ``bench_resnet_layers.row``: ours is ``float_convolution.bind_conv2d`` on NHWC arrays,
ORT a one-node model on one intra-op thread, calls in turns in one process timed by the thread's CPU time, medians;
``ORT conv`` is ORT's run times its Conv node's share of its own profile (without its NCHWc reorders). Our output is
checked against a float64 reference (relative 1e-5) before timing. ``GMAC/s`` is ours, ``ORT GMAC/s`` ORT's node.

Usage: python benchmarks/bench_pointwise.py [--repeat N] [--rows iris,mnv1,...] [--smoke]
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENVX_NN_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_resnet_layers as layers

# (name, input side, channels in, channels out, kernel, stride, pad, ReLU, residual add)
LAYERS = [("iris 64->128 16", 16, 64, 128, 1, 1, 0, False, False),
          ("iris 128->64 16", 16, 128, 64, 1, 1, 0, False, True),
          ("iris 64->128 8", 8, 64, 128, 1, 1, 0, False, False),
          ("iris 128->64 8", 8, 128, 64, 1, 1, 0, False, True),
          ("face 128->128 12", 12, 128, 128, 1, 1, 0, False, True),
          ("face 128->128 6", 6, 128, 128, 1, 1, 0, False, True),
          ("mnv1 256->256 28", 28, 256, 256, 1, 1, 0, True, False),
          ("mnv1 512->512 14", 14, 512, 512, 1, 1, 0, True, False),
          ("mnv1 512->1024 7", 7, 512, 1024, 1, 1, 0, True, False),
          ("mnv1 1024->1024 7", 7, 1024, 1024, 1, 1, 0, True, False),
          ("effb0 80->480 14", 14, 80, 480, 1, 1, 0, False, False),
          ("effb0 480->80 14", 14, 480, 80, 1, 1, 0, False, False),
          ("effb0 112->672 14", 14, 112, 672, 1, 1, 0, False, False),
          ("effb0 672->112 14", 14, 672, 112, 1, 1, 0, False, True),
          ("effb0 192->1152 7", 7, 192, 1152, 1, 1, 0, False, False),
          ("effb0 1152->192 7", 7, 1152, 192, 1, 1, 0, False, True),
          ("rn50 1024->256 14", 14, 1024, 256, 1, 1, 0, True, False),
          ("rn50 256->1024 14", 14, 256, 1024, 1, 1, 0, True, True),
          ("rn50 2048->512 7", 7, 2048, 512, 1, 1, 0, True, False),
          ("rn50 512->2048 7", 7, 512, 2048, 1, 1, 0, True, True)]
SMOKE = [("smoke 24->40 5", 5, 24, 40, 1, 1, 0, True, True), ("smoke 40->24 3", 3, 40, 24, 1, 1, 0, False, False)]


def main(argv: list[str]) -> int:
    return layers.main(argv, LAYERS, SMOKE, width=20)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
