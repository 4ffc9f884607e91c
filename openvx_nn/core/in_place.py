"""Graph inputs read in place by a native run: the caller's array stands in for the tensor's storage, for one run.

A front end's model input arrives as the caller's array (NNAPI's ``setInput`` buffer, CoreML's ``predict``
argument) and was copied into the graph's input tensor before each run: 13 us of NNAPI's 0.32 ms float MobileNet
for its 224x224x3 input. A native plan's kernels find the tensor through addresses the bind packed into their
argument blocks (``kernels/support/native.py``), and nowhere else while C runs them; so for one run those words
can point into the caller's array instead, at the same offsets, and point back afterwards.

Only where that provably covers every read of the tensor (:meth:`InPlace.of`):

- every word of every block of the plan (nested entries included) that lies within the tensor's bytes is a
  pointer into it (heap addresses are far above any extent, stride or count a block holds) and is moved; an
  int64 array a block only keeps (a table) must hold none, since it is not moved;
- the caller reads no output from the tensor after the run (a model input that is also an output);
- every node that reads the tensor has such a word in its own entry (a node that packed the tensor at bind, as a
  filter, has none: the tensor must then hold the values) and none writes it;
- the caller's array has the tensor's dtype, shape and C order (the same offsets), and the run is native: where the
  graph would take the Python path (timing on, busy, rebound), :meth:`InPlace.run` says so and changes nothing,
  and the caller copies and runs as before.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..kernels.support.native import Entry
from .enums import Direction
from .native_plan import NOT_NATIVE
from .tensor import Tensor


def _span(array: np.ndarray) -> tuple[int, int]:
    start = array.__array_interface__["data"][0]
    return start, start + array.nbytes


def _address(array: np.ndarray) -> int:
    """Where ``array``'s data starts: through ctypes where it is writable (8 us cold against NumPy's
    ``__array_interface__``'s 18, which builds a dictionary)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only
        return _span(array)[0]


def _blocks(item, blocks: list[np.ndarray], tables: list[np.ndarray]) -> None:
    """The argument blocks of ``item`` (an entry, or what one keeps) and the int64 arrays it keeps besides."""
    if isinstance(item, Entry):
        blocks.append(item.block)
        _blocks(item.keep, blocks, tables)
    elif isinstance(item, (tuple, list)):
        for part in item:
            _blocks(part, blocks, tables)
    elif isinstance(item, np.ndarray) and item.dtype == np.int64:
        tables.append(item)


def _within(words: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.flatnonzero((words >= lo) & (words <= hi))


class _Covered(NamedTuple):
    """One input tensor a plan can read in place, as found at :meth:`InPlace.of` (the plan's storage stays put)."""

    dtype: np.dtype
    shape: tuple[int, ...]  # of an array in the tensor's place (its storage's transpose: C order)
    words: tuple[tuple[np.ndarray, int, int, int], ...]  # (block, word index, its offset into the tensor's bytes,
    # the word as bound, pointing at the tensor), in Python ints: a NumPy index array's assignment costs 15 us cold,
    # an int's 3


class InPlace:
    """The block words of one bound plan that point into each of some input tensors (see the module docstring).
    What a run checks and writes is found once: a run comes after the model's data pushed Python's objects out of
    the caches, where each attribute an array computes costs microseconds (an address alone 18 us; the run-time
    checks and moves had cost 42 us of MobileNet v2's 1.9 ms)."""

    __slots__ = ("_covered",)

    def __init__(self, covered: dict[int, _Covered]):
        self._covered = covered  # id(tensor) -> what a run of it needs

    @classmethod
    def of(cls, graph, tensors: list[Tensor], read_after: list[Tensor] = ()) -> InPlace | None:
        """For ``graph``'s current plan, the tensors of ``tensors`` it can read in place (None: none of them);
        none that shares storage with one of ``read_after`` (the caller reads those after the run: a model
        output that is also an input)."""
        plan = graph.plan
        if plan.native is None:
            return None
        found: dict[int, _Covered] = {}
        kept = {id(t.root) for t in read_after}
        for tensor in tensors:
            if id(tensor.root) in kept:
                continue
            words = cls._pointers(plan.calls, tensor)
            storage = tensor.array.T
            if words and storage.flags.c_contiguous:
                found[id(tensor)] = _Covered(storage.dtype, storage.shape, tuple(
                    (block, int(i), int(offset), int(block[i])) for block, at, offsets in words
                    for i, offset in zip(at, offsets)))
        return cls(found) if found else None

    @staticmethod
    def _pointers(calls, tensor: Tensor) -> list | None:
        storage = tensor.array
        if not (storage.flags.c_contiguous or storage.flags.f_contiguous) or storage.nbytes == 0:
            return None
        lo, hi = _span(storage)
        words = []
        for call in calls:
            reads = writes = False
            for spec, param in zip(call.node.description.params, call.node.params):
                if isinstance(param, Tensor) and param.root is tensor.root:
                    reads |= spec.direction != Direction.VX_OUTPUT
                    writes |= spec.direction != Direction.VX_INPUT
            blocks: list[np.ndarray] = []
            tables: list[np.ndarray] = []
            if call.native is not None:
                _blocks(call.native, blocks, tables)
            if any(_within(table.ravel(), lo, hi).size for table in tables):
                return None  # an address held where no run moves it
            hits = [(block, at, block[at] - lo) for block in blocks if (at := _within(block, lo, hi)).size]
            if writes or (reads and not hits) or (hits and not reads):
                return None
            words += hits
        return words or None

    def covers(self, tensor: Tensor) -> bool:
        return id(tensor) in self._covered

    def fits(self, tensor: Tensor, array: np.ndarray) -> bool:
        """Whether ``array`` can stand in for ``tensor`` in a run: covered, with its dtype, shape and C order."""
        covered = self._covered.get(id(tensor))
        return covered is not None and array.dtype == covered.dtype and array.shape == covered.shape and \
            array.flags.c_contiguous

    def run(self, feeds: list[tuple[Tensor, np.ndarray]], process_native: Callable[[], int]) -> int:
        """``process_native()`` with each tensor of ``feeds`` read from its array; its status, or ``NOT_NATIVE``
        (nothing run) when the graph would not run natively. Every feed must :meth:`fits` (else ValueError)."""
        if not all(self.fits(tensor, array) for tensor, array in feeds):
            raise ValueError("an array read in place must have its tensor's dtype, shape and C order")
        return self._run(feeds, process_native)

    def _run(self, feeds: list[tuple[Tensor, np.ndarray]], process_native: Callable[[], int]) -> int:
        moved = []
        try:
            for tensor, array in feeds:
                start = _address(array)
                for block, at, offset, home in self._covered[id(tensor)].words:
                    block[at] = start + offset
                    moved.append((block, at, home))
            return process_native()
        finally:
            for block, at, home in moved:
                block[at] = home


def process_fed(graph, in_place: InPlace | None, feeds: list[tuple[Tensor, np.ndarray]],
                copy: Callable[[Tensor, np.ndarray], None]) -> int:
    """``graph``'s run on ``feeds`` (input tensor, the caller's array): read in place where ``in_place`` covers every
    one and the run is native, else each copied (``copy(tensor, array)``) and the graph processed as usual."""
    status = NOT_NATIVE
    if in_place is not None and all(in_place.fits(tensor, array) for tensor, array in feeds):
        status = in_place._run(feeds, graph.process_native)
    if status == NOT_NATIVE:  # the Python path reads the tensors: copy
        for tensor, array in feeds:
            copy(tensor, array)
        status = graph.process()
    return status
