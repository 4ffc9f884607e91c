"""Entry points for LUTs (semantics in ``openvx_nn.core.lut``)."""
from __future__ import annotations

from ..core import reference
from ..core.context import Context
from ..core.enums import LutAttr, Status, Type
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.lut import LUT
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry

attributes.register(Type.VX_TYPE_LUT, {
    LutAttr.VX_LUT_TYPE: Attr("i", lambda t: t.data_type),
    LutAttr.VX_LUT_COUNT: Attr("N", lambda t: t.count),
    LutAttr.VX_LUT_SIZE: Attr("N", lambda t: t.size),
    LutAttr.VX_LUT_OFFSET: Attr("I", lambda t: t.offset),
})


def _lut(handle) -> LUT:
    return reference.lookup(handle, LUT, "lut")


@creator_entry
def vxnn_create_lut(context, data_type, count):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return LUT(ctx, data_type, count)


@creator_entry
def vxnn_create_virtual_lut(graph, data_type, count):
    scope = reference.lookup(graph, Graph, "graph")
    with blaming(scope):
        return LUT(scope.context, data_type, count, scope)


@status_entry
def vxnn_copy_lut(handle, ptr, usage, mem_type):
    lut = _lut(handle)
    lut.copy(None if ptr == ffi.NULL else ffi.buffer(ptr, lut.size), usage, mem_type)


@status_entry
def vxnn_map_lut(handle, map_id_ptr, ptr_ptr, usage, mem_type, flags):
    lut = _lut(handle)
    for out, name in ((map_id_ptr, "map_id"), (ptr_ptr, "ptr")):
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"mapping {lut.describe()}: {name} is NULL", lut)
    map_id, array = lut.map(usage, mem_type, flags)
    map_id_ptr[0] = map_id
    ptr_ptr[0] = ffi.cast("void *", array.ctypes.data)


@status_entry
def vxnn_unmap_lut(handle, map_id):
    _lut(handle).unmap(map_id)
