"""Per-call overhead of a verified graph: vxProcessGraph of a one-node graph minus its kernel.

Graph: one node on a 1x1x8 tensor (relu, U8; and a 1x1 convolution 8 -> 8,
U8). Contenders, interleaved in one process, medians over rounds:

- ``C API``: ``vx.vxProcessGraph`` (cffi through libopenvx.so, as a C program calls it): the graph's
  native plan when it has one (issue 25: no Python at all),
- ``C API, Python path``: the same call on a twin graph kept off the native path (``native_allowed``),
  what every graph ran before issue 25,
- ``Python API``: ``openvx_nn.api.Graph.process()``,
- ``kernel only``: the node's bound runner called directly (what the kernel itself costs, plus the
  Python call of the runner).

Overhead = C API - kernel only.  The result is checked against NumPy once.

    python benchmarks/bench_overhead.py            # 20 rounds of 2000 calls
    python benchmarks/bench_overhead.py --smoke    # 3 rounds of 200 calls (CI)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.core import reference


def _per_call_us(function: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls * 1e6


def _model_graph(graph):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", graph.handle)), reference.Reference)


def measure(name: str, build, rounds: int, calls: int) -> None:
    with Context() as ctx, ctx.graph() as g, ctx.graph() as twin:
        x = ctx.tensor(np.arange(1, 9, dtype=np.uint8).reshape(1, 1, 8))
        out, expected = build(ctx, g, x)
        twin_out, _ = build(ctx, twin, x)
        _model_graph(twin).native_allowed = False
        for graph, result in ((g, out), (twin, twin_out)):
            graph.process()
            assert np.array_equal(result.numpy(), expected), (result.numpy(), expected)
        runner = _model_graph(g).plan.calls[0].run
        handle, twin_handle = g.handle, twin.handle
        native = "native" if _model_graph(g).plan.native is not None else "no native plan"
        contenders = {f"C API ({native})": lambda: vx.vxProcessGraph(handle),
                      "C API, Python path": lambda: vx.vxProcessGraph(twin_handle),
                      "Python API": g.process, "kernel only": runner}
        times: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(rounds):
            for label, function in contenders.items():
                times[label].append(_per_call_us(function, calls))
        medians = {k: statistics.median(v) for k, v in times.items()}
        row = "  ".join(f"{k} {v:7.2f} us" for k, v in medians.items())
        c_api = next(iter(medians.values()))
        print(f"{name:28s} {row}   overhead (C API - kernel) {c_api - medians['kernel only']:6.2f} us")


def _relu(ctx, g, x):
    return g.relu(x, out=ctx.tensor(shape=(1, 1, 8), dtype=np.uint8)), np.arange(1, 9, dtype=np.uint8).reshape(1, 1, 8)


def _conv(ctx, g, x):
    w = np.ones((1, 1, 8, 8), np.uint8)
    out = g.convolution(x, ctx.tensor(w), None, out=ctx.tensor(shape=(1, 1, 8), dtype=np.uint8))
    return out, np.full((1, 1, 8), 36, np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="few rounds (CI)")
    args = parser.parse_args()
    rounds, calls = (3, 200) if args.smoke else (20, 2000)
    print(f"per-call time, median of {rounds} rounds of {calls} calls")
    measure("one-node relu 1x1x8 U8", _relu, rounds, calls)
    measure("one-node conv 1x1x8->8 U8", _conv, rounds, calls)


if __name__ == "__main__":
    main()
