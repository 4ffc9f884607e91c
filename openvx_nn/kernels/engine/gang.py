"""The *gang*: helpers that stay a short while after a task, so that a model's next layer starts on them at once.

A helper that finished a task stays ``SPIN_CYCLES`` in the gang: it spins, without the GIL, on a generation
counter, and takes the next posted task at once instead of sleeping on the workers' queue (a wake-up costs
tens of microseconds, the order of a MobileNet layer). A layer posts its task (:func:`post`) for the gang and
queues one (``workers.lend``) only for helpers missing from it. A task taken late, or twice, must claim
nothing (its chunks are gone), so a lost or stale post costs only the help: every task posted here is a
chunk loop behind a shared counter (``atomics.fetch_add``).

Native tasks. A layer run from C (a native entry, ``support/native.py``) holds no GIL and cannot post a
Python task; it posts a *native* one (:func:`post_native`): the address of a record ``[helper entry, its
block, its chunk counters]`` in the mailbox, and a new generation. A spinning helper runs it where it spins,
without the GIL, and goes on spinning; when the helper entry returns a failure (it raised: ``jit.RAISED``), the
helper adds ``atomics.CHUNK_FAILED`` to the counters' finished chunks, so that the poster stops waiting for the
chunk that never finished and returns the failure (``csrc/plan_helpers.c``, the C side's helpers, does the
same). The poster retracts the record after its chunk loop (:func:`retract_native`) and waits until
no helper is inside a native task, so a helper never enters a layer whose arrays may be freed. Helpers are in
the gang only after some Python code lent them a task: :func:`summon` does that before a native run.
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit, native
from . import isa, workers
from .atomics import CHUNK_FAILED, compare_swap, fetch_add, load, pause, shared_words

SPIN_CYCLES = 400_000
"""How long a helper stays in the gang after a task, in time-stamp counter cycles (about 0.15 ms): longer
than the gaps between a graph's shared layers, short enough to leave the core soon after a run."""
SPIN_LIMIT = 100_000
"""Spin-wait rounds at most (a bound if the cycle counter does not advance)."""

LINGER_CYCLES = 5_000_000
"""How long helpers stay in the gang after a held run ends (about 2 ms): an application that runs a model in a
loop spends tens to hundreds of microseconds in Python between runs; had the helper left, the next run would
wake it through the workers' queue (50-100 us, the first layers without it). ONNX Runtime's pool spins some
40 ms after a run."""

HOLD_CYCLES = 2_500_000_000
"""How long a held gang (:func:`held`) keeps a helper spinning with no task at most (about a second): a bound in
case the holder is stuck."""

_mailbox = shared_words(10)
"""[generation of the posted task, helpers in the gang or queued for it, the posted native task's record (0: none,
or a Python task), helpers inside a native task, native tasks helpers have joined so far (:func:`native_joins`),
holds (:func:`held`: while positive, helpers stay past ``SPIN_CYCLES``), closings (:func:`closed`: while positive,
no native task is posted), the cycle count until which helpers stay after the last hold ended (``LINGER_CYCLES``),
the generation of the last Python task posted, helpers that left the gang and have not yet given their thread back
to the budget]. The C side's helpers (``csrc/plan_helpers.c``) read the first five words only."""
GENERATION, COUNTED, NATIVE_TASK, INSIDE, JOINED, HOLDS, CLOSED, LINGER, PYTHON, LEAVING = (
    8 * k for k in range(10))  # byte offsets
_posted: list = [None]  # the task of the current generation


