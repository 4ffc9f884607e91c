"""Run model mutants one by one, each in a child process with a timeout, and count how each ended.

The model fuzzers (``coreml_fuzz.py``, ``nnapi_fuzz.py``) make mutants in this process and hand them to
:func:`campaign`, which forks one child per mutant: the child inherits this process's imported and compiled
library (so a mutant costs a fork, not a start-up), runs it and reports through a pipe; the parent kills a child
that outlives the timeout. Set ``OPENVX_NN_THREADS=1`` before the library is imported (``serial_library``):
a fork copies only the calling thread, so the parent must not have started helper threads.

Outcomes (the columns of the summary; every column but the first two must stay 0):
- ``ran``: a mutant that may be valid ran to the end;
- ``refused``: the loader or the run raised a documented error type (the library's ``Error`` family);
- ``invalid-ran``: a mutant made to break a rule of its specification loaded and ran;
- ``foreign``: any other exception reached the caller (its type and message are kept);
- ``crash``: the child died from a signal;
- ``hang``: the child outlived the timeout and was killed.
"""
from __future__ import annotations

import json
import os
import select
import signal
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

GOOD = ("ran", "refused")
BAD = ("invalid-ran", "foreign", "crash", "hang")
OUTCOMES = GOOD + BAD


def serial_library() -> None:
    """Keep the library on one thread, so that forking this process copies all of it."""
    os.environ["OPENVX_NN_THREADS"] = "1"


@dataclass
class Mutant:
    """One mutated model: ``data`` is whatever the fuzzer's ``run`` takes; ``invalid`` is True when the mutation
    breaks a rule of the specification (so the model must be refused), False when it may or may not."""

    index: int
    how: str
    data: object
    invalid: bool = False


@dataclass
class Summary:
    counts: Counter = field(default_factory=Counter)
    bad: list[tuple[int, str, str, str]] = field(default_factory=list)  # (index, how, outcome, detail)
    seconds: float = 0.0

    def line(self, name: str) -> str:
        cells = " ".join(f"{k}={self.counts.get(k, 0)}" for k in OUTCOMES)
        return f"{name}: mutants={sum(self.counts.values())} {cells} seconds={self.seconds:.0f}"

    def table_row(self, name: str) -> str:
        return "| " + " | ".join([name, str(sum(self.counts.values()))] +
                                 [str(self.counts.get(k, 0)) for k in OUTCOMES]) + " |"

    @property
    def clean(self) -> bool:
        return not any(self.counts.get(k, 0) for k in BAD)


def _child(run: Callable[[Mutant], None], mutant: Mutant, documented: tuple[type, ...], fd: int) -> None:
    try:
        run(mutant)
        outcome, detail = ("invalid-ran" if mutant.invalid else "ran"), ""
    except documented as err:
        outcome, detail = "refused", str(err)[:300]
    except BaseException as err:  # noqa: BLE001 - the point is to see what escapes
        tb = traceback.extract_tb(err.__traceback__)
        where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "?"
        outcome, detail = "foreign", f"{type(err).__module__}.{type(err).__name__}: {str(err)[:300]} at {where}"
    os.write(fd, json.dumps([outcome, detail]).encode())
    os._exit(0)


def _start(run, mutant, documented) -> tuple[int, int]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            _child(run, mutant, documented, write)
        finally:
            os._exit(70)
    os.close(write)
    return pid, read


def _finish(pid: int, fd: int, timed_out: bool) -> tuple[str, str]:
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    data = b""
    while not timed_out:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return "hang", ""
    if os.WIFSIGNALED(status):
        return "crash", f"signal {os.WTERMSIG(status)}"
    if not data:
        return "crash", f"exit status {os.WEXITSTATUS(status)} without a report"
    outcome, detail = json.loads(data)
    return outcome, detail


def campaign(mutants: Iterable[Mutant], run: Callable[[Mutant], None], documented: tuple[type, ...],
             timeout: float = 30.0, workers: int = 2, progress: Callable[[Summary], None] | None = None) -> Summary:
    """Run every mutant in its own child, ``workers`` at a time; count the outcomes."""
    summary = Summary()
    start = time.monotonic()
    running: dict[int, tuple[int, Mutant, float]] = {}  # pipe fd -> (pid, mutant, deadline)
    source = iter(mutants)
    exhausted = False

    def record(mutant: Mutant, outcome: str, detail: str) -> None:
        summary.counts[outcome] += 1
        if outcome in BAD:
            summary.bad.append((mutant.index, mutant.how, outcome, detail))
        if progress is not None:
            progress(summary)

    while running or not exhausted:
        while not exhausted and len(running) < workers:
            mutant = next(source, None)
            if mutant is None:
                exhausted = True
                break
            pid, fd = _start(run, mutant, documented)
            running[fd] = (pid, mutant, time.monotonic() + timeout)
        if not running:
            break
        wait = max(0.0, min(deadline for _, _, deadline in running.values()) - time.monotonic())
        ready, _, _ = select.select(list(running), [], [], wait)
        now = time.monotonic()
        for fd in list(running):
            pid, mutant, deadline = running[fd]
            if fd in ready or now >= deadline:
                del running[fd]
                record(mutant, *_finish(pid, fd, fd not in ready))
    summary.seconds = time.monotonic() - start
    return summary


def short_form(fuzzer, args: list[str], name: str, timeout: float) -> tuple[dict[str, int], object]:
    """Run ``fuzzer`` (a script printing :meth:`Summary.line` under ``name``) as its own process, as CI's short
    forms do; its counts by column (and ``mutants``) and the finished process."""
    import re
    import subprocess
    import sys
    result = subprocess.run([sys.executable, str(fuzzer), *args], capture_output=True, text=True, timeout=timeout)
    line = next((line for line in result.stdout.splitlines() if line.startswith(f"{name}: ")), None)
    assert line is not None, result.stdout[-3000:] + result.stderr[-3000:]
    return {k: int(v) for k, v in re.findall(r"([\w-]+)=(\d+)", line)}, result
