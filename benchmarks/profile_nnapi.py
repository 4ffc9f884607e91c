"""Where an NNAPI MobileNet's time goes: each layer's native entry run alone, next to ONNX Runtime's own profile.

Ours: the compiled plan's native entries (``core/native_plan.py``), each run from Python on the arrays bound at
verify (helpers summoned first, as ``Execution.compute`` does), medians; and the whole ``Execution.compute``
against ``graph.process`` (the difference is the front end's Python and the input and output copies). ORT: the
same network's ONNX model with ``SessionOptions.enable_profiling`` (its per-node kernel times; profiling adds a
little to each). Layers are listed in order on both sides (ORT fuses the activations, so the rows line up).
``--tflite FILE`` profiles a ``.tflite`` model through ``openvx_nn.nnapi.tflite`` instead, next to LiteRT's
whole call (XNNPACK; LiteRT has no per-node profile in Python), and sums our nodes per kind::

    python benchmarks/profile_nnapi.py [--uint8] [--repeat 200] [--tflite FILE] [--threads N]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import models as m
from benchmarks import quant_models as q


def _median_us(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _ort_profile(onnx: bytes, x: np.ndarray, repeat: int) -> list[tuple[str, float]]:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.enable_profiling, options.intra_op_num_threads = True, 2
    session = ort.InferenceSession(onnx, options, providers=["CPUExecutionProvider"])
    for _ in range(repeat):
        session.run(None, {"x": x})
    path = session.end_profiling()
    events = json.loads(Path(path).read_text())
    os.remove(path)
    nodes: dict[str, list[float]] = defaultdict(list)
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            nodes[event["name"][: -len("_kernel_time")]].append(event["dur"])
    return [(name, statistics.median(durations)) for name, durations in nodes.items()]


def _profile_calls(graph, repeat: int) -> float:
    """Each call of ``graph``'s plan run alone (its native entry), printed; the sum and the per-kind sums."""
    from openvx_nn.kernels.support import native
    from openvx_nn.operations.nnapi.common import summon_helpers
    total, kinds, counts = 0.0, defaultdict(float), defaultdict(int)
    for call in graph.plan.calls:
        name = call.node.description.name.rsplit(".", 1)[-1]
        dims = [tuple(reversed(p.dims)) for p in call.node.params if hasattr(p, "dims")]
        if call.native is None:
            print(f"  {name:24s} (no native entry)")
            continue
        entry = call.native

        def layer(entry=entry) -> None:
            summon_helpers()
            native.run(entry)
        took = _median_us(layer, repeat)
        total += took
        kinds[name] += took
        counts[name] += 1
        print(f"  {name:24s} {took:8.1f} us  {dims[0] if dims else ''} -> {dims[-1] if dims else ''}")
    print(f"  sum of layers {total:.0f} us; by kind:")
    for name, took in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"    {name:24s} {counts[name]:4d} nodes {took:8.1f} us")
    return total


def _profile_tflite(path: Path, repeat: int, threads: int | None) -> None:
    if threads is not None:
        os.environ["OPENVX_NN_THREADS"] = str(threads)
    from benchmarks import tflite_rows
    from openvx_nn.nnapi import tflite
    from openvx_nn.operations.nnapi.common import summon_helpers
    x = tflite_rows.sample_inputs(path, 1)[0]
    runner = tflite.load(path).compile()
    litert = tflite_rows.litert_runner(path, threads)
    for _ in range(20):
        runner(*x)
        litert(x)
    graph = runner.compilation.prepared.lowered.graph

    def process() -> None:
        summon_helpers()
        graph.process()
    print(f"ours: call {_median_us(lambda: runner(*x), repeat):.0f} us, graph.process "
          f"{_median_us(process, repeat):.0f} us (native plan: {graph.plan.native is not None}); "
          f"LiteRT {_median_us(lambda: litert(x), repeat):.0f} us")
    _profile_calls(graph, repeat)


def main() -> None:
    from openvx_nn import nnapi
    from openvx_nn.operations.nnapi.common import summon_helpers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uint8", action="store_true", help="the TENSOR_QUANT8_ASYMM model (else float32)")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--tflite", help="a .tflite file (e.g. ~/.cache/openvx-nn/mediapipe/hand_recrop.tflite)")
    parser.add_argument("--threads", type=int, help="threads of both sides (OPENVX_NN_THREADS; LiteRT's)")
    args = parser.parse_args()
    if args.tflite:
        _profile_tflite(Path(args.tflite).expanduser(), args.repeat, args.threads)
        return
    net = m.mobilenet_v1(0.25, 224)
    samples = m.sample_inputs(net, 4)
    if args.uint8:
        quant = q.quantize_mobilenet(net, samples)
        model, onnx, x = q.nnapi_mobilenet_quant8(quant), q.onnx_mobilenet_quant8(quant), quant.quantize_input(
            samples[0])
    else:
        model, onnx, x = m.nnapi_mobilenet_float(net), m.onnx_mobilenet_float(net), samples[0]
    compilation = nnapi.Compilation(model)
    compilation.finish()
    out = np.zeros(net.output_shape, x.dtype)

    def compute() -> None:
        execution = nnapi.Execution(compilation)
        execution.set_input(0, x)
        execution.set_output(0, out)
        execution.compute()
    compute()
    graph = compilation.prepared.lowered.graph

    def process() -> None:
        summon_helpers()
        graph.process()
    print(f"ours: Execution.compute {_median_us(compute, args.repeat):.0f} us, graph.process "
          f"{_median_us(process, args.repeat):.0f} us (native plan: {graph.plan.native is not None})")
    _profile_calls(graph, args.repeat)
    rows = _ort_profile(onnx, m.nchw(x), args.repeat)
    print(f"ORT (profiled): sum of nodes {sum(t for _, t in rows):.0f} us")
    for name, took in rows:
        print(f"  {name:40s} {took:8.1f} us")


if __name__ == "__main__":
    main()
