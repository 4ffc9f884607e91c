"""Neighbouring calls that run at once: two layers that are each a chain of small dependent steps (a recurrent
layer's directions) and do not touch each other's memory run as one call, one on the calling thread and one on a
helper of the gang (``kernels/engine/side_by_side``).

A bidirectional LSTM is two such layers writing the two halves of one output: one after the other they kept one
core busy while the other waited. Which calls qualify is the entries' business (each marked ``BESIDE`` by its
binder); whether they are independent is decided here, by address: neither writes bytes the other reads or
writes (two tensors of the graph may share the arena's bytes, so names and regions would not do). The pair's call
stands where the first was; the second does nothing. The bytes are those of the two run one after the other:
each entry runs whole on one thread.
"""
from __future__ import annotations

import numpy as np

from ..kernels.engine import gang, side_by_side
from ..kernels.support import native
from .enums import Direction
from .tensor import Tensor


def _arrays(node) -> tuple[list, list]:
    """(the arrays ``node`` reads, those it writes) of its tensor parameters."""
    reads, writes = [], []
    for spec, p in zip(node.description.params, node.params):
        if isinstance(p, Tensor):
            (writes if spec.direction == Direction.VX_OUTPUT else reads).append(p.array)
    return reads, writes


def _share(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=100_000))
    except np.exceptions.TooHardError:  # undecided: count it as shared
        return True


def independent(first, second) -> bool:
    """Whether neither node writes memory the other reads or writes."""
    (r1, w1), (r2, w2) = _arrays(first), _arrays(second)
    return not any(_share(w, o) for w in w1 for o in r2 + w2) and not any(_share(w, o) for w in w2 for o in r1)


class _PairRun:
    """The pair's call on the Python path: the helpers summoned first (a native plan's run has its front end or C
    summon them; a run from Python may find none in the gang), then the entry. ``second`` is the node whose work
    the call also does, named when the call fails."""

    def __init__(self, entry: native.Entry, first, second) -> None:
        self.entry, self.first, self.second = entry, first, second

    def __call__(self) -> None:
        gang.summon_spare()
        status = native.run(self.entry)
        if status != 0:
            raise RuntimeError(f"{self.first.describe()} and {self.second.describe()}, run side by side, failed "
                               f"(status {status})")


def partner(call):
    """The node a pair call runs beside its own (None: ``call`` is no pair)."""
    return call.run.second if isinstance(call.run, _PairRun) else None


def pair_calls(calls: list, nothing, no_entry) -> list:
    """``calls`` (``compiled.Call``) with each neighbouring pair of marked, independent calls made one (module
    doc); ``nothing`` and ``no_entry`` are the runner and entry of a call whose work another's does."""
    found = list(calls)
    k = 0
    while k + 1 < len(found):
        first, second = found[k], found[k + 1]
        if (side_by_side.beside(first.native) and side_by_side.beside(second.native)
                and independent(first.node, second.node)):
            entry = side_by_side.pair(first.native, second.native)
            found[k] = first._replace(run=_PairRun(entry, first.node, second.node), writes=tuple(dict.fromkeys(first.writes + second.writes)),
                                      native=entry)
            found[k + 1] = second._replace(run=nothing, writes=(), native=no_entry)
            k += 1
        k += 1
    return found
