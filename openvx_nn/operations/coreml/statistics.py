"""CoreML normalisation and reduction kernels: mean-variance / L2 normalisation over
chosen axes (MVN, instance norm, layer norm, L2 normalize), softmax along an axis,
reductions over axes."""
from __future__ import annotations

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend.moments import bind_normalize, native_normalize, normalize
from ...kernels.frontend.reduction import REDUCTIONS, reduce
from ...kernels.openvx import softmax as softmax_layer
from .common import (
    ENUM,
    F32,
    INT32,
    axes_in_range,
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

NORMALIZE_MODES = ("center", "standardize", "l2")
REDUCE_OPERATIONS = tuple(REDUCTIONS)


def _validate_normalize(v: Validation) -> None:
    x = float_input(v, 0)
    v.state["axes"] = axes = values(v, 1)
    axes_in_range(v, 1, axes, x.rank)
    v.state["mode"] = enum_value(v, 2, NORMALIZE_MODES, "mode")
    for index in (4, 5):
        meta = float_input(v, index)
        if meta is not None:
            ok = meta.rank <= x.rank and all(d in (1, n) for d, n in zip(meta.dims, x.dims))
            v.require(ok, index, Status.VX_ERROR_INVALID_DIMENSION,
                      f"{list(meta.dims)} does not broadcast to the input {list(x.dims)}")
    same_output(v, 6, x.dims)


def _normalize_operands(p, state) -> tuple:
    return (p[0].array, p[6].array, state["axes"], state["mode"], p[3].value, None if p[4] is None else p[4].array,
            None if p[5] is None else p[5].array)


describe(30, "normalize", (tensor("input"), tensor("axes", static=True), scalar("mode", ENUM),
                           scalar("epsilon", F32), tensor("gamma", optional=True, static=True),
                           tensor("beta", optional=True, static=True), output()), _validate_normalize,
         lambda p, state: normalize(*_normalize_operands(p, state)),
         lambda p, state: bind_normalize(*_normalize_operands(p, state)),
         lambda p, state: native_normalize(*_normalize_operands(p, state)))


def _validate_softmax(v: Validation) -> None:
    x = float_input(v, 0)
    axis = v.scalar(1)
    v.require(0 <= axis < x.rank, 1, Status.VX_ERROR_INVALID_VALUE, f"axis {axis} is outside a {x.rank}-D tensor")
    same_output(v, 2, x.dims)


describe(31, "softmax", (tensor("input"), scalar("axis", INT32), output()), _validate_softmax,
         lambda p, state: softmax_layer.softmax(p[0].array, p[2].array, p[1].value),
         native=lambda p, state: softmax_layer.native_entry(p[0].array, p[2].array, p[1].value))


def _validate_reduce(v: Validation) -> None:
    x = float_input(v, 0)
    v.state["axes"] = axes = values(v, 1)
    axes_in_range(v, 1, axes, x.rank)
    v.state["operation"] = operation = enum_value(v, 2, REDUCE_OPERATIONS, "operation")
    v.require(operation not in ("argmax", "argmin") or len(axes) == 1, 1, Status.VX_ERROR_INVALID_VALUE,
              f"{operation} reduces exactly one axis, got {axes}")
    kept = [1 if i in axes else d for i, d in enumerate(x.dims)]
    dropped = [d for i, d in enumerate(x.dims) if i not in axes] or [1]
    dims = declared_output(v, 4)
    v.require(list(dims) in (kept, dropped), 4, Status.VX_ERROR_INVALID_DIMENSION,
              f"output {list(dims)} is neither {kept} (kept axes) nor {dropped} (dropped axes)")


describe(32, "reduce", (tensor("input"), tensor("axes", static=True), scalar("operation", ENUM),
                        scalar("epsilon", F32), output()), _validate_reduce,
         lambda p, state: reduce(p[0].array, p[4].array, state["axes"], state["operation"], p[3].value))
