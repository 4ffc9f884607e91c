"""Scalars: one value of a plain type or of a small standard struct, kept as its bytes.

Decided semantics:

- ``vxCreateScalar`` takes every plain type of ``datatypes.NUMPY``; struct
  types need ``vxCreateScalarWithSize`` (the caller states the size, so a
  mismatch between the application's struct and ours is caught).  That call
  also takes plain types whose size is given correctly.  An unknown type,
  ``VX_TYPE_INVALID`` or a struct type given to ``vxCreateScalar`` is
  ``VX_ERROR_INVALID_TYPE``; a wrong size is ``VX_ERROR_INVALID_PARAMETERS``.
- A NULL initial pointer gives a scalar whose bytes are all zero.
- A ``VX_TYPE_BOOL`` value other than ``vx_false_e``/``vx_true_e`` is
  ``VX_ERROR_INVALID_VALUE``, at creation and on every write.
- Copies go one way: ``VX_READ_ONLY`` (scalar to user) or ``VX_WRITE_ONLY``
  (user to scalar), host memory only, and always the scalar's whole size.
- A virtual scalar (``vxCreateVirtualScalar``) is scoped to its graph and may
  also hold a struct type (its size is known).  Its data is never accessible
  to the application: copies are ``VX_ERROR_OPTIMIZED_AWAY``; the graph engine
  reads and writes ``value``/``bytes`` directly.
"""
from __future__ import annotations

import struct
from typing import Any

import numpy as np

from . import access, cells
from .context import Context
from .datatypes import NUMPY
from .enums import NNType, Status, Type, type_name
from .errors import VXError, invalid_parameters
from .graph import Graph
from .reference import Reference

STRUCT_SIZES: dict[int, int] = {
    Type.VX_TYPE_RECTANGLE: 16,
    Type.VX_TYPE_KEYPOINT: 28,
    Type.VX_TYPE_COORDINATES2D: 8,
    Type.VX_TYPE_COORDINATES3D: 12,
    Type.VX_TYPE_COORDINATES2DF: 8,
    Type.VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS: 12,
    NNType.VX_TYPE_NN_CONVOLUTION_PARAMS: 48,
    NNType.VX_TYPE_NN_DECONVOLUTION_PARAMS: 40,
    NNType.VX_TYPE_NN_ROI_POOL_PARAMS: 4,
}
"""The struct types a scalar holds and their C ``sizeof`` (x86_64, from the ABI tables)."""

_BOOL_VALUES = (0, 1)  # vx_false_e, vx_true_e
_DECODE = {t: struct.Struct(dtype.char).unpack for t, dtype in NUMPY.items()}
"""A plain type's bytes to its Python number (what ``np.frombuffer(...)[0].item()`` gives, 10x cheaper)."""


def plain_size(data_type: int) -> int:
    """Bytes of a plain type: what ``vxCreateScalar`` accepts."""
    if data_type in NUMPY:
        return NUMPY[data_type].itemsize
    if data_type in STRUCT_SIZES:
        raise VXError(Status.VX_ERROR_INVALID_TYPE,
                      f"{type_name(data_type)} is a struct type: create the scalar with "
                      f"vxCreateScalarWithSize (size {STRUCT_SIZES[data_type]})")
    return value_size(data_type)


def value_size(data_type: int) -> int:
    """Bytes of any type a scalar can hold, plain or struct."""
    if data_type in NUMPY:
        return NUMPY[data_type].itemsize
    if data_type in STRUCT_SIZES:
        return STRUCT_SIZES[data_type]
    context = Context.current()  # user structs are the (one) live context's
    size = context.user_structs.size_of(data_type) if context is not None else None
    if size is not None:
        return size
    raise VXError(Status.VX_ERROR_INVALID_TYPE,
                  f"{type_name(data_type)} cannot be held by a scalar (expected a plain type "
                  f"such as VX_TYPE_INT32, or a standard struct type such as VX_TYPE_RECTANGLE)")


def check_size(data_type: int, size: int) -> None:
    """The size an application states for ``data_type`` must be ours."""
    expected = value_size(data_type)
    if size != expected:
        raise invalid_parameters(f"size {size} is wrong for a {type_name(data_type)} scalar "
                                 f"(expected {expected})")


def _check_bool(data_type: int, data: bytes, scalar: Reference | None) -> None:
    if data_type != Type.VX_TYPE_BOOL:
        return
    value = int.from_bytes(data, "little", signed=True)
    if value not in _BOOL_VALUES:
        owner = scalar.describe() if scalar is not None else "a new scalar"
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"VX_TYPE_BOOL value {value} is invalid for {owner} "
                      f"(expected vx_false_e (0) or vx_true_e (1))", scalar)


class Scalar(Reference):
    """A typed value; ``scope`` is the graph of a virtual scalar, else None."""

    vx_type = Type.VX_TYPE_SCALAR

    def __init__(self, context: Context, data_type: int, initial: Any = None,
                 scope: Graph | None = None):
        """``initial`` is a buffer of exactly the type's size, or None for zero.
        Everything is checked before the scalar exists, so a failure leaks nothing."""
        size = value_size(data_type)
        data = bytes(size) if initial is None else bytes(initial)
        if len(data) != size:
            raise invalid_parameters(f"initial value of {len(data)} bytes is wrong for a "
                                     f"{type_name(data_type)} scalar (expected {size})")
        self.data_type = int(data_type)
        self.size = size
        self.scope = scope
        self.virtual = scope is not None
        _check_bool(data_type, data, None)
        super().__init__(context)
        self._data = data
        self._value: Any = None  # the decoded value, made on first read (validators read it per node)
        self.write_counter = cells.counter()
        """Bumped by every write: the native plans that packed this scalar's value watch it."""

    @property
    def dtype(self) -> np.dtype | None:
        """The NumPy dtype of a plain type, None for a struct type."""
        return NUMPY.get(self.data_type)

    # -- the value, as the graph engine sees it ---------------------------------
    @property
    def bytes(self) -> bytes:
        return self._data

    @bytes.setter
    def bytes(self, data: bytes) -> None:
        data = bytes(data)
        if len(data) != self.size:
            raise invalid_parameters(f"{len(data)} bytes given for {self.describe()} "
                                     f"(expected {self.size})", self)
        _check_bool(self.data_type, data, self)
        self._data = data
        self._value = None
        self.write_counter[0] += 1  # a native plan of a graph reading it may have packed the old value

    @property
    def value(self) -> Any:
        """A Python number for a plain type, the raw bytes for a struct type."""
        if self._value is None:
            decode = _DECODE.get(self.data_type)
            self._value = self._data if decode is None else decode(self._data)[0]
        return self._value

    @value.setter
    def value(self, value: Any) -> None:
        self.bytes = value if self.dtype is None else np.asarray(value, self.dtype).tobytes()

    # -- application access ---------------------------------------------------------
    def copy(self, user: Any, usage: int, mem_type: int, size: int | None = None) -> None:
        """vxCopyScalar(WithSize): ``user`` is a buffer of the scalar's size (None
        for a NULL pointer); ``size`` is what the caller stated, if anything."""
        access.check_access(self, "copying", usage, access.COPY_USAGES, mem_type)
        with access.concerning(self, "copying"):
            if size is not None and size != self.size:
                raise invalid_parameters(f"size {size} is wrong for its type "
                                         f"{type_name(self.data_type)} (expected {self.size})")
            if user is None:
                raise invalid_parameters("user pointer is NULL")
        if usage == access.READ:
            memoryview(user).cast("B")[:] = self._data
        else:
            self.bytes = bytes(user)
