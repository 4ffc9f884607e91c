"""The CoreML model rows on each route of the convolution's GEMM layers, beside ONNX Runtime: one process, the
same file loaded once per route, calls interleaved in a random order per round, medians.

Routes (``OPENVX_NN_COREML_GEMM`` when the model is loaded and first run, which is when a layer is bound):
``numpy`` (one NumPy matmul per group on the calling thread: the route before ``chw_gemm``), the default
(``chw_gemm``: one-thread sgemm tiles shared with the engine's helpers) and ``own`` (the FMA micro-kernel
GEMM of ``chw_convolution`` where it takes a layer). Per model: each route's time, ORT's, ORT / route (above 1:
ours faster) and the largest output difference from ORT (checked against the model benchmark's tolerance).

Usage: python benchmarks/bench_coreml_routes.py [--repeat N] [--rows coreml-mobilenet-v2,coreml-resnet18]
[--routes numpy,default,own] [--smoke]
Needs ``pip install -e ".[bench,coreml]"``; without coremltools or onnxruntime it says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.model_rows import FLOAT_TOLERANCE, ROWS

ROUTE_ENV = "OPENVX_NN_COREML_GEMM"


def _load(row, route: str):
    """``row.load_ours()`` with the route chosen while its layers are bound (load and first run)."""
    saved = os.environ.get(ROUTE_ENV)
    os.environ[ROUTE_ENV] = "" if route == "default" else route
    try:
        run = row.load_ours()
        run()
    finally:
        if saved is None:
            os.environ.pop(ROUTE_ENV, None)
        else:
            os.environ[ROUTE_ENV] = saved
    return run


def shuffled_medians(functions: list, repeat: int, seed: int = 0) -> list[float]:
    """Median wall time of each function, the calls of a round in a new random order each round: ORT's threads
    spin after a run (its default) and slow whatever runs next, so no side may always follow it (with the usual
    alternation one route would)."""
    rng = np.random.default_rng(seed)
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeat):
        for k in rng.permutation(len(functions)):
            start = time.perf_counter()
            functions[k]()
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--rows", default="coreml-mobilenet-v2,coreml-resnet18")
    parser.add_argument("--routes", default="numpy,default")
    parser.add_argument("--smoke", action="store_true", help="the model benchmark's smoke sizes, a few calls")
    args = parser.parse_args(argv)
    try:
        import coremltools  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        print("coremltools or onnxruntime is not installed: nothing to compare")
        return 0
    routes = [r for r in args.routes.split(",") if r]
    repeat = 3 if args.smoke else args.repeat
    for key in [k for k in args.rows.split(",") if k]:
        row = ROWS[key](args.smoke, 1.0)
        runs = {route: _load(row, route) for route in routes}
        runs["ORT"] = row.load_ort()
        x = row.inputs[0]
        theirs = np.asarray(runs["ORT"]()).reshape(-1)
        scale = max(1.0, float(np.abs(theirs).max()))
        differences = {r: float(np.abs(np.asarray(runs[r]()).reshape(-1) - theirs).max()) for r in routes}
        worst = max(differences.values()) / scale
        if worst > FLOAT_TOLERANCE:
            raise AssertionError(f"{row.name}: outputs differ from ORT by {worst:.1e} relative (input {x.shape})")
        times = dict(zip(runs, shuffled_medians(list(runs.values()), repeat)))
        print(f"{row.name}: " + ", ".join(f"{side} {t * 1e3:.2f} ms" for side, t in times.items()) + "; ORT / "
              + ", ".join(f"{r} {times['ORT'] / times[r]:.3f}" for r in routes)
              + f"; largest difference from ORT {max(differences.values()):.1e}", flush=True)
        row.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
