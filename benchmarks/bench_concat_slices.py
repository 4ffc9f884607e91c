"""A converted network with its convolutions writing into their concatenation slices and with the copies, in turns.

    python benchmarks/bench_concat_slices.py densenet121|deeplab_head|... [--turns 21] [--calls 5] [--threads 1]

The network is converted by coremltools as ``profile_converted.py`` converts it, then loaded twice in this process:
with ``OPENVX_NN_CONCAT_SLICES`` on (a convolution whose output a concatenation alone reads writes its slice) and
``=0`` (the concatenation copies it), plus ORT on the ONNX export. Each turn times ``--calls`` calls of each on this
thread's CPU time (``time.thread_time``: the engine's helpers, with ``--threads`` above 1, are not counted; keep 1 on a
loaded machine); the medians of the turns are printed, and the outputs of the two routes compared bit for bit.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import torch_models as tm


def _timed(call, calls: int) -> float:
    start = time.thread_time()
    for _ in range(calls):
        call()
    return (time.thread_time() - start) * 1e3 / calls


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("network", choices=list(tm.SIZES))
    parser.add_argument("--turns", type=int, default=21)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ["OPENVX_NN_THREADS"] = str(args.threads)  # read when ``openvx_nn`` first loads
    import onnxruntime as rt

    import openvx_nn.coreml as cm
    size = tm.SIZES[args.network]
    net = tm.build(args.network, **size.options)
    first, _ = tm.names(size.shape)
    x = np.random.default_rng(1).standard_normal(tm.example_shape(size.shape)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="bench-slices-") as directory:
        mlmodel, onnx = Path(directory) / "model.mlmodel", Path(directory) / "model.onnx"
        tm.coreml_file(net, size.shape, str(mlmodel))
        tm.onnx_file(net, size.shape, str(onnx))
        models = {}
        for name, value in (("slices", "1"), ("copies", "0")):
            os.environ["OPENVX_NN_CONCAT_SLICES"] = value  # read at each load
            models[name] = cm.load(mlmodel)
        os.environ.pop("OPENVX_NN_CONCAT_SLICES")
        options = rt.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = rt.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
    try:
        outputs = {name: model.predict({first: x}) for name, model in models.items()}
        for key in outputs["slices"]:
            same = np.array_equal(outputs["slices"][key].view(np.int32), outputs["copies"][key].view(np.int32))
            print(f"output {key}: {'the same bytes' if same else 'DIFFERENT BYTES'} both routes")
        placed = [layer.lowering for layer in models["slices"].layers if "written there" in layer.lowering]
        print(f"concatenations with inputs their producers wrote into their slices: {len(placed)}"
              + (f" (the first: {placed[0]})" if placed else ""))
        calls = {name: (lambda m=model: m.predict({first: x})) for name, model in models.items()}
        calls["ort"] = lambda: session.run(None, {first: x})
        for call in calls.values():
            call()
        times: dict[str, list[float]] = {name: [] for name in calls}
        for turn in range(args.turns):
            for name in (list(calls) if turn % 2 == 0 else list(reversed(calls))):
                times[name].append(_timed(calls[name], args.calls))
    finally:
        for model in models.values():
            model.close()
    median = {name: statistics.median(values) for name, values in times.items()}
    ratios = [c / s for c, s in zip(times["copies"], times["slices"])]
    print(f"{tm.NETWORKS[args.network][0]}, {args.threads} thread(s), CPU ms a call, medians of {args.turns} turns "
          f"of {args.calls} calls: " + ", ".join(f"{name} {ms:.2f}" for name, ms in median.items()))
    print(f"copies / slices {statistics.median(ratios):.3f} (turns {min(ratios):.3f}-{max(ratios):.3f}); "
          f"ORT / slices {median['ort'] / median['slices']:.3f}, ORT / copies {median['ort'] / median['copies']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
