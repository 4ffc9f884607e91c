"""Thread scaling of graph execution: graphs processed from different threads run in parallel.

1. Two threads, each processing its own conv3-sized graph (13x13x256 -> 384,
   kernel 3x3, padding 1, U8), against one thread processing both graphs in
   turn: throughput ratio (target >= 1.7 with single-threaded kernels, i.e.
   ``OPENVX_NN_THREADS=1``; with the default the single thread already uses
   the kernels' own thread pool).
2. Eight threads, each processing its own small graph (relu on 1x1x8 U8),
   against one thread processing all eight in turn: total graphs/s (target:
   no slower).
3. The same from C: ``bench_threads.c`` (compiled here against the library)
   runs eight (and two) pthreads calling ``vxProcessGraph`` against one
   thread.  A graph with a native plan runs in C without the GIL;
   ``OPENVX_NN_NATIVE=0`` keeps every graph on the Python path (each C call
   then takes the GIL and gives it back on return, waking a waiting thread),
   for comparison.

Contenders alternate in rounds in one process; medians.  "CPU" is the
process's CPU seconds per wall second (2.0 = both cores busy): on a machine
shared with other work it shows how much of the cores the run actually got,
and the first rows show the scaling the machine allows at that moment, to read
the others against: a plain nogil numba loop (scalar), and the engine's
micro-kernel alone on cache-resident data (dense VNNI/AVX work: where two
virtual cores share one physical core's vector units, or a power limit
lowers the clock when both are busy, this ceiling is below 2 and the conv
row cannot exceed it).

    OPENVX_NN_THREADS=1 python benchmarks/bench_threads.py
    python benchmarks/bench_threads.py --smoke      # tiny sizes (CI)
"""
from __future__ import annotations

import argparse
import functools
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

if os.environ.get("OPENVX_NN_THREADS", "").strip() == "1":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the float64 GEMM route single-threaded too

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn.api import Context


def _conv_graph(ctx, rng, size: int, channels: int, maps: int):
    g = ctx.graph()
    x = ctx.tensor(rng.integers(0, 4, (size, size, channels), dtype=np.uint8))
    w = ctx.tensor(rng.integers(0, 4, (3, 3, channels, maps), dtype=np.uint8))
    g.convolution(x, w, None, padding=1, out=ctx.tensor(shape=(size, size, maps), dtype=np.uint8))
    g.process()
    return g


def _relu_graph(ctx, rng):
    g = ctx.graph()
    g.relu(ctx.tensor(rng.integers(0, 255, (1, 1, 8), dtype=np.uint8)),
           out=ctx.tensor(shape=(1, 1, 8), dtype=np.uint8))
    g.process()
    return g


def _serial(graphs, repeats: int) -> tuple[float, float]:
    """(graphs/s, CPU seconds per wall second)."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        for g in graphs:
            g.process()
    wall = time.perf_counter() - start
    return len(graphs) * repeats / wall, (time.process_time() - cpu) / wall


def _threaded(graphs, repeats: int) -> tuple[float, float]:
    gate = threading.Barrier(len(graphs) + 1)

    def work(g):
        gate.wait()
        for _ in range(repeats):
            g.process()

    threads = [threading.Thread(target=work, args=(g,)) for g in graphs]
    for t in threads:
        t.start()
    gate.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return len(graphs) * repeats / wall, (time.process_time() - cpu) / wall


@numba.njit(nogil=True, cache=False)
def _spin(n: int) -> float:
    total = 0.0
    for i in range(n):
        total += i * 0.5
    return total


@functools.cache
def _tile_loop():
    """A nogil loop of the engine's micro-kernel on cache-resident data: dense integer SIMD work alone."""
    from openvx_nn.kernels.engine import isa
    from openvx_nn.kernels.engine.microkernel import KINDS, tile_kernel, variant
    name = isa.selected()
    if name == "generic":
        return None
    code = variant(name, KINDS[name][0], 4, 3)

    @numba.njit(nogil=True, cache=False)
    def loop(n, a, w, tile, rows, taps):
        for _ in range(n):
            tile_kernel(code, tile.ctypes.data, rows.ctypes.data, taps.ctypes.data, 1, 64, w.ctypes.data, 0)
        return tile[0]
    return loop


class _TileSpinner:
    """A stand-in graph whose "process" is the micro-kernel alone: the scaling the machine allows for the
    engine's instructions (cores that share their vector units, or a power limit, show here)."""

    def __init__(self, n: int):
        self.n, self.loop = n, _tile_loop()
        self.a = np.zeros(4096, np.uint8)
        self.w = np.zeros(64 * 4 * 64, np.uint8)
        self.tile = np.zeros(4 * 64, np.int32)
        self.rows = np.array([self.a.ctypes.data + 64 * i for i in range(4)], np.int64)
        self.taps = np.zeros(1, np.int64)
        self.process()

    def process(self) -> None:
        self.loop(self.n, self.a, self.w, self.tile, self.rows, self.taps)


