"""Whole models through our public APIs against ONNX Runtime: same weights, same process, interleaved, medians.

Rows (the networks are built by ``models.py`` and ``coreml_models.py``, importable by other benchmarks):

- NNAPI float32 MobileNet v1 0.25 224² (the shape of NNAPI's ``mobilenet_224_gender_basic_fixed``) through
  ``openvx_nn.nnapi`` Model/Compilation/Execution, against the same network as ONNX in ORT float;
- the same network in TENSOR_QUANT8_ASYMM (per-layer scales calibrated on sample images, int32 biases of
  scale input x filter) against ORT's QLinearConv model with the same uint8 weights and parameters;
- a CoreML MobileNet v2 built with coremltools' ``NeuralNetworkBuilder``, written to a ``.mlmodel`` file and
  loaded with ``openvx_nn.coreml.load``, against the same network in ORT float;
- a small CNN through the OpenVX C API (``openvx_nn.vx``: the C entry points of libopenvx.so, called
  C-style), against ORT float.

Per row: the steady-state time of one inference (median of interleaved calls; ORT with its defaults and 2
intra-op threads), ORT time / ours (above 1: ours faster), and the largest output difference, which must
stay within the row's stated tolerance (else the benchmark fails).  Load time is a product figure too:
file (or, for NNAPI, which has no file, the arrays) to first result -- parse, build, verify, first
process -- in this process once its kernels are compiled (beside ORT's session creation plus first run),
and in a new process (imports reported apart) with the numba cache as it is (warm) and cold (its
``NUMBA_CACHE_DIR`` an empty directory, so every kernel compiles).

Usage: python benchmarks/bench_models.py [--repeat N] [--smoke] [--no-processes] [--rows a,b]
``--smoke``: tiny widths and resolutions, a few calls, no new processes (CI).
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx) and coremltools (the ``coreml`` extra) for the
CoreML row; without onnxruntime it says so and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` (and an uninstalled checkout) importable
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_ort import medians
from benchmarks.model_rows import ROWS, Row, timed_load


@dataclass
class Result:
    """One row's figures (seconds) and its output comparison."""

    name: str
    macs: int
    ours: float
    ort: float
    difference: str
    load_ours: float
    load_ort: float
    fresh: str
    cold: str


def fresh_process_load(key: str, smoke: bool, width: float, cold: bool) -> str:
    """File to first result in a fresh process: with the numba cache as it is (warm), or ``cold``: with
    ``NUMBA_CACHE_DIR`` an empty directory, so every kernel compiles."""
    with tempfile.TemporaryDirectory(prefix="bench-models-cache-") as cache:
        argv = [sys.executable, str(Path(__file__).with_name("model_rows.py")), key, "--coreml-width", str(width)]
        argv += ["--smoke"] if smoke else []
        env = dict(os.environ, NUMBA_CACHE_DIR=cache) if cold else None
        done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=3000)
    if done.returncode != 0:
        return f"failed ({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode})"
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return f"{figures['load']:.1f} s (+{figures['import']:.1f} s import)"


def measure(key: str, row: Row, repeat: int, processes: bool, smoke: bool, width: float) -> Result:
    first_ours, run_ours = timed_load(row.load_ours)  # the first load compiles what this process has not yet
    first_ort, run_ort = timed_load(row.load_ort)
    difference = row.compare(run_ours, run_ort)  # raises when the outputs disagree beyond the row's tolerance
    ours, ort = medians([run_ours, run_ort], repeat)
    # kernels are compiled by now: the warm load (median of three when a load is quick)
    warm_ours, warm_ort = (statistics.median(timed_load(load)[0] for _ in range(3 if first < 2 else 1))
                           for load, first in ((row.load_ours, first_ours), (row.load_ort, first_ort)))
    row.close()
    fresh = [fresh_process_load(key, smoke, width, c) if processes else "not run" for c in (False, True)]
    return Result(row.name, row.macs, ours, ort, difference, warm_ours, warm_ort, *fresh)


def print_table(results: list[Result]) -> None:
    print()
    print("| model | MMAC | ours ms | ORT ms | ORT / ours | outputs | load in process: ours / ORT "
          "| load, new process: cache warm | cache cold |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in results:
        print(f"| {r.name} | {r.macs / 1e6:.1f} | {r.ours * 1e3:.2f} | {r.ort * 1e3:.2f} | {r.ort / r.ours:.3f} "
              f"| {r.difference} | {r.load_ours:.2f} s / {r.load_ort:.2f} s | {r.fresh} | {r.cold} |", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="tiny models, a few calls, no new processes (CI)")
    parser.add_argument("--no-processes", action="store_true", help="skip the loads in new processes")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated subset of {','.join(ROWS)}")
    parser.add_argument("--coreml-width", type=float, default=1.0,
                        help="channel width of the CoreML MobileNet v2 (today a depthwise layer lowers to a node per "
                             "channel and MobileNet v2 1.0 takes minutes to load: 0.25 keeps a run practical)")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError:
        print("onnxruntime and onnx are not installed (pip install -e '.[bench]'): nothing to compare against")
        return 0
    keys = [k for k in args.rows.split(",") if k]
    unknown = [k for k in keys if k not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; choose from {list(ROWS)}")
    print(f"onnxruntime {onnxruntime.__version__}, defaults, 2 intra-op threads; {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}" + ("; smoke sizes" if args.smoke else ""))
    repeat = 3 if args.smoke else args.repeat
    results = []
    for key in keys:
        row = ROWS[key](args.smoke, args.coreml_width)
        if row is None:
            print(f"{key}: skipped (coremltools is not installed)")
            continue
        results.append(measure(key, row, repeat, not (args.smoke or args.no_processes), args.smoke, args.coreml_width))
        r = results[-1]
        print(f"{r.name}: ours {r.ours * 1e3:.2f} ms, ORT {r.ort * 1e3:.2f} ms, ORT / ours {r.ort / r.ours:.3f}; "
              f"{r.difference}; load in process {r.load_ours:.2f} s (ORT {r.load_ort:.2f} s), new process "
              f"{r.fresh}, cold cache {r.cold}", flush=True)
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
