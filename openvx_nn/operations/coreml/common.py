"""What every CoreML kernel description shares: enums in the user range with
LIB = 2, names ``org.openvx_nn.coreml.<layer>``, float32 checks, reading
the small static INT32/FLOAT32 parameter tensors that carry axes and vectors,
and binding: every CoreML kernel's runner is bound once per verification with
its arrays and [static] scalar values resolved (see ``bound``)."""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.enums import Status, Type
from ...core.kernels import register
from ...core.signature import IN, OUT, KernelDescription, ParamSpec
from ...core.validation import Meta, Validation

VENDOR_USER = 0xFFE
LIB = 2
T, S = Type.VX_TYPE_TENSOR, Type.VX_TYPE_SCALAR
ENUM, INT32, F32 = Type.VX_TYPE_ENUM, Type.VX_TYPE_INT32, Type.VX_TYPE_FLOAT32


def kernel_enum(index: int) -> int:
    """``VX_KERNEL_BASE(VX_ID_USER, LIB) + index`` as the signed 32-bit ``vx_enum`` C sees
    (0xFFE << 20 sets the sign bit), so vxGetKernelByEnum from C finds it."""
    value = (VENDOR_USER << 20) | (LIB << 12) | index
    return value - (1 << 32) if value >= 1 << 31 else value


def tensor(name: str, optional: bool = False, static: bool = False) -> ParamSpec:
    return ParamSpec(name, IN, T, optional, static=static)


def scalar(name: str, scalar_type: int) -> ParamSpec:
    return ParamSpec(name, IN, S, scalar_type=scalar_type, static=True)


def output(name: str = "output", optional: bool = False) -> ParamSpec:
    return ParamSpec(name, OUT, T, optional)


@dataclass(frozen=True)
class Bound:
    """A parameter as a bound runner sees it: a tensor's array, a scalar's value, read once at binding."""

    array: Any = None
    value: Any = None


def bound(params: list, specs: Sequence[ParamSpec]) -> list:
    """``params`` with each tensor's array and each [static] scalar's value resolved now (what an executor
    reads as ``p[i].array`` / ``p[i].value``); a non-static scalar stays the live object, read per call.
    Valid until the graph rebinds, which it does whenever it verifies again or some tensor's storage changes."""
    out = []
    for p, spec in zip(params, specs):
        if p is None:
            out.append(None)
        elif spec.vx_type == T:
            out.append(Bound(array=p.array))
        elif spec.static:
            out.append(Bound(value=p.value))
        else:
            out.append(p)
    return out


Prepare = Callable[[list, dict], Callable[[], None]]


def describe(index: int, layer: str, params: Sequence[ParamSpec], validate: Callable[[Validation], None],
             execute: Callable[[list, dict], None], prepare: Prepare | None = None,
             native: Callable[[list, dict], object] | None = None,
             gate_function: Callable[[list, dict], object] | None = None) -> None:
    """Register ``org.openvx_nn.coreml.<layer>``. ``execute(p, state)`` runs one call; ``prepare(p, state)``
    (optional) returns a runner with the work that depends only on shapes, weights and static parameters
    done once. Both receive ``bound`` parameters when the graph binds the node, the live objects otherwise.
    ``native(p, state)`` (optional): the call as a native entry (``kernels.support.native.Entry``, or None),
    so that a graph whose every node has one runs from C (``core/native_plan.py``). ``gate_function``: the
    description's hook of that name (``core/gated_products.py``)."""
    params = tuple(params)

    def bind(p: list, state: dict) -> Callable[[], None]:
        resolved = bound(p, params)
        return prepare(resolved, state) if prepare is not None else functools.partial(execute, resolved, state)

    register(KernelDescription(f"org.openvx_nn.coreml.{layer}", kernel_enum(index), LIB, params,
                               validate, execute, bind=bind,
                               native=None if native is None else lambda p, state: native(bound(p, params), state),
                               gate_function=gate_function))


def float_input(v: Validation, index: int) -> Meta | None:
    """A FLOAT32 tensor input (None for an absent optional one)."""
    meta = v.tensor(index)
    if meta is not None:
        v.require(meta.data_type == F32, index, Status.VX_ERROR_INVALID_TYPE,
                  f"data type {meta.describe()} is not supported (CoreML layers run in FLOAT32)")
    return meta


def values(v: Validation, index: int, data_type: int = INT32) -> list:
    """The contents of a static 1-D parameter tensor of ``data_type`` (empty when absent)."""
    ref = v.ref(index)
    if ref is None:
        return []
    meta = v.tensor(index)
    v.require(meta.data_type == data_type and meta.rank == 1, index, Status.VX_ERROR_INVALID_TYPE,
              f"expected a 1-D {Type(data_type).name} parameter tensor, got {meta.describe()}")
    return ref.array.tolist()


def enum_value(v: Validation, index: int, names: Sequence[str], what: str) -> str:
    """Scalar ``index`` as one of ``names`` (its position in the list is the value)."""
    value = v.scalar(index)
    v.require(isinstance(value, int) and 0 <= value < len(names), index, Status.VX_ERROR_INVALID_VALUE,
              f"{what} {value!r} is invalid (expected 0..{len(names) - 1}: {', '.join(names)})")
    return names[value]


def axes_in_range(v: Validation, index: int, axes: Sequence[int], rank: int) -> None:
    v.require(all(0 <= a < rank for a in axes) and len(set(axes)) == len(axes), index,
              Status.VX_ERROR_INVALID_VALUE, f"axes {list(axes)} are not distinct axes of a {rank}-D tensor")


def same_output(v: Validation, index: int, dims: Sequence[int]) -> None:
    v.output(index, dims, F32, 0)


def declared_output(v: Validation, index: int, count: int | None = None) -> tuple[int, ...]:
    """Dims the application declared for output ``index`` (layers whose output size is their
    parameter, e.g. a reshape target); ``count`` checks the number of elements."""
    dims = tuple(v.declared(index).dims)
    v.require(bool(dims) and all(dims), index, Status.VX_ERROR_INVALID_DIMENSION,
              "the output dims must be declared (this kernel cannot infer them)")
    if count is not None:
        v.require(int(np.prod(dims)) == count, index, Status.VX_ERROR_INVALID_DIMENSION,
                  f"output dims {list(dims)} hold {int(np.prod(dims))} elements, the input {count}")
    v.output(index, dims, F32, 0)
    return dims


def broadcast_dims(v: Validation, index: int, a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    """OpenVX-order (left-aligned) broadcast of two dims lists."""
    n = max(len(a), len(b))
    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))
    ok = all(x == y or 1 in (x, y) for x, y in zip(a, b))
    v.require(ok, index, Status.VX_ERROR_INVALID_DIMENSION, f"dims {list(a)} and {list(b)} do not broadcast")
    return tuple(max(x, y) for x, y in zip(a, b))
