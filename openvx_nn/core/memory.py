"""The memory plan of a verified graph: virtual tensors share one arena by lifetime.

A virtual tensor lives from the first node (in execution order) that touches
it to the last; two tensors whose lifetimes meet never share bytes, so a value
is never clobbered before its last reader (a tensor freed at step ``s`` is
reused only by tensors first written after ``s``).  Offsets come from a linear
scan over the steps with a best-fit free list (interval colouring), so a
chain's intermediates take two buffers, not one per node.

Planned: virtual root tensors written only whole (never through a view, so a
kernel's full write defines every byte) and never bidirectional.  Kept in
their own storage: views (they slice their root), graph parameters,
non-virtual tensors (the application may map or swap them), and virtual
tensors written through views (a partial write must keep the zeros between).
The plan assumes what every kernel's description promises: an output is
written whole on every run.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from .datatypes import TENSOR_TYPES, dtype_of
from .enums import Type
from .regions import region
from .reshape_views import NONE as NO_VIEWS
from .reshape_views import Views
from .reshape_views import place as place_views
from .tensor import storage_moved

ALIGNMENT = 64  # bytes: a cache line, and the widest vector load
_ITEM_SIZES = {t: dtype_of(t).itemsize for t in TENSOR_TYPES}
_TENSOR = Type.VX_TYPE_TENSOR


class Lifetime(NamedTuple):
    """A planned tensor: the steps of its first and last use and its size in bytes."""

    tensor: object  # a tensor.Tensor (virtual root)
    first: int
    last: int
    nbytes: int


@dataclass(frozen=True, eq=False)
class MemoryPlan:
    """Where each planned tensor lives in the arena, and what the plan saves."""

    arena: np.ndarray | None
    offsets: dict[int, int]  # id(tensor) -> byte offset
    lifetimes: tuple[Lifetime, ...]
    arena_bytes: int
    virtual_bytes: int  # the planned tensors' sizes added up (what they took before the plan)

    def layout(self) -> tuple:
        return tuple((id(life.tensor), life.tensor.dims, life.tensor.data_type, self.offsets[id(life.tensor)])
                     for life in self.lifetimes)


EMPTY = MemoryPlan(None, {}, (), 0, 0)


def _aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGNMENT) * ALIGNMENT


def assign_offsets(lifetimes: Sequence[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Byte offsets for (first, last, nbytes) intervals so that overlapping intervals never share
    bytes; returns the offsets and the arena size.  Every offset is a multiple of ALIGNMENT.

    Step by step, the tensors first used at a step are placed (best fit in the free
    blocks, else at the top) before those last used there are freed: walking the
    intervals by first use, each frees every interval that ended before it starts.
    """
    count = len(lifetimes)
    firsts = [first for first, _, _ in lifetimes]
    lasts = [last for _, last, _ in lifetimes]
    by_last = sorted(range(count), key=lasts.__getitem__)  # stable: ties keep their order
    sizes = [-(-nbytes // ALIGNMENT) * ALIGNMENT for _, _, nbytes in lifetimes]
    offsets = [0] * count
    free: list[list[int]] = []  # [offset, size] blocks below ``top``, sorted by offset, never adjacent
    top = peak = ended = 0
    for k in sorted(range(count), key=firsts.__getitem__):
        first = firsts[k]
        while ended < count and lasts[by_last[ended]] < first:
            done = by_last[ended]
            top = _give(free, offsets[done], sizes[done], top)
            ended += 1
        need = sizes[k]
        best = None
        for block in free:  # the smallest block that fits; the lowest of equal ones
            if block[1] >= need and (best is None or block[1] < best[1]):
                best = block
        if best is None:
            offsets[k], top = top, top + need
            peak = max(peak, top)
            continue
        offsets[k] = best[0]
        best[0] += need
        best[1] -= need
        if not best[1]:
            free.remove(best)
    return offsets, peak


def _give(free: list[list[int]], offset: int, size: int, top: int) -> int:
    """Return a block to the free list, merged with its neighbours; returns the new top."""
    at = bisect.bisect_left(free, [offset, 0])
    if at and free[at - 1][0] + free[at - 1][1] == offset:  # merge with the block before
        at -= 1
        free[at][1] += size
    else:
        free.insert(at, [offset, size])
    block = free[at]
    if at + 1 < len(free) and block[0] + block[1] == free[at + 1][0]:  # and with the one after
        block[1] += free.pop(at + 1)[1]
    if block[0] + block[1] == top:  # the top block shrinks the arena back
        free.pop(at)
        top = block[0]
    return top


def _span(accesses: Sequence[object], steps: Sequence[int], first: int, last: int) -> tuple[int, int]:
    """(first, last) widened by the steps of ``accesses``."""
    for a in accesses:
        step = steps[a.position]
        if step < first:
            first = step
        elif step > last:
            last = step
    return first, last


def lifetimes(uses: Iterable[object], steps: Sequence[int], excluded: set[int], enabled: bool = True,
              views: Views = NO_VIEWS) -> tuple[list[Lifetime], list[object]]:
    """The tensors the arena may hold among ``uses`` (``plan.Uses``) with their lifetimes, and the
    other virtual root tensors with known dims (they keep storage of their own).

    ``steps[p]`` is the execution step of the node at position ``p``;
    ``excluded`` holds ids of roots that keep their own storage (graph parameters); ``views`` the reshape
    outputs that view another root's bytes (``reshape_views``): they take none, and that root lives until
    their last reader.
    """
    found, own = [], []
    new = tuple.__new__  # a Lifetime without the named tuple's Python-level constructor
    for u in uses:
        root = u.root
        if (not root.virtual or root.vx_type != _TENSOR or root.parent is not None
                or id(root) in views.outputs):
            continue
        writes, dims = u.writes, root.dims
        if (enabled and writes and not u.others and not root.pins and id(root) not in excluded
                and 0 not in dims and writes[0].box is None
                and (len(writes) == 1 or all(a.box is None for a in writes))):
            first = last = steps[writes[0].position]
            if len(writes) > 1:
                first, last = _span(writes, steps, first, last)
            first, last = _span(u.reads, steps, first, last)
            if id(root) in views.reads:
                first, last = _span(views.reads[id(root)], steps, first, last)
            found.append(new(Lifetime, (root, first, last, math.prod(dims) * _ITEM_SIZES[root.data_type])))
        elif all(dims):
            own.append(root)
    return found, own


def plan(found: list[Lifetime]) -> MemoryPlan:
    """Offsets for the tensors ``found`` (the arena is made when they are placed)."""
    if not found:
        return EMPTY
    offsets, size = assign_offsets([(life.first, life.last, life.nbytes) for life in found])
    return MemoryPlan(None, {id(life.tensor): off for life, off in zip(found, offsets)}, tuple(found), size,
                      sum(life.nbytes for life in found))


def place(memory: MemoryPlan, previous: MemoryPlan) -> MemoryPlan:
    """Make the arena and give each planned tensor its slice; keeps ``previous`` when the layout is
    the same and its tensors still hold their slices (a re-verified graph does not move its data)."""
    if not memory.lifetimes:
        return EMPTY
    if previous.arena is not None and previous.layout() == memory.layout() and all(
            life.tensor.placed for life in previous.lifetimes):
        return previous
    raw = np.zeros(memory.arena_bytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    memory = replace(memory, arena=raw[start:start + memory.arena_bytes])
    arena, offsets = memory.arena, memory.offsets
    for life in memory.lifetimes:
        tensor = life.tensor
        tensor.place(np.ndarray(tensor.dims, dtype_of(tensor.data_type), arena, offsets[id(tensor)], order="F"),
                     announce=False)
    storage_moved()
    return memory


def plan_graph(order: Sequence[object], nodes: Sequence[object], uses: Iterable[object],
               parameters: Iterable[tuple[object, int]], previous: MemoryPlan, enabled: bool = True,
               views: Views = NO_VIEWS) -> MemoryPlan:
    """The memory plan of a verified graph, with its tensors placed.

    ``order`` is the execution order of ``nodes``; ``uses`` the verifier's
    accesses by root (``plan.Uses``, positions in ``nodes``); ``parameters``
    the graph parameters as (node, index).  Virtual tensors left out of the
    plan (or all of them, when not ``enabled``) get their own storage back.
    """
    step = {id(node): s for s, node in enumerate(order)}
    steps = [step[id(node)] for node in nodes]
    excluded = {id(region(node.params[i])[0]) for node, i in parameters if node.params[i] is not None}
    found, own = lifetimes(uses, steps, excluded, enabled, views)
    for root in own:  # the other virtual tensors get (or keep) storage of their own
        root.place(None)
    memory = place(plan(found), previous)
    place_views(views)  # the reshape outputs see the bytes just placed
    return memory
