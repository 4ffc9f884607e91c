"""Per-call overhead of a verified graph: vxProcessGraph of a one-node graph minus its kernel.

Graph: one node on a 1x1x8 tensor (relu, U8; and a 1x1 convolution 8 -> 8,
U8). Contenders, interleaved in one process, medians over rounds:

- ``C: vxProcessGraph``: a loop in C (``bench_overhead.c``, compiled here and loaded into this
  process) calling ``vxProcessGraph``, as a C program does: the graph's native plan when it has one
  (no Python at all),
- ``C: kernel entry``: the same loop calling the node's native entry with its argument block (the
  kernel alone); overhead = the two's difference, the issue's figure,
- ``cffi``: ``vx.vxProcessGraph`` from Python (one cffi call into libopenvx.so per run),
- ``cffi, Python path``: the same call on a twin graph kept off the native path (``native_allowed``),
  what every graph ran before the native plan,
- ``Python API``: ``openvx_nn.api.Graph.process()``,
- ``runner``: the node's bound runner called from Python (the kernel plus numba's Python dispatch).

The result is checked against NumPy once.  Without a C compiler (or without a native plan) the C rows
are left out and the overhead is read as cffi - runner.

    python benchmarks/bench_overhead.py            # 20 rounds of 2000 calls
    python benchmarks/bench_overhead.py --smoke    # 3 rounds of 200 calls (CI)
"""
from __future__ import annotations

import argparse
import functools
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cffi import FFI

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


@functools.cache
def _c_side():
    """bench_overhead.c built as a shared library and loaded here, or None without a C compiler."""
    flags = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"], check=True,
                           capture_output=True, text=True).stdout
    out = Path(tempfile.mkdtemp()) / "bench_overhead.so"
    build = subprocess.run(["cc", "-O2", "-std=c99", "-shared", "-fPIC", str(Path(__file__).with_suffix(".c")),
                            "-o", str(out), *shlex.split(flags)], check=False, capture_output=True, text=True)
    if build.returncode:
        print(f"C rows skipped: cannot compile bench_overhead.c\n{build.stderr}")
        return None
    ffi = FFI()
    ffi.cdef("double bench_process_graph(void *graph, long calls, int32_t *status);"
             "double bench_entry(void *entry, void *block, long calls, int32_t *status);")
    return ffi, ffi.dlopen(str(out))


def _c_contenders(graph, handle) -> dict[str, Callable[[int], float]]:
    """Loops timed in C (microseconds per call), checking every status: none without a compiler, the
    kernel entry's only for a one-step native plan."""
    side, plan = _c_side(), graph.plan.native
    if side is None:
        return {}
    ffi, lib = side
    status = ffi.new("int32_t *")

    def checked(function, *args):
        def timed(calls: int) -> float:
            us = function(*args, calls, status)
            assert status[0] == vx.VX_SUCCESS, status[0]
            return us
        return timed
    found = {"C: vxProcessGraph": checked(lib.bench_process_graph,
                                          ffi.cast("void *", int(vx.ffi.cast("uintptr_t", handle))))}
    if plan is not None and plan.words[1] == 1:
        first = int(plan.words[5])
        entry, block = (ffi.cast("void *", int(word)) for word in plan.words[first:first + 2])
        found["C: kernel entry"] = checked(lib.bench_entry, entry, block)
    return found


def measure(name: str, build, rounds: int, calls: int) -> None:
    with Context() as ctx, ctx.graph() as g, ctx.graph() as twin:
        x = ctx.tensor(np.arange(1, 9, dtype=np.uint8).reshape(1, 1, 8))
        out, expected = build(ctx, g, x)
        twin_out, _ = build(ctx, twin, x)
        _model_graph(twin).native_allowed = False
        for graph, result in ((g, out), (twin, twin_out)):
            graph.process()
            assert np.array_equal(result.numpy(), expected), (result.numpy(), expected)
        model = _model_graph(g)
        runner = model.plan.calls[0].run
        handle, twin_handle = g.handle, twin.handle
        native = "native" if model.plan.native is not None else "no native plan"
        timed = {label: functools.partial(_per_call_us, function)
                 for label, function in {f"cffi ({native})": lambda: vx.vxProcessGraph(handle),
                                         "cffi, Python path": lambda: vx.vxProcessGraph(twin_handle),
                                         "Python API": g.process, "runner": runner}.items()}
        contenders = {**_c_contenders(model, handle), **timed}
        times: dict[str, list[float]] = {k: [] for k in contenders}
        for _ in range(rounds):
            for label, function in contenders.items():
                times[label].append(function(calls))
        assert np.array_equal(out.numpy(), expected)
        medians = {k: statistics.median(v) for k, v in times.items()}
        row = "  ".join(f"{k} {v:6.2f}" for k, v in medians.items())
        if "C: kernel entry" in medians:
            overhead = f"C: vxProcessGraph - kernel entry {medians['C: vxProcessGraph'] - medians['C: kernel entry']:5.2f}"
        else:
            overhead = f"cffi - runner {medians[f'cffi ({native})'] - medians['runner']:5.2f}"
        print(f"{name:26s} {row}   overhead ({overhead}) us")


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
    print(f"per-call time in us, median of {rounds} rounds of {calls} calls")
    measure("one-node relu 1x1x8 U8", _relu, rounds, calls)
    measure("one-node conv 1x1x8->8 U8", _conv, rounds, calls)


if __name__ == "__main__":
    main()
