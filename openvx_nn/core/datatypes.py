"""Element types: which ``vx_type_e`` values data objects hold, their NumPy
dtypes and the fixed point positions each allows."""
from __future__ import annotations

import numpy as np

from .enums import Status, Type, type_name
from .errors import VXError

T = Type

NUMPY: dict[int, np.dtype] = {
    T.VX_TYPE_CHAR: np.dtype(np.int8), T.VX_TYPE_INT8: np.dtype(np.int8),
    T.VX_TYPE_UINT8: np.dtype(np.uint8), T.VX_TYPE_INT16: np.dtype(np.int16),
    T.VX_TYPE_UINT16: np.dtype(np.uint16), T.VX_TYPE_INT32: np.dtype(np.int32),
    T.VX_TYPE_UINT32: np.dtype(np.uint32), T.VX_TYPE_INT64: np.dtype(np.int64),
    T.VX_TYPE_UINT64: np.dtype(np.uint64), T.VX_TYPE_FLOAT16: np.dtype(np.float16),
    T.VX_TYPE_FLOAT32: np.dtype(np.float32), T.VX_TYPE_FLOAT64: np.dtype(np.float64),
    T.VX_TYPE_ENUM: np.dtype(np.int32), T.VX_TYPE_SIZE: np.dtype(np.uintp),
    T.VX_TYPE_DF_IMAGE: np.dtype(np.uint32), T.VX_TYPE_BOOL: np.dtype(np.int32),
}
"""Every plain (non-struct) scalar type and its storage dtype (little-endian host)."""

TENSOR_TYPES = (T.VX_TYPE_UINT8, T.VX_TYPE_INT8, T.VX_TYPE_INT16, T.VX_TYPE_INT32,
                T.VX_TYPE_FLOAT16, T.VX_TYPE_FLOAT32, T.VX_TYPE_BOOL)
"""Tensor element types: the NN extension's U8/S8/Q7.8 plus INT32, floats and ``vx_bool`` (a ``vx_enum``,
four bytes holding ``vx_false_e`` or ``vx_true_e``: what an imported NNEF ``logical`` is). Built-in kernels
refuse BOOL tensors at verify (``plan.Verifier``); user kernels decide for themselves."""

FLOAT_TYPES = (T.VX_TYPE_FLOAT16, T.VX_TYPE_FLOAT32, T.VX_TYPE_FLOAT64)


def dtype_of(vx_type: int) -> np.dtype:
    try:
        return NUMPY[vx_type]
    except KeyError:
        raise VXError(Status.VX_ERROR_INVALID_TYPE, f"{type_name(vx_type)} is not a data type") from None


def item_size(vx_type: int) -> int:
    return dtype_of(vx_type).itemsize


def fixed_point_range(vx_type: int) -> range:
    """Valid fixed point positions: 0 for floats, 0..bits-1 for signed and
    0..bits for unsigned integers (Q0.8 in a uint8 is a fraction in [0, 1)); 0 for booleans."""
    if vx_type in FLOAT_TYPES or vx_type == T.VX_TYPE_BOOL:
        return range(1)
    dtype = dtype_of(vx_type)
    bits = dtype.itemsize * 8
    return range(bits + (0 if dtype.kind == "i" else 1))


def check_fixed_point(vx_type: int, fpp: int, ref=None) -> None:
    allowed = fixed_point_range(vx_type)
    if fpp not in allowed:
        raise VXError(Status.VX_ERROR_INVALID_VALUE,
                      f"fixed point position {fpp} is invalid for {type_name(vx_type)} "
                      f"(expected {allowed.start}..{allowed.stop - 1})", ref)


def zeros(shape: tuple[int, ...], dtype: np.dtype, what: str) -> np.ndarray:
    """Zeroed storage for a data object; a size beyond memory is VX_ERROR_NO_MEMORY."""
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    try:
        if nbytes > np.iinfo(np.intp).max:
            raise MemoryError
        return np.zeros(shape, dtype)
    except (MemoryError, ValueError):
        raise VXError(Status.VX_ERROR_NO_MEMORY, f"cannot allocate {nbytes} bytes for {what}") from None
