"""``vx_meta_format``: what a user kernel's validator says one output will be.

The validator fills one meta format per output parameter (``vxSetMetaFormatAttribute`` or
``vxSetMetaFormatFromReference``); verification then checks it against the object the node was
given.  A virtual output takes the meta-data (its unknowns are filled and its memory allocated);
a real one must already match.  Meta formats live only while the validator runs and are not
counted among the application's references.
"""
from __future__ import annotations

from typing import Any

from .enums import ArrayAttr, ImageAttr, ObjectArrayAttr, ScalarAttr, Status, TensorAttr, Type, type_name
from .errors import VXError
from .reference import Reference

ATTRIBUTES: dict[int, tuple[int, ...]] = {
    Type.VX_TYPE_TENSOR: (TensorAttr.VX_TENSOR_NUMBER_OF_DIMS, TensorAttr.VX_TENSOR_DIMS,
                          TensorAttr.VX_TENSOR_DATA_TYPE, TensorAttr.VX_TENSOR_FIXED_POINT_POSITION),
    Type.VX_TYPE_IMAGE: (ImageAttr.VX_IMAGE_WIDTH, ImageAttr.VX_IMAGE_HEIGHT, ImageAttr.VX_IMAGE_FORMAT),
    Type.VX_TYPE_SCALAR: (ScalarAttr.VX_SCALAR_TYPE,),
    Type.VX_TYPE_ARRAY: (ArrayAttr.VX_ARRAY_ITEMTYPE, ArrayAttr.VX_ARRAY_CAPACITY),
    Type.VX_TYPE_OBJECT_ARRAY: (ObjectArrayAttr.VX_OBJECT_ARRAY_ITEMTYPE, ObjectArrayAttr.VX_OBJECT_ARRAY_NUMITEMS),
}
"""The attributes a meta format of each object type takes."""

_T, _I, _A, _O = TensorAttr, ImageAttr, ArrayAttr, ObjectArrayAttr


def describe_object(obj: Reference) -> dict[int, Any]:
    """The meta-data attributes of ``obj`` (what ``vxSetMetaFormatFromReference`` copies)."""
    kind = obj.vx_type
    if kind == Type.VX_TYPE_TENSOR:
        return {_T.VX_TENSOR_NUMBER_OF_DIMS: len(obj.dims), _T.VX_TENSOR_DIMS: tuple(obj.dims),
                _T.VX_TENSOR_DATA_TYPE: obj.data_type, _T.VX_TENSOR_FIXED_POINT_POSITION: obj.fpp}
    if kind == Type.VX_TYPE_IMAGE:
        return {_I.VX_IMAGE_WIDTH: obj.width, _I.VX_IMAGE_HEIGHT: obj.height, _I.VX_IMAGE_FORMAT: obj.format}
    if kind == Type.VX_TYPE_SCALAR:
        return {ScalarAttr.VX_SCALAR_TYPE: obj.data_type}
    if kind == Type.VX_TYPE_ARRAY:
        return {_A.VX_ARRAY_ITEMTYPE: obj.item_type, _A.VX_ARRAY_CAPACITY: obj.capacity}
    if kind == Type.VX_TYPE_OBJECT_ARRAY:
        return {_O.VX_OBJECT_ARRAY_ITEMTYPE: obj.item_type, _O.VX_OBJECT_ARRAY_NUMITEMS: len(obj.items)}
    raise VXError(Status.VX_ERROR_INVALID_TYPE,
                  f"{obj.describe()} has no meta format (expected a tensor, image, scalar, array or object array)",
                  obj)


class MetaFormat(Reference):
    """The meta-data one output of a user node will have; ``kind`` is the parameter's object type."""

    vx_type = Type.VX_TYPE_META_FORMAT
    counted = False

    def __init__(self, context: Reference, kind: int, owner: str):
        super().__init__(context)
        self.kind = int(kind)
        self.owner = owner  # "parameter 2 of node ..." for messages
        self.values: dict[int, Any] = {}

    def describe(self) -> str:
        return f"meta format of {self.owner}"

    def check_attribute(self, attribute: int) -> None:
        allowed = ATTRIBUTES.get(self.kind, ())
        if self.kind != Type.VX_TYPE_REFERENCE and attribute not in allowed:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                          f"attribute {attribute:#x} does not describe a {type_name(self.kind)} "
                          f"({self.describe()})", self)

    def set(self, attribute: int, value: Any) -> None:
        self.check_attribute(attribute)
        self.values[int(attribute)] = value

    def get(self, attribute: int) -> Any:
        self.check_attribute(attribute)
        if attribute not in self.values:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                          f"attribute {attribute:#x} of {self.describe()} has not been set", self)
        return self.values[attribute]

    def set_from(self, exemplar: Reference) -> None:
        if self.kind not in (Type.VX_TYPE_REFERENCE, exemplar.vx_type):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"exemplar {exemplar.describe()} is not a {type_name(self.kind)} ({self.describe()})", self)
        if getattr(exemplar, "virtual", False) and exemplar.vx_type == Type.VX_TYPE_TENSOR and not all(exemplar.dims):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"exemplar {exemplar.describe()} is virtual with unknown dims", self)
        self.values = describe_object(exemplar)
        self.kind = exemplar.vx_type
