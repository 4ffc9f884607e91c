"""Where a converted network's time goes: our nodes and ORT's, by kind and the costliest nodes.

    python benchmarks/profile_converted.py densenet121|unet|deeplab_head|... [--runs 10] [--top 12] [--threads 2] [--smoke]

The network is a ``torch_models`` module at the model benchmark's size (``SIZES``), converted by coremltools as
the ``converted-*`` rows convert it. Ours: each node's minimum over the runs from the graph's performance counters
(``predict(..., bench=True)``, which runs the Python path: a timed graph stays off its native plan, so the sum
is above the benchmark's time by the per-node calls), grouped by the CoreML layer type it lowers and the kernel
that runs it. ORT: its own profile (``SessionOptions.enable_profiling``, ``--threads`` intra-op threads, as many as
ours: ``OPENVX_NN_THREADS``) of the same module's ONNX
export, each node's minimum, grouped by operator. The two run one after the other in this process; compare the
shares, not the sums with the benchmark's times.
"""
from __future__ import annotations

import argparse
import json
import os
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


def ort(path: Path, first: str, x: np.ndarray, runs: int, threads: int) -> list[tuple[str, str, float, str]]:
    """(operator, node name, minimum ms, node name) of every node."""
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
    return [(op, name, min(durations[-runs:]), name) for (op, name), durations in times.items()]


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
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
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
        mine, theirs = ours(mlmodel, first, x, args.runs), ort(onnx, first, x, args.runs, args.threads)
    print(f"{tm.NETWORKS[args.network][0]} {tm.example_shape(shape)}: per-node minima over {args.runs} runs, "
          f"{args.threads} thread(s) a side")
    report("ours (CoreML layer / kernel)", mine, args.top, True)
    report("ORT (operator)", theirs, args.top, False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
