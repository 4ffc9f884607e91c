"""Entry points for arrays (semantics in ``openvx_nn.core.array``)."""
from __future__ import annotations

from ..core import reference
from ..core.array import Array
from ..core.context import Context
from ..core.enums import ArrayAttr, Status, Type
from ..core.errors import VXError
from ..core.graph import Graph
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry
from .memory import address, user_array

attributes.register(Type.VX_TYPE_ARRAY, {
    ArrayAttr.VX_ARRAY_ITEMTYPE: Attr("i", lambda a: a.item_type),
    ArrayAttr.VX_ARRAY_NUMITEMS: Attr("N", lambda a: a.num_items),
    ArrayAttr.VX_ARRAY_CAPACITY: Attr("N", lambda a: a.capacity),
    ArrayAttr.VX_ARRAY_ITEMSIZE: Attr("N", lambda a: a.item_size),
})


def _array(handle: int) -> Array:
    return reference.lookup(handle, Array, "array")


@creator_entry
def vxnn_create_array(context, item_type, capacity):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Array.create(ctx, item_type, capacity)


@creator_entry
def vxnn_create_virtual_array(graph, item_type, capacity):
    owner = reference.lookup(graph, Graph, "graph")
    with blaming(owner):
        return Array.create_virtual(owner, item_type, capacity)


@status_entry
def vxnn_add_array_items(array, count, ptr, stride):
    _array(array).add_items(count, address(ptr), stride, user_array)


@status_entry
def vxnn_truncate_array(array, count):
    _array(array).truncate(count)


@status_entry
def vxnn_copy_array_range(array, start, end, stride, ptr, usage, memory_type):
    _array(array).copy_range(start, end, stride, address(ptr), usage, memory_type, user_array)


@status_entry
def vxnn_map_array_range(array, start, end, map_id, stride, ptr, usage, memory_type, flags):
    arr = _array(array)
    for name, out in (("map_id", map_id), ("stride", stride), ("ptr", ptr)):
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{name} is NULL for {arr.describe()}", arr)
    opened, first, item_stride = arr.map_range(start, end, usage, memory_type, flags)
    map_id[0] = opened
    stride[0] = item_stride
    ptr[0] = ffi.cast("void *", first)


@status_entry
def vxnn_unmap_array_range(array, map_id):
    _array(array).unmap_range(map_id)
