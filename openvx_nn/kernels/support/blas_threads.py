"""OpenBLAS's thread count around a float32 GEMM of ours, and its sgemm for numba kernels.

numpy's OpenBLAS starts as many threads as there are cores and splits even a small product
between them. On a busy machine (more runnable threads than cores) its threads wait for a core
at each hand-over: measured on the shared 2-core machine (load 7-17), a 10-MMAC product took
20-30 ms with two threads against 0.4 ms with one, and a 116-MMAC one (a ResNet-18 3x3 layer)
46-99 ms wall and 20-23 ms CPU against 4-20 ms wall and 4-5 ms CPU. Our GEMMs therefore run
single-threaded (the kernels' own parallelism goes through ``jit.thread_pool``, the one thread
budget of the process). The count is set for the call and restored after it, so the rest of the
process keeps numpy's setting. Where the library's controls cannot be found (another BLAS),
nothing changes.

``sgemm()`` gives the address of the same library's ``cblas_sgemm`` (and whether its integers are 64-bit) so
a numba kernel can call it on slices of a layer from both cores (``chw_gemm``): where it cannot be found, the
callers keep NumPy's ``matmul``.
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


_SGEMM = (("scipy_cblas_sgemm64_", True), ("scipy_cblas_sgemm", False), ("cblas_sgemm64_", True))
"""cblas_sgemm's names in the OpenBLAS builds NumPy ships, and whether their integers (blasint) are 64-bit.
A plain ``cblas_sgemm`` is left out: its integer width cannot be told from its name."""


def _libraries() -> list[ctypes.CDLL]:
    """The OpenBLAS libraries numpy loaded."""
    import numpy  # noqa: F401  (loads its BLAS)
    try:
        with open("/proc/self/maps") as maps:
            paths = sorted({line.split()[-1] for line in maps if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            found.append(ctypes.CDLL(path))
        except OSError:
            continue
    return found


def _controls(libraries: list[ctypes.CDLL]):
    """(get, set) of the OpenBLAS numpy loaded, or None."""
    for lib in libraries:
        for get_name, set_name in _NAMES:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


def _sgemm(libraries: list[ctypes.CDLL]) -> tuple[int, bool] | None:
    for lib in libraries:
        for name, wide in _SGEMM:
            function = getattr(lib, name, None)
            if function is not None:
                return ctypes.cast(function, ctypes.c_void_p).value, wide
    return None


_LIBRARIES = _libraries()
_CONTROLS = _controls(_LIBRARIES)
_SGEMM_ENTRY = _sgemm(_LIBRARIES) if _CONTROLS is not None else None


def sgemm() -> tuple[int, bool] | None:
    """(address of ``cblas_sgemm``, whether its integers are 64-bit) of numpy's OpenBLAS, or None (another BLAS,
    or one whose thread count cannot be set: calls from numba must run inside :func:`single`)."""
    return _SGEMM_ENTRY
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
