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


def _check_resample(v: Validation, w: int, min_rank: int, what: str) -> None:
    """A resampling's output may differ from its input on the width and height axes ``w``, ``w + 1`` alone;
    nearest upsampling needs whole factors on both."""
    x = float_input(v, 0)
    v.state["method"] = method = enum_value(v, 1, RESAMPLE_METHODS, "method")
    dims = declared_output(v, 2)
    kept = len(dims) == x.rank and all(d == e for k, (d, e) in enumerate(zip(dims, x.dims)) if k not in (w, w + 1))
    v.require(x.rank >= min_rank and kept, 2, Status.VX_ERROR_INVALID_DIMENSION,
              f"{what}only width and height may change: {list(x.dims)} -> {list(dims)}")
    if method == "nearest":
        v.require(dims[w] % x.dims[w] == 0 and dims[w + 1] % x.dims[w + 1] == 0, 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"nearest upsampling needs whole factors: {list(x.dims[w:w + 2])} -> {list(dims[w:w + 2])}")


def _validate_resample(v: Validation) -> None:
    _check_resample(v, 0, 3, "")


def _describe(index: int, name: str, validate, prepare) -> None:
    """A resampling kernel whose plan ``prepare(x, out, method)`` makes (its ``run`` and native ``entry``)."""
    def bind(p, state):
        return prepare(p[0].array, p[2].array, state["method"]).run

    describe(index, name, (tensor("input"), scalar("method", ENUM), output()), validate,
             lambda p, state: bind(p, state)(), bind,
             lambda p, state: prepare(p[0].array, p[2].array, state["method"]).entry())


_describe(20, "resample", _validate_resample, resample.prepare)


def _validate_resample_nhwc(v: Validation) -> None:
    x = float_input(v, 0)
    v.require(x.rank == 4, 0, Status.VX_ERROR_INVALID_DIMENSION, f"channels-last [C, W, H, N] expected: {list(x.dims)}")
    _check_resample(v, 1, 4, "channels-last [C, W, H, N]: ")


# The same resampling of channels-last [C, W, H, N] tensors (CoreML's NHWC route: DeepLab's image-pooling branch
# upsampled into its slice of the concatenation), each channel a plane of the same loops.
_describe(94, "resample_nhwc", _validate_resample_nhwc, resample.prepare_channels_last)


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
