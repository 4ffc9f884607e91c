"""Ctrl-C at random points of a C program's life on a busy machine: every run ends with the documented
status or by SIGINT's default action, never by another signal, and never hangs.

A C program runs a small uint8 convolution graph (start-up, verify, a few processes, releases, return from
``main``) and prints a line as it enters each phase and one per call with its status. Each run picks a phase and
delivers SIGINT at a random delay after the program announced it, while processes that do nothing but spin keep
every core busy. A run ends in one of two ways, and nothing else is allowed:

- ``completed``: exit status 0, every call returned ``VX_SUCCESS`` (SIGINT came too late to stop anything: after
  ``main`` returned, or while the program was in its own code and never called the library again);
- ``sigint``: killed by SIGINT, every call it printed returned ``VX_SUCCESS`` (an interrupted call logs
  "interrupted by SIGINT" and never returns).

The CI form runs ``OPENVX_NN_INTERRUPT_RUNS`` runs (default 40); the long form runs as a program and prints
the counts per phase and outcome::

    python tests/test_interrupt_stress.py --runs 1000 [--load 4] [--minutes 60]
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

RUNS = int(os.environ.get("OPENVX_NN_INTERRUPT_RUNS", "40"))

PROGRAM = r"""
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <stdio.h>
#include <stdlib.h>
static void VX_CALLBACK on_log(vx_context c, vx_reference r, vx_status s, const vx_char text[]) {
    (void)c; (void)r;
    printf("log %d: %s\n", (int)s, text);
    fflush(stdout);
}
static void phase(const char *name) { printf("phase %s\n", name); fflush(stdout); }
static void call(const char *name, vx_status s) { printf("call %s %d\n", name, (int)s); fflush(stdout); }
int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5, i;
    vx_size in[3] = {13, 13, 64}, w[4] = {3, 3, 64, 96}, out[3] = {13, 13, 96};
    vx_nn_convolution_params_t p = {1, 1, VX_CONVERT_POLICY_SATURATE, VX_ROUND_POLICY_TO_ZERO,
                                    VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    vx_context ctx;
    vx_graph g;
    vx_tensor x, k, y;
    phase("start-up");
    ctx = vxCreateContext();
    call("vxCreateContext", vxGetStatus((vx_reference)ctx));
    vxRegisterLogCallback(ctx, on_log, vx_false_e);
    g = vxCreateGraph(ctx);
    call("vxCreateGraph", vxGetStatus((vx_reference)g));
    x = vxCreateTensor(ctx, 3, in, VX_TYPE_UINT8, 0);
    k = vxCreateTensor(ctx, 4, w, VX_TYPE_UINT8, 0);
    y = vxCreateTensor(ctx, 3, out, VX_TYPE_UINT8, 0);
    call("vxCreateTensor", vxGetStatus((vx_reference)y));
    call("vxConvolutionLayer", vxGetStatus((vx_reference)vxConvolutionLayer(g, x, k, NULL, &p, sizeof p, y)));
    phase("verify");
    call("vxVerifyGraph", vxVerifyGraph(g));
    phase("process");
    for (i = 0; i < runs; i++)
        call("vxProcessGraph", vxProcessGraph(g));
    phase("release");
    call("vxReleaseGraph", vxReleaseGraph(&g));
    call("vxReleaseTensor", vxReleaseTensor(&x));
    call("vxReleaseTensor", vxReleaseTensor(&k));
    call("vxReleaseTensor", vxReleaseTensor(&y));
    call("vxReleaseContext", vxReleaseContext(&ctx));
    phase("exit");
    return 0;
}
"""

PROCESS_RUNS = 5

PHASES = {  # phase -> how long after the program announces it SIGINT may come (seconds, uniform)
    "start-up": 2.5,  # Python's start-up and the library's imports: about a second, several on a busy machine
    "verify": 0.3,
    "process": 0.3,
    "release": 0.05,
    "exit": 0.1,      # main has returned: the exit handler waits for the engine's helpers
    "compile": 6.0,   # the first run with an empty kernel cache: its kernels compile for seconds
}
COMPILE_SHARE = 0.05
"""The share of runs started with an empty kernel cache, SIGINT coming while the graph's kernels compile."""


@dataclass
class Run:
    phase: str
    delay: float
    outcome: str  # completed, sigint, or what went wrong
    output: str


