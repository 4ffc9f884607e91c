"""Converted networks with the Winograd route on and off, in one process, in turns (wall time, medians).

The row's ``.mlmodel`` (``model_rows.converted_row``: a ``torch_models`` module converted by coremltools) is loaded
twice in one process, once with ``OPENVX_NN_WINOGRAD=0`` and once with it on (each layer's route is chosen when
it is bound), and the two models take turns: each turn at least 5 calls and 0.1 s back to back, begun after a
0.15 s idle gap. Processes on this kind of VM differ by 15-20 %, more than the route changes: only turns in one
process compare the routes. Printed: both medians, direct / Winograd (above 1: the route is faster), and the
largest difference of the outputs.

    python benchmarks/bench_winograd_networks.py [--networks resnet18,unet] [--threads 2] [--turns 21]
        [--against-channels N]

``--against-channels N``: the first side is the route too, with ``MIN_CHANNELS`` N instead of its own (a threshold
change raced in one process).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # the thread count must reach OPENVX_NN_THREADS before the kernels load
    _early = argparse.ArgumentParser(add_help=False)
    _early.add_argument("--threads", type=int, default=2)
    os.environ["OPENVX_NN_THREADS"] = str(max(1, _early.parse_known_args()[0].threads))

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks import model_rows, models
from openvx_nn.kernels.frontend import float_winograd


def race(key: str, turns: int, against: int = 0) -> str:
    row = model_rows.converted_row(key, False)
    if row is None:
        return f"{key}: skipped (torch or coremltools missing)"
    try:
        runs, old = {}, os.environ.get(float_winograd.ENV)
        own = float_winograd.MIN_CHANNELS
        for route in ("0", "1"):
            os.environ[float_winograd.ENV] = "1" if against else route
            float_winograd.MIN_CHANNELS = against if against and route == "0" else own
            runs[route] = row.load_ours()
            runs[route]()  # the first call binds the layers
        float_winograd.MIN_CHANNELS = own
        if old is None:
            os.environ.pop(float_winograd.ENV)
        else:
            os.environ[float_winograd.ENV] = old
        direct, winograd = runs["0"](), runs["1"]()
        gap = float(np.max(np.abs(direct - winograd)) / np.max(np.abs(direct)))
        times: dict[str, list[float]] = {"0": [], "1": []}
        for turn in range(turns):
            for route in ("0", "1") if turn % 2 == 0 else ("1", "0"):
                time.sleep(0.15)
                start, calls = time.perf_counter(), 0
                while calls < 5 or time.perf_counter() - start < 0.1:
                    runs[route]()
                    calls += 1
                times[route].append((time.perf_counter() - start) / calls)
        t0, t1 = float(np.median(times["0"])), float(np.median(times["1"]))
        first = f"MIN_CHANNELS {against}" if against else "direct"
        return (f"{row.name}: {first} {t0 * 1e3:.2f} ms, Winograd {t1 * 1e3:.2f} ms, {first} / Winograd "
                f"{t0 / t1:.3f}; outputs differ by {gap:.1e} of the largest (load {os.getloadavg()[0]:.1f})")
    finally:
        row.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="resnet18,unet", help="torch_models keys")
    parser.add_argument("--threads", type=int, default=2, help="our threads (OPENVX_NN_THREADS)")
    parser.add_argument("--turns", type=int, default=21)
    parser.add_argument("--against-channels", type=int, default=0,
                        help="race the route with this MIN_CHANNELS instead of the direct route (0: direct)")
    args = parser.parse_args(argv)
    models.THREADS = args.threads
    print(f"{os.cpu_count()} CPUs, {args.threads} threads, {args.turns} turns")
    for key in args.networks.split(","):
        print(race(key, args.turns, args.against_channels), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
