"""The integer engine's helper threads: one call's chunks of work shared between the caller and a small pool.

numba's own parallel layer is not used here: its ``workqueue`` layer aborts the process when two
Python threads launch parallel regions at once, and two graphs may run in two threads. These
helpers are plain Python threads calling ``nogil`` numba functions; their number comes from
``OPENVX_NN_THREADS`` (``isa.threads()``), shared by every caller, so nothing oversubscribes.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import threading
from collections.abc import Callable

from . import isa

_pool_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_sharing = threading.Lock()  # held by the one call whose chunks the helpers share
# Set by the object model while more than one graph executes: each then keeps its kernels on its own
# thread (the cores are already taken), instead of waking helpers that would oversubscribe them.
crowded = False


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max(1, isa.threads() - 1),
                                                          thread_name_prefix="openvx-nn-engine")
        return _pool


def run_chunks(task: Callable[[int], object], n_chunks: int, n_threads: int) -> list:
    """``[task(0), ..., task(n_chunks - 1)]`` run by this thread and ``n_threads - 1`` pool threads.

    Chunks are handed out on demand and the call returns once every chunk is done: a helper the OS
    runs late (a busy machine) takes fewer chunks, or none, instead of holding up the call. One call
    at a time shares its chunks; a call made meanwhile from another thread runs them itself.
    """
    if n_threads == 1 or n_chunks == 1 or crowded or not _sharing.acquire(blocking=False):
        # Another call already has the helpers (two graphs on two threads): the cores are taken,
        # so this one runs on its own thread instead of oversubscribing them.
        return [task(i) for i in range(n_chunks)]
    try:
        return _shared(task, n_chunks, n_threads)
    finally:
        _sharing.release()


def _shared(task: Callable[[int], object], n_chunks: int, n_threads: int) -> list:
    results = [None] * n_chunks
    counter = itertools.count()
    finished = [0]
    lock = threading.Lock()
    done = threading.Event()
    errors: list[BaseException] = []

    def worker() -> None:
        while (i := next(counter)) < n_chunks:
            try:
                results[i] = task(i)
            except BaseException as err:  # noqa: BLE001 - re-raised in the caller
                errors.append(err)
            with lock:
                finished[0] += 1
                if finished[0] == n_chunks:
                    done.set()

    for _ in range(min(n_threads, n_chunks) - 1):
        _executor().submit(worker)
    worker()
    done.wait()
    if errors:
        raise errors[0]
    return results
