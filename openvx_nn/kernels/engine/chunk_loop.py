"""The chunk-claiming loop of the CHW kernels' shared calls (``float_sharing.Rows``), written once.

Every thread of a shared call runs the loop :func:`chunk_driver` makes for a kernel's units function: it
claims chunks of the call's units from ``counters[0]`` (the caller from the front, helpers from the back:
``atomics.take_chunk``), runs them, counts each finished one in ``counters[1]`` and, on the calling thread
(``wait``), returns only once every chunk a helper claimed is finished. The units function is bound by
closure, not passed as an argument: numba then calls it directly (a dispatcher passed as a value is a dynamic
global, and a function holding one is never cached), and the loop is inlined into the kernel's ``shared``
entry (``jit.jitable``), which caches as before.
"""
from __future__ import annotations

import numpy as np

from ..support import jit
from .atomics import fetch_add, take_chunk, wait_for_chunks


def chunk_driver(units):
    """A jit-callable ``run(args, n_units, n_chunks, counters, wait)``: ``units(*args, u0, u1)`` over chunk
    after chunk of ``[0, n_units)`` cut in ``n_chunks``, claimed from the counters (``int64[2]``) the call
    shares with the other threads; ``wait``: return once all are done."""

    @jit.jitable
    def run(args, n_units, n_chunks, counters, wait):
        claim = np.int64(counters.ctypes.data)
        i = take_chunk(claim, n_chunks, not wait)
        while i >= 0:
            units(*args, n_units * i // n_chunks, n_units * (i + 1) // n_chunks)
            fetch_add(claim + 8, 1)
            i = take_chunk(claim, n_chunks, not wait)
        if wait:
            wait_for_chunks(claim, n_chunks)
    return run
