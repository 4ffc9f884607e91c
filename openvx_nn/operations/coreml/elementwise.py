"""CoreML element-wise kernels: one pointwise function kernel (every activation and
unary function the NN extension does not compute exactly), one two-input combine
kernel (add, multiply, max, min and the broadcastable arithmetic), the dot product."""
from __future__ import annotations

import math

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.combine import OPERATIONS, bind_combine, native_combine
from ...kernels.frontend.pointwise import FUNCTIONS, fast_function, native_pointwise
from ...kernels.frontend.pointwise import prepare as prepare_pointwise
from ...kernels.frontend.reduction import dot_product
from .common import (
    ENUM,
    F32,
    INT32,
    broadcast_dims,
    describe,
    enum_value,
    float_input,
    output,
    same_output,
    scalar,
    tensor,
    values,
)

POINTWISE_FUNCTIONS = tuple(FUNCTIONS)
"""The ``function`` scalar's values: positions in this tuple."""
COMBINE_OPERATIONS = tuple(OPERATIONS)


def _validate_pointwise(v: Validation) -> None:
    x = float_input(v, 0)
    v.state["function"] = enum_value(v, 1, POINTWISE_FUNCTIONS, "function")
    params = values(v, 2, F32)
    v.require(len(params) in (5, 6), 2, Status.VX_ERROR_INVALID_DIMENSION,
              f"params must hold [scale, shift, alpha, beta, epsilon] and maybe the channel axis, got {len(params)} "
              "values")
    extra = params[5:]
    axis = 2 if not extra else int(extra[0]) if math.isfinite(extra[0]) and extra[0] == int(extra[0]) else -1
    v.require(0 <= axis < max(x.rank, 3), 2, Status.VX_ERROR_INVALID_VALUE,
              f"the channel axis {extra[0] if extra else axis} is no axis of {list(x.dims)}")
    v.state["params"], v.state["axis"] = params[:5], axis
    for index in (3, 4):
        c = float_input(v, index)
        if c is not None:
            channels = x.dims[axis] if x.rank > axis else 1
            v.require(c.rank == 1 and c.dims[0] in (1, channels), index, Status.VX_ERROR_INVALID_DIMENSION,
                      f"per-channel parameters must have 1 or {channels} values, got {list(c.dims)}")
    same_output(v, 5, x.dims)


def _prepare_pointwise(p, state):
    scale, shift, alpha, beta, epsilon = state["params"]
    return prepare_pointwise(p[0].array, p[5].array, state["function"], scale, shift, alpha, beta, epsilon,
                             None if p[3] is None else p[3].array, None if p[4] is None else p[4].array,
                             state["axis"])


def _native_pointwise(p, state):
    """The piecewise-linear functions and log of scalar parameters (``pointwise.NATIVE``), ``float_activation``'s
    (``pointwise.FAST``: a thresholded hard swish reads its threshold in epsilon's place) and the per-channel affine
    map, clamped or not (``channel_affine``), as a native entry."""
    scale, shift, alpha, beta, epsilon = state["params"]
    return native_pointwise(p[0].array, p[5].array, state["function"], scale, shift, alpha, beta,
                            None if p[3] is None else p[3].array, None if p[4] is None else p[4].array,
                            state["axis"], epsilon)


def _pointwise_gate(p, state):
    """The float32 function a sigmoid, hard sigmoid, tanh ... of scalar parameters computes (``float_activation``'s),
    for the plan to fuse into the product that reads it (``core.gated_products``); None otherwise."""
    if p[3] is not None or p[4] is not None:
        return None
    scale, shift, alpha, beta, _ = state["params"]
    return fast_function(state["function"], scale, shift, alpha, beta)


describe(0, "pointwise", (tensor("input"), scalar("function", ENUM), tensor("params", static=True),
                          tensor("alpha", optional=True, static=True), tensor("beta", optional=True, static=True),
                          output()), _validate_pointwise, lambda p, state: _prepare_pointwise(p, state)(),
         _prepare_pointwise, _native_pointwise, gate_function=_pointwise_gate)


def _validate_combine(v: Validation) -> None:
    a = float_input(v, 0)
    b = float_input(v, 1)
    v.state["operation"] = enum_value(v, 2, COMBINE_OPERATIONS, "operation")
    same_output(v, 4, a.dims if b is None else broadcast_dims(v, 1, a.dims, b.dims))


def _combine_operands(p, state) -> tuple:
    return p[0].array, None if p[1] is None else p[1].array, p[4].array, state["operation"], p[3].value


describe(1, "combine", (tensor("input1"), tensor("input2", optional=True), scalar("operation", ENUM),
                        scalar("constant", F32), output()), _validate_combine,
         lambda p, state: bind_combine(*_combine_operands(p, state))(),
         lambda p, state: bind_combine(*_combine_operands(p, state)),
         lambda p, state: native_combine(*_combine_operands(p, state)))


def _validate_dot(v: Validation) -> None:
    a, b = float_input(v, 0), float_input(v, 1)
    v.require(a.dims == b.dims and a.rank >= 3, 1, Status.VX_ERROR_INVALID_DIMENSION,
              f"inputs must have equal dims of rank 3 or more, got {list(a.dims)} and {list(b.dims)}")
    same_output(v, 3, (1, 1, 1) + a.dims[3:])


def _run_dot(p, state) -> None:
    dot_product(p[0].array, p[1].array, p[3].array, bool(p[2].value))


describe(2, "dot_product", (tensor("input1"), tensor("input2"), scalar("cosine_similarity", INT32), output()),
         _validate_dot, _run_dot)
