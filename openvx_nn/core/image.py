"""Images: one plane of pixels, enough for vision data to reach tensors and back.

Formats: U8, U16, S16, U32, S32 (one channel) and RGB, RGBX (three and four
interleaved U8 channels).  Other standard formats (U1, the YUV family) are
``VX_ERROR_NOT_SUPPORTED``; an unknown code is ``VX_ERROR_INVALID_FORMAT``.

``array`` is always ``(height, width, channels)`` of the channel dtype, so a
pixel is ``array[y, x]`` and addressing is ``stride_y`` (axis 0), ``stride_x``
(axis 1).  Four kinds, fixed at creation:

- normal (vxCreateImage): zeroed storage of its own, packed rows.
- virtual (vxCreateVirtualImage): width, height (0) and format
  (``VX_DF_IMAGE_VIRT``) may be unknown; the application never reads or
  writes it (``VX_ERROR_OPTIMIZED_AWAY``).
- from handle (vxCreateImageFromHandle): the application's memory with its
  ``stride_x`` (at least the pixel size) and ``stride_y`` (at least
  ``stride_x * width``); non-negative strides only.
- tensor view (vxCreateImageObjectArrayFromTensor): a rectangle of one slice
  of a 3-D tensor (dims 0 and 1 are x and y, dim 2 the slice).  ``array`` is
  cut from the tensor's *current* data on every access, so writes land in the
  tensor and a swapped tensor handle is followed.  It holds the tensor, and
  its open maps pin the tensor's memory against swaps.

Maps hand out the address of the rectangle's first pixel inside the image's
own memory; copies go through the application's own addressing.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .access import COPY_USAGES, MAP_USAGES, READ, Mappings, check_map_flags, check_memory_type, check_usage, hidden
from .context import Context
from .datatypes import zeros
from .enums import ChannelRange, ColorSpace, DFImage, MemoryType, Status, Type, type_name
from .errors import VXError, invalid_parameters
from .reference import Reference
from .tensor import Tensor, Wrap

if TYPE_CHECKING:
    from .graph import Graph

D = DFImage
FORMATS: dict[int, tuple[np.dtype, int]] = {
    D.VX_DF_IMAGE_U8: (np.dtype(np.uint8), 1), D.VX_DF_IMAGE_U16: (np.dtype(np.uint16), 1),
    D.VX_DF_IMAGE_S16: (np.dtype(np.int16), 1), D.VX_DF_IMAGE_U32: (np.dtype(np.uint32), 1),
    D.VX_DF_IMAGE_S32: (np.dtype(np.int32), 1), D.VX_DF_IMAGE_RGB: (np.dtype(np.uint8), 3),
    D.VX_DF_IMAGE_RGBX: (np.dtype(np.uint8), 4),
}
"""Supported formats: channel dtype and channels per pixel."""

TENSOR_FORMATS: dict[int, int] = {
    Type.VX_TYPE_UINT8: D.VX_DF_IMAGE_U8, Type.VX_TYPE_INT16: D.VX_DF_IMAGE_S16,
    Type.VX_TYPE_UINT16: D.VX_DF_IMAGE_U16, Type.VX_TYPE_INT32: D.VX_DF_IMAGE_S32,
    Type.VX_TYPE_UINT32: D.VX_DF_IMAGE_U32,
}
"""The image format each tensor data type can be viewed as."""

SCALE_UNITY = 1024
Rect = tuple[int, int, int, int]  # start_x, start_y, end_x, end_y
Layout = tuple[int, int, int, int]  # dim_x, dim_y, stride_x, stride_y


def format_name(code: int) -> str:
    try:
        return DFImage(code).name
    except ValueError:
        return f"format {code:#010x}"


def check_format(code: int, virtual: bool = False) -> None:
    if virtual and code == D.VX_DF_IMAGE_VIRT:
        return
    if code in FORMATS:
        return
    known = code in DFImage._value2member_map_
    supported = ", ".join(DFImage(f).name for f in FORMATS)
    raise VXError(Status.VX_ERROR_NOT_SUPPORTED if known and code != D.VX_DF_IMAGE_VIRT
                  else Status.VX_ERROR_INVALID_FORMAT,
                  f"{format_name(code)} is not supported for images (expected one of {supported})")


def pixel_size(code: int) -> int:
    dtype, channels = FORMATS[code]
    return dtype.itemsize * channels


def _check_size(width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise VXError(Status.VX_ERROR_INVALID_DIMENSION,
                      f"image size {width}x{height} is invalid (expected at least 1x1)")


def _check_layout(layout: Layout | None, width: int, height: int, code: int, what: str,
                  ref: Reference | None = None) -> tuple[int, int]:
    """Strides of application memory: stride_x >= pixel size, stride_y >= stride_x * width."""
    if layout is None:
        raise invalid_parameters(f"{what} is NULL", ref)
    _, _, stride_x, stride_y = layout
    size = pixel_size(code)
    if stride_x < size:
        raise invalid_parameters(f"{what}.stride_x {stride_x} is below the pixel size {size} "
                                 f"of {format_name(code)}", ref)
    if stride_y < stride_x * width:
        raise invalid_parameters(f"{what}.stride_y {stride_y} is below stride_x * width = "
                                 f"{stride_x} * {width}", ref)
    return stride_x, stride_y


class Image(Reference):
    """An image of any kind; create it with the class methods."""

    vx_type = Type.VX_TYPE_IMAGE

    def __init__(self, context: Context, width: int, height: int, code: int, *,
                 storage: np.ndarray | None = None, graph: Graph | None = None,
                 tensor: Tensor | None = None, box: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)):
        super().__init__(context)
        self.width, self.height, self.format = int(width), int(height), int(code)
        self.declared = (self.width, self.height, self.format)  # a virtual image's unknowns: 0, VIRT
        self.space = ColorSpace.VX_COLOR_SPACE_DEFAULT
        self.range = ChannelRange.VX_CHANNEL_RANGE_FULL
        self.memory_type = MemoryType.VX_MEMORY_TYPE_NONE
        self.graph = graph
        self.virtual = graph is not None
        self.tensor = tensor
        self._box = box  # x0, y0, x1, y1, slice of a tensor view
        self._storage = storage
        self.maps = Mappings()

    # -- creators -------------------------------------------------------------------
    @classmethod
    def create(cls, context: Context, width: int, height: int, code: int) -> Image:
        check_format(code)
        _check_size(width, height)
        dtype, channels = FORMATS[code]
        storage = zeros((height, width, channels), dtype, f"a {width}x{height} {format_name(code)} image")
        return cls(context, width, height, code, storage=storage)

    @classmethod
    def create_virtual(cls, graph: Graph, width: int, height: int, code: int) -> Image:
        check_format(code, virtual=True)
        return cls(graph.context, width, height, code, graph=graph)

    @classmethod
    def from_handle(cls, context: Context, code: int, layout: Layout | None, address: int,
                    memory_type: int, wrap: Wrap) -> Image:
        check_format(code)
        check_memory_type(memory_type)
        if layout is None:
            raise invalid_parameters("addrs is NULL")
        width, height = layout[0], layout[1]
        _check_size(width, height)
        stride_x, stride_y = _check_layout(layout, width, height, code, "addrs[0]")
        if not address:
            raise invalid_parameters("ptrs[0] is NULL (expected the plane's memory)")
        dtype, channels = FORMATS[code]
        storage = wrap(address, (height, width, channels), (stride_y, stride_x, dtype.itemsize), dtype)
        image = cls(context, width, height, code, storage=storage)
        image.memory_type = MemoryType.VX_MEMORY_TYPE_HOST
        return image

    @classmethod
    def from_tensor(cls, tensor: Tensor, rect: Rect, index: int, code: int) -> Image:
        """A view of rectangle ``rect`` of slice ``index`` of a 3-D tensor (checked by the caller)."""
        x0, y0, x1, y1 = rect
        image = cls(tensor.context, x1 - x0, y1 - y0, code, tensor=tensor, box=(x0, y0, x1, y1, index))
        tensor.hold()
        return image

    def allocate(self, width: int, height: int, code: int) -> None:
        """Give a virtual image its size and format (inferred at verify) and zeroed storage;
        what was declared (non-zero size, a format other than VX_DF_IMAGE_VIRT) must agree."""
        declared_width, declared_height, declared_format = self.declared
        for what, declared, want in (("width", declared_width, width), ("height", declared_height, height)):
            if declared and declared != want:
                raise VXError(Status.VX_ERROR_INVALID_DIMENSION,
                              f"{what} {want} does not match the declared {declared} of {self.describe()}", self)
        if declared_format not in (D.VX_DF_IMAGE_VIRT, code):
            raise VXError(Status.VX_ERROR_INVALID_FORMAT,
                          f"format {format_name(code)} does not match the declared "
                          f"{format_name(declared_format)} of {self.describe()}", self)
        check_format(code)
        _check_size(width, height)
        if self._storage is None or (self.width, self.height, self.format) != (width, height, code):
            dtype, channels = FORMATS[code]
            self._storage = zeros((height, width, channels), dtype, f"a {width}x{height} {format_name(code)} image")
        self.width, self.height, self.format = int(width), int(height), int(code)

    # -- data -------------------------------------------------------------------------
    @property
    def array(self) -> np.ndarray:
        """The pixels, ``(height, width, channels)``; writes go to the image's memory."""
        if self.tensor is not None:
            x0, y0, x1, y1, z = self._box
            return self.tensor.array[x0:x1, y0:y1, z].T[:, :, None]
        if self._storage is None:
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          f"virtual {self.describe()} has no data outside its graph", self)
        return self._storage

    def _check_access(self, rect: Rect | None, plane: int, usage: int, usages: Sequence[int],
                      memory_type: int) -> Rect:
        if hidden(self):
            raise VXError(Status.VX_ERROR_OPTIMIZED_AWAY,
                          f"virtual {self.describe()} cannot be accessed by the application", self)
        if rect is None:
            raise invalid_parameters(f"rect is NULL for {self.describe()}", self)
        x0, y0, x1, y1 = rect
        if not (x0 < x1 <= self.width and y0 < y1 <= self.height):
            raise invalid_parameters(f"rectangle ({x0}, {y0})-({x1}, {y1}) is empty or outside "
                                     f"{self.describe()} of {self.width}x{self.height}", self)
        if plane != 0:
            raise invalid_parameters(f"plane_index {plane} is out of range for {self.describe()} "
                                     f"of {format_name(self.format)} (one plane)", self)
        check_usage(usage, usages, self)
        check_memory_type(memory_type, self)
        return rect

    def copy_patch(self, rect: Rect | None, plane: int, layout: Layout | None, address: int,
                   usage: int, memory_type: int, wrap: Wrap) -> None:
        """vxCopyImagePatch: between ``rect`` and application memory laid out by ``layout``."""
        x0, y0, x1, y1 = self._check_access(rect, plane, usage, COPY_USAGES, memory_type)
        stride_x, stride_y = _check_layout(layout, x1 - x0, y1 - y0, self.format, "user_addr", self)
        if not address:
            raise invalid_parameters(f"user_ptr is NULL for {self.describe()}", self)
        patch = self.array[y0:y1, x0:x1]
        user = wrap(address, patch.shape, (stride_y, stride_x, patch.dtype.itemsize), patch.dtype)
        if usage == READ:
            np.copyto(user, patch)
        else:
            np.copyto(patch, user)
            self._wrote()

    def map_patch(self, rect: Rect | None, plane: int, usage: int, memory_type: int,
                  flags: int = 0) -> tuple[int, int, Layout]:
        """vxMapImagePatch: (map id, address of the first pixel, its layout)."""
        x0, y0, x1, y1 = self._check_access(rect, plane, usage, MAP_USAGES, memory_type)
        check_map_flags(flags, self)
        patch = self.array[y0:y1, x0:x1]
        map_id = self.maps.open(patch)  # holding the patch holds the memory
        if self.tensor is not None:
            self.tensor.root.pins += 1
        return map_id, patch.__array_interface__["data"][0], (x1 - x0, y1 - y0, patch.strides[1], patch.strides[0])

    def unmap_patch(self, map_id: int) -> None:
        self.maps.close(map_id, self)
        if self.tensor is not None:
            self.tensor.root.pins -= 1
            self._wrote()

    def _wrote(self) -> None:
        """Count a write on the tensor an image views: planners re-plan its [static] values by that count."""
        if self.tensor is not None:
            self.tensor.root.writes += 1

    # -- attributes ---------------------------------------------------------------------
    def set_space(self, space: int) -> None:
        if space not in ColorSpace._value2member_map_:
            raise VXError(Status.VX_ERROR_INVALID_VALUE,
                          f"color space {space:#x} is not a vx_color_space_e for {self.describe()}", self)
        self.space = space

    def describe_format(self) -> str:
        return f"{format_name(self.format)} {self.width}x{self.height}"

    # -- lifetime -------------------------------------------------------------------------
    def on_destroy(self) -> None:
        if self.tensor is not None:
            self.tensor.root.pins -= len(self.maps)
            self.tensor.unhold()


