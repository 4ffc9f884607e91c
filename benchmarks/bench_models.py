"""Whole models through our public APIs against ONNX Runtime: same weights, same process, interleaved, medians.

Rows (key: network; the builders are in ``models.py``, ``quant_models.py``, ``coreml_models.py``,
``vx_models.py`` and ``tflite_models.py``, importable by other benchmarks; ``model_rows.py`` runs them):

- ``nnapi-float``: MobileNet v1 0.25 on 224x224x3 (the shape of NNAPI's ``mobilenet_224_gender_basic_fixed``:
  15 CONV_2D with fused RELU6, 13 DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, LOGISTIC) through ``openvx_nn.nnapi``
  Model/Compilation/Execution, against the same network as ONNX in ORT float (and LiteRT, below);
- ``nnapi-uint8``: the same network in TENSOR_QUANT8_ASYMM (per-layer ranges calibrated on sample images,
  int32 biases of scale input x filter) against ORT's QLinearConv model with the same uint8 weights and
  parameters;
- ``coreml-mobilenet-v2`` and ``coreml-resnet18``: networks built with coremltools' ``NeuralNetworkBuilder``
  (batch norm, ReLU6 as the converter writes it, depthwise ``nGroups = channels``), written to a
  ``.mlmodel`` file and loaded with ``openvx_nn.coreml.load``, against the same networks in ORT float;
- ``vx-small-cnn``: a small Q7.8 CNN through the OpenVX C API (``openvx_nn.vx``: libopenvx.so's entry points
  called C-style), against the same weights in ORT float.
- ``converted-mobilenet-v2``, ``converted-resnet18``, ``converted-mobilenet-v3-small`` and
  ``converted-efficientnet-b0``, ``converted-resnet50``, ``converted-densenet121``, ``converted-unet``,
  ``converted-deeplab-head``, ``converted-transformer-encoder``, ``converted-lstm-tagger`` and
  ``converted-gru-tagger``: PyTorch modules written after the published architectures (``torch_models.py`` and
  the modules of ``tools/make_converted_networks.py``, seeded weights, at the sizes of ``torch_models.SIZES``),
  converted by coremltools (``convert_to="neuralnetwork"``) to ``.mlmodel`` files loaded with
  ``openvx_nn.coreml.load``, against the same module exported to ONNX in ORT and run by PyTorch (2 threads);
  ``profile_converted.py`` shows where one's time goes.

Per row: the steady-state time of one inference (median of every call; ORT with its defaults and 2
intra-op threads; LiteRT, where ``ai-edge-litert`` is installed, with its defaults and 2 threads, on the
NNAPI rows; PyTorch with 2 threads in inference mode, on the converted rows). The sides take turns (``--block``: 5+ calls and 20+ ms back to back a turn), each turn begun
once the process's threads are idle: after a run, ORT's pool threads spin for some 40 ms of CPU by default,
so with calls alternating one by one (``--block 1``) every call of ours ran beside a spinning ORT thread on
this 2-core machine, and the model took its one-thread time. ``--gap-ms`` pauses before each call, so both
sides pay for waking their threads. Then their time / ours (above 1: ours faster), and the largest output difference against each,
which must stay within the row's stated tolerance (else the benchmark fails).  Load time is a product
figure too: file (or, for NNAPI, which has no file, the arrays) to first result -- parse, build, verify,
first process -- in this process once its kernels are compiled (beside the baselines' session creation
plus first run), and in a new process (imports reported apart) with the numba cache as it is (warm) and
cold (its ``NUMBA_CACHE_DIR`` an empty directory, so every kernel compiles).

Usage: python benchmarks/bench_models.py [--repeat N] [--smoke] [--no-processes] [--rows a,b] [--coreml-width W]
``--smoke``: tiny widths and resolutions, a few calls, no new processes (CI).
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx), the ``coreml`` extra for the CoreML rows and the
``litert`` extra for LiteRT; without onnxruntime it says so and exits 0.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` (and an uninstalled checkout) importable
    sys.path.insert(0, str(ROOT))

if __name__ == "__main__":  # ``--threads`` must reach OPENVX_NN_THREADS before the imports below load the kernels
    _early = argparse.ArgumentParser(add_help=False)
    _early.add_argument("--threads", type=int, default=2)
    os.environ["OPENVX_NN_THREADS"] = str(max(1, _early.parse_known_args()[0].threads))

from benchmarks.bench_ort import medians
from benchmarks.model_rows import ROWS, Row, timed_load
from benchmarks.tflite_rows import Refused


@dataclass
class Result:
    """One row's figures (seconds, by side: ours, ORT, LiteRT) and its output comparison."""

    name: str
    macs: int
    times: dict[str, float]
    difference: str
    loads: dict[str, float]
    phases: str
    fresh: str
    cold: str

    def ratio(self, side: str) -> str:
        return f"{self.times[side] / self.times['ours']:.3f}" if side in self.times else "n/a"

    def ms(self, side: str) -> str:
        return f"{self.times[side] * 1e3:.2f}" if side in self.times else "n/a"


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


WARM_UP = 3.0
"""Seconds the first timed row's sides run untimed before its turns: a process's first seconds ran every side
slower on the 2-core VM (``bench_standard_layers.WARM_UP``); the first row's LiteRT time read 1.03 ms in one run
and 0.57-0.59 in two others."""
_warmed = [False]


def warm_up(calls: list, seconds: float = WARM_UP) -> None:
    """Once a process: ``calls`` in turn, untimed, for ``seconds``."""
    if _warmed[0]:
        return
    _warmed[0] = True
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for call in calls:
            call()


