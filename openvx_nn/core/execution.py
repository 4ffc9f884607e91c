"""Graph executions in flight, and the order in which the process stops them at exit.

Every execution (a ``vxProcessGraph`` call, or the worker of a
``vxScheduleGraph``) registers here while it runs.  At process exit
:func:`shutdown` runs once, in this order: refuse new executions, let running
graphs stop at their next node boundary (they end ``VX_ERROR_GRAPH_ABANDONED``),
and wait until no kernel is running any more, the engine's helpers' included
(they spin a while after a run, and one may be compiling a kernel).  Only then may the C runtime
destroy what the kernels use (LLVM, the thread pools).  The embedded
interpreter's C exit handler (``csrc/runtime.c``) calls it and then keeps the
GIL, so no Python code runs again while the process is torn down; in a Python
host, an ``atexit`` handler calls it.

A ``vxProcessGraph`` counts itself in and out with :func:`enter` and
:func:`leave`, which take no lock: small graphs run in a few microseconds, and
a thread switched out while holding a lock every thread needs makes the others
queue on that lock and hand it over one by one, each handover a wake-up, from
then on (a lock convoy; 8 threads on small graphs ran at a quarter of one
thread's rate).  Plain dict operations are atomic under the GIL, and each
thread changes only its own key.  A thread that sleeps on :data:`changed`
counts itself as a sleeper *before* it tests its condition, and a lock-free
change tests the sleeper count *after* it is made, so no wake-up is lost.
"""
from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..kernels.support import thread_budget
from . import native_plan, reference
from .enums import Status
from .errors import VXError

changed = threading.Condition(reference.lock)
"""Signalled whenever an execution starts or ends (the model lock underneath)."""

_active: dict[object, int] = {}  # thread ident (process) or run record (schedule) -> count
_closing = False
_ready = False
_sleepers = 0

HELPERS_TIMEOUT = 30.0
"""How long the exit waits for the engine's helpers to leave their tasks (one may be compiling a kernel)."""

exit_guard: Callable[[], None] | None = None
"""Set by the C layer: (re-)registers the C exit handler of the embedded interpreter."""


def closing() -> bool:
    """True once the process has started to exit: running graphs stop at the next node."""
    return _closing


def prepare_runtime(c_host: bool = False) -> None:
    """Load what kernels run on (numba, LLVM, its thread pool) before the first execution.

    Exit handlers run in the reverse order of registration, and libraries
    register their destructors when they load or first build their state
    (LLVM, during its first compilation).  In a C host (``c_host``: the C
    layer started Python and calls this during the library's start-up),
    loading them and building that state first, and registering our handlers
    after, puts our wait before their teardown.  A Python host runs its exit
    handlers (:func:`shutdown`) before any of the C runtime's, so LLVM's state
    is left to be built when something compiles: a process whose kernels all
    come from the cache never builds it (~20 MiB of LLVM's code less in memory).
    """
    global _ready
    if _ready:
        return
    import numba

    from ..kernels.support import jit  # imports numba and loads LLVM
    numba.get_num_threads()  # starts numba's threading layer (loads its library)
    if c_host:
        jit.start_codegen()  # LLVM builds (and registers the teardown of) its lazy state
    with reference.lock:
        if _ready:
            return
        _ready = True
        atexit.register(shutdown)
        if exit_guard is not None:
            exit_guard()


def ready() -> bool:
    return _ready


def wait_until(condition: Callable[[], bool]) -> None:
    """Sleep on ``changed`` until ``condition()`` holds (caller holds ``changed``).

    The sleeper is counted before the first test, so a change made without
    the lock (:func:`leave`, a graph's release of its execution) either comes
    before that test or sees the sleeper and notifies.
    """
    global _sleepers
    _sleepers += 1
    try:
        while not condition():
            changed.wait()
    finally:
        _sleepers -= 1


def wake() -> None:
    """Wake the threads in :func:`wait_until` (caller holds ``changed``)."""
    if _sleepers:
        changed.notify_all()


def notify() -> None:
    """:func:`wake` for a change made without the lock: takes it only when someone sleeps."""
    if _sleepers:
        with changed:
            changed.notify_all()


def enter(key: int) -> None:
    """Count in an execution of the calling thread (``key``: its ident) without the model lock."""
    _active[key] = _active.get(key, 0) + 1
    thread_budget.executing = len(_active)
    if _closing:  # tested after counting in: shutdown() either sees the count or is seen here
        leave(key)
        raise VXError(Status.VX_FAILURE, "the process is exiting: no new graph executions are accepted")


def leave(key: int) -> None:
    """End an :func:`enter` (on the same thread); wakes sleepers."""
    count = _active[key] - 1
    if count:
        _active[key] = count
    else:
        del _active[key]
    thread_budget.executing = len(_active)  # at worst stale until the next count: a scheduling hint only
    notify()


def count_in(key: object, check: bool = True) -> None:
    """Count an execution (a scheduled run's record, or a thread's ident) as in flight, under the lock.

    A key that several threads count (a run's record) goes through here only;
    a thread ident may also go through :func:`enter`, but only on its own thread.
    """
    with changed:
        if check and _closing:
            raise VXError(Status.VX_FAILURE, "the process is exiting: no new graph executions are accepted")
        _active[key] = _active.get(key, 0) + 1
        thread_budget.executing = len(_active)


def count_out(key: object) -> None:
    with changed:
        count = _active[key] - 1
        if count:
            _active[key] = count
        else:
            del _active[key]
        thread_budget.executing = len(_active)
        wake()


@contextmanager
def running(key: object) -> Iterator[None]:
    """:func:`count_in` for the duration of a block."""
    count_in(key)
    try:
        yield
    finally:
        count_out(key)


def shutdown() -> None:
    """Refuse new executions and wait for those in flight (idempotent).

    An execution running on the calling thread itself (exit() from a node
    callback) is not waited for: it cannot finish before this returns.
    """
    global _closing
    me = threading.get_ident()
    with changed:
        _closing = True
        wait_until(lambda: all(key == me for key in list(_active)))  # list(): :func:`enter` adds keys unlocked
    if native_plan.hooks is not None:
        native_plan.hooks.close()  # native runs stop at their next node; waits (without the GIL) for them
    from ..kernels.engine import gang  # loaded by prepare_runtime, which registered this handler
    gang.disband(HELPERS_TIMEOUT)  # then the engine's helpers: out of their spin and their kernels
