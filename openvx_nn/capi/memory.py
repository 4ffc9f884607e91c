"""NumPy views of application memory given to us as a C pointer."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .binding import ffi


def address(ptr) -> int:
    return int(ffi.cast("uintptr_t", ptr))


def extent(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> int:
    """Bytes spanned by an array of ``shape`` with non-negative byte ``strides``."""
    if any(n == 0 for n in shape):
        return 0
    return sum((n - 1) * s for n, s in zip(shape, strides)) + itemsize


def user_array(ptr, shape: Sequence[int], strides: Sequence[int], dtype) -> np.ndarray:
    """A writable NumPy array over the memory at ``ptr`` (cdata pointer or integer
    address) laid out with byte ``strides``; no copy is made."""
    dtype = np.dtype(dtype)
    if isinstance(ptr, int):
        ptr = ffi.cast("char *", ptr)
    nbytes = extent(shape, strides, dtype.itemsize)
    buffer = ffi.buffer(ptr, max(nbytes, dtype.itemsize))
    return np.ndarray(shape=tuple(shape), dtype=dtype, buffer=buffer, strides=tuple(strides))
