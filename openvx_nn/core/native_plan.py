"""The native plan of a verified graph: its calls' C entry points in one int64 array that C walks without the GIL.

Built from the compiled plan (``compiled.py``) when every call has a native
entry and nothing needs Python (no node callback, performance timing off),
and published to C under the graph's handle (``csrc/plan.c``, whose header
``plan.h`` gives the array's layout).  The plan is current while the counters
it was built against (``cells.py``: storage epoch, generation, the write
counters of [static] tensors) keep their values; C checks them before each
run and otherwise takes the Python path, which rebinds and publishes afresh.

Lifetime: C counts the runs holding a plan in its first word.  A retired plan
(the graph changed, was released, or its storage moved) waits here until that
count is back to 0, so the arrays a run in flight reads outlive it.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..kernels.engine import gang, isa
from ..kernels.openvx.activation import HOLD_GIL_BELOW
from . import cells, rewrites
from .enums import GraphState, Type
from .signature import ParamSpec
from .tensor import Tensor

NOT_NATIVE = 1
"""``VXNN_NOT_NATIVE`` of plan.h: no current native plan or the graph is busy; the Python path runs it."""

HEADER, STEP_WORDS = 8, 5
BUSY, STATE, SCHEDULED, RUNS, SETTINGS = 0, 1, 2, 5, 6  # the graph's cells (plan.h)


class Hooks(NamedTuple):
    """The C functions of ``plan.h``, set by the C layer (no native plans without it)."""

    publish: Callable[[int, int], None]          # (graph handle, plan address or 0)
    run: Callable[[int], int]                    # (graph handle) -> vx_status or NOT_NATIVE
    execute: Callable[[int], tuple[int, int]]    # (plan address) -> (status, failing step), graph claimed
    claim: Callable[[int], None]                 # (cells address): wait for, and take, the busy cell
    unclaim: Callable[[int], None]
    close: Callable[[], None]                    # process exit: refuse and wait for native runs
    schedule: Callable[[int], int]               # (graph handle) -> VX_SUCCESS or NOT_NATIVE
    wait: Callable[[int], int]                   # (cells address) -> the scheduled run's status or NOT_NATIVE
    run_holding_gil: Callable[[int], int]        # ``run`` called from Python without letting go of the GIL


hooks: Hooks | None = None
SMALL_WORK = HOLD_GIL_BELOW
"""A plan whose tensors hold fewer elements than this runs from Python without letting go of the GIL.

Its kernels take a few microseconds; handing the GIL over costs about as much again and, with
other Python threads waiting for it, wakes one of them on every call (two Python threads
processing small graphs ran at 0.58x the rate of one when each call let go).  It is the bound
below which the activation kernel keeps the GIL on the Python path.  A C caller holds no GIL:
its runs never take it."""
ENABLED = os.environ.get("OPENVX_NN_NATIVE", "").strip() != "0"
"""``OPENVX_NN_NATIVE=0``: no native plans; every graph runs on the Python path (for comparison)."""


def graph_cells() -> np.ndarray:
    """A graph's C-visible cells: busy flag, state, a native scheduled run's flags and status, and its
    settings counter (a node callback assigned, ``native_allowed``: its native plan is rebuilt)."""
    found = cells.aligned(7)
    found[STATE] = GraphState.VX_GRAPH_STATE_UNVERIFIED
    return found


class NativePlan:
    """One published array, what it points into, and the counter values it was built against."""

    __slots__ = ("address", "guards", "keep", "n_calls", "small", "steps", "words")

    def __init__(self, words: np.ndarray, keep: tuple, guards: list,
                 small: bool = False, steps: tuple[int, ...] = (), n_calls: int = 0):
        self.words, self.keep, self.guards = words, keep, guards
        self.address = cells.address(words)
        self.small = small
        """Whether Python runs it holding the GIL (:data:`SMALL_WORK`)."""
        self.steps, self.n_calls = steps, n_calls
        """The index among the plan's ``n_calls`` calls of each step C runs (calls that do nothing are left
        out)."""

    def call_at(self, step: int) -> int:
        """The index of the call C's ``step`` runs (the number of calls when ``step`` is past the last)."""
        return self.steps[step] if step < len(self.steps) else self.n_calls

    def current(self) -> bool:
        """The check C makes before a run: every guarded counter still has its value."""
        return all(int(array[index]) == value for array, index, value in self.guards)

    @property
    def in_use(self) -> bool:
        return bool(self.words[0])


_SCALAR = int(Type.VX_TYPE_SCALAR)


def _watched(order) -> tuple[dict, dict]:
    """By id, in order of first use: the root tensors the nodes read as [static] parameters (weights), or that
    a validator lists as packed at bind (``state["packed"]``: an NNAPI filter), which written change a binding;
    and the scalars they read, whose values an entry may pack. One pass over the parameters (binding a long
    graph asks this of every node)."""
    tensors: dict = {}
    scalars: dict = {}
    for node in order:
        packed = node.state.get("packed", ())
        specs: tuple[ParamSpec, ...] = node.description.params
        for i, (spec, p) in enumerate(zip(specs, node.params)):
            if p is None:
                continue
            if getattr(p, "vx_type", None) == _SCALAR:
                scalars[id(p)] = p
            elif (spec.static or i in packed) and isinstance(p, Tensor):
                root = p.root
                tensors[id(root)] = root
    return tensors, scalars


