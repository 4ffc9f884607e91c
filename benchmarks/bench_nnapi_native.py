"""An NNAPI Execution with its graph's plan walked in C (native entries) against the same graph on the Python path.

Rows (one process, contenders interleaved, medians; ``Execution.compute`` each, inputs set once):

- ``tiny``: MobileNet v1 0.25's operation sequence on 8x8 inputs (29 operations whose kernels take a few
  microseconds): per-operation overhead of an Execution, native plan vs Python path;
- ``nnapi-float``, ``nnapi-uint8``: MobileNet v1 0.25 on 224x224x3 (``bench_models``' rows), native plan vs
  Python path (where large layers lend rows to a helper thread; a native entry runs on the calling thread).

The two contenders are one compilation each (``graph.native_allowed`` False on the Python one); their outputs
must be equal (the same kernels), else the benchmark fails.

    python benchmarks/bench_nnapi_native.py [--repeat N] [--smoke]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_ort import medians
from benchmarks.models import mobilenet_v1, nnapi_mobilenet_float, sample_inputs
from benchmarks.quant_models import nnapi_mobilenet_quant8, quantize_mobilenet


def _execution(model, x: np.ndarray, out_shape, dtype, native: bool):
    from openvx_nn import nnapi
    compilation = nnapi.Compilation(model)
    compilation.finish()
    compilation.prepared.graph.native_allowed = native
    execution = nnapi.Execution(compilation)
    out = np.zeros(out_shape, dtype)
    execution.set_input(0, x)
    execution.set_output(0, out)
    execution.compute()
    return compilation, execution, out


def row(name: str, size: int, quantized: bool, repeat: int) -> tuple[float, float, int]:
    """(native ms, Python path ms, operations) of one network; fails when the two outputs differ."""
    net = mobilenet_v1(0.25, size)
    samples = sample_inputs(net, 2)
    if quantized:
        qnet = quantize_mobilenet(net, samples)
        model, x, dtype = nnapi_mobilenet_quant8(qnet), qnet.quantize_input(samples[0]), np.uint8
    else:
        model, x, dtype = nnapi_mobilenet_float(net), samples[0], np.float32
    runs = [_execution(model, x, net.output_shape, dtype, native) for native in (True, False)]
    native_graph = runs[0][0].prepared.graph
    if native_graph.plan.native is None:
        raise SystemExit(f"{name}: the graph got no native plan")
    times = medians([runs[0][1].compute, runs[1][1].compute], repeat)
    if not np.array_equal(runs[0][2], runs[1][2]):
        raise SystemExit(f"{name}: the native plan's output differs from the Python path's")
    return times[0] * 1e3, times[1] * 1e3, len(native_graph.plan.calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="the tiny row only, a few calls (CI)")
    args = parser.parse_args()
    rows = [("tiny", 8, False), ("tiny uint8", 8, True)]
    if not args.smoke:
        rows += [("nnapi-float", 224, False), ("nnapi-uint8", 224, True)]
    repeat = 20 if args.smoke else args.repeat
    print("| row | operations | native ms | Python path ms | Python / native | per operation saved, us |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, size, quantized in rows:
        native, python, ops = row(name, size, quantized, repeat)
        print(f"| {name} | {ops} | {native:.3f} | {python:.3f} | {python / native:.2f} | "
              f"{(python - native) / ops * 1e3:.1f} |", flush=True)


if __name__ == "__main__":
    main()
