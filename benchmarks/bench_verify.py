"""Verify and run cost per node of long graphs: flat in the number of nodes, a loop at process.

A chain of N relu nodes (4x4x2 Q7.8 tensors, virtual in between; ``--op add``: tensor adds of the
input) built with the Python API (``openvx_nn.api``).  Per node, medians over rounds (sizes
alternated within each round, so a loaded machine shifts every row alike):

- ``build``: the Python API calls that add the node;
- ``verify``: ``Graph.verify()`` (checks, order, validators, the plan's rewrites, memory plan);
- ``bind``: the first ``process()`` after verify minus a steady one (binds every node's call once);
- ``first``: ``verify`` plus the whole first ``process()``: what a graph costs before its first result;
- ``process``: a steady ``process()``;
- ``kernels``: the same bound calls made directly in a loop (what the kernels themselves cost);
- ``release``: closing the graph (its nodes, tensors and scalars).

``process - kernels`` is the per-node dispatch overhead of the plan.  The last
columns are verify and release per node divided by their value at the smallest
N: 1.0 means linear.  Also printed: the memory plan's arena against the sum of
the virtual tensors it holds.

    python benchmarks/bench_verify.py            # N = 100, 1,000, 10,000; 3 rounds
    python benchmarks/bench_verify.py --smoke    # N = 100, 1,000; 1 round (CI)
    python benchmarks/bench_verify.py --sizes 400,3200,10000 --rounds 5 [--op add] [--cpu-time]
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.core import reference

SHAPE = (4, 4, 2)
COLUMNS = ("build", "verify", "bind", "first", "process", "kernels", "release")


def _model_graph(graph):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", graph.handle)), reference.Reference)


CLOCK = time.perf_counter
"""``--cpu-time``: the calling thread's CPU time instead (what a loaded machine disturbs least; the plan's
verify and binding run on that thread)."""


def _time(function) -> float:
    gc.collect()  # each phase pays for its own garbage, not for the previous phase's
    start = CLOCK()
    function()
    return CLOCK() - start


def _expected(data: np.ndarray, op: str, n: int) -> np.ndarray:
    """The chain's output, from the operations' definitions: relu is max(x, 0) (idempotent); each add
    adds the input once more, saturating to int16."""
    if op == "relu":
        return np.maximum(data, 0)
    total = data.astype(np.int64)
    for _ in range(n):
        total = np.clip(total + data, -32768, 32767)
    return total.astype(np.int16)


def measure(ctx: Context, n: int, runs: int, op: str = "relu") -> tuple[dict[str, float], tuple[int, int]]:
    """Seconds per node of each column for one chain of ``n`` ``op`` nodes; (arena, virtual) bytes."""
    data = np.arange(-16, 16, dtype=np.int16).reshape(SHAPE, order="F")
    x = ctx.tensor(data, fixed_point_position=8)
    out = ctx.tensor(shape=SHAPE, dtype=np.int16, fixed_point_position=8)
    g = ctx.graph()
    times: dict[str, float] = {}

    def build():
        y = x
        for i in range(n):
            last = out if i == n - 1 else None
            y = g.relu(y, out=last) if op == "relu" else g.add(y, x, out=last)

    times["build"] = _time(build)
    times["verify"] = _time(g.verify)
    first = _time(g.process)
    steady = [_time(g.process) for _ in range(runs)]
    times["process"] = statistics.median(steady)
    times["bind"] = max(first - times["process"], 0.0)
    times["first"] = times["verify"] + first
    calls = [call.run for call in _model_graph(g).plan.calls]

    def kernels():
        for run in calls:
            run()

    times["kernels"] = statistics.median(_time(kernels) for _ in range(runs))
    assert np.array_equal(out.numpy(), _expected(data, op, n)), f"the {op} chain's output is wrong"
    memory = _model_graph(g).plan.memory
    sizes = (memory.arena_bytes, memory.virtual_bytes)
    times["release"] = _time(g.close)
    x.close()
    out.close()
    return {k: v / n for k, v in times.items()}, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="N = 100 and 1,000, one round (CI)")
    parser.add_argument("--sizes", help="comma-separated node counts (default 100,1000,10000)")
    parser.add_argument("--rounds", type=int, help="rounds (default 3; 1 with --smoke)")
    parser.add_argument("--op", choices=("relu", "add"), default="relu", help="the chain's node (default relu)")
    parser.add_argument("--cpu-time", action="store_true", help="time by the thread's CPU clock (a loaded machine)")
    args = parser.parse_args()
    global CLOCK
    if args.cpu_time:
        CLOCK = time.thread_time
    sizes, rounds, runs = ((100, 1000), 1, 3) if args.smoke else ((100, 1000, 10000), 3, 9)
    if args.sizes:
        sizes = tuple(int(n) for n in args.sizes.split(","))
    rounds = args.rounds or rounds
    results: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    arenas: dict[int, tuple[int, int]] = {}
    with Context() as ctx:
        measure(ctx, 10, 2, args.op)  # compiles (or loads) the kernels before anything is timed
        for _ in range(rounds):
            for n in sizes:
                row, arenas[n] = measure(ctx, n, runs, args.op)
                results[n].append(row)
    clock = "thread CPU time" if args.cpu_time else "wall time"
    print(f"{args.op} chain, {SHAPE} Q7.8, microseconds per node ({clock}), median of {rounds} round(s) "
          f"(process: median of {runs} runs; first: verify + the first process)")
    print(f"{'nodes':>7} " + " ".join(f"{c:>9}" for c in COLUMNS) + f" {'overhead':>9} {'verify/':>8} {'release/':>8}")
    base: dict[str, float] = {}
    for n in sizes:
        med = {c: statistics.median(r[c] for r in results[n]) * 1e6 for c in COLUMNS}
        base = base or med
        print(f"{n:>7} " + " ".join(f"{med[c]:9.2f}" for c in COLUMNS)
              + f" {med['process'] - med['kernels']:9.2f} {med['verify'] / base['verify']:8.2f}"
              f" {med['release'] / base['release']:8.2f}")
    for n in sizes:
        arena, virtual = arenas[n]
        print(f"memory plan, {n} nodes: arena {arena} bytes for {virtual} bytes of virtual tensors")


if __name__ == "__main__":
    main()
