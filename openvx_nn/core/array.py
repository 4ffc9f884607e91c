"""Arrays: up to ``capacity`` items of one plain or standard struct type.

The items live in one zeroed byte buffer of ``capacity * item_size`` bytes;
``num_items`` of them are in use.  vxAddArrayItems appends (reading the
application's items with its own stride) and fails with ``VX_FAILURE`` when
they would pass the capacity; vxTruncateArray shrinks.  Ranges
(``start < end <= num_items``) are copied with the application's stride or
mapped in place (stride = item size).  A virtual array (``graph`` set) may
have an unknown item type (``VX_TYPE_INVALID``) and capacity (0), and is never
accessible to the application.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .access import COPY_USAGES, MAP_USAGES, READ, Mappings, check_map_flags, check_memory_type, check_usage, hidden
from .context import Context
from .datatypes import zeros
from .enums import Status, Type, type_name
from .errors import VXError, invalid_parameters
from .reference import Reference
from .scalar import value_size
from .tensor import Wrap

if TYPE_CHECKING:
    from .graph import Graph

_BYTES = np.dtype(np.uint8)


def _item_size(item_type: int) -> int:
    try:
        return value_size(item_type)
    except VXError as err:
        raise VXError(Status.VX_ERROR_INVALID_TYPE,
                      f"{type_name(item_type)} cannot be an array item type") from err


class Array(Reference):
    """An array; create it with the class methods."""

    vx_type = Type.VX_TYPE_ARRAY

    def __init__(self, context: Context, item_type: int, capacity: int, graph: Graph | None = None):
        item_size = _item_size(item_type) if item_type != Type.VX_TYPE_INVALID else 0
        # Storage first: a failed allocation leaves no object behind.
        data = None if graph is not None else zeros((capacity * item_size,), _BYTES,
                                                   f"{capacity} items of {type_name(item_type)}")
        super().__init__(context)
        self.item_type = int(item_type)
        self.item_size = item_size
        self.capacity = int(capacity)
        self.num_items = 0
        self.graph = graph
        self.virtual = graph is not None
        self._data = data
        self.maps = Mappings()

    @classmethod
    def create(cls, context: Context, item_type: int, capacity: int) -> Array:
        _item_size(item_type)
        if capacity < 1:
            raise invalid_parameters(f"capacity {capacity} is invalid (expected at least 1)")
        return cls(context, item_type, capacity)

    @classmethod
    def create_virtual(cls, graph: Graph, item_type: int, capacity: int) -> Array:
        if item_type != Type.VX_TYPE_INVALID:
            _item_size(item_type)
        return cls(graph.context, item_type, capacity, graph)

    def allocate(self, item_type: int, capacity: int) -> None:
        """Give a virtual array its item type and capacity (what a user kernel's meta format
        says at verify) and zeroed storage; what was declared must agree."""
        if self.item_type not in (Type.VX_TYPE_INVALID, item_type):
            raise VXError(Status.VX_ERROR_INVALID_TYPE,
                          f"item type {type_name(item_type)} does not match the declared "
                          f"{type_name(self.item_type)} of {self.describe()}", self)
        if self.capacity and capacity > self.capacity:
            raise VXError(Status.VX_ERROR_INVALID_DIMENSION,
                          f"capacity {capacity} is above the declared {self.capacity} of {self.describe()}", self)
        capacity = self.capacity or capacity
        if capacity < 1:
            raise invalid_parameters(f"capacity of virtual {self.describe()} is unknown", self)
        if self._data is None or self.item_type != item_type:
            self.item_size = _item_size(item_type)
            self._data = zeros((capacity * self.item_size,), _BYTES, f"{capacity} items of {type_name(item_type)}")
        self.item_type, self.capacity = int(item_type), int(capacity)

    def _items(self, start: int, end: int) -> np.ndarray:
        """Items ``start:end`` as a ``(count, item_size)`` byte view of the storage."""
        return self._data.reshape(self.capacity, self.item_size)[start:end]

    def _check_app_access(self, action: str, usage: int, usages, memory_type: int) -> None:
        if hidden(self):
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          f"{action} virtual {self.describe()}: its data is never accessible to the application",
                          self)
        check_usage(usage, usages, self)
        check_memory_type(memory_type, self)

    def _check_range(self, start: int, end: int) -> None:
        if not start < end <= self.num_items:
            raise invalid_parameters(f"range {start}..{end} is empty or beyond the {self.num_items} "
                                     f"item(s) of {self.describe()}", self)

    def _check_stride(self, stride: int, what: str) -> None:
        if stride < self.item_size:
            raise invalid_parameters(f"{what} {stride} is below the item size {self.item_size} "
                                     f"of {self.describe()}", self)

    # -- application access --------------------------------------------------------------
    def add_items(self, count: int, address: int, stride: int, wrap: Wrap) -> None:
        if hidden(self):
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          f"virtual {self.describe()} cannot be filled by the application", self)
        if count == 0:
            return
        if not address:
            raise invalid_parameters(f"ptr is NULL for {count} item(s) of {self.describe()}", self)
        self._check_stride(stride, "stride")
        if self.num_items + count > self.capacity:
            raise VXError(Status.VX_FAILURE, f"{count} more item(s) do not fit {self.describe()} "
                          f"({self.num_items} of {self.capacity} in use)", self)
        user = wrap(address, (count, self.item_size), (stride, 1), _BYTES)
        self._items(self.num_items, self.num_items + count)[...] = user
        self.num_items += count

    def truncate(self, new_count: int) -> None:
        if new_count > self.num_items:
            raise invalid_parameters(f"new_num_items {new_count} is above the {self.num_items} "
                                     f"item(s) of {self.describe()}", self)
        self.num_items = int(new_count)

    def copy_range(self, start: int, end: int, stride: int, address: int, usage: int,
                   memory_type: int, wrap: Wrap) -> None:
        self._check_app_access("copying", usage, COPY_USAGES, memory_type)
        self._check_range(start, end)
        self._check_stride(stride, "user_stride")
        if not address:
            raise invalid_parameters(f"user_ptr is NULL for {self.describe()}", self)
        items = self._items(start, end)
        user = wrap(address, items.shape, (stride, 1), _BYTES)
        if usage == READ:
            np.copyto(user, items)
        else:
            np.copyto(items, user)

    def map_range(self, start: int, end: int, usage: int, memory_type: int,
                  flags: int = 0) -> tuple[int, int, int]:
        """(map id, address of item ``start``, stride in bytes)."""
        self._check_app_access("mapping", usage, MAP_USAGES, memory_type)
        check_map_flags(flags, self)
        self._check_range(start, end)
        items = self._items(start, end)
        return self.maps.open(items), items.__array_interface__["data"][0], self.item_size

    def unmap_range(self, map_id: int) -> None:
        self.maps.close(map_id, self)
