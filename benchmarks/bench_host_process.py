"""Same-process speed: does a NumPy or PyTorch workload run slower once openvx-nn is loaded beside it?

Two processes with the same workloads take turns, one turn at a time: the *host*, which imports openvx-nn
part way, and a *control*, which never does, so load from elsewhere on the machine falls on both alike. The
host's phases:

- ``before``: the library not imported yet;
- ``loaded``: after importing it and running an OpenVX graph (the small Q7.8 CNN of ``vx_models.py`` through
  the C API, and a max pool large enough to start numba's OpenMP pool) and an NNAPI model (MobileNet v1 0.25,
  float32), once each; the workloads then run alone;
- ``beside``: every turn of the host follows a run of each model, so the library's helper threads have just
  worked and may still be spinning.

The workloads: ``numpy``, a float32 matrix product (OpenBLAS and its own threads), and ``torch``, a float32
3x3 convolution with PyTorch's CPU threads (its bundled OpenMP runtime); without torch installed only NumPy
is timed, and the table says so. A turn is ``--calls`` calls back to back, begun ``--gap-ms`` after the
last (so the other process's OpenMP threads have stopped spinning: without the gap, PyTorch's turn right
after the other process's ran beside its spinning threads, which on a busy machine made one side's PyTorch
tens of times slower before anything was imported). Per phase: the medians of every
call of the host and of the control, in wall time and in process CPU time (every thread of the process, so
threads spinning beside the workload count), and host ÷ control; the phase's figure is that ratio over the
``before`` phase's (above 1: slower with the library). On a machine with more runnable threads than cores,
wall times measure the scheduler more than the workload (a call preempted half way takes twice as long, and
a phase's median lands in either mode); CPU times still compare, and so does each side's fastest call (a
call that ran without being preempted): a library that slowed the workload itself would slow that one too. ``--busy N`` starts N busy-loop processes first (a
machine whose cores are taken by other work) and stops them at the end. The script also reports whether
``os.environ`` changed.

    python benchmarks/bench_host_process.py [--turns 15] [--calls 20] [--gap-ms 100] [--busy N] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` (and an uninstalled checkout) importable
    sys.path.insert(0, str(ROOT))


def numpy_workload(size: int) -> Callable[[], object]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    out = np.empty((size, size), np.float32)
    return lambda: np.matmul(a, b, out=out)


def torch_workload(size: int) -> Callable[[], object] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(32, 64, 3, padding=1).eval()
    x = torch.randn(1, 32, size, size)

    def run():
        with torch.no_grad():
            return conv(x)
    return run


def library_models(smoke: bool) -> list[Callable[[], object]]:
    """Import openvx-nn, build an OpenVX graph, a pooled graph on numba's pool and an NNAPI model; run each."""
    from benchmarks import models, vx_models
    from openvx_nn import nnapi
    from openvx_nn.api import Context

    cnn = vx_models.small_cnn(16 if smoke else 32)
    graph = vx_models.VXGraph(cnn)
    image = vx_models.sample_images(cnn, 1)[0]

    ctx = Context()
    pool_graph = ctx.graph()
    x = ctx.tensor(np.random.default_rng(0).standard_normal((112, 112, 64, 1)).astype(np.float32))
    pool_graph.max_pool(x, size=(3, 3), stride=(2, 2))

    net = models.mobilenet_v1(0.25, 32 if smoke else 224)
    compilation = nnapi.Compilation(models.nnapi_mobilenet_float(net))
    compilation.finish()
    sample = models.sample_inputs(net, 1)[0]
    out = np.zeros(net.output_shape, np.float32)

    def nnapi_run():
        execution = nnapi.Execution(compilation)
        execution.set_input(0, sample)
        execution.set_output(0, out)
        execution.compute()

    runs = [lambda: graph.run(image), pool_graph.process, nnapi_run]
    for run in runs:
        run()
    return runs  # the closures hold the graphs, the context and the compilation: alive while they are


def turn(work: Callable[[], object], calls: int) -> list[list[float]]:
    """Each call's wall time and its process CPU time (every thread of the process: a spinning neighbour counts)."""
    times = []
    for _ in range(calls):
        start, cpu = time.perf_counter(), time.process_time()
        work()
        times.append([time.perf_counter() - start, time.process_time() - cpu])
    return times


