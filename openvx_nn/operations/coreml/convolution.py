"""CoreML convolution and deconvolution with ``nGroups`` as one kernel (grouped, depthwise,
channel multipliers), its padding given as window offsets rather than extra pad and slice nodes,
an optional residual added to the output and an optional output clip (a residual add and a ReLU or
ReLU6 the front end folded in)."""
from __future__ import annotations

from collections.abc import Callable

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.grouped_convolution import Geometry, out_size, prepare
from ...kernels.openvx.float_deconvolution import Deconvolution
from .common import F32, describe, float_input, output, same_output, tensor, values

GEOMETRY_FIELDS = ("groups", "stride_y", "stride_x", "dilation_y", "dilation_x", "top", "bottom", "left", "right",
                   "transposed")
"""The INT32 ``geometry`` tensor, in this order. Convolution: top/bottom/left/right pad the input (>= 0).
Transposed: they crop the full output ``(in - 1) * stride + kernel`` (bottom/right may be negative:
outputs past the full result, which hold the bias alone); top/left >= 0."""


def _validate(v: Validation) -> None:
    x = float_input(v, 0)
    w = float_input(v, 1)
    geo = values(v, 3)
    v.require(len(geo) == len(GEOMETRY_FIELDS), 3, Status.VX_ERROR_INVALID_DIMENSION,
              f"geometry must hold {len(GEOMETRY_FIELDS)} values ({', '.join(GEOMETRY_FIELDS)}), got {len(geo)}")
    groups, sy, sx, dy, dx, top, bottom, left, right, transposed = geo
    v.require(x.rank >= 3 and w.rank == 4, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"input {list(x.dims)} must be [W, H, C, *batch] and weights {list(w.dims)} [kw, kh, channels, count]")
    v.require(groups >= 1 and min(sy, sx, dy, dx) >= 1 and min(top, left) >= 0 and transposed in (0, 1), 3,
              Status.VX_ERROR_INVALID_VALUE, f"geometry {dict(zip(GEOMETRY_FIELDS, geo))} is invalid (groups, "
              "strides and dilations must be at least 1, top and left at least 0, transposed 0 or 1)")
    v.require(transposed or min(bottom, right) >= 0, 3, Status.VX_ERROR_INVALID_VALUE,
              f"a convolution pads by at least 0, got bottom {bottom} and right {right}")
    v.require(not transposed or (dy, dx) == (1, 1), 3, Status.VX_ERROR_INVALID_VALUE,
              f"transposed convolution with dilation ({dy}, {dx}) is not supported")
    c_in = x.dims[2]
    c_out = w.dims[2] * groups if transposed else w.dims[3]
    per_group = (c_out // groups, c_in) if transposed else (c_in // groups, c_out)
    v.require(c_in % groups == 0 and c_out % groups == 0 and tuple(w.dims[2:]) == per_group, 1,
              Status.VX_ERROR_INVALID_DIMENSION,
              f"weights {list(w.dims)} do not fit {c_in} input channels in {groups} groups: expected "
              f"[kw, kh, {per_group[0]}, {per_group[1]}]")
    bias = float_input(v, 2)
    if bias is not None:
        v.require(bias.dims == (c_out,), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"bias must be [{c_out}], got {list(bias.dims)}")
    oh = out_size(x.dims[1], w.dims[1], sy, dy, top, bottom, bool(transposed))
    ow = out_size(x.dims[0], w.dims[0], sx, dx, left, right, bool(transposed))
    v.require(oh >= 1 and ow >= 1, 3, Status.VX_ERROR_INVALID_DIMENSION,
              f"a {w.dims[1]}x{w.dims[0]} window with geometry {dict(zip(GEOMETRY_FIELDS, geo))} leaves no output "
              f"of a {x.dims[1]}x{x.dims[0]} input")
    v.state["geometry"] = Geometry(groups, (sy, sx), (dy, dx), (top, left), bool(transposed))
    clip = values(v, 4, F32)
    v.require(v.ref(4) is None or (len(clip) == 2 and clip[0] <= clip[1] and not transposed), 4,
              Status.VX_ERROR_INVALID_VALUE,
              f"clip must be [low, high] with low <= high (and no transposed convolution), got {clip}")
    v.state["clip"] = tuple(clip) if clip else None
    out_dims = (ow, oh, c_out) + tuple(x.dims[3:])
    residual = float_input(v, 5)
    if residual is not None:
        v.require(residual.dims == out_dims and not transposed, 5, Status.VX_ERROR_INVALID_DIMENSION,
                  f"residual {list(residual.dims)} must have the output's dims {list(out_dims)} "
                  "(and no transposed convolution)")
    same_output(v, 6, out_dims)


def _arrays(p):
    return p[0].array, p[1].array, None if p[2] is None else p[2].array, p[6].array


def _extra(p, state):
    return state["clip"], None if p[5] is None else p[5].array


def _phases(x, w, bias, out, geo) -> Callable[[], None]:
    """A transposed convolution on the float engine's phase route (``kernels/openvx/float_deconvolution``,
    vxDeconvolutionLayer's and NNAPI's TRANSPOSE_CONV_2D's): one phase plan a group, on the group's channels of
    ``x`` and ``out`` (views: each plan reads and writes its own maps)."""
    groups = geo.groups
    cg, og = x.shape[2] // groups, w.shape[2]
    wt = w.T  # CoreML's [C, O/g, kh, kw]
    runs = []
    for g in range(groups):
        filt = wt[g * cg:(g + 1) * cg].transpose(1, 2, 3, 0)  # the group's scattering [O/g, kh, kw, C/g]
        xg, outg = x[:, :, g * cg:(g + 1) * cg], out[:, :, g * og:(g + 1) * og]
        plan = Deconvolution.scattering(filt, geo.offset, geo.stride, xg.shape, outg.shape)
        runs.append(plan.bind(xg, None if bias is None else bias[g * og:(g + 1) * og], outg))
    if len(runs) == 1:
        return runs[0]

    def call() -> None:
        for run in runs:
            run()
    return call


PHASE_GROUP_CHANNELS = 8
"""A transposed convolution of more than one group takes the phase route when each group has at least this many
input and output channels; narrower groups keep ``grouped_convolution``'s col2im, whose one product a group
costs less than a phase plan's per-group layout copy, engine calls and scatter (one thread, 28x28, 4x4 kernel,
stride 2: 64 channels in 2 groups 2.3x faster on the phases, in 8 groups 1.16x; 32 in 8 groups 0.73x, in 16
groups 0.43x, depthwise 0.5x)."""


def _prepare(p, state):
    """The layer's runner: a transposed convolution of one group, or of groups of at least
    ``PHASE_GROUP_CHANNELS`` channels each way, on the phase route (:func:`_phases`); every other layer on
    ``grouped_convolution``."""
    geo = state["geometry"]
    x, w, _, _ = _arrays(p)
    if geo.transposed and (geo.groups == 1 or min(x.shape[2] // geo.groups, w.shape[2]) >= PHASE_GROUP_CHANNELS):
        return _phases(*_arrays(p), geo)
    return prepare(*_arrays(p), geo, *_extra(p, state))


describe(60, "convolution", (tensor("input"), tensor("weights", static=True), tensor("bias", optional=True, static=True),
                             tensor("geometry", static=True), tensor("clip", optional=True, static=True),
                             tensor("residual", optional=True), output()),
         _validate, lambda p, state: _prepare(p, state)(), _prepare)
