"""Object arrays: a fixed number of objects of one type, made by the library.

vxCreateObjectArray makes ``count`` objects with the exemplar's meta-data
(images, tensors, arrays, scalars and LUTs; a virtual exemplar's unknowns are
``VX_ERROR_INVALID_PARAMETERS``).  vxCreateImageObjectArrayFromTensor makes
images that view slices of a 3-D tensor (``image.tensor_images``).

The array holds its items (a library reference each); they have no
application reference until vxGetObjectArrayItem hands one out, which the
application releases as usual.  Items count toward VX_CONTEXT_REFERENCES
while they live and go when the array and every handed-out reference are gone.
"""
from __future__ import annotations

from collections.abc import Callable

from .array import Array
from .context import Context
from .enums import Status, Type, type_name
from .errors import VXError, invalid_parameters
from .image import Image, Rect, tensor_images
from .lut import LUT
from .reference import Reference
from .scalar import Scalar
from .tensor import Tensor


def _like_image(ctx: Context, ex: Image) -> Image:
    return Image.create(ctx, ex.width, ex.height, ex.format)


def _like_tensor(ctx: Context, ex: Tensor) -> Tensor:
    return Tensor.create(ctx, len(ex.dims), ex.dims, ex.data_type, ex.fpp)


def _like_array(ctx: Context, ex: Array) -> Array:
    return Array.create(ctx, ex.item_type, ex.capacity)


def _like_scalar(ctx: Context, ex: Scalar) -> Scalar:
    return Scalar(ctx, ex.data_type)


def _like_lut(ctx: Context, ex: LUT) -> LUT:
    return LUT(ctx, ex.data_type, ex.count)


_LIKE: dict[type, Callable[[Context, Reference], Reference]] = {
    Image: _like_image, Tensor: _like_tensor, Array: _like_array, Scalar: _like_scalar, LUT: _like_lut,
}


class ObjectArray(Reference):
    """The items and their type; create it with the class methods."""

    vx_type = Type.VX_TYPE_OBJECT_ARRAY

    def __init__(self, context: Context, item_type: int, items: list[Reference]):
        super().__init__(context)
        self.item_type = int(item_type)
        self.items = items
        for index, item in enumerate(items):
            item.external = 0
            item.hold()
            item.owner = (self, index)  # vxReplicateNode finds an item's array and place by it

    @classmethod
    def create(cls, context: Context, exemplar: Reference, count: int) -> ObjectArray:
        make = _LIKE.get(type(exemplar))
        if make is None:
            kinds = ", ".join(type_name(k.vx_type) for k in _LIKE)
            raise VXError(Status.VX_ERROR_INVALID_TYPE,
                          f"exemplar {exemplar.describe()} cannot make an object array (expected one of {kinds})",
                          exemplar)
        if getattr(exemplar, "virtual", False):
            raise invalid_parameters(f"exemplar {exemplar.describe()} is virtual", exemplar)
        if count < 1:
            raise invalid_parameters(f"count {count} is invalid (expected at least 1)", exemplar)
        items: list[Reference] = []
        try:
            for _ in range(count):
                items.append(make(context, exemplar))
        except VXError:
            for item in items:
                item.destroy()
            raise
        return cls(context, exemplar.vx_type, items)

    @classmethod
    def from_tensor(cls, tensor: Tensor, rect: Rect | None, count: int, jump: int, code: int) -> ObjectArray:
        return cls(tensor.context, Type.VX_TYPE_IMAGE, tensor_images(tensor, rect, count, jump, code))

    def item(self, index: int) -> Reference:
        """vxGetObjectArrayItem: the item with one more application reference."""
        if not 0 <= index < len(self.items):
            raise invalid_parameters(f"index {index} is out of range for {self.describe()} of "
                                     f"{len(self.items)} item(s)", self)
        item = self.items[index]
        item.retain()
        return item

    def on_destroy(self) -> None:
        for item in self.items:
            item.unhold()
