"""CoreML's 3-D pooling, convolution and transposed convolution over rank-5 blobs ``[batch, channels, depth, height, width]`` (OpenVX dims
``[W, H, D, C, B]``); arithmetic in ``kernels/frontend/volume.py``, which takes the blobs in CoreML's order."""
from __future__ import annotations

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.volume import convolution3d, deconvolution3d, extent, pool3d
from .common import (
    ENUM,
    INT32,
    declared_output,
    describe,
    enum_value,
    float_input,
    output,
    same_output,
    scalar,
    tensor,
    values,
)

POOL_GEOMETRY = ("kernel_depth", "kernel_height", "kernel_width", "stride_depth", "stride_height", "stride_width",
                 "front", "back", "top", "bottom", "left", "right")
"""The pooling's INT32 ``geometry`` tensor, in this order (paddings: zeros before / after each axis)."""
CONVOLUTION_GEOMETRY = ("stride_depth", "stride_height", "stride_width", "dilation_depth", "dilation_height",
                        "dilation_width", "front", "back", "top", "bottom", "left", "right")
"""The convolution's INT32 ``geometry`` tensor, in this order; the kernel's extent is the weights' (which may be a
blob computed in the graph: CoreML lets a convolution take them as its second input). The transposed
convolution reads the same tensor, its paddings as the amounts cropped from the full result (the ``back``,
``bottom`` and ``right`` ones are implied by the declared output)."""
POOL_MODES = ("max", "average")


def _geometry(v: Validation, index: int, fields) -> list[int]:
    geo = values(v, index)
    v.require(len(geo) == len(fields) and min(geo[:6]) >= 1 and min(geo[6:]) >= 0, index,
              Status.VX_ERROR_INVALID_VALUE,
              f"geometry must hold {len(fields)} values ({', '.join(fields)}), the first six at least 1 and the "
              f"paddings at least 0; got {geo}")
    return geo


def _volume_input(v: Validation) -> tuple[int, ...]:
    x = float_input(v, 0)
    v.require(x.rank == 5, 0, Status.VX_ERROR_INVALID_DIMENSION,
              f"input {list(x.dims)} must be rank 5 [W, H, D, C, B]")
    return tuple(reversed(x.dims))  # [B, C, D, H, W]


def _output_extent(v: Validation, index: int, shape, kernel, stride, dilation, pads) -> tuple[int, ...]:
    sizes = tuple(extent(n, k, s, d, pads[2 * i], pads[2 * i + 1])
                  for i, (n, k, s, d) in enumerate(zip(shape[2:], kernel, stride, dilation)))
    v.require(min(sizes) >= 1, index, Status.VX_ERROR_INVALID_VALUE,
              f"a window of {list(kernel)} (dilation {list(dilation)}) does not fit the padded input {list(shape[2:])}")
    return sizes


def _validate_pool(v: Validation) -> None:
    shape = _volume_input(v)
    geo = _geometry(v, 1, POOL_GEOMETRY)
    v.state["average"] = enum_value(v, 2, POOL_MODES, "pooling mode") == "average"
    kernel, stride, pads = geo[:3], geo[3:6], geo[6:]
    v.require(all(pads[2 * i] < k and pads[2 * i + 1] < k for i, k in enumerate(kernel)), 1,
              Status.VX_ERROR_INVALID_VALUE, f"paddings {pads} must each be less than the window {kernel} on its axis")
    sizes = _output_extent(v, 1, shape, kernel, stride, (1, 1, 1), pads)
    v.state.update(kernel=kernel, stride=stride, before=pads[0::2], after=pads[1::2])
    same_output(v, 4, tuple(reversed(shape[:2] + sizes)))


def _run_pool(p, state) -> None:
    pool3d(p[0].array.T, p[4].array.T, state["kernel"], state["stride"], state["before"], state["after"],
           state["average"], bool(p[3].value))


describe(87, "pool3d", (tensor("input"), tensor("geometry", static=True), scalar("mode", ENUM),
                        scalar("exclude_padding", INT32), output()), _validate_pool, _run_pool)


def _validate_convolution(v: Validation) -> None:
    shape = _volume_input(v)
    w = float_input(v, 1)
    weights = tuple(reversed(w.dims))  # [O, C / groups, kd, kh, kw]
    geo = _geometry(v, 3, CONVOLUTION_GEOMETRY)
    groups = v.scalar(4)
    ok = (w.rank == 5 and isinstance(groups, int) and groups >= 1 and shape[1] % groups == 0
          and weights[0] % groups == 0 and weights[1] * groups == shape[1])
    v.require(ok, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"weights {list(weights)} in {groups} group(s) do not fit {shape[1]} input channels "
              "(expected [out_channels, in_channels / groups, kd, kh, kw], out_channels a multiple of groups)")
    bias = float_input(v, 2)
    if bias is not None:
        v.require(bias.dims == (weights[0],), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"bias must be [{weights[0]}], got {list(bias.dims)}")
    stride, dilation, pads = geo[:3], geo[3:6], geo[6:]
    sizes = _output_extent(v, 3, shape, weights[2:], stride, dilation, pads)
    v.state.update(stride=stride, dilation=dilation, before=pads[0::2], after=pads[1::2])
    same_output(v, 5, tuple(reversed((shape[0], weights[0]) + sizes)))


def _run_convolution(p, state) -> None:
    convolution3d(p[0].array.T, p[1].array.T, None if p[2] is None else p[2].array, p[5].array.T, p[4].value,
                  state["stride"], state["dilation"], state["before"], state["after"])


describe(88, "convolution3d", (tensor("input"), tensor("weights"), tensor("bias", optional=True, static=True),
                               tensor("geometry", static=True), scalar("groups", INT32), output()),
         _validate_convolution, _run_convolution)


def _validate_deconvolution(v: Validation) -> None:
    shape = _volume_input(v)
    w = float_input(v, 1)
    weights = tuple(reversed(w.dims))  # [C, O / groups, kd, kh, kw]
    geo = _geometry(v, 3, CONVOLUTION_GEOMETRY)
    groups = v.scalar(4)
    ok = (w.rank == 5 and isinstance(groups, int) and groups >= 1 and shape[1] % groups == 0
          and weights[0] == shape[1])
    v.require(ok, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"weights {list(weights)} in {groups} group(s) do not fit {shape[1]} input channels "
              "(expected [in_channels, out_channels / groups, kd, kh, kw], in_channels a multiple of groups)")
    channels = weights[1] * groups
    bias = float_input(v, 2)
    if bias is not None:
        v.require(bias.dims == (channels,), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"bias must be [{channels}], got {list(bias.dims)}")
    dims = declared_output(v, 5)
    v.require(len(dims) == 5 and dims[3:] == (channels, shape[0]), 5, Status.VX_ERROR_INVALID_DIMENSION,
              f"output {list(dims)} must be [W, H, D, {channels}, {shape[0]}]")
    v.state.update(stride=geo[:3], dilation=geo[3:6], before=geo[6::2])


def _run_deconvolution(p, state) -> None:
    deconvolution3d(p[0].array.T, p[1].array.T, None if p[2] is None else p[2].array, p[5].array.T, p[4].value,
                    state["stride"], state["dilation"], state["before"])


describe(93, "deconvolution3d", (tensor("input"), tensor("weights", static=True),
                                 tensor("bias", optional=True, static=True), tensor("geometry", static=True),
                                 scalar("groups", INT32), output()),
         _validate_deconvolution, _run_deconvolution)