def measure(key: str, row: Row, repeat: int, processes: bool, smoke: bool, width: float, gap: float = 0.0,
            block: int = 1) -> Result:
    """Load every side (the first load compiles what this process has not yet), compare the outputs (raises
    beyond the row's tolerance), time the steady state interleaved, then the warm loads."""
    loads = {"ours": row.load_ours, **row.others()}
    firsts, runs = {}, {}
    for side, load in loads.items():
        firsts[side], runs[side] = timed_load(load)
    print(f"{row.name}: first loads (compiling what this process has not yet) "
          + ", ".join(f"{side} {seconds:.2f} s" for side, seconds in firsts.items()), flush=True)
    difference = row.compare(runs["ours"], {side: run for side, run in runs.items() if side != "ours"})
    if not smoke:
        warm_up(list(runs.values()))
    times = dict(zip(runs, medians(list(runs.values()), repeat, gap, block)))
    warm, phases = {}, ""
    for side, load in loads.items():  # kernels compiled by now: the median of three loads when a load is quick
        samples = []
        for _ in range(3 if firsts[side] < 2 else 1):
            samples.append((timed_load(load)[0], dict(row.phases) if side == "ours" else {}))
        total, steps = sorted(samples, key=lambda sample: sample[0])[len(samples) // 2]
        warm[side] = total
        if side == "ours":
            steps["first run"] = total - sum(steps.values())
            phases = " + ".join(f"{name} {seconds:.2f}" for name, seconds in steps.items())
    row.close()
    fresh = [fresh_process_load(key, smoke, width, c) if processes else "not run" for c in (False, True)]
    return Result(row.name, row.macs, times, difference, warm, phases, *fresh)


def print_table(results: list[Result]) -> None:
    print()
    print("| model | MMAC | ours ms | ORT ms | ORT / ours | LiteRT ms | LiteRT / ours | PyTorch ms | PyTorch / ours "
          "| outputs | load in process: ours / ORT / LiteRT | ours: steps (s) | load, new process: cache warm "
          "| cache cold |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|")
    for r in results:
        loads = " / ".join(f"{r.loads[side]:.2f}" if side in r.loads else "n/a" for side in ("ours", "ORT", "LiteRT"))
        print(f"| {r.name} | {r.macs / 1e6:.1f} | {r.ms('ours')} | {r.ms('ORT')} | {r.ratio('ORT')} | {r.ms('LiteRT')} "
              f"| {r.ratio('LiteRT')} | {r.ms('PyTorch')} | {r.ratio('PyTorch')} | {r.difference} | {loads} s "
              f"| {r.phases} | {r.fresh} | {r.cold} |", flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=0.0,
                        help="sleep before each timed call, so no contender's threads still spin from the last call "
                             "(0: calls back to back)")
    parser.add_argument("--block", type=int, default=5,
                        help="calls per turn (and at least 20 ms of them), each turn begun once the last side's threads have "
                             "gone idle (1: every call alternates, so each side also runs beside the other's "
                             "still-spinning threads)")
    parser.add_argument("--smoke", action="store_true", help="tiny models, a few calls, no new processes (CI)")
    parser.add_argument("--no-processes", action="store_true", help="skip the loads in new processes")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated subset of {','.join(ROWS)}")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads a side: ORT's intra-op, LiteRT's, PyTorch's and ours (OPENVX_NN_THREADS); 1 "
                             "compares the kernels alone, which a loaded machine disturbs least")
    parser.add_argument("--coreml-width", type=float, default=1.0,
                        help="channel width of the CoreML MobileNet v2 (1.0: the standard model)")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if os.environ.get("OPENVX_NN_THREADS") != str(args.threads):
        parser.error("--threads takes effect only when this file runs as a script")
    from benchmarks import models
    models.THREADS = args.threads
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
    print(f"onnxruntime {onnxruntime.__version__}, defaults, {args.threads} intra-op threads; {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}" + ("; smoke sizes" if args.smoke else "")
          + (f"; {args.gap_ms:g} ms pause before each timed call" if args.gap_ms and not args.smoke else "")
          + (f"; turns of {args.block}+ calls and 20+ ms, each begun with the process idle" if args.block > 1 else
             "; calls alternating one by one"))
    repeat = 3 if args.smoke else args.repeat
    results, refused = [], []
    for key in keys:
        row = ROWS[key](args.smoke, args.coreml_width)
        if row is None or isinstance(row, str):
            missing = "coremltools" + (", torch" if key.startswith("converted") else "") + " not installed"
            print(f"{key}: skipped ({row or missing})")
            continue
        try:
            results.append(measure(key, row, repeat, not (args.smoke or args.no_processes), args.smoke,
                                   args.coreml_width, 0.0 if args.smoke else args.gap_ms / 1e3, args.block))
        except Refused as err:  # reported, never dropped silently
            print(f"{key}: not run: our front end refuses the model: {err}", flush=True)
            refused.append((row.name, str(err)))
            continue
        r = results[-1]
        print(f"{r.name}: " + ", ".join(f"{side} {r.ms(side)} ms" for side in r.times)
              + f"; ORT / ours {r.ratio('ORT')}, LiteRT / ours {r.ratio('LiteRT')}, PyTorch / ours {r.ratio('PyTorch')}"
              + f"; {r.difference}; load in process "
              + ", ".join(f"{side} {s:.2f} s" for side, s in r.loads.items()) + f" (ours: {r.phases})"
              + f"; new process {r.fresh}, cold cache {r.cold}", flush=True)
    print_table(results)
    for name, reason in refused:
        print(f"| {name} | not run: {reason} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
