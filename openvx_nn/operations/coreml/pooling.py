"""CoreML's max pooling (not global) as one kernel on channel-major planes: any window, stride and padding, the
output extent the declared one (CoreML's padding modes fix it), so no pad or slice node is needed."""
from __future__ import annotations

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.chw_pooling import prepare
from .common import F32, describe, float_input, output, tensor, values

GEOMETRY_FIELDS = ("kernel_y", "kernel_x", "stride_y", "stride_x", "top", "left")
"""The INT32 ``geometry`` tensor, in this order: output ``(oy, ox)`` pools input rows ``oy * stride_y - top``
and columns ``ox * stride_x - left`` onwards (``chw_pooling``'s module doc)."""


def _validate(v: Validation) -> None:
    x = float_input(v, 0)
    geo = values(v, 1)
    v.require(len(geo) == len(GEOMETRY_FIELDS), 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"geometry must hold {len(GEOMETRY_FIELDS)} values ({', '.join(GEOMETRY_FIELDS)}), got {len(geo)}")
    v.require(min(geo[:4]) >= 1 and min(geo[4:]) >= 0, 1, Status.VX_ERROR_INVALID_VALUE,
              f"geometry {dict(zip(GEOMETRY_FIELDS, geo))} is invalid (kernel and stride at least 1, offsets at "
              "least 0)")
    v.require(x.rank >= 3, 0, Status.VX_ERROR_INVALID_DIMENSION, f"input {list(x.dims)} must be [W, H, C, *batch]")
    dims = tuple(v.declared(2).dims)
    v.require(len(dims) == x.rank and min(dims[:2], default=0) >= 1 and dims[2:] == tuple(x.dims[2:]), 2,
              Status.VX_ERROR_INVALID_DIMENSION,
              f"output dims {list(dims)} must be declared [W, H] + the input's {list(x.dims[2:])}")
    v.state["geometry"] = ((geo[0], geo[1]), (geo[2], geo[3]), (geo[4], geo[5]))
    v.output(2, dims, F32, 0)


def _prepare(p, state):
    return prepare(p[0].array, p[2].array, *state["geometry"])


describe(61, "max_pool", (tensor("input"), tensor("geometry", static=True), output()), _validate,
         lambda p, state: _prepare(p, state)(), _prepare)
