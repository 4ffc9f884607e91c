"""CoreML spatial resampling kernels: upsample / resize on a sampling grid, crop-and-resize."""
from __future__ import annotations

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import resample
from ...kernels.frontend.resample import crop_resize
from .common import ENUM, F32, INT32, declared_output, describe, enum_value, float_input, output, scalar, tensor

RESAMPLE_METHODS = ("nearest", "strict_align_endpoints", "align_endpoints", "upsample", "roi_align",
                    "upsample_default", "align_corners_true", "align_corners_false")
BOX_MODES = ("corners_height_first", "corners_width_first", "center_size_height_first", "center_size_width_first")


def _validate_resample(v: Validation) -> None:
    x = float_input(v, 0)
    v.state["method"] = method = enum_value(v, 1, RESAMPLE_METHODS, "method")
    dims = declared_output(v, 2)
    v.require(x.rank >= 3 and dims[2:] == x.dims[2:], 2, Status.VX_ERROR_INVALID_DIMENSION,
              f"only width and height may change: {list(x.dims)} -> {list(dims)}")
    if method == "nearest":
        v.require(dims[0] % x.dims[0] == 0 and dims[1] % x.dims[1] == 0, 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"nearest upsampling needs whole factors: {list(x.dims[:2])} -> {list(dims[:2])}")


def _prepare_resample(p, state):
    return resample.prepare(p[0].array, p[2].array, state["method"]).run


describe(20, "resample", (tensor("input"), scalar("method", ENUM), output()), _validate_resample,
         lambda p, state: _prepare_resample(p, state)(), _prepare_resample,
         lambda p, state: resample.prepare(p[0].array, p[2].array, state["method"]).entry())


def _validate_resample_nhwc(v: Validation) -> None:
    x = float_input(v, 0)
    v.state["method"] = method = enum_value(v, 1, RESAMPLE_METHODS, "method")
    dims = declared_output(v, 2)
    v.require(x.rank == 4 and len(dims) == 4 and dims[0] == x.dims[0] and dims[3] == x.dims[3], 2,
              Status.VX_ERROR_INVALID_DIMENSION,
              f"channels-last [C, W, H, N]: only width and height may change: {list(x.dims)} -> {list(dims)}")
    if method == "nearest":
        v.require(dims[1] % x.dims[1] == 0 and dims[2] % x.dims[2] == 0, 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"nearest upsampling needs whole factors: {list(x.dims[1:3])} -> {list(dims[1:3])}")


def _prepare_resample_nhwc(p, state):
    return resample.prepare_channels_last(p[0].array, p[2].array, state["method"]).run


# The same resampling of channels-last [C, W, H, N] tensors (CoreML's NHWC route: DeepLab's image-pooling branch
# upsampled into its slice of the concatenation), each channel a plane of the same loops.
describe(94, "resample_nhwc", (tensor("input"), scalar("method", ENUM), output()), _validate_resample_nhwc,
         lambda p, state: _prepare_resample_nhwc(p, state)(), _prepare_resample_nhwc,
         lambda p, state: resample.prepare_channels_last(p[0].array, p[2].array, state["method"]).entry())


def _validate_crop_resize(v: Validation) -> None:
    x = float_input(v, 0)
    boxes = float_input(v, 1)
    v.require(x.rank == 5 and x.dims[4] == 1, 0, Status.VX_ERROR_INVALID_DIMENSION,
              f"input must be [W, H, C, B, 1], got {list(x.dims)}")
    v.require(boxes.rank == 5 and boxes.dims[2] in (4, 5), 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"boxes must be [1, 1, 4 or 5, 1, N], got {list(boxes.dims)}")
    v.state["method"] = enum_value(v, 2, RESAMPLE_METHODS, "method")
    v.state["box_mode"] = enum_value(v, 3, BOX_MODES, "box mode")
    declared_output(v, 6)


def _run_crop_resize(p, state) -> None:
    crop_resize(p[0].array, p[1].array, p[6].array, state["method"], bool(p[4].value), state["box_mode"], p[5].value)


describe(21, "crop_resize", (tensor("input"), tensor("boxes"), scalar("method", ENUM), scalar("box_mode", ENUM),
                             scalar("normalized", INT32), scalar("spatial_scale", F32), output()),
         _validate_crop_resize, _run_crop_resize)