def tensor_images(tensor: Tensor, rect: Rect | None, count: int, jump: int, code: int) -> list[Image]:
    """The images of vxCreateImageObjectArrayFromTensor: image i views the slice ``i * jump`` bytes
    past the first, ``jump`` being in bytes as the header's text says (a multiple of the tensor's
    dim-2 byte stride; 0 is allowed for a single image)."""
    if len(tensor.dims) != 3:
        raise invalid_parameters(f"{tensor.describe()} has {len(tensor.dims)} dims (expected 3)", tensor)
    if tensor.virtual:
        raise invalid_parameters(f"virtual {tensor.describe()} cannot be viewed as images", tensor)
    expected = TENSOR_FORMATS.get(tensor.data_type)
    if code != expected:
        wanted = format_name(expected) if expected is not None else "none (no image format fits)"
        raise VXError(Status.VX_ERROR_INVALID_FORMAT,
                      f"{format_name(code)} does not match {type_name(tensor.data_type)} of "
                      f"{tensor.describe()} (expected {wanted})", tensor)
    if rect is None:
        raise invalid_parameters(f"rect is NULL for {tensor.describe()}", tensor)
    x0, y0, x1, y1 = rect
    if not (x0 < x1 <= tensor.dims[0] and y0 < y1 <= tensor.dims[1]):
        raise invalid_parameters(f"rectangle ({x0}, {y0})-({x1}, {y1}) is empty or outside dims "
                                 f"{list(tensor.dims[:2])} of {tensor.describe()}", tensor)
    stride = tensor.array.strides[2]
    if jump % stride or (jump == 0 and count > 1):
        raise invalid_parameters(f"jump {jump} is not a positive multiple of the dim-2 stride {stride} bytes "
                                 f"of {tensor.describe()} (jump is in bytes)", tensor)
    step = jump // stride
    if count < 1 or (count - 1) * step >= tensor.dims[2]:
        raise invalid_parameters(f"array_size {count} with jump {jump} bytes ({step} slices) does not fit dim 2 "
                                 f"of size {tensor.dims[2]} of {tensor.describe()} (expected array_size >= 1 and "
                                 f"(array_size - 1) * jump / {stride} < {tensor.dims[2]})", tensor)
    return [Image.from_tensor(tensor, rect, i * step, code) for i in range(count)]
