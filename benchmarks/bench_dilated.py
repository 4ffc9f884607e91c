"""Float32 dilated 3x3 convolutions, ours (tiles in region order, and the row walk) against ONNX Runtime's Conv.

The shapes are the DeepLab v3 head's at 224x224 (``benchmarks/torch_models.py``: the atrous branches 256 -> 64 at
rates 6, 12 and 18 on 28x28, the dilated backbone's 3x3 layers at rates 2 and 4) and a few others (rates 2 to 24,
14x14 to 56x56, 64 and 256 channels), each with "same" padding and ReLU. Each row is ``bench_resnet_layers.row``'s
measurement with one more side: ours is ``float_convolution.bind_conv2d`` on NHWC arrays, bound twice, with the
tiles in region order (``region_tiles``) and on the row walk (``OPENVX_NN_DILATED_REGIONS=0`` at bind); ORT a
one-node model on one intra-op thread; the three called in turns in one process, timed by the thread's CPU time,
medians. Both our outputs are checked against a float64 reference (relative 1e-5) and against each other (the same
bits) before timing. The row walk's figure is printed on a line of its own before the table's row.

Usage: python benchmarks/bench_dilated.py [--repeat N] [--rows d18,...] [--smoke]
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENVX_NN_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_resnet_layers as layers

SWITCH = "OPENVX_NN_DILATED_REGIONS"
# (name, input side, channels in, channels out, kernel, stride, pad, ReLU, residual add, dilation)
LAYERS = [("deeplab d6 256->64 28", 28, 256, 64, 3, 1, 6, True, False, 6),
          ("deeplab d12 256->64 28", 28, 256, 64, 3, 1, 12, True, False, 12),
          ("deeplab d18 256->64 28", 28, 256, 64, 3, 1, 18, True, False, 18),
          ("deeplab d2 32->32 28", 28, 32, 32, 3, 1, 2, True, False, 2),
          ("deeplab d4 64->64 28", 28, 64, 64, 3, 1, 4, True, False, 4),
          ("d2 64->64 56", 56, 64, 64, 3, 1, 2, True, False, 2),
          ("d24 64->64 56", 56, 64, 64, 3, 1, 24, True, False, 24),
          ("d18 256->64 56", 56, 256, 64, 3, 1, 18, True, False, 18),
          ("d6 256->256 14", 14, 256, 256, 3, 1, 6, True, False, 6),
          ("d12 256->256 14", 14, 256, 256, 3, 1, 12, True, False, 12)]
SMOKE = [("smoke d6 16->24 12", 12, 16, 24, 3, 1, 6, True, False, 6),
         ("smoke d3 8->40 9 +res", 9, 8, 40, 3, 1, 3, False, True, 3)]


def bound(x, w, bias, stride, pad, relu, res, dilation, regions: bool):
    """``bench_resnet_layers.ours`` bound with region order allowed or not (``SWITCH``, read at bind)."""
    before = os.environ.get(SWITCH)
    os.environ[SWITCH] = "1" if regions else "0"
    try:
        return layers.ours(x, w, bias, stride, pad, relu, res, dilation)
    finally:
        os.environ.pop(SWITCH) if before is None else os.environ.__setitem__(SWITCH, before)


def timed(layer, repeat: int, profile_dir: str) -> tuple:
    name, side, c, o, k, stride, pad, relu, add, dilation = layer
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, side, side, c)).astype(np.float32)
    w = (rng.standard_normal((o, k, k, c)) / np.sqrt(k * k * c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) * 0.1
    oh = layers.out_side(side, k, stride, pad, dilation)
    res = rng.standard_normal((1, oh, oh, o)).astype(np.float32) if add else None
    calls = [bound(x, w, bias, stride, pad, relu, res, dilation, regions) for regions in (True, False)]
    want = layers.reference(x, w, bias, stride, pad, relu, res, dilation)
    for call, out in calls:
        call()
        error = np.abs(out - want).max() / max(1.0, np.abs(want).max())
        if not error < 1e-5:
            raise SystemExit(f"{name}: ours differs from the float64 reference by {error:.3g}")
    if calls[0][1].tobytes() != calls[1][1].tobytes():
        raise SystemExit(f"{name}: region order and the row walk differ")
    session, feed = layers.ort_model(x, w, bias, stride, pad, relu, res, profile_dir, dilation)
    sides = [calls[0][0], calls[1][0], lambda: session.run(None, feed)]
    for _ in range(3):
        for f in sides:
            f()
    times = [[], [], []]
    for turn in range(repeat):
        for s in range(3):
            i = (s + turn) % 3
            start = time.thread_time()
            sides[i]()
            times[i].append(time.thread_time() - start)
    node = [t * share for t, share in zip(times[2], layers.conv_shares(session, repeat))]
    ms = [1e3 * statistics.median(t) for t in (*times, node)]
    print(f"  {name}: row walk {ms[1]:.3f} ms, regions {ms[0]:.3f} ms: {ms[1] / ms[0]:.3f}x", flush=True)
    macs = oh * oh * o * k * k * c
    return name, ms[0], ms[2], ms[3], macs / ms[0] / 1e6


def main(argv: list[str]) -> int:
    return layers.main(argv, LAYERS, SMOKE, width=24, timed=timed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
