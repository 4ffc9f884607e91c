"""Entry points for scalars (semantics in ``openvx_nn.core.scalar``)."""
from __future__ import annotations

from ..core import reference
from ..core.context import Context
from ..core.enums import ScalarAttr, Type
from ..core.graph import Graph
from ..core.scalar import Scalar, check_size, plain_size
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry

attributes.register(Type.VX_TYPE_SCALAR, {
    ScalarAttr.VX_SCALAR_TYPE: Attr("i", lambda s: s.data_type),
})


def _buffer(ptr, size: int):
    """The application's ``size`` bytes at ``ptr`` (read only when used), None for NULL."""
    return None if ptr == ffi.NULL else ffi.buffer(ptr, size)


@creator_entry
def vxnn_create_scalar(context, data_type, ptr):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Scalar(ctx, data_type, _buffer(ptr, plain_size(data_type)))


@creator_entry
def vxnn_create_scalar_with_size(context, data_type, ptr, size):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        check_size(data_type, size)
        return Scalar(ctx, data_type, _buffer(ptr, size))


@creator_entry
def vxnn_create_virtual_scalar(graph, data_type):
    scope = reference.lookup(graph, Graph, "graph")
    with blaming(scope):
        return Scalar(scope.context, data_type, scope=scope)


def _copy(handle, ptr, usage, mem_type, size=None):
    scalar = reference.lookup(handle, Scalar, "scalar")
    scalar.copy(_buffer(ptr, scalar.size), usage, mem_type, size)


@status_entry
def vxnn_copy_scalar(scalar, ptr, usage, mem_type):
    _copy(scalar, ptr, usage, mem_type)


@status_entry
def vxnn_copy_scalar_with_size(scalar, size, ptr, usage, mem_type):
    _copy(scalar, ptr, usage, mem_type, size)
