"""Native entries stamped from a template: the second node of a geometry costs a copy, not a packing.

Binding a graph makes each node's native entry (``native.pack`` over loop views of its tensors): tens of
microseconds of NumPy plumbing a node, the bulk of a long graph's first ``vxProcessGraph``. For the simple
kernels (element-wise operations, activations) the packed block depends on the tensors only through their
addresses, shapes, strides and dtypes, and on a few parameters. :func:`stamped` builds the entry of the first
node of each such key as usual, learns which words of its block are the addresses of views into which tensor
(and at what offset), and makes the entries of later nodes of the key by copying the block and writing their
tensors' addresses there.

What a stamp may not cover is built afresh, never guessed: tensors that overlap other than at one same address
(the kernel's own builder decides whether it allows that), a block word pointing into a tensor that no kept
view accounts for, or kept objects that are not arrays.
"""
from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .native import Entry

LIMIT = 4096
"""Stamps kept (least recently used dropped first): a process meeting ever new shapes stays bounded."""


class _Stamp(NamedTuple):
    address: int
    block: np.ndarray  # the first entry's block (its tensors' addresses are overwritten per use)
    slots: tuple[tuple[np.ndarray | int, int, int], ...]  # (word index(es), tensor position, offset from its address)
    constants: tuple  # kept arrays that are no tensor's (tables): shared by every entry of the stamp


_stamps: OrderedDict[tuple, _Stamp | None] = OrderedDict()
_lock = threading.Lock()  # graphs of several threads bind at once
_UNKNOWN = object()


def _address(array: np.ndarray) -> int:
    """Where ``array``'s data starts. Through the buffer protocol where it is writable and contiguous (a
    Fortran-order tensor through its transpose, which is C-contiguous): ``__array_interface__`` builds a dict
    and cost two to three times more, twice a node when a long graph binds."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array.T if array.flags.f_contiguous else array))
    except (TypeError, ValueError, BufferError):  # read-only, strided, or empty
        return array.__array_interface__["data"][0]


def _extent(array: np.ndarray, address: int) -> tuple[int, int]:
    """The byte range ``[low, high)`` an array's elements occupy."""
    low = high = address
    for n, stride in zip(array.shape, array.strides):
        if n > 1:
            if stride < 0:
                low += (n - 1) * stride
            else:
                high += (n - 1) * stride
    return low, high + array.itemsize


def _learn(entry: Entry, tensors: tuple[np.ndarray, ...], addresses: list[int]) -> _Stamp | None:
    """The stamp of ``entry`` (built for ``tensors``), or None when its block cannot be stamped safely."""
    extents = [_extent(t, a) for t, a in zip(tensors, addresses)]
    block = entry.block
    slots, constants, covered = [], [], set()
    for kept in entry.keep:
        if not isinstance(kept, np.ndarray):
            return None
        pointer = _address(kept)
        owner = next((k for k, (low, high) in enumerate(extents) if low <= pointer < high), None)
        if owner is None:
            constants.append(kept)
            continue
        if pointer in covered:
            continue
        covered.add(pointer)
        words = np.flatnonzero(block == pointer)
        if not words.size:
            return None
        slots.append((int(words[0]) if words.size == 1 else words, owner, pointer - addresses[owner]))
    for word in block.tolist():  # every word pointing into a tensor must be one the slots rewrite
        if word not in covered and any(low <= word < high for low, high in extents):
            return None
    return _Stamp(entry.address, block.copy(), tuple(slots), tuple(constants))


def stamped(key: tuple, tensors: tuple[np.ndarray, ...], build: Callable[[], Entry | None]) -> Entry | None:
    """``build()``'s entry for ``tensors``, from the stamp of ``key`` and their geometry when one was learnt.

    ``key`` must hold every value other than the tensors' that the block depends on (the kernel's parameters);
    ``build`` makes the entry (and raises as it would for these tensors)."""
    addresses = [_address(t) for t in tensors]
    count = len(tensors)
    for i in range(count):
        for j in range(i):
            if addresses[i] != addresses[j] and np.may_share_memory(tensors[i], tensors[j]):
                return build()
    full = (key, tuple(map(addresses.index, addresses)), *[(t.shape, t.strides, t.dtype) for t in tensors])
    with _lock:
        stamp = _stamps.get(full, _UNKNOWN)
        known = stamp is not _UNKNOWN
        if known:
            _stamps.move_to_end(full)
    if known:
        if stamp is None:  # this key is built afresh each time
            return build()
        block = stamp.block.copy()
        for words, owner, offset in stamp.slots:
            block[words] = addresses[owner] + offset
        return Entry(stamp.address, block, (*stamp.constants, *tensors))
    entry = build()
    if entry is None:
        return None
    learnt = _learn(entry, tensors, addresses)
    with _lock:
        _stamps[full] = learnt
        if len(_stamps) > LIMIT:
            _stamps.popitem(last=False)
    return entry
