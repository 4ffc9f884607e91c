"""Checks and bookkeeping shared by every copy and map call (scalars, LUTs, tensors)."""
from __future__ import annotations

import itertools
from typing import Any, Iterable

from .enums import Accessor, MemoryType, Status
from .errors import VXError

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
