"""LUTs: the tables of the NN extension's table-lookup operation.

Decided semantics:

- ``VX_TYPE_UINT8`` holds 1..256 entries with ``VX_LUT_OFFSET`` 0;
  ``VX_TYPE_INT16`` holds 1..65536 entries with ``VX_LUT_OFFSET`` = count / 2
  (rounded down), so the entry for value ``v`` is ``array[v + offset]``.
  Other types are ``VX_ERROR_INVALID_TYPE``; a count outside the range is
  ``VX_ERROR_INVALID_PARAMETERS``.  A new table is all zeros.
- ``vxCopyLUT`` always copies the whole table, ``VX_READ_ONLY`` or
  ``VX_WRITE_ONLY``, host memory only.
- ``vxMapLUT`` hands out the LUT's own storage (``array``, which never moves),
  so writes through the pointer are visible at once; flags may be 0 or
  ``VX_NOGAP_X`` (a LUT has no gaps anyway).  ``vxUnmapLUT`` only closes the
  map id.
- A virtual LUT (``vxCreateVirtualLUT``) is scoped to its graph; its data is
  never accessible to the application (copy and map are
  ``VX_ERROR_OPTIMIZED_AWAY``), the graph engine uses ``array`` directly.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import access
from .context import Context
from .datatypes import dtype_of
from .enums import MapFlag, Status, Type, type_name
from .errors import VXError, invalid_parameters
from .graph import Graph
from .reference import Reference

MAX_COUNT: dict[int, int] = {Type.VX_TYPE_UINT8: 256, Type.VX_TYPE_INT16: 65536}
"""LUT element types and the most entries each may have."""

MAP_FLAGS = (0, MapFlag.VX_NOGAP_X)


class LUT(Reference):
    """A lookup table; ``scope`` is the graph of a virtual LUT, else None."""

    vx_type = Type.VX_TYPE_LUT

    def __init__(self, context: Context, data_type: int, count: int, scope: Graph | None = None):
        if data_type not in MAX_COUNT:
            raise VXError(Status.VX_ERROR_INVALID_TYPE,
                          f"{type_name(data_type)} is not a LUT type "
                          f"(expected VX_TYPE_UINT8 or VX_TYPE_INT16)")
        if not 1 <= count <= MAX_COUNT[data_type]:
            raise invalid_parameters(f"count {count} is invalid for a {type_name(data_type)} LUT "
                                     f"(expected 1..{MAX_COUNT[data_type]})")
        self.data_type = int(data_type)
        self.count = int(count)
        self.offset = self.count // 2 if data_type == Type.VX_TYPE_INT16 else 0
        self.array = np.zeros(self.count, dtype_of(data_type))
        self.scope = scope
        self.mappings = access.Mappings()
        super().__init__(context)

    @property
    def virtual(self) -> bool:
        return self.scope is not None

    @property
    def size(self) -> int:
        """VX_LUT_SIZE: the table's bytes."""
        return self.array.nbytes

    def copy(self, user: Any, usage: int, mem_type: int) -> None:
        """vxCopyLUT: ``user`` is a buffer of ``size`` bytes (None for a NULL pointer)."""
        access.check_access(self, "copying", usage, access.COPY_USAGES, mem_type)
        if user is None:
            with access.concerning(self, "copying"):
                raise invalid_parameters("user pointer is NULL")
        view = memoryview(user).cast("B")
        if usage == access.READ:
            view[:] = self.array.tobytes()
        else:
            self.array[:] = np.frombuffer(view, self.array.dtype)

    def map(self, usage: int, mem_type: int, flags: int) -> tuple[int, np.ndarray]:
        """vxMapLUT: a new map id and the storage itself."""
        access.check_access(self, "mapping", usage, access.MAP_USAGES, mem_type)
        if flags not in MAP_FLAGS:
            with access.concerning(self, "mapping"):
                raise invalid_parameters(f"flags {flags:#x} are invalid (expected 0 or VX_NOGAP_X)")
        return self.mappings.open(usage), self.array

    def unmap(self, map_id: int) -> None:
        with access.concerning(self, "unmapping"):
            self.mappings.close(map_id)
