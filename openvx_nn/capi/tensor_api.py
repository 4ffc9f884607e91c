"""Entry points for tensors: C arrays and pointers in, object-model calls, C outputs back.

The rules (ranks, bounds, strides, kinds of tensor) are the model's:
``core.tensor`` and ``core.tensor_patch``.
"""
from __future__ import annotations

from ..core import reference, tensor_patch
from ..core.context import MAX_TENSOR_DIMS, Context
from ..core.enums import Status, TensorAttr, Type
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.tensor import Tensor, mapped_after_release
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry
from .memory import address, user_array

attributes.register(Type.VX_TYPE_TENSOR, {
    TensorAttr.VX_TENSOR_NUMBER_OF_DIMS: Attr("N", lambda t: len(t.dims)),
    TensorAttr.VX_TENSOR_DIMS: Attr("sizes", lambda t: t.dims),
    TensorAttr.VX_TENSOR_DATA_TYPE: Attr("i", lambda t: t.data_type),
    TensorAttr.VX_TENSOR_FIXED_POINT_POSITION: Attr("b", lambda t: t.fpp),
})


def _sizes(ptr, n: int, most: int = MAX_TENSOR_DIMS) -> tuple[int, ...] | None:
    """A ``vx_size[n]`` argument, None for NULL.  Nothing is read unless 1 <= n <=
    ``most`` (what the call can use: the rank, for a box in a tensor); the model
    rejects any other count before it looks at the values."""
    if ptr == ffi.NULL:
        return None
    return tuple(ffi.unpack(ptr, n)) if 0 < n <= most else ()


def _tensor(handle: int) -> Tensor:
    return reference.lookup(handle, Tensor, "tensor")


@creator_entry
def vxnn_create_tensor(context, n, dims, data_type, fpp):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Tensor.create(ctx, n, _sizes(dims, n), data_type, fpp)


@creator_entry
def vxnn_create_virtual_tensor(graph, n, dims, data_type, fpp):
    owner = reference.lookup(graph, Graph, "graph")
    with blaming(owner):
        return Tensor.create_virtual(owner, n, _sizes(dims, n), data_type, fpp)


@creator_entry
def vxnn_create_tensor_from_view(tensor, n, start, end):
    parent = _tensor(tensor)
    with blaming(parent):
        rank = len(parent.dims)
        return Tensor.from_view(parent, n, _sizes(start, n, rank), _sizes(end, n, rank))


@creator_entry
def vxnn_create_tensor_from_handle(context, n, dims, data_type, fpp, stride, ptr, memory_type):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Tensor.from_handle(ctx, n, _sizes(dims, n), data_type, fpp, _sizes(stride, n),
                                  address(ptr), memory_type, user_array)


@status_entry
def vxnn_swap_tensor_handle(tensor, new_ptr, prev_ptr):
    previous = _tensor(tensor).swap_handle(address(new_ptr), user_array)
    if prev_ptr != ffi.NULL:
        prev_ptr[0] = ffi.cast("void *", previous)


@status_entry
def vxnn_copy_tensor_patch(tensor, n, start, end, user_stride, ptr, usage, memory_type):
    t = _tensor(tensor)
    rank = len(t.dims)
    tensor_patch.copy_patch(t, n, _sizes(start, n, rank), _sizes(end, n, rank), _sizes(user_stride, n, rank),
                            address(ptr), usage, memory_type, user_array)


@status_entry
def vxnn_map_tensor_patch(tensor, n, start, end, map_id, stride, ptr, usage, memory_type):
    t = _tensor(tensor)
    for name, out in (("map_id", map_id), ("stride", stride), ("ptr", ptr)):
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{name} is NULL for {t.describe()}", t)
    rank = len(t.dims)
    opened, first, strides = tensor_patch.map_patch(t, n, _sizes(start, n, rank), _sizes(end, n, rank), usage,
                                                    memory_type)
    map_id[0] = opened
    stride[0:len(strides)] = strides
    ptr[0] = ffi.cast("void *", first)


@status_entry
def vxnn_unmap_tensor_patch(tensor, map_id):
    t = mapped_after_release(tensor) if tensor else None
    tensor_patch.unmap_patch(t or _tensor(tensor), map_id)
