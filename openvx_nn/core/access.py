"""Checks and bookkeeping shared by every copy and map call (scalars, LUTs, tensors)."""
from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .enums import Accessor, MapFlag, MemoryType, Status
from .errors import VXError

if TYPE_CHECKING:
    from .reference import Reference

READ = Accessor.VX_READ_ONLY
WRITE = Accessor.VX_WRITE_ONLY
READ_WRITE = Accessor.VX_READ_AND_WRITE

COPY_USAGES = (READ, WRITE)
MAP_USAGES = (READ, WRITE, READ_WRITE)


def check_usage(usage: int, allowed: Iterable[int], ref=None) -> None:
    allowed = tuple(allowed)
    if usage not in allowed:
        names = ", ".join(Accessor(a).name for a in allowed)
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"usage {usage:#x} is invalid (expected one of {names})", ref)


def check_memory_type(mem_type: int, ref=None) -> None:
    if mem_type != MemoryType.VX_MEMORY_TYPE_HOST:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"memory type {mem_type:#x} is not supported (only VX_MEMORY_TYPE_HOST)", ref)


@contextmanager
def concerning(obj: Reference, action: str) -> Iterator[None]:
    """Prefix the message of a shared check's VXError with what was being done to ``obj``."""
    try:
        yield
    except VXError as err:
        err.message = f"{action} {obj.describe()}: {err.message}"
        err.ref = err.ref or obj
        raise


_kernel = threading.local()
"""``depth`` > 0 while this thread runs a user kernel's validator, function, init or deinit."""


@contextmanager
def in_user_kernel() -> Iterator[None]:
    """Mark the calling thread as running a user kernel: the kernel may read and write
    the virtual objects of its node (its graph's data), which the application may not."""
    _kernel.depth = getattr(_kernel, "depth", 0) + 1
    try:
        yield
    finally:
        _kernel.depth -= 1


def hidden(obj: Reference) -> bool:
    """True if ``obj``'s data is out of the caller's reach: it is virtual and no user
    kernel is running on this thread."""
    return bool(getattr(obj, "virtual", False)) and not getattr(_kernel, "depth", 0)


def check_access(obj: Reference, action: str, usage: int, allowed: Iterable[int], mem_type: int) -> None:
    """What every copy and map of a scalar or LUT checks before touching memory:
    the object is not virtual, the usage is one of ``allowed``, memory is host."""
    with concerning(obj, action):
        if hidden(obj):
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          "it is virtual, its data is never accessible to the application")
        check_usage(usage, allowed)
        check_memory_type(mem_type)


_map_ids = itertools.count(1)


class Mappings:
    """The outstanding maps of one object: ``map_id`` → whatever the map needs at unmap."""

    def __init__(self) -> None:
        self._open: dict[int, Any] = {}

    def open(self, info: Any) -> int:
        map_id = next(_map_ids)
        self._open[map_id] = info
        return map_id

    def close(self, map_id: int, ref=None) -> Any:
        try:
            return self._open.pop(map_id)
        except KeyError:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"map id {map_id} is not an open mapping of this object", ref) from None

    def __len__(self) -> int:
        return len(self._open)


def check_map_flags(flags: int, ref=None) -> None:
    """Map flags: 0 or VX_NOGAP_X (our memory never has gaps between pixels or items)."""
    if flags & ~MapFlag.VX_NOGAP_X:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"map flags {flags:#x} are invalid (expected 0 or VX_NOGAP_X)", ref)
