"""Entry points for images (semantics in ``openvx_nn.core.image``)."""
from __future__ import annotations

from ..core import reference
from ..core.context import Context
from ..core.enums import ImageAttr, Status, Type
from ..core.errors import VXError
from ..core.graph import Graph
from ..core.image import Image
from . import attributes
from .attributes import Attr
from .binding import ffi
from .entry import blaming, creator_entry, status_entry
from .memory import address, user_array


def _uniform_value(image: Image) -> bytes:
    raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                  f"{image.describe()} is not uniform, so it has no VX_IMAGE_UNIFORM_VALUE", image)


attributes.register(Type.VX_TYPE_IMAGE, {
    ImageAttr.VX_IMAGE_WIDTH: Attr("I", lambda i: i.width),
    ImageAttr.VX_IMAGE_HEIGHT: Attr("I", lambda i: i.height),
    ImageAttr.VX_IMAGE_FORMAT: Attr("I", lambda i: i.format),
    ImageAttr.VX_IMAGE_PLANES: Attr("N", lambda i: 1),
    ImageAttr.VX_IMAGE_SPACE: Attr("i", lambda i: i.space, Image.set_space),
    ImageAttr.VX_IMAGE_RANGE: Attr("i", lambda i: i.range),
    ImageAttr.VX_IMAGE_MEMORY_TYPE: Attr("i", lambda i: i.memory_type),
    ImageAttr.VX_IMAGE_IS_UNIFORM: Attr("i", lambda i: 0),
    ImageAttr.VX_IMAGE_UNIFORM_VALUE: Attr("fixed", _uniform_value, width=16),
})


def _image(handle: int) -> Image:
    return reference.lookup(handle, Image, "image")


def _rect(ptr) -> tuple[int, int, int, int] | None:
    return None if ptr == ffi.NULL else tuple(ffi.unpack(ptr, 4))


def _layout(ptr) -> tuple[int, int, int, int] | None:
    return None if ptr == ffi.NULL else tuple(ffi.unpack(ptr, 4))


@creator_entry
def vxnn_create_image(context, width, height, code):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Image.create(ctx, width, height, code)


@creator_entry
def vxnn_create_virtual_image(graph, width, height, code):
    owner = reference.lookup(graph, Graph, "graph")
    with blaming(owner):
        return Image.create_virtual(owner, width, height, code)


@creator_entry
def vxnn_create_image_from_handle(context, code, layout, ptr, memory_type):
    ctx = reference.lookup(context, Context, "context")
    with blaming(ctx):
        return Image.from_handle(ctx, code, _layout(layout), address(ptr), memory_type, user_array)


@status_entry
def vxnn_copy_image_patch(image, rect, plane, layout, ptr, usage, memory_type):
    _image(image).copy_patch(_rect(rect), plane, _layout(layout), address(ptr), usage, memory_type, user_array)


@status_entry
def vxnn_map_image_patch(image, rect, plane, map_id, layout, ptr, usage, memory_type, flags):
    img = _image(image)
    for name, out in (("map_id", map_id), ("addr", layout), ("ptr", ptr)):
        if out == ffi.NULL:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{name} is NULL for {img.describe()}", img)
    opened, first, addressing = img.map_patch(_rect(rect), plane, usage, memory_type, flags)
    map_id[0] = opened
    layout[0:4] = addressing
    ptr[0] = ffi.cast("void *", first)


@status_entry
def vxnn_unmap_image_patch(image, map_id):
    _image(image).unmap_patch(map_id)
