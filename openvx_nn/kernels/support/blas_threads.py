"""OpenBLAS's thread count around a float32 GEMM of ours.

numpy's OpenBLAS starts as many threads as there are cores and splits even a small product
between them. On a busy machine (more runnable threads than cores) its threads wait for a core
at each hand-over: measured on the shared 2-core machine (load 7-17), a 10-MMAC product took
20-30 ms with two threads against 0.4 ms with one, and a 116-MMAC one (a ResNet-18 3x3 layer)
46-99 ms wall and 20-23 ms CPU against 4-20 ms wall and 4-5 ms CPU. Our GEMMs therefore run
single-threaded (the kernels' own parallelism goes through ``jit.thread_pool``, the one thread
budget of the process). The count is set for the call and restored after it, so the rest of the
process keeps numpy's setting. Where the library's controls cannot be found (another BLAS),
nothing changes.
"""
from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_NAMES = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
          ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
          ("openblas_get_num_threads", "openblas_set_num_threads"))


def _controls():
    """(get, set) of the OpenBLAS numpy loaded, or None."""
    import numpy  # noqa: F401  (loads its BLAS)
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _NAMES:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


_CONTROLS = _controls()
_lock = threading.Lock()
_users = 0  # callers inside ``single`` (the count is restored when the last one leaves)
_saved = 0


@contextmanager
def single(wanted: bool = True) -> Iterator[None]:
    """OpenBLAS single-threaded inside the block when ``wanted`` (else unchanged)."""
    global _users, _saved
    if not wanted or _CONTROLS is None:
        yield
        return
    get, put = _CONTROLS
    with _lock:
        if _users == 0:
            _saved = get()
            if _saved != 1:
                put(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved != 1:
                put(_saved)
