"""The uint8 depthwise layers of NNAPI's MobileNet v1 0.25 (224²) on ``quant8_depthwise`` alone, one thread CPU time.

Each distinct 3x3 layer of the network (ReLU6 fused, TensorFlow's SAME paddings: 1 on each side at stride 1, 0
before and 1 after at stride 2; the 14²x128 stride-1 layer counts five times) as a bound call (``attach``) on
random data, timed by the calling thread's CPU time (``time.thread_time_ns``), medians of 20 calls a turn and
of the turns. ``--old DIR``: also the kernels of another source tree (a directory holding an ``openvx_nn_old``
package whose ``kernels`` is that tree's ``openvx_nn/kernels``), in turns with ours in this one process, their
outputs compared bit for bit::

    mkdir -p /tmp/old/openvx_nn_old && git archive REV openvx_nn/kernels | tar -x -C /tmp/old \\
        && mv /tmp/old/openvx_nn/kernels /tmp/old/openvx_nn_old/ && touch /tmp/old/openvx_nn_old/__init__.py
    OPENVX_NN_THREADS=1 python benchmarks/bench_quant8_depthwise.py [--old /tmp/old] [--turns 15]
"""
from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENVX_NN_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# (input side, channels, stride, times in the network)
LAYERS = [(112, 8, 1, 1), (112, 16, 2, 1), (56, 32, 1, 1), (56, 32, 2, 1), (28, 64, 1, 1), (28, 64, 2, 1),
          (14, 128, 1, 5), (14, 128, 2, 1), (7, 256, 1, 1)]


def _cpu_us(call, calls: int = 20) -> float:
    times = []
    for _ in range(calls):
        start = time.thread_time_ns()
        call()
        times.append(time.thread_time_ns() - start)
    return statistics.median(times) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="a directory holding the package openvx_nn_old (see the module doc)")
    parser.add_argument("--turns", type=int, default=15)
    args = parser.parse_args()
    sides = {"ours": importlib.import_module("openvx_nn.kernels.frontend.quant8_depthwise").prepare_depthwise}
    if args.old:
        sys.path.insert(0, args.old)
        sides["old"] = importlib.import_module("openvx_nn_old.kernels.frontend.quant8_depthwise").prepare_depthwise
    rng = np.random.default_rng(1)
    totals = dict.fromkeys(sides, 0.0)
    for size, c, stride, times in LAYERS:
        x = rng.integers(0, 256, (1, size, size, c), dtype=np.uint8)
        w = rng.integers(0, 256, (1, 3, 3, c), dtype=np.uint8)
        bias = rng.integers(-2000, 2000, c).astype(np.int32)
        pads = (1, 1, 1, 1) if stride == 1 else (0, 1, 0, 1)
        shape = (1, size // stride, size // stride, c)
        outs = {name: np.zeros(shape, np.uint8) for name in sides}
        runs = {name: prepare(w, bias, shape, pads, (stride, stride), 1, 3, (0.02, 128), (0.01, 120), (0.03, 3))
                .attach(x, outs[name]) for name, prepare in sides.items()}
        for run in runs.values():
            run()
        if len(outs) > 1:
            assert np.array_equal(outs["ours"], outs["old"]), f"{size}²×{c}/{stride}: the outputs differ"
        turns = {name: [] for name in sides}
        for _ in range(args.turns):
            for name, run in runs.items():
                turns[name].append(_cpu_us(run))
        medians = {name: statistics.median(t) for name, t in turns.items()}
        for name, value in medians.items():
            totals[name] += times * value
        line = "  ".join(f"{name} {value:7.1f} us" for name, value in medians.items())
        ratio = f"  old ÷ ours {medians['old'] / medians['ours']:.2f}" if "old" in medians else ""
        print(f"{size}²×{c} /{stride}{f' (x{times})' if times > 1 else ''}: {line}{ratio}", flush=True)
    line = "  ".join(f"{name} {value:.0f} us" for name, value in totals.items())
    ratio = f"  old ÷ ours {totals['old'] / totals['ours']:.2f}" if "old" in totals else ""
    print(f"the network's 13 depthwise layers: {line}{ratio}")


if __name__ == "__main__":
    main()