class _Spinner:
    """A stand-in graph whose "process" is a pure nogil loop: the scaling the machine allows right now."""

    def __init__(self, n: int):
        self.n = n
        _spin(1)

    def process(self) -> None:
        _spin(self.n)


def compare(label: str, graphs, repeats: int, rounds: int, target: str) -> float:
    one, many = [], []
    for _ in range(rounds):
        one.append(_serial(graphs, repeats))
        many.append(_threaded(graphs, repeats))
    (a, cpu_a), (b, cpu_b) = ([statistics.median(x) for x in zip(*runs)] for runs in (one, many))
    return _row(label, len(graphs), a, cpu_a, b, cpu_b, target)


def _row(label: str, threads: int, a: float, cpu_a: float, b: float, cpu_b: float, target: str) -> float:
    """Print one row; the ratio of the rates.  "per CPU" divides each rate by the CPU it got: on a machine
    busy with other work (CPU well below the thread count) it is the figure that still means something
    (1.0: the threads cost each other nothing)."""
    per_cpu = (b / cpu_b) / (a / cpu_a) if cpu_a > 0 and cpu_b > 0 else float("nan")
    print(f"{label:40s} 1 thread {a:9.1f} graphs/s (CPU {cpu_a:4.2f})  {threads} threads {b:9.1f} "
          f"graphs/s (CPU {cpu_b:4.2f})  ratio {b / a:5.2f}  per CPU {per_cpu:4.2f}  ({target})")
    return b / a


def compare_c(label: str, graphs: int, repeats: int, rounds: int, target: str) -> float | None:
    """Row 3: bench_threads.c's rounds (serial and threaded alternate inside it); None without a C compiler."""
    flags = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"], check=True,
                           capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_threads"
        build = subprocess.run(["cc", "-O2", "-std=c99", str(Path(__file__).with_suffix(".c")), "-o", str(exe),
                                *shlex.split(flags), "-pthread"], check=False, capture_output=True, text=True)
        if build.returncode:
            print(f"{label:40s} skipped: cannot compile bench_threads.c\n{build.stderr}")
            return None
        run = subprocess.run([str(exe), str(graphs), str(repeats), str(rounds)], check=False, capture_output=True,
                             text=True, timeout=600)
    if run.returncode:
        raise SystemExit(f"bench_threads.c failed:\n{run.stdout}{run.stderr}")
    # each line: serial <graphs/s> <CPU> threaded <graphs/s> <CPU>
    rows = [[float(field) for i, field in enumerate(line.split()) if i % 3] for line in run.stdout.splitlines()]
    a, cpu_a, b, cpu_b = (statistics.median(column) for column in zip(*rows))
    return _row(label, graphs, a, cpu_a, b, cpu_b, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, two rounds (CI)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    size, channels, maps = (5, 8, 8) if args.smoke else (13, 256, 384)
    rounds = 2 if args.smoke else 7
    print(f"OPENVX_NN_THREADS={os.environ.get('OPENVX_NN_THREADS', '(unset)')}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}, "
          f"OPENVX_NN_NATIVE={os.environ.get('OPENVX_NN_NATIVE', '(unset)')}, {os.cpu_count()} CPUs")
    compare("calibration: nogil loop, 2 workers", [_Spinner(2_000_000 if args.smoke else 50_000_000)
                                                   for _ in range(2)], 2, rounds, "what this machine allows now")
    if _tile_loop() is not None:
        compare("calibration: micro-kernel, 2 workers", [_TileSpinner(20_000 if args.smoke else 400_000)
                                                         for _ in range(2)], 2, rounds, "the ceiling for conv work")
    with Context() as ctx:
        convs = [_conv_graph(ctx, rng, size, channels, maps) for _ in range(2)]
        # Enough calls per round (about 0.2 s) that starting the threads is not what is measured.
        compare(f"conv {size}x{size}x{channels}->{maps} k3 p1 U8, 2 graphs", convs, 2 if args.smoke else 200,
                rounds, "target >= 1.7 with OPENVX_NN_THREADS=1")
        smalls = [_relu_graph(ctx, rng) for _ in range(8)]
        compare("relu 1x1x8 U8, 8 graphs", smalls, 50 if args.smoke else 2000, rounds, "target >= 1.0")
        compare("relu 1x1x8 U8, 2 graphs", smalls[:2], 50 if args.smoke else 8000, rounds, "reported")
        for g in convs + smalls:
            g.close()
    compare_c("C: relu 1x1x8 U8, 8 graphs, pthreads", 8, 50 if args.smoke else 2000, rounds,
              "C threads; reported")
    compare_c("C: relu 1x1x8 U8, 2 graphs, pthreads", 2, 50 if args.smoke else 20000, rounds,
              "target >= 1.8")


if __name__ == "__main__":
    main()
