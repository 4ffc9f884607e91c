"""ResNet-18's 3x3 stride-1 float32 layers on the Winograd route against the direct one, one thread, CPU time.

Each row binds the layer twice in one process, ``OPENVX_NN_WINOGRAD=0`` (the direct implicit GEMM) and on, as
``bench_resnet_layers`` binds it (the input zero-bordered as the plan holds it, bias, ReLU, the residual add),
checks both against the float64 reference and times them in alternating turns (``time.thread_time``, medians).

Usage: python benchmarks/bench_winograd.py [--repeat N] [--rows 64->64,...] [--group-bytes B]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENVX_NN_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_resnet_layers import ours, out_side, reference

from openvx_nn.kernels.frontend import float_winograd

LAYERS = [("3x3 64->64 56", 56, 64, 64, True, False), ("3x3 64->64 56 +res", 56, 64, 64, True, True),
          ("3x3 128->128 28 +res", 28, 128, 128, True, True), ("3x3 256->256 14 +res", 14, 256, 256, True, True),
          ("3x3 512->512 7", 7, 512, 512, True, False), ("3x3 512->512 7 +res", 7, 512, 512, True, True),
          ("3x3 128->32 56", 56, 128, 32, False, False), ("3x3 128->32 28", 28, 128, 32, False, False),
          ("3x3 128->32 14", 14, 128, 32, False, False), ("3x3 32->32 56", 56, 32, 32, True, False),
          ("3x3 64->32 56", 56, 64, 32, True, False), ("3x3 32->64 56", 56, 32, 64, True, False),
          ("3x3 64->48 56", 56, 64, 48, True, False), ("3x3 48->48 28", 28, 48, 48, True, False),
          ("3x3 32->128 28", 28, 32, 128, True, False), ("3x3 32->32 14", 14, 32, 32, True, False)]
"""ResNet-18's layers, then DenseNet-121's growth layers (128 -> 32) and layers of 32 channels in or out
(U-Net's first, narrow networks'), below ``MIN_CHANNELS``."""


def bound(route: str, x, w, bias, relu, res):
    """(call, output) of the layer bound with ``OPENVX_NN_WINOGRAD=route`` (the layer's choice is made there);
    bound with ``MIN_SIDE``, ``MIN_CHANNELS`` and ``MIN_CHANNEL_SUM`` lowered so that the Winograd side is Winograd on every row."""
    old_env, old_side = os.environ.get(float_winograd.ENV), float_winograd.MIN_SIDE
    old_channels, old_sum = float_winograd.MIN_CHANNELS, float_winograd.MIN_CHANNEL_SUM
    os.environ[float_winograd.ENV] = route
    float_winograd.MIN_SIDE = float_winograd.MIN_CHANNELS = float_winograd.MIN_CHANNEL_SUM = 1
    try:
        return ours(x, w, bias, 1, 1, relu, res)
    finally:
        float_winograd.MIN_SIDE, float_winograd.MIN_CHANNELS = old_side, old_channels
        float_winograd.MIN_CHANNEL_SUM = old_sum
        if old_env is None:
            del os.environ[float_winograd.ENV]
        else:
            os.environ[float_winograd.ENV] = old_env


def row(layer, repeat: int) -> tuple:
    name, side, c, o, relu, add = layer
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, side, side, c)).astype(np.float32)
    w = (rng.standard_normal((o, 3, 3, c)) / np.sqrt(9 * c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) * 0.1
    oh = out_side(side, 3, 1, 1)
    res = rng.standard_normal((1, oh, oh, o)).astype(np.float32) if add else None
    want = reference(x, w, bias, 1, 1, relu, res)
    calls, errors = [], []
    for route in ("0", "1"):
        call, out = bound(route, x, w, bias, relu, res)
        call()
        errors.append(np.abs(out - want).max() / max(1.0, np.abs(want).max()))
        if not errors[-1] < 1e-5:
            raise SystemExit(f"{name} route {route}: differs from the float64 reference by {errors[-1]:.3g}")
        calls.append(call)
    for _ in range(3):
        for call in calls:
            call()
    times = [[], []]
    for turn in range(repeat):
        for k in ((0, 1) if turn % 2 == 0 else (1, 0)):
            start = time.thread_time()
            calls[k]()
            times[k].append(time.thread_time() - start)
    ms = [1e3 * statistics.median(t) for t in times]
    return name, ms[0], ms[1], errors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--rows", default="", help="comma-separated substrings of the rows' names")
    parser.add_argument("--group-bytes", type=int, default=0, help="float_winograd.GROUP_BYTES (0: its default)")
    args = parser.parse_args(argv)
    if args.group_bytes:
        float_winograd.GROUP_BYTES = args.group_bytes
    layers = [la for la in LAYERS if not args.rows or any(s in la[0] for s in args.rows.split(","))]
    print(f"one thread, CPU time, medians of {args.repeat} turns; load {os.getloadavg()[0]:.2f}")
    print(f"{'layer':24s} {'direct ms':>9s} {'wino ms':>8s} {'speedup':>7s} {'err direct':>10s} {'err wino':>9s}")
    for layer in layers:
        name, direct, wino, errors = row(layer, args.repeat)
        print(f"{name:24s} {direct:9.3f} {wino:8.3f} {direct / wino:7.2f} {errors[0]:10.2g} {errors[1]:9.2g}",
              flush=True)
    print(f"load after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
