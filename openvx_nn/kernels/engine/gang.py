"""The *gang*: helpers that stay a short while after a task, so that a model's next layer starts on them at once.

A helper that finished a task stays ``SPIN_CYCLES`` in the gang: it spins, without the GIL, on a generation
counter, and takes the next posted task at once instead of sleeping on the workers' queue (a wake-up costs
tens of microseconds, the order of a MobileNet layer). A layer posts its task (:func:`post`) for the gang and
queues one (``workers.lend``) only for helpers missing from it. A task taken late, or twice, must claim
nothing (its chunks are gone), so a lost or stale post costs only the help: every task posted here is a
chunk loop behind a shared counter (``atomics.fetch_add``).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit
from . import workers
from .atomics import fetch_add, pause

SPIN_CYCLES = 400_000
"""How long a helper stays in the gang after a task, in time-stamp counter cycles (about 0.15 ms): longer
than the gaps between a graph's shared layers, short enough to leave the core soon after a run."""
SPIN_LIMIT = 100_000
"""Spin-wait rounds at most (a bound if the cycle counter does not advance)."""

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
    """A helper's turn in the gang (counted in by :func:`post`): ``task``, then every task posted while it
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


def post(task: Callable[[], object], helpers: int) -> None:
    """``task`` for the helpers: taken at once by those in the gang; queued (``workers.lend``) for as many as
    are missing from it, who count in now (a helper the OS runs late is not queued for again)."""
    _posted[0] = task
    generation = int(_mailbox[0]) + 1
    _mailbox[0] = generation  # an aligned 8-byte store: the spinning helpers read it atomically
    missing = helpers - int(_mailbox[1])
    if missing > 0:
        _count(_mailbox, missing)
        workers.lend(lambda: _gang(task, generation), missing)
