"""Counters that C reads: the native plans of verified graphs check them before a run.

A native plan (``native_plan.py``) is current while every counter it was
built against still has the value it saw: the storage epoch (a tensor's memory
moved: swap, allocation, memory plan), the generation (a context-wide setting
that changes how graphs must run: performance timing switched), the graph's
own settings counter (a node callback assigned, ``native_allowed``), the write
counters of the scalars its nodes read and of the tensors read as [static]
parameters (weights).  So a scalar written rebinds only the graphs that read
it.  Each is an int64 in NumPy memory, so C reads it without Python.
"""
from __future__ import annotations

import ctypes

import numpy as np

LINE = 64  # bytes: counters that different threads bump never share a cache line


def aligned(n: int) -> np.ndarray:
    """``n`` zeroed int64s starting on a cache line and padded to whole lines (no false sharing with
    another thread's counters)."""
    words = LINE // 8
    padded = -(-n // words) * words
    raw = np.zeros(padded + words, np.int64)
    start = (-raw.__array_interface__["data"][0] % LINE) // 8
    return raw[start:start + n]


GLOBAL = aligned(2)
"""Read by every native run: a line of its own, which nothing else writes."""
EPOCH, GENERATION = 0, 1


def counter() -> np.ndarray:
    """A new zeroed int64 counter C can read and bump (one element, a cache line of its own)."""
    return aligned(1)


def address(cells: np.ndarray, index: int = 0) -> int:
    """The address of ``cells[index]``. Through the buffer protocol where the array is writable and C-contiguous
    (counters, plan words, native blocks): about three times faster than ``__array_interface__``, which builds a
    dict, and binding a graph asks for several addresses a node."""
    try:
        start = ctypes.addressof(ctypes.c_char.from_buffer(cells))
    except (TypeError, ValueError, BufferError):  # read-only, not C-contiguous, or empty
        start = cells.__array_interface__["data"][0]
    return start + index * cells.itemsize


def moved(epoch: int) -> None:
    """Publish the storage epoch ``epoch`` (``Tensor.storage_epoch`` after it moved)."""
    GLOBAL[EPOCH] = epoch


def changed() -> None:
    """A context-wide setting changed how graphs run: every native plan is rebuilt before its next run."""
    GLOBAL[GENERATION] += 1