def _tensor_elements(calls: tuple) -> int:
    """How many tensor elements the calls touch, inputs and weights included: the measure of a plan's
    work :data:`SMALL_WORK` bounds (a layer with a small output may read large weights)."""
    return sum(math.prod(p.dims) for call in calls for p in call.node.params if isinstance(p, Tensor))


def _possible(calls: tuple) -> bool:
    return hooks is not None and ENABLED and bool(calls) and all(call.native is not None for call in calls)


def _settings_forbid(calls: tuple, graph) -> bool:
    return (graph.context.performance_enabled or not graph.native_allowed
            or any(call.node.callback for call in calls))


def held_back(calls: tuple, graph) -> bool:
    """Whether only settings keep these calls from a native plan (performance timing, a node callback,
    ``native_allowed``): a new generation may then give them one."""
    return _possible(calls) and _settings_forbid(calls, graph)


Guard = tuple[np.ndarray, int, int]


def watch(order, epoch: int, generation: int, cells_array: np.ndarray) -> list[Guard]:
    """The counters a plan of the nodes ``order`` depends on, with their values now: taken before the
    nodes are bound, so a write racing the binding leaves the plan stale rather than wrong."""
    guards: list[Guard] = [(cells.GLOBAL, cells.EPOCH, epoch), (cells.GLOBAL, cells.GENERATION, generation),
                           (cells_array, SETTINGS, int(cells_array[SETTINGS]))]
    tensors, scalars = _watched(order)
    return guards + [(t.write_counter, 0, t.writes) for t in tensors.values()] + [
        (s.write_counter, 0, int(s.write_counter[0])) for s in scalars.values()]


def build(calls: tuple, guards: list[Guard], graph, cells_array: np.ndarray) -> NativePlan | None:
    """The native plan of ``calls`` (bound while the counters of :func:`watch`'s ``guards`` had their
    values), or None when a call needs Python.

    The helpers its runs want from C (``plan.h`` word 7) are the engine's threads but the caller's, not the
    budget's spare threads at build time: those are taken while a helper still spins from an earlier run (or
    numba's pool runs), and a plan built then kept asking for none, so C's helpers never joined its layers for
    as long as it lived. C leaves its helpers asleep while more than one native run is in flight."""
    if not _possible(calls) or _settings_forbid(calls, graph):
        return None
    steps, n_calls = tuple(k for k, call in enumerate(calls) if not _idle(call)), len(calls)
    small = _tensor_elements(calls) < SMALL_WORK
    calls = tuple(calls[k] for k in steps)
    first = HEADER + 2 * len(guards)
    writes_at = first + STEP_WORDS * len(calls)
    words = cells.aligned(writes_at + sum(len(call.writes) for call in calls))  # word 0: C's run count
    words[1:6] = len(calls), cells.address(cells_array), graph.handle, len(guards), first
    if not graph.python_helpers and any(gang.lends(call.native) for call in calls):  # C's helpers join its layers
        words[6:8] = gang.mailbox_address(), isa.threads() - 1  # not the budget's spare threads now (:func:`build`)
    guard_words = []  # two per guard (a node's scalars each have one): one slice assignment
    for array, index, value in guards:
        guard_words += (cells.address(array, index), value)
    words[HEADER:first] = guard_words
    keep: list = [cells_array, [g[0] for g in guards]]
    step_words, write_words = [], []  # filled in two slice assignments: one per step cost microseconds a node
    writes_start = writes_at
    for call in calls:
        entry, writes = call.native, call.writes
        step_words += (entry.address, cells.address(entry.block), call.node.handle, writes_at, len(writes))
        for tensor in writes:
            write_words.append(cells.address(tensor.write_counter))
            keep.append(tensor.write_counter)
        writes_at += len(writes)
        keep.append(entry)
    words[first:writes_start] = step_words  # STEP_WORDS per step
    words[writes_start:writes_at] = write_words
    return NativePlan(words, tuple(keep), guards, small=small, steps=steps,
                      n_calls=n_calls)


def _idle(call) -> bool:
    """Whether a call does nothing a native run must see: its work is another call's (fused, merged into a
    group) and it writes no tensor an application can see (whose write counter C would count)."""
    return call.native is rewrites.no_entry() and not call.writes


_retired: list[NativePlan] = []


def publish(handle: int, plan: NativePlan | None) -> None:
    """Make ``plan`` the one C runs for graph ``handle`` (None: none); frees retired plans no run holds."""
    hooks.publish(handle, 0 if plan is None else plan.address)
    _retired[:] = [p for p in _retired if p.in_use]


def keep_while_used(block) -> None:
    """Keep ``block`` (anything with ``in_use``: a plan, a tensor layout) until no C run or copy holds it."""
    _retired.append(block)


def retire(handle: int, plan: NativePlan) -> None:
    """Withdraw ``plan`` from C; it is kept until no run holds it."""
    keep_while_used(plan)
    publish(handle, None)
