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

A chunk that raises is never counted as finished, so a caller waiting for it would wait forever: every task lent
goes through a :class:`Share`, which marks the call failed in its counters (``atomics.CHUNK_FAILED``: every wait
ends) and raises the helper's exception on the calling thread once its own share has returned.
"""
from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable

import numpy as np

from ..support import thread_budget
from . import isa
from .atomics import CHUNK_FAILED, fail_chunks

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
            except BaseException:  # noqa: BLE001, S110 - a Share's task hands its failure to its caller; what else
                pass  # raises here (the gang's own bookkeeping) must not end the helper
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


class ChunkFailed(RuntimeError):
    """A helper thread's share of a call raised (its exception is the cause): raised on the calling thread."""


class Share:
    """One call's chunk loop shared between the calling thread and helpers, with its chunk ``counters`` (int64
    [claimed, finished, ...]: the caller waits until ``finished`` reaches the chunk count).

    A chunk that raises never counts as finished. So :meth:`task` wraps what the helpers run: an exception is
    kept and the counters are marked failed (``CHUNK_FAILED``), which ends every wait on them; and :meth:`run`
    runs the caller's own share and then raises :class:`ChunkFailed` from the helper's exception. The caller's
    own exception marks the counters too (a helper may wait on the caller's share: a packing's ``ready``)."""

    __slots__ = ("counters", "error")

    def __init__(self, counters: np.ndarray):
        self.counters = counters
        self.error: BaseException | None = None

    def task(self, task: Callable[[], object]) -> Callable[[], None]:
        """``task`` for the helpers, failing the call instead of raising."""
        def guarded() -> None:
            try:
                task()
            except BaseException as error:  # noqa: BLE001 - handed to the calling thread by run
                if self.error is None:
                    self.error = error  # before the mark: the caller reads it once its wait has ended
                fail_chunks(self.counters)
        return guarded

    def lend(self, task: Callable[[], object], count: int, post: Callable | None = None) -> None:
        """``post(task, count)`` (the gang's ``post``; by default :func:`lend`) with ``task`` guarded by
        :meth:`task`."""
        (lend if post is None else post)(self.task(task), count)

    def run(self, function: Callable, *args):
        """``function(*args)``: the calling thread's share, which waits for the helpers' chunks; raises
        :class:`ChunkFailed` when a helper's chunk raised meanwhile."""
        try:
            result = function(*args)
        except BaseException:
            fail_chunks(self.counters)  # a helper waiting on this thread's share stops
            raise
        if self.counters[1] >= CHUNK_FAILED:
            error = self.error
            what = "an exception" if error is None else f"{type(error).__name__}: {error}"
            raise ChunkFailed(f"a helper thread's chunk of a shared kernel call raised {what}") from error
        return result