class Control:
    """The same workloads in a process that never imports openvx-nn, run a turn at a time on request."""

    def __init__(self, argv: list[str]):
        self.process = subprocess.Popen([sys.executable, __file__, "--control", *argv], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "ready"

    def turn(self, name: str) -> list[list[float]]:
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def serve(workloads: dict[str, Callable], calls: int) -> int:
    """The control's loop: a workload's name in, its turn's call times out (JSON), until stdin closes."""
    print("ready", flush=True)
    for line in sys.stdin:
        print(json.dumps(turn(workloads[line.strip()], calls)), flush=True)
    return 0


def measure(workloads: dict[str, Callable], control: Control, turns: int, calls: int,
            before_each: list[Callable], gap: float) -> dict:
    """Per workload, every call's time of the host and of the control, their turns alternating, each turn
    begun ``gap`` seconds after the last (the other process's pool threads stop spinning meanwhile)."""
    times: dict[str, dict[str, list[list[float]]]] = {name: {"host": [], "control": []} for name in workloads}
    for _ in range(turns):
        for name, work in workloads.items():
            time.sleep(gap)
            times[name]["control"] += control.turn(name)
            time.sleep(gap)
            for run in before_each:
                run()
            times[name]["host"] += turn(work, calls)
    return times


def busy_loops(count: int) -> list[subprocess.Popen]:
    code = "while True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--turns", type=int, default=15, help="turns per workload and phase (default 15)")
    p.add_argument("--calls", type=int, default=20, help="calls per turn (default 20)")
    p.add_argument("--busy", type=int, default=0, help="busy-loop processes to run meanwhile (default 0)")
    p.add_argument("--gap-ms", type=float, default=100, help="idle time before each turn (default 100)")
    p.add_argument("--smoke", action="store_true", help="small sizes, 2 turns of 3 calls (seconds)")
    p.add_argument("--control", action="store_true", help=argparse.SUPPRESS)  # the control process itself
    args = p.parse_args(argv)
    if args.smoke:
        args.turns, args.calls = 2, 3
    workloads = {"numpy": numpy_workload(96 if args.smoke else 512)}
    torch_run = torch_workload(16 if args.smoke else 56)
    if torch_run is not None:
        workloads["torch"] = torch_run
    for work in workloads.values():  # first calls: allocations, BLAS and OpenMP pools start
        turn(work, 3)
    if args.control:
        return serve(workloads, args.calls)
    busy = busy_loops(args.busy)
    control = Control(["--calls", str(args.calls)] + (["--smoke"] if args.smoke else []))
    try:
        time.sleep(0.5 if busy else 0)
        load_before = os.getloadavg()[0]
        environ = dict(os.environ)
        gap = args.gap_ms / 1e3
        phases = {"before": measure(workloads, control, args.turns, args.calls, [], gap)}
        start = time.perf_counter()
        runs = library_models(args.smoke)
        loaded_in = time.perf_counter() - start
        phases["loaded"] = measure(workloads, control, args.turns, args.calls, [], gap)
        phases["beside"] = measure(workloads, control, args.turns, args.calls, runs, gap)
        load_after = os.getloadavg()[0]
    finally:
        control.close()
        for process in busy:
            process.kill()
            process.wait()
    changed = sorted(k for k in set(environ) | set(os.environ) if environ.get(k) != os.environ.get(k))
    print(f"{os.cpu_count()} CPUs, {args.busy} busy-loop processes, load average {load_before:.1f} -> "
          f"{load_after:.1f}; library imported and models run once in {loaded_in:.1f} s; "
          f"os.environ changed: {', '.join(changed) or 'nothing'}")
    if torch_run is None:
        print("torch is not installed: NumPy only")
    print("| workload | phase | wall ms: host / control | host ÷ control | ÷ before | CPU ms: host / control | "
          "host ÷ control | ÷ before | fastest call ms: host / control | host ÷ control | ÷ before |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    figures = ((0, statistics.median), (1, statistics.median), (0, min))  # wall, CPU, the fastest wall
    for name in workloads:
        first: list[float] = []
        for phase, times in phases.items():
            cells = []
            for i, (kind, statistic) in enumerate(figures):
                host, other = (1e3 * statistic(t[kind] for t in times[name][side]) for side in ("host", "control"))
                if len(first) < len(figures):
                    first.append(host / other)
                cells.append(f"{host:.3f} / {other:.3f} | {host / other:.2f} | {host / other / first[i]:.2f}")
            print(f"| {name} | {phase} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
