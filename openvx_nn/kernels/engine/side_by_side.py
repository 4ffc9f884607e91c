"""Two native entries run side by side: the calling thread runs one while a helper of the gang runs the other.

A layer whose work is a chain of small dependent steps (a recurrent layer: one time step after another, each a
product of a few microseconds) cannot share its steps between threads without a barrier per step, which costs
about what a step does. Two such layers that do not depend on each other (the directions of a bidirectional
LSTM) can run at once instead, each on one core, and meet only at the end.

An entry that may run so is marked :data:`BESIDE` in its ``keep``: it lends no chunks to the gang itself (a
helper running it must not post a task of its own) and touches no memory but its block's. :func:`pair` makes
one entry of two marked ones, shared as two chunks through ``gang.shared_entry``: the caller claims the first,
a helper spinning in the gang the second; with no helper (one thread, or none in the gang) the caller runs
both, in order. Either way each entry runs once, whole, on one thread, so the bytes are those of the two run
one after the other, provided the caller checked that neither writes what the other reads or writes.
"""
from __future__ import annotations

import numpy as np

from ..support import jit, native
from . import gang
from .chunk_loop import chunk_driver


class _Beside:
    """The mark of an entry :func:`pair` may run on a helper (module doc)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "BESIDE"


BESIDE = _Beside()

_COUNTERS = 0
_ENTRIES = native.ARRAY_WORDS  # [address, block] of the first entry, then of the second
_MAILBOX, _TASK, _CHUNKS = _ENTRIES + 4, _ENTRIES + 5, _ENTRIES + 6


@jit.jitable
def _run_one(block, i):
    if native.call(block[_ENTRIES + 2 * i], block[_ENTRIES + 2 * i + 1]) != 0:
        raise RuntimeError("an entry run side by side failed")


@jit.jitable
def _run_entries(block, i0, i1):
    for i in range(i0, i1):
        _run_one(block, i)


_RUN_CHUNKS = chunk_driver(_run_entries)


def _lines(code, block, chunks, wait):
    if chunks == 0:
        _run_one(block, 0)
        _run_one(block, 1)
        return
    _RUN_CHUNKS((block,), 2, chunks, native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


_BODIES = gang.shared_entry(jit.jitable(_lines), gang.nothing_first, (_MAILBOX, _TASK, _CHUNKS, _COUNTERS))


@native.factory
def _entry(helper: bool) -> int:
    return jit.native(_BODIES[int(helper)])


def beside(entry: native.Entry | None) -> bool:
    """Whether ``entry`` is marked to run on a helper beside another (:data:`BESIDE`)."""
    return entry is not None and any(k is BESIDE for k in entry.keep)


def pair(first: native.Entry, second: native.Entry) -> native.Entry:
    """One entry running ``first`` and ``second`` (both :func:`beside`) at once where a helper is in the gang,
    else one after the other; its status is a failure when either's is."""
    if not (beside(first) and beside(second)):
        raise ValueError("only entries marked BESIDE run side by side")
    task = gang.NativeTask(2, True)  # one chunk an entry, or none (one thread): the caller runs both
    words, keep = native.pack(task.counters.reshape((1,) * (native.RANK - 1) + (2,)),
                              first.address, first.block.ctypes.data, second.address, second.block.ctypes.data,
                              *task.words())
    return native.Entry(_entry(False), words, keep + task.finish(_entry(True), words) + (first, second))
