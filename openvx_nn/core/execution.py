"""Graph executions in flight, and the order in which the process stops them at exit.

Every execution (a ``vxProcessGraph`` call, or the worker of a
``vxScheduleGraph``) registers here while it runs.  At process exit
:func:`shutdown` runs once, in this order: refuse new executions, let running
graphs stop at their next node boundary (they end ``VX_ERROR_GRAPH_ABANDONED``),
and wait until no kernel is running any more.  Only then may the C runtime
destroy what the kernels use (LLVM, the thread pools).  The embedded
interpreter's C exit handler (``csrc/runtime.c``) calls it and then keeps the
GIL, so no Python code runs again while the process is torn down; in a Python
host, an ``atexit`` handler calls it.
"""
from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..kernels import jit
from . import reference
from .enums import Status
from .errors import VXError

changed = threading.Condition(reference.lock)
"""Signalled whenever an execution starts or ends (the model lock underneath)."""

_active: dict[object, int] = {}  # thread ident (process) or run record (schedule) -> count
_closing = False
_ready = False
_sleepers = 0

exit_guard: Callable[[], None] | None = None
"""Set by the C layer: (re-)registers the C exit handler of the embedded interpreter."""


def closing() -> bool:
    """True once the process has started to exit: running graphs stop at the next node."""
    return _closing


def prepare_runtime() -> None:
    """Load what kernels run on (numba, LLVM, its thread pool) before the first execution.

    Exit handlers run in the reverse order of registration, and libraries
    register their destructors when they load or first build their state
    (LLVM, during its first compilation).  Loading them and building that
    state first, and registering our handlers after, puts our wait before
    their teardown.  The C layer calls this during the library's start-up.
    """
    global _ready
    if _ready:
        return
    import numba

    from ..kernels import jit  # imports numba and loads LLVM
    numba.get_num_threads()  # starts numba's threading layer (loads its library)
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


def wait() -> None:
    """``changed.wait()`` (caller holds ``changed``), counted so that :func:`wake` can skip idle notifies."""
    global _sleepers
    _sleepers += 1
    try:
        changed.wait()
    finally:
        _sleepers -= 1


def wake() -> None:
    """Wake the threads in :func:`wait` (caller holds ``changed``)."""
    if _sleepers:
        changed.notify_all()


def count_in(key: object, check: bool = True) -> None:
    """Count an execution (a thread ident, or a scheduled run's record) as in flight."""
    with changed:
        if check and _closing:
            raise VXError(Status.VX_FAILURE, "the process is exiting: no new graph executions are accepted")
        _active[key] = _active.get(key, 0) + 1
        jit.crowded = len(_active) > 1


def count_out(key: object) -> None:
    with changed:
        count = _active[key] - 1
        if count:
            _active[key] = count
        else:
            del _active[key]
        jit.crowded = len(_active) > 1
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
        while any(key != me for key in _active):
            wait()
