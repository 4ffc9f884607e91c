"""C-callable entry points of kernels: a numba ``cfunc`` over one packed argument block.

A native entry is ``int32 entry(int64 *block)``: it returns 0 (VX_SUCCESS) or
a negative ``vx_status``, and reads everything it needs from ``block``, which
the caller packs once (at bind) with :func:`pack`: an array takes
:data:`ARRAY_WORDS` words (address, six extents, six byte strides of its
6-D loop view, see ``layout.loop_views``), an integer one word, a float one
word holding its float64 bits.  The entry calls the very kernel the Python
path calls (the arithmetic has one owner); it only rebuilds the arrays.

Entries are compiled lazily, once per body, with the kernels' disk cache
(``jit.native``); a C loop (``csrc/plan.c``) calls them without the GIL.
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from . import jit
from .layout import RANK

ARRAY_WORDS = 1 + 2 * RANK
"""Words of one packed array: its address, then its extents, then its byte strides."""


class Entry(NamedTuple):
    """A prepared native call: the entry's address, its argument block, and what must outlive both."""

    address: int
    block: np.ndarray
    keep: tuple


@intrinsic
def _pointer(typingctx, address):
    """The int64 ``address`` as a ``void *``."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@intrinsic
def words_at(typingctx, address):
    """The int64 ``address`` as an ``int64 *``: a block that an entry received by address (:func:`call`'s)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(64).as_pointer())
    return types.CPointer(types.int64)(types.int64), codegen


@intrinsic
def address_of(typingctx, block):
    """An entry's ``int64 *block`` as its int64 address (to pass on to another entry inside a block)."""
    if not isinstance(block, types.CPointer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ptrtoint(args[0], ir.IntType(64))
    return types.int64(block), codegen


@intrinsic
def _float_bits(typingctx, word):
    """The float64 whose bits the int64 ``word`` holds."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@jit.kernel
def array(block, at, dtype):
    """The array packed at ``block[at:at + ARRAY_WORDS]`` (writable; the caller knows which are inputs)."""
    base = carray(_pointer(block[at]), 1, dtype)
    shape = (block[at + 1], block[at + 2], block[at + 3], block[at + 4], block[at + 5], block[at + 6])
    strides = (block[at + 7], block[at + 8], block[at + 9], block[at + 10], block[at + 11], block[at + 12])
    return np.lib.stride_tricks.as_strided(base, shape, strides)


@jit.kernel
def c_array(block, at, dtype):
    """The C-contiguous array packed at ``block[at:at + ARRAY_WORDS]`` (6-D, C layout: its strides are not read).

    For scratch and packed weights the packer made contiguous: numba then knows the layout and vectorizes."""
    shape = (block[at + 1], block[at + 2], block[at + 3], block[at + 4], block[at + 5], block[at + 6])
    return carray(_pointer(block[at]), shape, dtype)


def row_of(a, r):
    """Row ``r`` of the 2-D array ``a``: for a C-contiguous one a 1-D array without a reference count of its own
    (a view ``a[r]`` takes one and drops it, atomic operations that cost softmax rows of 128 values about a fifth
    of their time; ``a`` must outlive the row, as it does in the loop over its rows); for other layouts the view
    ``a[r]``."""
    raise NotImplementedError("row_of() is called from kernels only")


@overload(row_of, inline="always")
def _row_of(a, r):
    if not isinstance(a, types.Array) or a.ndim != 2:
        return None
    if a.layout == "C":
        return lambda a, r: carray(_pointer(np.int64(a.ctypes.data) + r * a.strides[0]), a.shape[1], a.dtype)
    return lambda a, r: a[r]


@jit.jitable
def flat(a):
    """``a.reshape(-1)`` of a C-contiguous array, without numba's reshape (a call into its helper library, some
    25 ns: a tile loop run once per chunk had paid four)."""
    return carray(_pointer(np.int64(a.ctypes.data)), a.size, a.dtype)


@jit.jitable
def as_rows(a, width):
    """``a.reshape(-1, width)`` of a C-contiguous array, as :func:`flat`."""
    return carray(_pointer(np.int64(a.ctypes.data)), (a.size // width, width), a.dtype)


@jit.kernel
def c_array_at(address, n):
    """The ``n`` int64 words at ``address`` (a record another thread posted, e.g. the gang's native tasks)."""
    return carray(_pointer(address), n, np.int64)


@intrinsic
def call(typingctx, address, block):
    """``call(address, block)``: the native entry at ``address`` on the argument block at ``block`` (its status)."""
    if not (isinstance(address, types.Integer) and isinstance(block, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        words = ir.IntType(64).as_pointer()
        function = builder.inttoptr(args[0], ir.FunctionType(ir.IntType(32), [words]).as_pointer())
        return builder.call(function, [builder.inttoptr(args[1], words)])
    return types.int32(address, block), codegen


@jit.jitable
def copy_bytes(target, source, n):
    """``n`` bytes from address ``source`` to address ``target`` (not overlapping), as a byte loop LLVM turns into
    32-byte moves. Not ``memcpy``: glibc's, on this kind of CPU (``rep movsb``), runs 8 to 13 times slower when
    the target lies 1 to 31 bytes past the source modulo 4096 (a 400 KB copy: 150 us against 12), which a
    model's input, rows and buffers hit by chance of their addresses; the loop takes 11-13 us at any distance."""
    to = carray(_pointer(target), n, np.uint8)
    source_ = carray(_pointer(source), n, np.uint8)
    for i in range(n):
        to[i] = source_[i]


@jit.kernel
def real(block, at):
    """The float packed at ``block[at]``."""
    return _float_bits(block[at])


factories: dict[str, Callable[..., int]] = {}
"""Every native entry's maker (:func:`factory`), by "module:qualname" (``warm`` replays recorded calls)."""
on_new_entry: list[Callable[[str, tuple, tuple[int, ...]], None]] = []
"""Called with (maker name, arguments, positions of micro-kernel codes) the first time a maker meets them."""


def factory(make: Callable[..., int] | None = None, *, codes: tuple[int, ...] = ()):
    """Make ``make`` (arguments -> an entry's address, usually ``jit.native`` of a closure) a cached, recorded
    maker: each distinct call compiles once, and is announced to :data:`on_new_entry` so that
    ``openvx-nn warm`` can compile it ahead of time.  ``codes``: positions of arguments that are micro-kernel
    codes (an entry for another CPU's instruction set is not warmed)."""
    def build(function: Callable[..., int]) -> Callable[..., int]:
        cached = functools.cache(function)
        name = f"{function.__module__}:{function.__qualname__}"
        seen: set[tuple] = set()

        @functools.wraps(function)
        def made(*args) -> int:
            address = cached(*args)
            if args not in seen:
                seen.add(args)
                for hook in on_new_entry:
                    hook(name, args, codes)
            return address
        factories[name] = made
        return made
    return build(make) if make is not None else build


def pack(*items) -> tuple[np.ndarray, tuple]:
    """The int64 block of ``items`` (6-D arrays, ints, bools, floats) and the arrays it points into."""
    words: list[int] = []
    keep = []
    for item in items:
        if isinstance(item, np.ndarray):
            if item.ndim != RANK:
                raise ValueError(f"a packed array must be a {RANK}-D loop view, got {item.ndim}-D")
            keep.append(item)
            words.append(item.__array_interface__["data"][0])
            words.extend(int(n) for n in item.shape)
            words.extend(int(s) for s in item.strides)
        elif isinstance(item, (float, np.floating)):
            words.append(int(np.float64(item).view(np.int64)))
        else:
            words.append(int(item))
    return np.array(words, np.int64), tuple(keep)


def _sequence(block):
    # block: [n, (entry address, block address) x n]; the first failing status stops the run.
    for i in range(block[0]):
        status = call(block[1 + 2 * i], block[2 + 2 * i])
        if status != 0:
            return status
    return 0


def sequence(entries: list[Entry]) -> Entry:
    """One entry that runs ``entries`` in order (a layer computed as several calls, e.g. deconvolution's phases)."""
    if len(entries) == 1:
        return entries[0]
    words = [len(entries)] + [w for e in entries for w in (e.address, e.block.__array_interface__["data"][0])]
    return Entry(jit.native(_sequence), np.array(words, np.int64), tuple(entries))


_C_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)


@functools.cache
def _from_python(address: int):
    return _C_ENTRY(address)


def run(entry: Entry) -> int:
    """Run ``entry`` from Python (ctypes lets go of the GIL for the call): its status, 0 on success."""
    return _from_python(entry.address)(entry.block.__array_interface__["data"][0])


def as6(array1: np.ndarray) -> np.ndarray:
    """A 1-D array (a table) as a 6-D view for :func:`pack`."""
    return array1.reshape((1,) * (RANK - 1) + (array1.size,))
