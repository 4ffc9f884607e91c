"""User kernels with a Python body: a custom layer without C.

:meth:`Context.add_kernel` registers the kernel through the very C API a C program uses
(``vxAddUserKernel``, ``vxAddParameterToKernel``, ``vxFinalizeKernel``), with cffi callbacks as
its validator and function, so the library verifies and runs it like any other kernel: the
validator's answer is checked against the outputs (virtual outputs take it), a failure fails the
graph with its status.  The body sees NumPy arrays that *are* the tensors' memory (mapped for
the call), in OpenVX dimension order like :attr:`Tensor.shape`, and scalars as Python numbers.

>>> def leaky(x, alpha, y):
...     y[...] = np.where(x >= 0, x, x * alpha)
>>> kernel = ctx.add_kernel("com.example.leaky", leaky,
...                         [tensor_input(), scalar_input(np.float32), tensor_output()],
...                         validate=lambda x, alpha: [x])
>>> g.node(kernel, x, 0.1, y)
"""
from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import vx
from .errors import VXError
from .formats import numpy_dtype, vx_type
from .reference import Reference, call, create, ffi

_MAX_DIMS = 6


@dataclass(frozen=True)
class TensorInfo:
    """What a validator sees of an input tensor, and says of an output: shape (OpenVX order),
    NumPy dtype, fixed point position."""

    shape: tuple[int, ...]
    dtype: Any
    fixed_point_position: int = 0


@dataclass(frozen=True)
class Param:
    """One parameter of a Python user kernel: direction ('in'/'out'), kind ('tensor'/'scalar'),
    a scalar's dtype, and whether the node may leave it out."""

    direction: str
    kind: str
    dtype: Any = None
    optional: bool = False


def tensor_input(optional: bool = False) -> Param:
    return Param("in", "tensor", None, optional)


def tensor_output() -> Param:
    return Param("out", "tensor")


def scalar_input(dtype, optional: bool = False) -> Param:
    """A scalar input of NumPy ``dtype`` (a node gets a plain Python number for it)."""
    vx_type(dtype)  # checked here: a dtype no scalar holds is refused at once
    return Param("in", "scalar", np.dtype(dtype), optional)


def _check_params(params: Sequence[Param]) -> list[Param]:
    params = list(params)
    if not params:
        raise ValueError("params is empty: a kernel has at least one parameter")
    for i, p in enumerate(params):
        if not isinstance(p, Param):
            raise TypeError(f"params[{i}] must be a Param (tensor_input(), scalar_input(dtype), "
                            f"tensor_output()), got {type(p).__name__}")
        if (p.direction, p.kind) not in (("in", "tensor"), ("out", "tensor"), ("in", "scalar")):
            raise ValueError(f"params[{i}] is a {p.direction} {p.kind}: expected an input tensor or scalar, "
                             f"or an output tensor")
    return params


# -- reading the library's objects inside a callback ------------------------------------------------
def _tensor_info(handle) -> TensorInfo:
    t = ffi.cast("vx_tensor", handle)
    rank, dims = ffi.new("vx_size *"), ffi.new("vx_size[]", _MAX_DIMS)
    data_type, fpp = ffi.new("vx_enum *"), ffi.new("vx_int8 *")
    call("vxQueryTensor", t, vx.VX_TENSOR_NUMBER_OF_DIMS, rank, ffi.sizeof("vx_size"))
    call("vxQueryTensor", t, vx.VX_TENSOR_DIMS, dims, rank[0] * ffi.sizeof("vx_size"))
    call("vxQueryTensor", t, vx.VX_TENSOR_DATA_TYPE, data_type, ffi.sizeof("vx_enum"))
    call("vxQueryTensor", t, vx.VX_TENSOR_FIXED_POINT_POSITION, fpp, 1)
    return TensorInfo(tuple(int(d) for d in dims[0:rank[0]]), numpy_dtype(data_type[0]), int(fpp[0]))


def _scalar_value(handle, dtype: np.dtype):
    out = np.zeros(1, dtype)
    call("vxCopyScalar", ffi.cast("vx_scalar", handle), ffi.from_buffer(out), vx.VX_READ_ONLY,
         vx.VX_MEMORY_TYPE_HOST)
    return out[0].item()


class _Mapped:
    """Tensors mapped for one call of the body, unmapped together afterwards."""

    def __init__(self) -> None:
        self._maps: list[tuple[Any, Any]] = []

    def array(self, handle, info: TensorInfo, usage: int) -> np.ndarray:
        t = ffi.cast("vx_tensor", handle)
        n = len(info.shape)
        start, end = ffi.new("vx_size[]", n), ffi.new("vx_size[]", list(info.shape))
        map_id, stride, ptr = ffi.new("vx_map_id *"), ffi.new("vx_size[]", n), ffi.new("void **")
        call("vxMapTensorPatch", t, n, start, end, map_id, stride, ptr, usage, vx.VX_MEMORY_TYPE_HOST)
        self._maps.append((t, map_id[0]))
        strides = tuple(int(s) for s in stride)
        span = sum((d - 1) * s for d, s in zip(info.shape, strides)) + info.dtype.itemsize
        return np.ndarray(info.shape, info.dtype, ffi.buffer(ptr[0], span), 0, strides)

    def close(self) -> None:
        while self._maps:
            t, map_id = self._maps.pop()
            vx.vxUnmapTensorPatch(t, map_id)


def _report(node, exc: BaseException) -> int:
    """Log a body's or validator's exception against its node; the status it stands for."""
    status = exc.status if isinstance(exc, VXError) else vx.VX_FAILURE
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    vx.vxAddLogEntry(ffi.cast("vx_reference", node), status, b"%s", ffi.new("char[]", text.encode()))
    return status


