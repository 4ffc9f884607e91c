"""The application's access to tensor data: copying and mapping patches.

A patch is a box of a tensor's lowest ``n`` dimensions, ``start[i] <= x <
end[i]`` with ``start[i] < end[i] <= dims[i]``.  When ``n`` is below the
rank, the higher dimensions are fixed at index 0 (the "lower dimensions"
rule), so a patch is an ``n``-dimensional array.

- Copy (vxCopyTensorPatch): the application's buffer is laid out with its own
  byte strides (user_stride[0] = element size, each stride at least the
  previous one times the previous patch size); VX_READ_ONLY copies tensor →
  user, VX_WRITE_ONLY user → tensor.
- Map (vxMapTensorPatch): the application gets the address of the patch's
  first element inside the tensor's own storage and that storage's byte
  strides for the ``n`` dims, so writes through it are the tensor's data at
  once; any usage, VX_READ_AND_WRITE included.  Unmap only ends the map (an
  open map pins a from-handle tensor's memory against swaps).  Releasing the
  last reference while a map is open invalidates the handle for everything
  but the unmap, which still ends the map and frees the memory.

Both refuse virtual tensors (VX_ERROR_OPTIMIZED_AWAY: the application never
sees a graph's intermediate data), accept only host memory, and check every
argument before the tensor's memory, whose absence is VX_ERROR_NO_MEMORY.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import native_copy
from .access import COPY_USAGES, MAP_USAGES, READ, check_memory_type, check_usage, hidden
from .datatypes import dtype_of
from .enums import Status
from .errors import VXError, invalid_parameters
from .tensor import Sizes, Tensor, Wrap, check_region, check_strides


def _check_patch(t: Tensor, n: int, start: Sequence[int] | None, end: Sequence[int] | None,
                 usage: int, usages: tuple[int, ...], memory_type: int) -> tuple[Sizes, Sizes]:
    """The checks copy and map share; the patch's start and end."""
    if hidden(t):
        raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                      f"virtual {t.describe()} cannot be accessed by the application", t)
    low, high = check_region(t, n, start, end, "patch")
    check_usage(usage, usages, t)
    check_memory_type(memory_type, t)
    return low, high


def _patch(t: Tensor, low: Sizes, high: Sizes) -> np.ndarray:
    """The patch as a view of ``t``'s data: the box in its lowest dims, index 0 above."""
    index = tuple(slice(s, e) for s, e in zip(low, high)) + (0,) * (len(t.dims) - len(low))
    return t.array[index]


def copy_patch(t: Tensor, n: int, start: Sequence[int] | None, end: Sequence[int] | None,
               user_stride: Sequence[int] | None, address: int, usage: int, memory_type: int,
               wrap: Wrap) -> None:
    """Copy between a patch of ``t`` and application memory at ``address``."""
    low, high = _check_patch(t, n, start, end, usage, COPY_USAGES, memory_type)
    shape = tuple(e - s for s, e in zip(low, high))
    strides = check_strides(user_stride, shape, dtype_of(t.data_type).itemsize, "user_stride", t)
    if not address:
        raise invalid_parameters(f"user_ptr is NULL for {t.describe()}", t)
    patch = _patch(t, low, high)
    user = wrap(address, shape, strides, patch.dtype)
    if usage == READ:
        np.copyto(user, patch)
    else:
        np.copyto(patch, user)
        t.root.writes += 1
    native_copy.publish(t)  # the next well-formed copy is C's


def map_patch(t: Tensor, n: int, start: Sequence[int] | None, end: Sequence[int] | None,
              usage: int, memory_type: int) -> tuple[int, int, Sizes]:
    """Open a map of a patch of ``t``: (map id, address of its first element, byte strides)."""
    patch = _patch(t, *_check_patch(t, n, start, end, usage, MAP_USAGES, memory_type))
    map_id = t.maps.open(patch)  # keeping the patch keeps the memory alive while mapped
    t.root.pins += 1
    return map_id, patch.__array_interface__["data"][0], tuple(patch.strides)


def unmap_patch(t: Tensor, map_id: int) -> None:
    """End a map (also of a tensor released while mapped, which then goes away)."""
    t.maps.close(map_id, t)
    t.unmapped()