def _after_fork_in_child() -> None:
    _mailbox[1:4] = 0  # a forked child has none of its parent's threads (none in the gang, none inside a task)
    _mailbox[5:8] = 0
    _mailbox[LEAVING // 8] = 0


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
    """Spin until a task newer than generation ``seen`` is posted: run a native one here (without the GIL) and
    spin on; return a Python one's generation, or -1 once ``cycles`` pass with no task.

    Leaving (-1), the helper counts itself out of the gang here, without the GIL, and in among the ``LEAVING``
    (:func:`_gang` counts it out of those once its thread is given back): a helper that needed the GIL to count
    itself out stayed counted in while the caller held it between runs, so the caller summoned nobody and its
    next native run posted to a gang nobody was in. A new generation whose native task is already retracted (the
    caller ran every chunk before this helper looked) is no Python task: the helper spins on, rather than go
    back to Python for a task nobody posted (and miss the next layers meanwhile)."""
    at = mailbox.ctypes.data
    deadline = _cycles() + cycles
    rounds = 0
    while rounds < SPIN_LIMIT:
        generation = load(at + GENERATION)
        if generation == seen:
            now = _cycles()
            if now > deadline:
                free = load(at + HOLDS) <= 0 and now > load(at + LINGER)
                if free or now > deadline + HOLD_CYCLES:
                    break
                rounds = 0  # held or lingering: the round bound counts from the end of the spin time
            pause()
            rounds += 1
            continue
        python = load(at + PYTHON)
        if python > seen:
            return python
        task = load(at + NATIVE_TASK)
        if task != 0:
            fetch_add(at + INSIDE, 1)
            if load(at + NATIVE_TASK) == task:  # still posted: its poster waits for us before it returns
                record = native.c_array_at(task, 3)
                if native.call(record[0], record[1]) != 0:  # raised mid-chunk: that chunk never counts as finished
                    fetch_add(record[2] + 8, CHUNK_FAILED)
                fetch_add(at + JOINED, 1)
            fetch_add(at + INSIDE, -1)
        seen, rounds, deadline = generation, 0, _cycles() + cycles
    fetch_add(at + LEAVING, 1)
    fetch_add(at + COUNTED, -1)
    return -1


@jit.kernel
def _count(mailbox, delta):
    fetch_add(mailbox.ctypes.data + COUNTED, delta)


@jit.kernel
def _left(mailbox):
    fetch_add(mailbox.ctypes.data + LEAVING, -1)


def _gang(task: Callable[[], object], generation: int) -> None:
    """A helper's turn in the gang (counted in by :func:`post`): ``task``, then every task posted while it
    spins, until none comes (:func:`_park` counts it out then)."""
    counted = True
    try:
        while True:
            task()
            generation = _park(_mailbox, generation, SPIN_CYCLES)  # read before the task: it is at least this new
            if generation < 0:
                counted = False
                _left(_mailbox)  # its thread goes back to the budget right after this returns
                return
            task = _posted[0]
    finally:
        if counted:  # the task raised: still counted in
            _count(_mailbox, -1)


def post(task: Callable[[], object], helpers: int) -> None:
    """``task`` for the helpers: taken at once by those in the gang; queued (``workers.lend``) for as many as
    are missing from it, who count in now (a helper the OS runs late is not queued for again)."""
    _posted[0] = task
    _mailbox[2] = 0  # a Python task (a native one posted meanwhile loses its help, nothing else)
    generation = int(_mailbox[0]) + 1
    _mailbox[PYTHON // 8] = generation  # before the generation: a helper that sees it sees this too
    _mailbox[0] = generation  # an aligned 8-byte store: the spinning helpers read it atomically
    missing = helpers - int(_mailbox[1])
    if missing > 0:
        _count(_mailbox, missing)
        workers.lend(lambda: _gang(task, generation), missing)


def _nothing() -> None:
    """The task :func:`summon` posts: a helper takes it and then spins in the gang."""


@jit.kernel
def _hold(mailbox, delta):
    at = mailbox.ctypes.data
    if delta < 0:  # helpers linger a while after the hold (an aligned 8-byte store: spinning helpers read it whole)
        mailbox[LINGER // 8] = _cycles() + LINGER_CYCLES
    fetch_add(at + HOLDS, delta)


class _Counted:
    """A block counted in one of the mailbox's words, by a compiled atomic add (``held``, ``closed``): a class, not
    a generator, since a run enters it right after a model's data pushed Python's objects out of the caches, where
    ``contextlib``'s generator machinery cost some microseconds more."""

    __slots__ = ("_add",)

    def __init__(self, add: Callable[[np.ndarray, int], None]):
        self._add = add

    def __enter__(self) -> None:
        self._add(_mailbox, 1)

    def __exit__(self, *exc) -> None:
        self._add(_mailbox, -1)


def held() -> _Counted:
    """Helpers in the gang stay in it while the block runs (a native run of a graph whose gaps between shared
    layers, a serial layer or a staging copy, may outlast ``SPIN_CYCLES``: C cannot call them back), and
    ``LINGER_CYCLES`` after it, ready for the application's next run."""
    return _HELD


def linger() -> None:
    """Helpers in the gang stay ``LINGER_CYCLES`` from now (as after a :func:`held` run)."""
    _hold(_mailbox, 1)
    _hold(_mailbox, -1)


def closed() -> _Counted:
    """Native layers run while the block runs are not posted to the gang, so they run on the calling thread alone
    even where a helper still spins from an earlier run (``Lending`` times runs without help: a helper that had
    joined them would make "alone" look as fast as lending). Process-wide: another thread's native run meanwhile
    goes without help too."""
    return _CLOSED


@jit.kernel
def _close(mailbox, delta):
    fetch_add(mailbox.ctypes.data + CLOSED, delta)


_HELD, _CLOSED = _Counted(_hold), _Counted(_close)


def summon(helpers: int) -> None:
    """Have ``helpers`` spinning in the gang (posting them a task that does nothing where fewer are), so that a
    native run about to start finds them (it cannot start threads itself)."""
    if helpers > int(_mailbox[1]):
        post(_nothing, helpers)


def summon_spare() -> None:
    """:func:`summon` the helpers this process may lend now (``workers.helpers``, and those leaving the gang, whose
    threads go back to the budget as soon as they get the GIL, which the caller holds), unless as many as there can
    be are in the gang already, as between a model's runs: counting the spare threads took 8 us after a run."""
    most = isa.threads() - 1
    if int(_mailbox[1]) < most:
        summon(min(most, workers.helpers() + max(0, int(_mailbox[LEAVING // 8]))))


def disband(timeout: float) -> bool:
    """At exit: helpers leave the gang at the end of their spin (holds and lingering cleared), and the process
    waits for every helper to be out of its task (``workers.stop``); whether all are. Called once no graph runs."""
    _mailbox[HOLDS // 8] = 0  # aligned 8-byte stores: the spinning helpers read them whole
    _mailbox[LINGER // 8] = 0
    return workers.stop(timeout)


def native_joins() -> int:
    """How many native tasks helpers have joined in this process (tests and benchmarks read it)."""
    return int(_mailbox[4])


def mailbox_address() -> int:
    """The mailbox's address, packed into native entries' blocks (numba would freeze the array as a constant)."""
    return int(_mailbox.ctypes.data)


@jit.kernel
def post_native(mailbox_at, task):
    """Post the native task record at ``task`` (``[helper entry, block, counters]``) to the helpers spinning in the gang;
    False when none is counted in or the gang is :func:`closed` (then nobody may run it: the caller does every
    chunk)."""
    if load(mailbox_at + COUNTED) <= 0 or load(mailbox_at + CLOSED) > 0:
        return False
    old = load(mailbox_at + NATIVE_TASK)
    if not compare_swap(mailbox_at + NATIVE_TASK, old, task):
        return False  # another poster in between: this layer goes without help
    fetch_add(mailbox_at + GENERATION, 1)
    return True


@jit.kernel
def retract_native(mailbox_at, task):
    """Withdraw ``task`` (if still posted) and wait until no helper is inside a native task: after this, none
    reads the task's arrays. Call it once the task's chunk loop has ended (helpers inside find nothing left)."""
    compare_swap(mailbox_at + NATIVE_TASK, task, 0)
    while load(mailbox_at + INSIDE) != 0:
        pause()


@jit.kernel
def begin_native(mailbox_at, task, counters):
    """Before a shared native layer: its chunk counters reset (no helper is inside it: the last run retracted
    it), then the task posted; whether helpers may join (else the caller runs the layer serially)."""
    counters[0] = 0
    counters[1] = 0
    return post_native(mailbox_at, task)


@jit.kernel
def nothing_first(block):
    """The preparation of a shared native layer that needs none (:func:`shared_entry`)."""


def shared_entry(lines, prepare, words: tuple[int, int, int, int], code: int = 0) -> tuple[Callable, Callable]:
    """The bodies (entry, helper) of a native entry whose layer its helpers may share, for ``jit.native``.

    ``lines(code, block, chunks, wait)`` runs the layer packed in ``block``: serially (``chunks`` 0), or in
    ``chunks`` chunks claimed from its counters (``wait``: until every claimed one is done); ``code`` reaches
    it as a compile-time literal (a micro-kernel's, ``microkernel.variant``; 0 where the layer has one body).
    ``prepare(block)`` runs first, on the calling thread (an input's packing or staging). ``words`` are where the block holds the
    mailbox address, the task record's address, the chunk count (:meth:`NativeTask.words`) and the counters
    (a packed array). The entry posts the task (:func:`begin_native`), runs its share and retracts it
    (:func:`retract_native`), or runs every line itself when no helper is counted in; the helper runs chunks
    while any is left. A shared run fails (``jit.RAISED``) when any thread's chunks raised: the caller's own
    (caught here, the task still retracted) or a helper's (``CHUNK_FAILED`` in the counters, from the serve
    loop); ``lines`` must wait with ``atomics.wait_for_chunks`` (or ``wait_for_shares``), which ends on it. Written once: every kernel and number is bound by closure, so each made body caches
    on disk (``jit.native``, keyed by what the closure holds)."""
    mailbox, task, chunks, counters = words

    def entry(block):
        prepare(block)
        n_chunks = block[chunks]
        if n_chunks > 0:
            shared = native.c_array(block, counters, np.int64)[0, 0, 0, 0, 0]
            if begin_native(block[mailbox], block[task], shared):
                try:
                    lines(code, block, n_chunks, True)
                except Exception:  # noqa: BLE001 - numba catches only Exception as a whole
                    fetch_add(shared.ctypes.data + 8, CHUNK_FAILED)  # helpers waiting on this thread stop
                retract_native(block[mailbox], block[task])  # also after a failure: helpers may be inside
                return jit.RAISED if load(shared.ctypes.data + 8) >= CHUNK_FAILED else 0
        lines(code, block, 0, False)
        return 0

    def helper(block):
        lines(code, block, block[chunks], False)
        return 0
    return entry, helper


def makers(bodies: tuple[Callable, Callable], module: str,
           names: tuple[str, str] = ("_entry", "_helper")) -> tuple[Callable[[], int], Callable[[], int]]:
    """The (entry, helper) makers of :func:`shared_entry`'s ``bodies`` for a layer with one body, recorded as
    ``module:names[0]`` and ``module:names[1]`` (``native.factory``: ``openvx-nn warm`` replays them by name)."""
    def maker(body: Callable, name: str) -> Callable[[], int]:
        def make() -> int:
            return jit.native(body)
        make.__module__, make.__qualname__ = module, name
        return native.factory(make)
    return maker(bodies[0], names[0]), maker(bodies[1], names[1])


class NativeTask:
    """What a native entry needs to share its chunks with the gang: the chunk counters and the task record
    (``[helper entry, block, counters]``, completed by :meth:`finish` once the block exists), and how many
    chunks."""

    __slots__ = ("chunks", "counters", "record", "units")

    def __init__(self, n_rows: int, lend: bool):
        threads = isa.threads()
        self.units = n_rows  # what the chunks cut (``benchmarks/audit_threads.py`` reads it)
        self.chunks = workers.chunk_count(n_rows, threads) if lend and threads > 1 and n_rows > 1 else 0
        self.counters = shared_words(2)
        self.record = np.zeros(3, np.int64)

    def words(self) -> tuple[int, int, int]:
        """(mailbox address, record address, chunks): the block's scalars the entry hands to :func:`begin_native`."""
        return mailbox_address(), int(self.record.ctypes.data), self.chunks

    def finish(self, helper: int, block: np.ndarray) -> tuple:
        """The record filled with ``helper`` (the chunk loop's entry, no waiting) over ``block``; what the entry
        keeps (this task among it: :func:`lends` finds it)."""
        self.record[:] = helper, block.ctypes.data, self.counters.ctypes.data
        return self.counters, self.record, self


def lends(entry) -> bool:
    """Whether native entry ``entry`` shares its chunks with the gang (a run of it wants :func:`summon` first)."""
    return entry is not None and any(isinstance(k, NativeTask) and k.chunks > 0 for k in entry.keep)