class UserKernel(Reference):
    """A kernel with a Python body, made by :meth:`Context.add_kernel`; ``close()`` removes it."""

    _c_type = "vx_kernel"

    def __init__(self, context_handle, name: str, run: Callable[..., Any], params: Sequence[Param],
                 validate: Callable[..., Sequence[TensorInfo]] | None, enum: int | None):
        if not callable(run):
            raise TypeError(f"run must be callable, got {type(run).__name__}")
        if validate is not None and not callable(validate):
            raise TypeError(f"validate must be callable or None, got {type(validate).__name__}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty str, got {name!r}")
        self.kernel_name, self.params = name, _check_params(params)
        self._run, self._validate = run, validate
        self._infos: dict[int, TensorInfo] = {}  # tensor meta-data by handle, kept from one verification to the next
        # The callbacks must live as long as the kernel: the library holds their addresses.
        self._c_run = ffi.callback("vx_kernel_f", self._call_run, onerror=self._on_error)
        self._c_validate = ffi.callback("vx_kernel_validate_f", self._call_validate, onerror=self._on_error)
        if enum is None:
            out = ffi.new("vx_enum *")
            call("vxAllocateUserKernelId", context_handle, out)
            enum = int(out[0])
        self.enum = int(enum)
        handle = create("vxAddUserKernel", context_handle, name.encode(), self.enum, self._c_run, len(self.params),
                        self._c_validate, ffi.NULL, ffi.NULL)
        super().__init__(handle)
        try:
            for i, p in enumerate(self.params):
                direction = vx.VX_INPUT if p.direction == "in" else vx.VX_OUTPUT
                data_type = vx.VX_TYPE_TENSOR if p.kind == "tensor" else vx_type(p.dtype)
                state = vx.VX_PARAMETER_STATE_OPTIONAL if p.optional else vx.VX_PARAMETER_STATE_REQUIRED
                call("vxAddParameterToKernel", handle, i, direction, data_type, state)
            call("vxFinalizeKernel", handle)
        except VXError:
            self.close()
            raise

    @staticmethod
    def _on_error(exception, value, tb) -> int:
        return vx.VX_FAILURE  # a failure inside the callback plumbing itself (already reported)

    def _info(self, handle) -> TensorInfo:
        """A tensor's meta-data; cached, as it cannot change until the graph verifies again (handles are
        never reused, and every verification clears the cache)."""
        key = int(ffi.cast("uintptr_t", handle))
        info = self._infos.get(key)
        if info is None:
            info = self._infos[key] = _tensor_info(handle)
        return info

    def _call_validate(self, node, refs, num, metas) -> int:
        self._infos.clear()
        try:
            args = [None if refs[i] == ffi.NULL else
                    _tensor_info(refs[i]) if p.kind == "tensor" else _scalar_value(refs[i], p.dtype)
                    for i, p in enumerate(self.params) if p.direction == "in"]
            if self._validate is None:
                return vx.VX_SUCCESS
            said = list(self._validate(*args))
            outputs = [i for i, p in enumerate(self.params) if p.direction == "out"]
            if len(said) != len(outputs):
                raise ValueError(f"validate of {self.kernel_name} returned {len(said)} output(s), the kernel has "
                                 f"{len(outputs)}")
            for i, info in zip(outputs, said):
                _set_meta(metas[i], info)
            return vx.VX_SUCCESS
        except Exception as exc:  # noqa: BLE001 - an exception must not cross into C
            return _report(node, exc)

    def _call_run(self, node, refs, num) -> int:
        mapped = _Mapped()
        try:
            args = []
            for i, p in enumerate(self.params):
                if refs[i] == ffi.NULL:
                    args.append(None)
                elif p.kind == "scalar":
                    args.append(_scalar_value(refs[i], p.dtype))
                else:
                    usage = vx.VX_READ_ONLY if p.direction == "in" else vx.VX_READ_AND_WRITE
                    args.append(mapped.array(refs[i], self._info(refs[i]), usage))
            self._run(*args)
            return vx.VX_SUCCESS
        except Exception as exc:  # noqa: BLE001 - an exception must not cross into C
            return _report(node, exc)
        finally:
            mapped.close()

    def close(self) -> None:
        """Remove the kernel from its context (idempotent); nodes made from it keep working."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            call("vxRemoveKernel", handle)


def _set_meta(meta, info) -> None:
    """Write a validator's answer (a TensorInfo, a Tensor, or (shape, dtype[, fpp])) into ``meta``."""
    if not isinstance(info, TensorInfo):
        known = getattr(info, "known", None)
        info = TensorInfo(*known()) if known is not None else TensorInfo(*info)
    shape = [int(d) for d in info.shape]
    data_type = vx_type(info.dtype)
    call("vxSetMetaFormatAttribute", meta, vx.VX_TENSOR_NUMBER_OF_DIMS, ffi.new("vx_size *", len(shape)),
         ffi.sizeof("vx_size"))
    call("vxSetMetaFormatAttribute", meta, vx.VX_TENSOR_DIMS, ffi.new("vx_size[]", shape),
         len(shape) * ffi.sizeof("vx_size"))
    call("vxSetMetaFormatAttribute", meta, vx.VX_TENSOR_DATA_TYPE, ffi.new("vx_enum *", data_type),
         ffi.sizeof("vx_enum"))
    call("vxSetMetaFormatAttribute", meta, vx.VX_TENSOR_FIXED_POINT_POSITION,
         ffi.new("vx_int8 *", int(info.fixed_point_position)), 1)
