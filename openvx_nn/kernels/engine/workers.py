"""The engine's helper threads: they join one call's work if they can, and hold nothing up if they can't.

A call splits its work into chunks behind a shared counter (``atomics.fetch_add``). The calling
thread lends the same task to ``isa.threads() - 1`` helpers, then claims chunks itself; a helper
claims chunks from the same counter as soon as it runs. The caller then waits only for chunks a
helper has claimed and not finished. So a helper the OS runs late, on a machine busy with other
work, takes fewer chunks or none, and never makes the call wait for it; this is why numba's own
parallel regions (which end in a barrier every pool thread must reach) are not used here.

Helpers are plain daemon threads blocking on a queue; a task is one ``nogil`` numba call, so
the GIL is held only while a helper starts it. A helper runs a task on a thread of the budget
(``support/thread_budget.py``: ``OPENVX_NN_THREADS`` shared by the graphs executing at once), taken
before and given back after; while none is spare it waits, and the caller does the chunks.
"""
from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

from ..support import thread_budget
from . import isa

CHUNKS_PER_THREAD = 4
"""Chunks a shared call splits its work into, per thread taking part: a helper that starts late or is preempted
holds up at most a chunk. 2 and 3 measured the same as 4 on MobileNet v2; 8 and 16 were 2-8 % slower."""


def chunk_count(units: int, threads: int) -> int:
    """Chunks of ``units`` of work (rows, lines, tiles) shared by ``threads`` threads: ``CHUNKS_PER_THREAD`` each,
    at most one a unit."""
    return min(units, CHUNKS_PER_THREAD * threads)


_tasks: queue.SimpleQueue = queue.SimpleQueue()
_started = 0
_start_lock = threading.Lock()
_busy: set[int] = set()  # helpers inside a task (or past the queue, about to test _stopping)
_stopping = False


def _serve() -> None:
    me = threading.get_ident()
    while True:
        task = _tasks.get()
        _busy.add(me)  # before the test: stop() either sees this helper busy or is seen by it
        try:
            if _stopping:
                continue
            taken = thread_budget.take(1, wait=True)
            try:
                task()
            except BaseException:  # noqa: BLE001, S110 - only before a chunk is claimed (unboxing the arguments):
                pass  # the caller then computes every chunk itself
            finally:
                thread_budget.give(taken)
        finally:
            _busy.discard(me)


def _after_fork_in_child() -> None:
    # A forked child has none of its parent's threads: start its own helpers when it first lends.
    global _tasks, _started, _start_lock, _busy
    _tasks, _started, _start_lock, _busy = queue.SimpleQueue(), 0, threading.Lock(), set()


os.register_at_fork(after_in_child=_after_fork_in_child)


def helpers() -> int:
    """How many helpers a call may lend its work to now: the budget's spare threads (0 while the graphs
    executing take it all)."""
    return min(isa.threads() - 1, thread_budget.spare())


def lend(task: Callable[[], object], count: int) -> None:
    """Queue ``task`` for ``count`` helpers (started on first use)."""
    global _started
    if _started < count:
        with _start_lock:
            while _started < count:
                threading.Thread(target=_serve, name=f"openvx-nn-engine-{_started}", daemon=True).start()
                _started += 1
    for _ in range(count):
        _tasks.put(task)


def stop(timeout: float) -> bool:
    """At exit: no queued task starts from now, and wait (at most ``timeout`` seconds) until no helper is inside
    one; whether none is. A helper left in a kernel, or compiling one, while the interpreter and LLVM are torn
    down would run freed code. Helpers a task keeps waiting (the gang's spin) must have been let go first."""
    global _stopping
    _stopping = True
    deadline = time.monotonic() + timeout
    while _busy and time.monotonic() < deadline:
        time.sleep(0.0005)
    return not _busy
