"""``org.khronos.openvx.color_convert`` for the image formats the library has: RGB <-> RGBX.

Every other pair of formats (the YUV family is not implemented, and a conversion to the same
format is not one the standard lists) fails verification with VX_ERROR_INVALID_FORMAT. The
output has the input's width and height; a virtual output takes them, and must state its format.
"""
from __future__ import annotations

from ...core.enums import DFImage, Kernel, Status, Type
from ...core.errors import VXError
from ...core.kernels import register
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.validation import Validation

LIBRARY = 0  # VX_LIBRARY_KHR_BASE
PAIRS = {(DFImage.VX_DF_IMAGE_RGB, DFImage.VX_DF_IMAGE_RGBX), (DFImage.VX_DF_IMAGE_RGBX, DFImage.VX_DF_IMAGE_RGB)}


def _name(code: int) -> str:
    try:
        return DFImage(code).name
    except ValueError:
        return f"format {code:#x}"


def _validate(v: Validation) -> None:
    src, dst = v.ref(0), v.ref(1)
    v.require(not src.virtual or src.width and src.height and src.format != DFImage.VX_DF_IMAGE_VIRT, 0,
              Status.VX_ERROR_INVALID_PARAMETERS, f"input {src.describe()} has unknown size or format")
    target = dst.declared[2] if dst.virtual else dst.format
    if (src.format, target) not in PAIRS:
        pairs = ", ".join(f"{_name(a)} -> {_name(b)}" for a, b in sorted(PAIRS))
        v.fail(1, Status.VX_ERROR_INVALID_FORMAT,
               f"no color conversion from {_name(src.format)} to {_name(target)} (supported: {pairs})")
    if dst.virtual:
        try:
            dst.allocate(src.width, src.height, target)
        except VXError as err:  # the virtual image's declared size disagrees
            v.fail(1, err.status, err.message)
        return
    v.require((dst.width, dst.height) == (src.width, src.height), 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"output is {dst.width}x{dst.height}, the input {src.width}x{src.height}")


def _execute(p, state) -> None:
    from ...kernels.openvx.color_convert import convert_channels
    convert_channels(p[0].array, p[1].array)
    p[1]._wrote()


register(KernelDescription(
    "org.khronos.openvx.color_convert", Kernel.VX_KERNEL_COLOR_CONVERT, LIBRARY,
    (ParamSpec("input", IN, Type.VX_TYPE_IMAGE), ParamSpec("output", OUT, Type.VX_TYPE_IMAGE)),
    _validate, _execute))
