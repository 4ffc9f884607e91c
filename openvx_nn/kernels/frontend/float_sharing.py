"""One float32 call's rows shared between the calling thread and the engine's helpers.

A layer's output rows are cut into chunks behind a shared counter (``atomics.take_chunk``); the caller
lends the same task to the helpers (``engine.workers``) and claims chunks itself, then waits only for
chunks a helper has claimed and not finished. A helper the OS runs late takes fewer chunks or none and
never holds the call up (no barrier), and each call has its own counters, so a kernel called from several
graphs at once stays safe. Small layers run on the calling thread alone: waking a helper costs more. The
task goes to the helpers through the gang (``engine.gang``: helpers that spin a while between layers).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import types

from ..engine import atomics, gang, workers
from ..support import jit, native

PARALLEL_WORK = 1_000_000
"""Multiply-adds below which a call stays on the calling thread (about 25 us of work): with a helper in the
gang a layer's hand-over costs a few microseconds (the helper takes the GIL to start the task), so
MobileNet v1 0.25's layers (1-3 million multiply-adds) are shared; smaller ones are not worth it."""
NATIVE_PARALLEL_WORK = 150_000
"""The same threshold for a native entry's layer (run from C while the helpers spin in a held gang, ``gang.held``):
there the hand-over is an atomic store the spinning helper sees within a microsecond, so layers of a few
microseconds are worth sharing -- MobileNet v1's 14x14 and 7x7 depthwise layers, which had stayed on the calling
thread, a fifth of the model's time."""
F32 = {(ndim, writable): types.Array(types.float32, ndim, "C", readonly=not writable)
       for ndim in (1, 3, 4, 5) for writable in (False, True)}
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
        n_chunks = workers.chunk_count(n_rows, helpers + 1)
        counters = atomics.shared_words(2)  # [next chunk to claim, chunks finished]
        share = workers.Share(counters)
        share.lend(lambda: run(*args, n_rows, n_chunks, counters, False), helpers, gang.post)
        share.run(run, *args, n_rows, n_chunks, counters, True)


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


# ---- native entries (``support/native.py``): a bound call's arrays and scalars in one block, run from C ----

def six(a: np.ndarray) -> np.ndarray:
    """``a`` (C-contiguous) as the 6-D view :func:`native.pack` takes: length-1 axes in front."""
    return a.reshape((1,) * (native.RANK - a.ndim) + a.shape)


def block_of(*items) -> tuple[np.ndarray, tuple]:
    """:func:`native.pack` of ``items``, arrays given in any rank (C-contiguous) as :func:`six` views."""
    return native.pack(*(six(i) if isinstance(i, np.ndarray) else i for i in items))


def contiguous_f32(a: np.ndarray) -> bool:
    """Whether a native entry can read or write ``a`` in place (the bound calls copy other arrays per run)."""
    return a.dtype == np.float32 and a.flags.c_contiguous


def at(k: int) -> int:
    """Where the ``k``-th packed array of a block starts (arrays first, ``native.ARRAY_WORDS`` each)."""
    return k * native.ARRAY_WORDS


@jit.kernel
def stage(x, xp, top, left, line0, line1):
    """Input rows ``[line0, line1)`` (row r: image r // H, line r % H) of ``xp[:, top:top + H, left:left + W] = x``:
    a padded input's per-call copy (``staged``), for native entries, in parts the threads can share.

    A row is one contiguous run of ``W * C`` values each side, copied as one ``memcpy`` (``native.copy_bytes``;
    numba's element loop took 0.65 ns a value, 146 us for MobileNet's 224x224x3 input, against 20)."""
    _, height, width, depth = x.shape
    _, padded_h, padded_w, _ = xp.shape
    run = 4 * width * depth
    x_at, xp_at = x.ctypes.data, xp.ctypes.data
    for line in range(line0, line1):
        b = line // height
        y = line - b * height
        native.copy_bytes(xp_at + 4 * ((b * padded_h + top + y) * padded_w + left) * depth, x_at + line * run, run)
