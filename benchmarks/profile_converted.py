"""Where a converted network's time goes: our nodes and ORT's, by kind and the costliest nodes.

    python benchmarks/profile_converted.py densenet121|unet|deeplab_head|... [--runs 10] [--top 12] [--threads 2] [--smoke]
    python benchmarks/profile_converted.py transformer_encoder --native 15 [--calls 5]   # native calls and ORT, one thread

The network is a ``torch_models`` module at the model benchmark's size (``SIZES``), converted by coremltools as
the ``converted-*`` rows convert it. Ours: each node's minimum over the runs from the graph's performance counters
(``predict(..., bench=True)``, which runs the Python path: a timed graph stays off its native plan, so the sum
is above the benchmark's time by the per-node calls), grouped by the CoreML layer type it lowers and the kernel
that runs it. ORT: its own profile (``SessionOptions.enable_profiling``, ``--threads`` intra-op threads, as many as
ours: ``OPENVX_NN_THREADS``) of the same module's ONNX
export, each node's minimum, grouped by operator. The two run one after the other in this process; compare the
shares, not the sums with the benchmark's times.

``--native ROUNDS`` times our native plan instead, on one thread by its CPU time (``time.thread_time``), then ORT's
nodes on one intra-op thread by their own profile, each node's median over as many runs (wall time: the timed
Python path overstates a cheap node 5-7x). Each round times every call of the plan (its C entry) alone,
``--calls`` times on the data it left, then ``--calls`` passes of the plan's calls in order, each
call timed once (its inputs and weights as the calls before it left the caches), each pass followed by a whole
``graph.process`` and a ``predict``. Printed: by kernel, the medians alone and in order, summed, then the sums
against the whole runs. In order against alone is what the calls lose to each other (caches); ``graph.process``
against the in-order sum, what the run adds around them (both sums carry a ctypes call per call, measured on an
entry that does nothing and printed).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import torch_models as tm


def ours(path: Path, first: str, x: np.ndarray, runs: int) -> list[tuple[str, str, float, str]]:
    """(layer type, kernel, minimum ms, layer name) of every node."""
    import openvx_nn.coreml as cm
    with cm.load(path) as model:
        types = {layer.name: layer.type for layer in model.layers}
        for _ in range(3):
            model.predict({first: x})
        model.reset_timings()
        for _ in range(runs):
            model.predict({first: x}, bench=True)
        return [(types.get(layer, layer), kernel.rsplit(".", 1)[-1], low, layer)
                for layer, kernel, _, low in model.timings()]


def native_calls(path: Path, first: str, x: np.ndarray, rounds: int, calls: int
                 ) -> tuple[list[tuple[str, float, float]], dict[str, float]]:
    """(kernel -> output dims, median ms alone, median ms in order) of every call of the model's native plan that
    does work (fused and viewed calls do none), and the medians of the whole runs (module doc)."""
    import statistics
    import time

    import openvx_nn.coreml as cm
    from openvx_nn.core import rewrites
    from openvx_nn.kernels.support import native
    clock = time.thread_time
    with cm.load(path) as model:
        for _ in range(3):
            model.predict({first: x})
        graph = model.graph
        if graph.plan.native is None:
            raise SystemExit("the model's graph has no native plan: some node runs from Python")
        timed = [call for call in graph.plan.calls if call.native is not rewrites.no_entry()]
        alone: list[list[float]] = [[] for _ in timed]
        ordered: list[list[float]] = [[] for _ in timed]
        whole: dict[str, list[float]] = {"graph.process": [], "predict": [], "calls in order": []}
        for _ in range(rounds):
            for k, call in enumerate(timed):
                for _ in range(calls):
                    start = clock()
                    native.run(call.native)
                    alone[k].append((clock() - start) * 1e3)
            for _ in range(calls):
                begin = clock()
                for k, call in enumerate(timed):
                    start = clock()
                    native.run(call.native)
                    ordered[k].append((clock() - start) * 1e3)
                whole["calls in order"].append((clock() - begin) * 1e3)
                start = clock()
                graph.process()
                whole["graph.process"].append((clock() - start) * 1e3)
                start = clock()
                model.predict({first: x})
                whole["predict"].append((clock() - start) * 1e3)
        empty = []  # what timing a call adds: an entry that does nothing, called and timed the same way
        for _ in range(50 * calls):
            start = clock()
            native.run(rewrites.no_entry())
            empty.append((clock() - start) * 1e3)
        whole["an empty call"] = statistics.median(empty) * len(timed)
        rows = []
        for k, call in enumerate(timed):
            shaped = [q for q in call.node.params if hasattr(q, "dims")]  # the output: the last tensor (a scalar
            dims = "x".join(str(d) for d in shaped[-1].dims) if shaped else "?"  # parameter may follow it)
            rows.append((f"{call.node.description.name.rsplit('.', 1)[-1]} -> {dims}",
                         statistics.median(alone[k]), statistics.median(ordered[k])))
        return rows, {name: times if isinstance(times, float) else statistics.median(times)
                      for name, times in whole.items()}


def report_native(rows: list[tuple[str, float, float]], runs: dict[str, float], top: int) -> None:
    kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for label, alone, ordered in rows:
        row = kinds[label.split(" -> ")[0]]
        row[0] += 1
        row[1] += alone
        row[2] += ordered
    alone_sum, ordered_sum = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"native calls: {len(rows)}, alone {alone_sum:.2f} ms, in the plan's order {ordered_sum:.2f} ms (medians)")
    for kind, (count, alone, ordered) in sorted(kinds.items(), key=lambda item: -item[1][2])[:top]:
        print(f"  {kind:32s} {count:4d} calls {alone:8.3f} -> {ordered:8.3f} ms ({ordered / alone:5.2f}x)")
    print(f"  an empty call timed so, once per call: {runs.pop('an empty call'):.2f} ms (in both sums)")
    print("  whole runs: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in runs.items())
          + f"; graph.process / calls alone {runs['graph.process'] / alone_sum:.2f}")


def ort(path: Path, first: str, x: np.ndarray, runs: int, threads: int, pick=min) -> list[tuple[str, str, float, str]]:
    """(operator, node name, ``pick`` (minimum) of its ms over the runs, node name) of every node."""
    import onnxruntime as rt
    options = rt.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = rt.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    for _ in range(3 + runs):
        session.run(None, {first: x})
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for event in json.loads(Path(session.end_profiling()).read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[(event["args"].get("op_name", "?"), event["name"][: -len("_kernel_time")])].append(event["dur"] / 1e3)
    return [(op, name, pick(durations[-runs:]), name) for (op, name), durations in times.items()]


def report(title: str, nodes: list[tuple[str, str, float, str]], top: int, by_second: bool) -> None:
    total = sum(node[2] for node in nodes)
    kinds: dict[str, list[float]] = defaultdict(list)
    for kind, kernel, ms, _ in nodes:
        kinds[f"{kind} / {kernel}" if by_second else kind].append(ms)
    print(f"{title}: {len(nodes)} nodes, {total:.2f} ms summed")
    for kind, values in sorted(kinds.items(), key=lambda item: -sum(item[1]))[:top]:
        print(f"  {kind:58s} {len(values):4d} nodes {sum(values):8.2f} ms {100 * sum(values) / total:5.1f} %")
    print("  costliest nodes: " + ", ".join(f"{name} ({kind}) {ms:.2f}"
                                           for kind, _, ms, name in sorted(nodes, key=lambda n: -n[2])[:5]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("network", choices=list(tm.SIZES))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--smoke", action="store_true", help="the benchmark's smoke size")
    parser.add_argument("--threads", type=int, default=2, help="threads a side: ORT's intra-op and ours")
    parser.add_argument("--native", type=int, default=0, metavar="ROUNDS",
                        help="time our native calls alone and in the plan's order, ROUNDS turns, one thread")
    parser.add_argument("--calls", type=int, default=5, help="with --native: calls of each call alone, and passes "
                                                             "in order, a round")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.native:
        args.threads = 1
    os.environ["OPENVX_NN_THREADS"] = str(args.threads)  # read when ``openvx_nn`` first loads, in ``ours``
    size = tm.SIZES[args.network]
    options, shape = (size.smoke_options, size.smoke_shape) if args.smoke else (size.options, size.shape)
    net = tm.build(args.network, **options)
    first, _ = tm.names(shape)
    x = np.random.default_rng(1).standard_normal(tm.example_shape(shape)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="profile-converted-") as directory:
        mlmodel, onnx = Path(directory) / "model.mlmodel", Path(directory) / "model.onnx"
        tm.coreml_file(net, shape, str(mlmodel))
        tm.onnx_file(net, shape, str(onnx))
        if args.native:
            rows, runs = native_calls(mlmodel, first, x, args.native, args.calls)
            print(f"{tm.NETWORKS[args.network][0]} {tm.example_shape(shape)}: one thread, CPU time, {args.native} "
                  f"rounds x {args.calls}")
            report_native(rows, runs, args.top)
            report("ORT (operator), one thread, medians", ort(onnx, first, x, args.native * args.calls, 1,
                                                              statistics.median), args.top, False)
            return 0
        mine, theirs = ours(mlmodel, first, x, args.runs), ort(onnx, first, x, args.runs, args.threads)
    print(f"{tm.NETWORKS[args.network][0]} {tm.example_shape(shape)}: per-node minima over {args.runs} runs, "
          f"{args.threads} thread(s) a side")
    report("ours (CoreML layer / kernel)", mine, args.top, True)
    report("ORT (operator)", theirs, args.top, False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
