"""The standard float32 layers' layout copies at a graph's edges, old route against new, in turns in one process.

A one-node ``vxConvolutionLayer`` graph copies its planar input channels-last and its output back each call
(``kernels/frontend/chw_layout``). Each row here is that graph verified twice, with ``OPENVX_NN_EDGE_BLOCKS=0``
(the plain loop, the engine's own padded copy) and without (squares transposed in registers, written into the
zero-bordered input the engine reads in place); ``process()`` timed in alternating turns (``bench_ort.medians``),
medians reported, the outputs compared bit for bit first. ``--conversions`` times the copies alone (a bound
call each way) against ``np.copyto`` of the same bytes.

With ``--threads 1`` (``OPENVX_NN_THREADS=1``) the clock is the calling thread's CPU time (``--cpu``): the
graph runs on it alone, so other load on the machine costs it little.

Usage: python benchmarks/bench_edge_layouts.py [--threads N] [--cpu] [--repeat N] [--conversions]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ROWS = [("conv 3x3 64->64 56x56", 56, 64, 64, 3, 1, 1), ("conv 3x3 256->256 14x14", 14, 256, 256, 3, 1, 1),
        ("conv 1x1 96->24 56x56", 56, 96, 24, 1, 1, 0), ("conv 11x11/4 3->96 227x227", 227, 3, 96, 11, 4, 0)]
ENV = "OPENVX_NN_EDGE_BLOCKS"


def _graph(ctx, rng, size, c_in, c_out, k, stride, pad, blocks: str):
    os.environ[ENV] = blocks  # read when the copies are bound
    x = ctx.tensor(np.asfortranarray(rng.standard_normal((1, c_in, size, size)).astype(np.float32).T))
    w = (rng.standard_normal((k, k, c_in, c_out)) / np.sqrt(c_in * k * k)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    out = (size + 2 * pad - k) // stride + 1
    y = ctx.tensor(shape=(out, out, c_out, 1), dtype=np.float32)
    g = ctx.graph()
    g.convolution(x, np.asfortranarray(w), b, out=y, padding=(pad, pad))
    g.verify()
    g.process()  # the native plan is bound at the first run: under this setting
    return g, y


def _conversions(repeat: int, clock) -> None:
    from benchmarks.bench_ort import medians
    from openvx_nn.kernels.frontend import chw_layout
    for c, hw in ((64, 56), (256, 14), (96, 56), (24, 56), (3, 227), (96, 55)):
        x = np.random.default_rng(c).standard_normal((1, c, hw, hw)).astype(np.float32)
        pixels, planes, copy = np.empty((1, hw, hw, c), np.float32), np.empty_like(x), np.empty_like(x)
        calls = []
        for blocks in ("0", "1"):
            os.environ[ENV] = blocks
            calls += [chw_layout.bind(True, x, pixels), chw_layout.bind(False, pixels, planes)]
        times = medians([lambda copy=copy, x=x: np.copyto(copy, x)] + calls, repeat, block=5, clock=clock)
        rate = [2 * x.nbytes / t / 1e9 for t in times]
        print(f"{c}x{hw}x{hw}: copy {times[0] * 1e6:.1f} us ({rate[0]:.0f} GB/s); into old {times[1] * 1e6:.1f} "
              f"new {times[3] * 1e6:.1f} us ({rate[3]:.0f} GB/s); back old {times[2] * 1e6:.1f} new "
              f"{times[4] * 1e6:.1f} us ({rate[4]:.0f} GB/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="OPENVX_NN_THREADS (default: the engine's)")
    parser.add_argument("--cpu", action="store_true", help="time the calling thread's CPU time (one thread)")
    parser.add_argument("--repeat", type=int, default=15, help="turns per contender (default 15)")
    parser.add_argument("--conversions", action="store_true", help="the copies alone, not the layers")
    args = parser.parse_args()
    if args.threads:
        os.environ["OPENVX_NN_THREADS"] = str(args.threads)
    from benchmarks.bench_ort import medians
    from openvx_nn.api import Context
    clock = time.thread_time if args.cpu else time.perf_counter
    print(f"load: {os.getloadavg()[0]:.2f}, threads: {os.environ.get('OPENVX_NN_THREADS', 'all')}, "
          f"clock: {'CPU' if args.cpu else 'wall'}")
    if args.conversions:
        _conversions(args.repeat, clock)
        return
    with Context() as ctx:
        for name, *shape in ROWS:
            old, y_old = _graph(ctx, np.random.default_rng(1), *shape, "0")
            new, y_new = _graph(ctx, np.random.default_rng(1), *shape, "1")
            if y_old.numpy().tobytes() != y_new.numpy().tobytes():
                raise SystemExit(f"{name}: the outputs differ")
            t_old, t_new = medians([old.process, new.process], args.repeat, block=5, clock=clock)
            print(f"{name}: old {t_old * 1e3:.3f} ms, new {t_new * 1e3:.3f} ms, old/new {t_old / t_new:.2f}")


if __name__ == "__main__":
    main()
