"""The thread budget: ``OPENVX_NN_THREADS`` threads in all, shared by the graphs that execute at once.

Every graph execution runs on a thread of the application's (or a ``vxScheduleGraph`` thread) and
counts against the budget: the Python path's executions are counted by ``core/execution.py`` in
:data:`executing`, native runs by ``csrc/plan.c`` in :data:`native_runs`.  What is left may be lent:
to the engine's helper threads (``engine/workers.py``: a helper takes a thread with :func:`take`
before it starts a task and gives it back after, waiting while none is free) and to numba's pool
(``jit.thread_pool``: a parallel kernel runs on ``1 +`` the threads it could take).  So three graphs
under a budget of eight share five spare threads, and one graph alone gets seven.

The count is exact for what the library lends: lent threads never exceed the budget less the graphs
executing when they were lent.  A graph that starts while threads are out is not held back (its
thread is the application's); it finds none spare until they come back, which is at the end of the
chunk loop or parallel kernel that had them.
"""
from __future__ import annotations

import os
import threading

import numpy as np


def _configured() -> int:
    """``OPENVX_NN_THREADS`` when it is a positive integer, else the CPUs this process may use."""
    value = os.environ.get("OPENVX_NN_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


BUDGET = _configured()
"""Threads in all: the graphs executing plus the threads lent to their kernels."""

executing = 0
"""Graph executions in flight on the Python path (kept by ``core/execution.py``)."""

native_runs = np.zeros(16 * 8, np.int64)
"""Graph runs in flight on the native path, in 16 stripes a cache line apart (C counts them in and out by
thread: ``csrc/plan.c``); native entries run serial kernels on the caller's thread."""

_lent = 0
_changed = threading.Condition()
peak = 0
"""The most threads counted at once (graphs executing plus lent) when something was lent: tests read it."""

WAIT = 0.001
"""Seconds a helper waiting for a thread sleeps between looks (a graph that ends does not notify)."""


_stripes = native_runs[::8]
"""The words C counts in (one a stripe)."""


def graphs() -> int:
    """Graph executions in flight, the caller's included (at least 1: a kernel called outside a graph).

    The stripes are summed as a list: NumPy's reduction took 17-36 us when called right after a native run (its
    code out of the caches), on every lending run of a model, against 3 us."""
    return max(1, executing + sum(_stripes.tolist()))


def spare() -> int:
    """Threads that may be lent now (0 or more)."""
    return max(0, BUDGET - graphs() - _lent)


def take(count: int, wait: bool = False) -> int:
    """Take up to ``count`` spare threads for work lent by a graph; how many were taken.  ``wait``: block
    until at least one is spare (a helper thread about to start a task), else return at once."""
    global _lent, peak
    if count <= 0:
        return 0
    with _changed:
        granted = min(count, spare())
        while wait and granted <= 0:
            _changed.wait(WAIT)
            granted = min(count, spare())
        if granted > 0:
            _lent += granted
            peak = max(peak, _lent + graphs())
        return max(0, granted)


def give(count: int) -> None:
    """Give back ``count`` threads :func:`take` took."""
    global _lent
    if count > 0:
        with _changed:
            _lent -= count
            _changed.notify_all()


def _after_fork_in_child() -> None:
    # A forked child has none of its parent's helpers or pool threads: nothing of the budget is lent.
    global _lent, _changed
    _lent, _changed = 0, threading.Condition()


os.register_at_fork(after_in_child=_after_fork_in_child)
