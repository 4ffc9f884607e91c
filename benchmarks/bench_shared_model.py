"""Serving one model from a thread pool: which way of sharing gives the most results a second.

``CoreMLModel.predict`` lets calls on one model take turns (a lock per model; docs/threads.md). The other way
would be a graph per thread. Contenders, each running the same number of ``predict`` calls of MobileNet v2
(converter-style CoreML spec, ``benchmarks/coreml_models.py``):

- ``alone``: one thread, one model (its layers already share their work with the engine's helper thread);
- ``shared``: two threads calling ``predict`` on one model (the calls take turns);
- ``per thread``: two threads, each with a model of its own (two graphs run at once).

Contenders alternate in turns with an idle gap between turns, in one process; medians of results a second.

    python benchmarks/bench_shared_model.py [--width 0.5] [--size 160] [--turns 7] [--calls 40]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.coreml_models import coreml_spec, mobilenet_v2, sample_images
from openvx_nn import coreml


def _rate(models: list, images: list, threads: int, calls: int) -> float:
    """Results a second of ``calls`` predicts spread over ``threads`` threads (thread t uses models[t % len])."""
    start = threading.Barrier(threads + 1)

    def body(t: int) -> None:
        model = models[t % len(models)]
        start.wait()
        for i in range(t, calls, threads):
            model.predict({"image": images[i % len(images)]})
    workers = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    began = time.perf_counter()
    for w in workers:
        w.join()
    return calls / (time.perf_counter() - began)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=float, default=0.5)
    parser.add_argument("--size", type=int, default=160)
    parser.add_argument("--turns", type=int, default=7)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--gap", type=float, default=0.5, help="idle seconds between turns")
    args = parser.parse_args(argv)
    net = mobilenet_v2(width=args.width, size=args.size)
    spec = coreml_spec(net)
    first, second = coreml.load(spec), coreml.load(spec)
    images = sample_images(net, 8)
    for m in (first, second):
        m.predict({"image": images[0]})
    contenders = {"alone": ([first], 1), "shared": ([first], 2), "per thread": ([first, second], 2)}
    rates: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(args.turns):
        for name, (models, threads) in contenders.items():
            time.sleep(args.gap)
            rates[name].append(_rate(models, images, threads, args.calls))
    with open("/proc/cpuinfo") as f:
        cpu = f.read().split("model name")[1].split("\n")[0].strip(": \t")
    print(f"MobileNet v2 width {args.width} at {args.size}x{args.size}, {args.calls} calls a turn, "
          f"{args.turns} turns; {cpu}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    base = statistics.median(rates["alone"])
    print(f"| {'contender':<10} | results/s (median) | vs alone |")
    print("|---|---:|---:|")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"| {name:<10} | {median:.1f} | {median / base:.2f} |")
    first.close()
    second.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
