"""Cold start: a fresh process's first conv3 (13x13x256 -> 384, k3, p1, U8) vxProcessGraph.

Each case runs a new Python process that creates a context (starting the
library), builds the one-layer graph through the C API (``openvx_nn.vx``)
and times its first ``vxProcessGraph`` (verification included):

- ``no cache``: an empty ``OPENVX_NN_CACHE_DIR`` (every kernel compiles: the
  first use of a version on a machine),
- ``warm cache``: the user's kernel cache (``~/.cache/openvx-nn/<version>-<cpu>``),
  filled by a first run or by ``openvx-nn warm``,
- ``new install``: a copy of the package at another path (a second virtual
  environment, or ``pip install -e .`` after ``pip install .``): the cache is
  keyed by the sources' content, so it loads what the first install compiled,
- ``read-only install``: that copy on a read-only bind mount (Linux user
  namespaces, ``unshare -rm``).

Medians of ``--runs`` processes per case (the no-cache case: ``--cold-runs`` processes, each with its own
empty cache; 0 skips it, whose every process compiles for minutes).

    python benchmarks/bench_cold_start.py [--runs 5] [--cold-runs 1]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "openvx_nn"

CHILD = r"""
import time
t0 = time.perf_counter()
from openvx_nn import vx
ctx = vx.vxCreateContext()
t1 = time.perf_counter()
f = vx.ffi
t = lambda dims: vx.vxCreateTensor(ctx, len(dims), f.new("vx_size[]", dims), vx.VX_TYPE_UINT8, 0)
x, w, y = t([13, 13, 256]), t([3, 3, 256, 384]), t([13, 13, 384])
g = vx.vxCreateGraph(ctx)
p = f.new("vx_nn_convolution_params_t *", [1, 1, vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_ZERO,
                                           vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0])
vx.vxConvolutionLayer(g, x, w, f.NULL, p, f.sizeof("vx_nn_convolution_params_t"), y)
t2 = time.perf_counter()
status = vx.vxProcessGraph(g)
t3 = time.perf_counter()
assert status == vx.VX_SUCCESS, status
print(f"{t1 - t0:.4f} {t3 - t2:.4f}")
"""


def _run(prefix: list[str], env: dict, cwd: str) -> tuple[float, float]:
    out = subprocess.run([*prefix, sys.executable, "-c", CHILD], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=900, check=False)
    if out.returncode:
        raise SystemExit(out.stderr)
    start, first = out.stdout.split()
    return float(start), float(first)


def _case(label: str, prefix: list[str], env: dict, runs: int, cwd: str, prime: bool = True) -> None:
    if prime:
        _run(prefix, env, cwd)
    results = [_run(prefix, env, cwd) for _ in range(runs)]
    start = statistics.median(r[0] for r in results)
    first = statistics.median(r[1] for r in results)
    print(f"{label:20s} start (import + vxCreateContext) {start:6.3f} s   first conv3 vxProcessGraph {first:6.3f} s")


def _at_least(low: int):
    """An argparse type: an int not below ``low``."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value
    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=_at_least(1), default=5)
    parser.add_argument("--cold-runs", type=_at_least(0), default=1,
                        help="processes of the no-cache case (each compiles); 0 skips the case")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CACHE_DIR", "OPENVX_NN_CACHE_DIR", "OPENVX_NN_RECORD_SIGNATURES")}
    with tempfile.TemporaryDirectory() as tmp:
        no_cache = [_run([], {**base, "OPENVX_NN_CACHE_DIR": str(Path(tmp, f"empty{k}"))}, tmp)
                    for k in range(args.cold_runs)]
        if no_cache:
            print(f"{'no cache':20s} start (import + vxCreateContext) "
                  f"{statistics.median(r[0] for r in no_cache):6.3f} s"
                  f"   first conv3 vxProcessGraph {statistics.median(r[1] for r in no_cache):6.3f} s")
        else:
            print("no cache: skipped (--cold-runs 0)")
        _case("warm cache", [], base, args.runs, tmp)
        site = Path(tmp, "site")
        shutil.copytree(PACKAGE, site / "openvx_nn", ignore=shutil.ignore_patterns("__pycache__", "_build"))
        if not (PACKAGE / "include").exists():  # a source checkout keeps the headers beside the package
            shutil.copytree(PACKAGE.parent / "include", site / "include")
        _case("new install", [], {**base, "PYTHONPATH": str(site)}, args.runs, tmp, prime=False)
        unshare = shutil.which("unshare")
        if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True, check=False).returncode:
            print("read-only install: skipped (no user namespaces)")
            return
        prefix = [unshare, "-rm", "sh", "-c", f'mount --bind -o ro "{site}" "{site}" && exec "$@"', "sh"]
        _case("read-only install", prefix, {**base, "PYTHONPATH": str(site)}, args.runs, tmp, prime=False)


if __name__ == "__main__":
    main()
