"""One float32 call's rows shared between the calling thread and the engine's helpers.

A layer's output rows are cut into chunks behind a shared counter (``atomics.fetch_add``); the caller
lends the same task to the helpers (``engine.workers``) and claims chunks itself, then waits only for
chunks a helper has claimed and not finished. A helper the OS runs late takes fewer chunks or none and
never holds the call up (no barrier), and each call has its own counters, so a kernel called from several
graphs at once stays safe. Small layers run on the calling thread alone: waking a helper costs more.

A helper that finished a task stays a short while (``SPIN_CYCLES``) in the *gang*: it spins, without the
GIL, on a generation counter, and takes the next posted task at once instead of sleeping on the workers'
queue (a wake-up costs tens of microseconds, the order of a MobileNet layer). A layer posts its task for
the gang and queues one only when no helper is in it. A task taken late, or twice, claims nothing: its
chunks are gone, so a lost or stale post costs only the help.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..engine import workers
from ..engine.atomics import fetch_add, pause
from ..support import jit

PARALLEL_WORK = 1_000_000
"""Multiply-adds below which a call stays on the calling thread (about 25 us of work): with a helper in the
gang a layer's hand-over costs a few microseconds (the helper takes the GIL to start the task), so
MobileNet v1 0.25's layers (1-3 million multiply-adds) are shared; smaller ones are not worth it."""
SPIN_CYCLES = 400_000
"""How long a helper stays in the gang after a task, in time-stamp counter cycles (about 0.15 ms): longer
than the gaps between a graph's shared layers, short enough to leave the core soon after a run."""
SPIN_LIMIT = 100_000
"""Spin-wait rounds at most (a bound if the cycle counter does not advance)."""
CHUNKS_PER_THREAD = 4


F32 = {(ndim, writable): types.Array(types.float32, ndim, "C", readonly=not writable)
       for ndim in (1, 3, 4) for writable in (False, True)}
"""numba types of C-contiguous float32 arrays by (rank, written): the kernels' signatures."""
_COUNTERS = types.Array(types.int64, 1, "C")


_compiled: dict[tuple[int, int], Callable] = {}


def compiled(dispatcher, arg_types: tuple, tail: tuple = ()) -> Callable:
    """``jit.entry(dispatcher, *arg_types, *tail)``, found by identity: a kernel's ``arg_types`` is one constant
    tuple, and hashing numba types costs microseconds per call."""
    key = (id(dispatcher), id(arg_types))
    found = _compiled.get(key)
    if found is None:
        found = _compiled[key] = jit.entry(dispatcher, *arg_types, *tail)
    return found


_mailbox = np.zeros(2, np.int64)  # [generation of the posted task, helpers in the gang or queued for it]
_posted: list = [None]  # the task of the current generation


def _after_fork_in_child() -> None:
    _mailbox[1] = 0  # a forked child has none of its parent's threads


os.register_at_fork(after_in_child=_after_fork_in_child)


@intrinsic
def _cycles(typingctx):
    """The time-stamp counter (``llvm.readcyclecounter``)."""
    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.readcyclecounter", fnty=ir.FunctionType(ir.IntType(64), []))
        return builder.call(fn, [])
    return types.int64(), codegen


@jit.kernel
def _park(mailbox, seen, cycles):
    """Spin until the posted generation moves past ``seen`` (True) or ``cycles`` pass (False)."""
    at = mailbox.ctypes.data
    deadline = _cycles() + cycles
    for _ in range(SPIN_LIMIT):
        if fetch_add(at, 0) != seen:
            return True
        if _cycles() > deadline:
            return False
        pause()
    return False


@jit.kernel
def _count(mailbox, delta):
    fetch_add(mailbox.ctypes.data + 8, delta)


def _gang(task: Callable[[], object], generation: int) -> None:
    """A helper's turn in the gang (counted in by ``_post``): ``task``, then every task posted while it
    spins, until none comes."""
    try:
        while True:
            task()
            if not _park(_mailbox, generation, SPIN_CYCLES):
                return
            generation = int(_mailbox[0])  # read before the task: the task is at least this new
            task = _posted[0]
    finally:
        _count(_mailbox, -1)


def _post(task: Callable[[], object], helpers: int) -> None:
    """``task`` for the helpers: taken at once by those in the gang; queued (``workers.lend``) for as many as
    are missing from it, who count in now (a helper the OS runs late is not queued for again)."""
    _posted[0] = task
    generation = int(_mailbox[0]) + 1
    _mailbox[0] = generation  # an aligned 8-byte store: the spinning helpers read it atomically
    missing = helpers - int(_mailbox[1])
    if missing > 0:
        _count(_mailbox, missing)
        workers.lend(lambda: _gang(task, generation), missing)


class Rows:
    """A kernel's rows ``[0, n_rows)`` bound to their arguments once; each call runs them, on this thread
    alone (``serial(*args, r0, r1)``) or shared with the helpers (``shared(*args, n_rows, n_chunks,
    counters, wait)``) when ``work`` is large enough to pay for them. Both are compiled once for
    ``arg_types`` (``jit.entry``: no per-call type dispatch, and ``openvx-nn warm`` can compile them)."""

    __slots__ = ("arg_types", "args", "lend", "n_rows", "serial", "shared")

    def __init__(self, serial, shared, args: tuple, arg_types: tuple, n_rows: int, work: int):
        self.serial = compiled(serial, arg_types, (jit.INT, jit.INT))
        self.shared, self.args, self.arg_types, self.n_rows = shared, args, arg_types, n_rows
        self.lend = work >= PARALLEL_WORK and n_rows > 1

    def __call__(self) -> None:
        helpers = workers.helpers() if self.lend else 0
        if helpers <= 0:
            self.serial(*self.args, 0, self.n_rows)
            return
        run = compiled(self.shared, self.arg_types, (jit.INT, jit.INT, _COUNTERS, jit.BOOL))
        args, n_rows = self.args, self.n_rows
        n_chunks = min(n_rows, CHUNKS_PER_THREAD * (helpers + 1))
        counters = np.zeros(2, np.int64)  # [next chunk to claim, chunks finished]
        _post(lambda: run(*args, n_rows, n_chunks, counters, False), helpers)
        run(*args, n_rows, n_chunks, counters, True)


def staged(array: np.ndarray, shape: tuple[int, ...] | None = None,
           at: tuple[slice, ...] = ()) -> tuple[np.ndarray, Callable[[], None] | None]:
    """(what a bound kernel reads, the copy to make before each call, or None): ``array`` itself when it is
    C-contiguous float32 and needs no border; else a buffer of ``shape`` (zeros around ``at``, the region
    ``array`` is copied into) allocated once, its borders never written."""
    if shape is None and array.flags.c_contiguous and array.dtype == np.float32:
        return array, None
    buffer = np.zeros(array.shape if shape is None else shape, np.float32)
    region = buffer[at] if at else buffer

    def copy() -> None:
        region[...] = array
    return buffer, copy


def finish(run: Callable[[], None], before: list, target: np.ndarray, out: np.ndarray) -> Callable[[], None]:
    """``run`` with the copies a bound kernel needs: ``before`` (staged inputs) and ``target`` to ``out`` after
    (an output that is not C-contiguous)."""
    copies = [c for c in before if c is not None]
    if not copies and target is out:
        return run

    def call() -> None:
        for copy in copies:
            copy()
        run()
        if target is not out:
            out[...] = target
    return call


def output_target(out: np.ndarray) -> np.ndarray:
    """Where a kernel writes: ``out`` when C-contiguous, else a buffer copied into it after each call."""
    return out if out.flags.c_contiguous else np.empty(out.shape, np.float32)
