"""Entry points for object arrays (semantics in ``openvx_nn.core.object_array``)."""
from __future__ import annotations

from ..core import reference
from ..core.context import Context
from ..core.enums import ObjectArrayAttr, Status, Type
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.node import Node
from ..core.object_array import ObjectArray
from ..core.reference import Reference
from ..core.replicate import replicate
from ..core.tensor import Tensor
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry

attributes.register(Type.VX_TYPE_OBJECT_ARRAY, {
    ObjectArrayAttr.VX_OBJECT_ARRAY_ITEMTYPE: Attr("i", lambda a: a.item_type),
    ObjectArrayAttr.VX_OBJECT_ARRAY_NUMITEMS: Attr("N", lambda a: len(a.items)),
})


@creator_entry
def vxnn_create_object_array(context, exemplar, count):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return ObjectArray.create(ctx, reference.lookup(exemplar, Reference, "exemplar"), count)


@creator_entry
def vxnn_create_image_object_array_from_tensor(tensor, rect, count, jump, code):
    source = reference.lookup(tensor, Tensor, "tensor")
    with blaming(source):
        return ObjectArray.from_tensor(source, None if rect == ffi.NULL else tuple(ffi.unpack(rect, 4)),
                                       count, jump, code)


@creator_entry
def vxnn_get_object_array_item(array, index):
    return reference.lookup(array, ObjectArray, "object array").item(index)


@status_entry
def vxnn_replicate_node(graph, node, flags, count):
    g = reference.lookup(graph, Graph, "graph")
    first = reference.lookup(node, Node, "first_node")
    if flags == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, "replicate is NULL", first)
    if count != len(first.params):  # checked before reading: never read past the caller's array
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                      f"number_of_parameters is {count}, {first.describe()} has {len(first.params)}", first)
    replicate(g, first, [bool(flags[i]) for i in range(count)])
