"""Where a CoreML network's time goes, by layer kind, against ONNX Runtime (the table in docs/coreml.md).

    python benchmarks/coreml_layers.py mobilenet_v2|resnet18 [--runs 20]

Ours: each node's minimum over the runs from the graph's performance counters (``predict(..., bench=True)``:
the Python path, since timing nodes keeps a graph off its native plan), summed per kind. ORT: its own profile
(``SessionOptions.enable_profiling``) of the same network as ONNX with 2 threads, each node's minimum over the
runs, summed per kind. The kind of a node comes from the network's op list (``coreml_models``): the
convolution's window, stride and groups; ORT's reorder nodes (its NCHWc layout) count as "layout" like our
conversions, and ORT fuses the residual adds into convolutions (ours are nodes of their own: "add"). Both sides run in this process one after the other (not interleaved: the per-node minima are what
is compared), so the figures are relative.
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

from benchmarks import coreml_models as c


def kinds_of(net: c.Network, fused: bool = False) -> dict[str, str]:
    """{op output name: its kind} for every op of ``net`` (what both sides' node names are). ``fused``: a batch
    norm, activation or add takes the kind of the convolution it follows (ORT names a fused node for its last
    op; an add fuses into the later of the convolutions before it)."""
    kinds, made = {}, {}
    for i, op in enumerate(net.ops):
        if op.kind == "conv":
            w, s, groups = op.params["weights"], op.params["stride"], op.params["groups"]
            k = w.shape[2]
            name = "depthwise" if groups > 1 else ("stem" if w.shape[1] == net.channels else "dense")
            kinds[op.output], made[op.output] = f"{name} {k}x{k} stride {s}", i
        elif fused and op.kind in ("bn", "relu", "relu6", "add"):
            source = max(op.inputs, key=lambda n: made.get(n, -1))
            kinds[op.output], made[op.output] = kinds.get(source, op.kind), made.get(source, -1)
        else:
            kinds[op.output] = {"add": "add", "maxpool": "max pool", "gap": "global average pool",
                                "fc": "classifier"}.get(op.kind, op.kind)
    return kinds


def ours(net: c.Network, x: np.ndarray, runs: int) -> dict[str, float]:
    from coremltools.models.utils import save_spec

    import openvx_nn.coreml as cm
    kinds = kinds_of(net)
    path = Path(tempfile.mkdtemp()) / "model.mlmodel"
    save_spec(c.coreml_spec(net), str(path))
    with cm.load(path) as model:
        for _ in range(3):
            model.predict({net.input: x})
        model.reset_timings()
        for _ in range(runs):
            model.predict({net.input: x}, bench=True)
        sums: dict[str, float] = defaultdict(float)
        for layer, kernel, _, low in model.timings():
            kind = "layout" if kernel.endswith(("to_nhwc", "to_chw")) else kinds.get(layer, layer)
            if kernel.endswith((".add", ".tensor_add")) and kind != "add":
                kind = "add"  # a residual add folded into the convolution's layer is its own node
            sums[kind] += low
    return dict(sums)


def ort(net: c.Network, x: np.ndarray, runs: int) -> dict[str, float]:
    import onnx
    import onnxruntime as rt
    model = onnx.load_from_string(c.onnx_model(net))
    for node in model.graph.node:
        node.name = node.output[0]
    options = rt.SessionOptions()
    options.intra_op_num_threads = 2
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = rt.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {net.input: x[None]}
    for _ in range(3 + runs):
        session.run(None, feed)
    events = json.loads(Path(session.end_profiling()).read_text())
    kinds = kinds_of(net, fused=True)
    times: dict[str, list[float]] = defaultdict(list)
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[event["name"][: -len("_kernel_time")]].append(event["dur"] / 1e3)
    sums: dict[str, float] = defaultdict(float)
    for name, durations in times.items():
        base = name.split("_nchwc")[0]
        kind = "layout" if "reorder" in name.lower() else kinds.get(base) or \
            next((k for n, k in kinds.items() if base.startswith(n + "_")), name)
        sums[kind] += min(durations[-runs:])
    return dict(sums)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("network", choices=("mobilenet_v2", "resnet18"))
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    net = c.mobilenet_v2() if args.network == "mobilenet_v2" else c.resnet18()
    x = c.sample_images(net, 1)[0]
    a, b = ours(net, x, args.runs), ort(net, x, args.runs)
    print(f"{net.name}: sums of per-node minima over {args.runs} runs, ms")
    print(f"{'layer kind':34s} {'ours':>8s} {'ORT':>8s}")
    for kind in sorted(set(a) | set(b), key=lambda k: -a.get(k, 0.0)):
        print(f"{kind:34s} {a.get(kind, 0.0):8.2f} {b.get(kind, 0.0):8.2f}")
    print(f"{'all nodes':34s} {sum(a.values()):8.2f} {sum(b.values()):8.2f}")


if __name__ == "__main__":
    main()
