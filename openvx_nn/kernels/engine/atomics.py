"""Atomic counters and a spin-wait hint for numba code, written as LLVM IR.

The engine's threads claim chunks of one call's work from a shared counter (``fetch_add``) and
the calling thread waits, spinning (``pause``), only for chunks a helper has actually claimed:
unlike a parallel region's closing barrier, a helper the OS has not run yet holds nothing up.
"""
from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ..support import jit

_I64 = ir.IntType(64)
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


@intrinsic
def fetch_add(typingctx, address, value):
    """``fetch_add(address, value)``: adds ``value`` to the int64 at ``address`` atomically (sequentially
    consistent) and returns the value it held before."""
    if not (isinstance(address, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        at = builder.inttoptr(context.cast(builder, args[0], signature.args[0], types.int64), _I64.as_pointer())
        return builder.atomic_rmw("add", at, context.cast(builder, args[1], signature.args[1], types.int64),
                                  "seq_cst")
    return types.int64(address, value), codegen


@intrinsic
def load(typingctx, address):
    """``load(address)``: the int64 at ``address``, read atomically (sequentially consistent). What a spin-wait
    reads: a plain load keeps the cache line shared, where a read-modify-write (``fetch_add(address, 0)``) takes
    it exclusive each time and so pulls it away from the thread that writes it, and from whatever else lies in it."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        at = builder.inttoptr(context.cast(builder, args[0], signature.args[0], types.int64), _I64.as_pointer())
        return builder.load_atomic(at, "seq_cst", 8)
    return types.int64(address), codegen


@intrinsic
def pause(typingctx):
    """The spin-wait hint (x86 ``pause``; nothing elsewhere): lets the sibling hyperthread run."""

    def codegen(context, builder, signature, args):
        if _X86:
            fn = builder.module.declare_intrinsic("llvm.x86.sse2.pause", fnty=ir.FunctionType(ir.VoidType(), []))
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def compare_swap(typingctx, address, expected, value):
    """``compare_swap(address, expected, value)``: stores ``value`` at the int64 ``address`` if it holds
    ``expected``, atomically; True when it did."""
    if not all(isinstance(a, types.Integer) for a in (address, expected, value)):
        return None

    def codegen(context, builder, signature, args):
        address_, expected_, value_ = (context.cast(builder, a, t, types.int64) for a, t in zip(args, signature.args))
        result = builder.cmpxchg(builder.inttoptr(address_, _I64.as_pointer()), expected_, value_, "seq_cst",
                                 "seq_cst")
        return builder.extract_value(result, 1)
    return types.boolean(address, expected, value), codegen


LINE_BYTES = 128
"""What :func:`shared_words` gives each array alone: two 64-byte cache lines, which the adjacent-line prefetcher
fetches as a pair."""


def shared_words(words: int) -> np.ndarray:
    """``words`` int64 zeros that threads update atomically (chunk counters, the gang's mailbox), alone in their
    cache lines: a counter sharing a line with other data would make every claim or spin-wait on it pull that data
    away from the thread using it (false sharing), by where the allocator happened to put it."""
    raw = np.zeros((-(-words * 8 // LINE_BYTES) + 1) * LINE_BYTES // 8, np.int64)
    skip = (-raw.ctypes.data % LINE_BYTES) // 8
    return raw[skip:skip + words]


CHUNK_FAILED = 1 << 40
"""Added to a shared call's count of finished chunks (the int64 at ``claim + 8``) when a thread's chunks raised
(native entries: ``gang``'s serve loops for a helper's, the entry for the caller's; Python calls:
``workers.Share``): the count then passes any number of chunks, so that every wait on it ends, and the caller
reads the failure there after its wait."""


def _wait_for_chunks(claim, n_chunks):
    # The caller of a shared chunk loop returns once every chunk is finished, or some thread's chunk failed
    # (CHUNK_FAILED): the int64 at ``claim + 8`` counts finished chunks (the one at ``claim`` hands them out).
    while load(claim + 8) < n_chunks:
        pause()


wait_for_chunks = jit.kernel(_wait_for_chunks)


@jit.kernel
def fail_chunks(counters):
    """Add :data:`CHUNK_FAILED` to the finished chunks of a shared call's ``counters`` (int64 [claimed, finished,
    ...]) from Python, atomically: the other threads count their chunks there meanwhile."""
    fetch_add(counters.ctypes.data + 8, CHUNK_FAILED)


def _wait_for_shares(claim, parts, task_claim):
    # A phase shared before a task's chunks (an input's packing, behind its own counters at ``claim``): every
    # thread waits until each part is finished, or until the task's chunks at ``task_claim`` failed (a thread
    # that raised while packing never finishes its part).
    while load(claim + 8) < parts and load(task_claim + 8) < CHUNK_FAILED:
        pause()


wait_for_shares = jit.kernel(_wait_for_shares)


def _take_chunk(claim, n_chunks, back):
    # The int64 at ``claim`` counts chunks taken from the front (low 32 bits) and from the back (high 32 bits):
    # the caller takes from the front and its helpers from the back, so that each thread keeps to one end of
    # the rows layer after layer and reads mostly what it wrote (a row written by the other core comes from
    # its cache, not this one's). Returns the chunk's index, or -1 once every chunk is taken.
    while True:
        word = load(claim)
        front = word & 0xFFFFFFFF
        behind = word >> 32
        if front + behind >= n_chunks:
            return -1
        if back:
            if compare_swap(claim, word, word + 4294967296):
                return n_chunks - 1 - behind
        elif compare_swap(claim, word, word + 1):
            return front


take_chunk = jit.kernel(_take_chunk)