def _spinners(count: int) -> list[subprocess.Popen]:
    """Processes that keep ``count`` cores busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def _outcome(returncode: int | None, output: str) -> str:
    """``completed``, ``sigint``, or a description of a run that broke the rule."""
    if returncode is None:
        return "hang"
    calls = [line.split() for line in output.splitlines() if line.startswith("call ")]
    failed = [c for c in calls if len(c) != 3 or c[2] != "0"]
    if failed:
        return f"call failed ({' '.join(failed[0][1:])}), exit {returncode}"
    if "Traceback" in output:
        return f"traceback, exit {returncode}"
    if returncode == -signal.SIGINT:
        return "sigint"
    if returncode == 0 and output.rstrip().endswith("phase exit"):
        return "completed"
    if returncode < 0:
        return f"signal {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"


def _environment(cache: Path | None) -> dict[str, str]:
    """The program's environment: the kernel cache ``cache`` (None: the one the environment names or the default)."""
    if cache is None:
        return dict(os.environ)
    env = {**os.environ, "OPENVX_NN_CACHE_DIR": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def interrupt_once(exe: Path, phase: str, delay: float, cache: Path | None, timeout: float = 120) -> Run:
    """Start ``exe``, deliver SIGINT ``delay`` seconds after it announces ``phase`` (at once if it ended before)."""
    env = _environment(cache)
    marker = f"phase {'process' if phase == 'compile' else phase}"  # an empty cache: the first process compiles
    p = subprocess.Popen([str(exe), str(PROCESS_RUNS)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in p.stdout:
            lines.append(line)
            if line.strip() == marker:
                seen.set()
        seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen.wait(timeout)
    time.sleep(delay)
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout)
        returncode = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        returncode = None
    reader.join(10)
    output = "".join(lines)
    return Run(phase, delay, _outcome(returncode, output), output)


def campaign(exe: Path, runs: int, seed: int, warm_cache: Path | None, report=None,
             until: float = float("inf")) -> list[Run]:
    """``runs`` interrupted runs, phases drawn at random (a few with an empty kernel cache); none started after
    ``until`` (``time.monotonic()``)."""
    rng = random.Random(seed)
    ordinary = [p for p in PHASES if p != "compile"]
    results = []
    for k in range(runs):
        if time.monotonic() > until:
            break
        phase = "compile" if rng.random() < COMPILE_SHARE else rng.choice(ordinary)
        delay = rng.uniform(0, PHASES[phase])
        if phase == "compile":
            with tempfile.TemporaryDirectory(prefix="openvx-nn-empty-cache-") as empty:
                run = interrupt_once(exe, phase, delay, Path(empty))
        else:
            run = interrupt_once(exe, phase, delay, warm_cache)
        results.append(run)
        if report is not None:
            report(k, run)
    return results


def counts(results: list[Run]) -> dict[tuple[str, str], int]:
    return dict(sorted(collections.Counter((r.phase, r.outcome) for r in results).items()))


def _build(directory: Path) -> Path:
    source = directory / "interrupt_stress.c"
    source.write_text(PROGRAM)
    exe = directory / "interrupt_stress"
    flags = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"], capture_output=True,
                           text=True, check=True).stdout.split()
    subprocess.run(["cc", "-O1", str(source), "-o", str(exe), *flags], check=True)
    return exe


def _warm(exe: Path, cache: Path | None) -> None:
    """One uninterrupted run, so the warm cache holds the graph's kernels."""
    run = subprocess.run([str(exe), "1"], env=_environment(cache), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def test_sigint_at_random_points_of_a_c_program_under_load_ends_it_by_sigint_or_with_its_status(tmp_path):
    exe = _build(tmp_path)
    _warm(exe, None)  # the suite's kernel cache: usually warm already
    spinners = _spinners(os.cpu_count() or 2)
    try:
        results = campaign(exe, RUNS, seed=int(time.time()), warm_cache=None)
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    bad = [r for r in results if r.outcome not in ("completed", "sigint")]
    assert not bad, "\n\n".join(f"{r.phase} +{r.delay:.3f}s: {r.outcome}\n{r.output[-3000:]}" for r in bad[:5])
    assert any(r.outcome == "sigint" for r in results), counts(results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="spinning processes (default: one a core)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--keep", type=Path, help="a directory to keep the program and the failing runs' output in")
    parser.add_argument("--minutes", type=float, default=float("inf"), help="start no run after this long")
    args = parser.parse_args()
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # started in the background: children would inherit it
        signal.signal(signal.SIGINT, signal.default_int_handler)
    directory = Path(tempfile.mkdtemp(prefix="openvx-nn-interrupt-")) if args.keep is None else args.keep
    directory.mkdir(parents=True, exist_ok=True)
    exe = _build(directory)
    cache = directory / "cache"
    _warm(exe, cache)
    spinners = _spinners(args.load)
    started = time.monotonic()
    loads = []

    def report(k: int, run: Run) -> None:
        loads.append(os.getloadavg()[0])
        if run.outcome not in ("completed", "sigint"):
            (directory / f"run{k}.txt").write_text(f"{run.phase} +{run.delay:.3f}s: {run.outcome}\n{run.output}")
            print(f"run {k}: {run.phase} +{run.delay:.3f}s: {run.outcome}", flush=True)
        outcomes[run.outcome] += 1
        if (k + 1) % 25 == 0:
            print(f"{k + 1} runs, {time.monotonic() - started:.0f} s, load {loads[-1]:.1f}: {dict(outcomes)}",
                  flush=True)

    outcomes: collections.Counter = collections.Counter()
    try:
        results = campaign(exe, args.runs, args.seed, cache, report, until=started + 60 * args.minutes)
    finally:
        for s in spinners:
            s.kill()
            s.wait()
    print(f"seed {args.seed}, {len(results)} runs in {time.monotonic() - started:.0f} s, "
          f"{args.load} spinning processes, 1-minute load average {min(loads):.1f}-{max(loads):.1f} "
          f"(mean {sum(loads) / len(loads):.1f})")
    for (phase, outcome), n in counts(results).items():
        print(f"{phase:10} {outcome:30} {n}")
    if args.keep is None:
        shutil.rmtree(directory, ignore_errors=True)
    return 0 if all(r.outcome in ("completed", "sigint") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
