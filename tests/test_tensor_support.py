"""Helpers for the tensor tests: C-style calls with NumPy arrays in OpenVX axis
order (``shape == dims``, axis 0 = dimension 0), and the tensor types."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openvx_nn import vx

# Every tensor type with a fixed point position it accepts and its NumPy dtype.
TYPES = {
    "U8": (vx.VX_TYPE_UINT8, 0, np.uint8),
    "Q7": (vx.VX_TYPE_INT8, 7, np.int8),
    "Q7.8": (vx.VX_TYPE_INT16, 8, np.int16),
    "S32": (vx.VX_TYPE_INT32, 0, np.int32),
    "F16": (vx.VX_TYPE_FLOAT16, 0, np.float16),
    "F32": (vx.VX_TYPE_FLOAT32, 0, np.float32),
}
DTYPES = {vx_type: dtype for vx_type, _, dtype in TYPES.values()}
HOST = vx.VX_MEMORY_TYPE_HOST


def sizes(values: Sequence[int] | None):
    """A ``vx_size[]`` (NULL for None)."""
    return vx.ffi.NULL if values is None else vx.ffi.new("vx_size[]", [int(v) for v in values] or [0])


def as_ref(handle):
    return vx.ffi.cast("vx_reference", handle)


def status_of(handle) -> int:
    return vx.vxGetStatus(as_ref(handle))


def pointer(array: np.ndarray):
    """``void *`` to the first element of ``array`` (which must stay alive)."""
    return vx.ffi.cast("void *", array.__array_interface__["data"][0])


def random_data(rng: np.random.Generator, shape: Sequence[int], dtype) -> np.ndarray:
    """Random values in OpenVX axis order, Fortran layout (packed OpenVX strides)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        values = rng.uniform(-100, 100, size=shape)
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, endpoint=True)
    out = np.zeros(shape, dtype, order="F")  # packed strides even across dims of size 1
    out[...] = values
    return out


def padded(rng: np.random.Generator, shape: Sequence[int], dtype) -> tuple[np.ndarray, np.ndarray]:
    """(buffer, view): a view of ``shape`` inside a larger buffer, so its byte
    strides have padding between rows, planes, …; the buffer keeps it alive."""
    pad = [int(rng.integers(0, 3)) for _ in shape]
    buffer = np.full([s + p for s, p in zip(shape, pad)], 77, dtype=dtype, order="F")
    return buffer, buffer[tuple(slice(0, s) for s in shape)]


def create(context, dims: Sequence[int], vx_type=vx.VX_TYPE_INT16, fpp: int = 0):
    tensor = vx.vxCreateTensor(context, len(dims), sizes(dims), vx_type, fpp)
    assert status_of(tensor) == vx.VX_SUCCESS
    return tensor


def release(handle) -> None:
    holder = vx.ffi.new("vx_tensor *", handle)
    assert vx.vxReleaseTensor(holder) == vx.VX_SUCCESS
    assert holder[0] == vx.ffi.NULL


def copy(tensor, start, end, user: np.ndarray, usage, n: int | None = None) -> int:
    """vxCopyTensorPatch with ``user`` as the application buffer (its own strides)."""
    n = len(start) if n is None else n
    return vx.vxCopyTensorPatch(tensor, n, sizes(start), sizes(end), sizes(user.strides), pointer(user),
                                usage, HOST)


def write(tensor, data: np.ndarray, start: Sequence[int] | None = None) -> None:
    start = start or [0] * data.ndim
    end = [s + d for s, d in zip(start, data.shape)]
    assert copy(tensor, start, end, data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS


def read(tensor, dims: Sequence[int], dtype, start: Sequence[int] | None = None) -> np.ndarray:
    """The patch ``start``..``start+dims`` (the whole tensor by default)."""
    start = start or [0] * len(dims)
    out = np.zeros(dims, dtype=dtype, order="F")
    end = [s + d for s, d in zip(start, dims)]
    assert copy(tensor, start, end, out, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    return out


def query_dims(tensor) -> list[int]:
    n = vx.ffi.new("vx_size *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_NUMBER_OF_DIMS, n, vx.ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    dims = vx.ffi.new("vx_size[]", max(n[0], 1))
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DIMS, dims, n[0] * vx.ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    return list(dims)[: n[0]]


def query_meta(tensor) -> tuple[list[int], int, int]:
    """(dims, data type, fixed point position) as vxQueryTensor reports them."""
    data_type = vx.ffi.new("vx_enum *")
    fpp = vx.ffi.new("vx_int8 *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DATA_TYPE, data_type, 4) == vx.VX_SUCCESS
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_FIXED_POINT_POSITION, fpp, 1) == vx.VX_SUCCESS
    return query_dims(tensor), data_type[0], fpp[0]


def mapped_array(address, strides: Sequence[int], shape: Sequence[int], dtype) -> np.ndarray:
    """A NumPy array over memory the library handed out by vxMapTensorPatch."""
    dtype = np.dtype(dtype)
    nbytes = sum((s - 1) * st for s, st in zip(shape, strides)) + dtype.itemsize
    buffer = vx.ffi.buffer(vx.ffi.cast("char *", address), nbytes)
    return np.ndarray(shape=tuple(shape), dtype=dtype, buffer=buffer, strides=tuple(strides))


def random_box(rng: np.random.Generator, dims: Sequence[int]) -> tuple[list[int], list[int]]:
    """A random non-empty start/end inside ``dims``."""
    start = [int(rng.integers(0, d)) for d in dims]
    end = [int(rng.integers(s + 1, d + 1)) for s, d in zip(start, dims)]
    return start, end


def random_dims(rng: np.random.Generator, low_rank: int = 1, high_rank: int = 6) -> list[int]:
    rank = int(rng.integers(low_rank, high_rank + 1))
    return [int(rng.integers(1, 6 if rank > 3 else 9)) for _ in range(rank)]


def model(handle):
    """The object-model tensor behind a handle (the library runs in this interpreter)."""
    from openvx_nn.core import reference
    return reference.find(int(vx.ffi.cast("uintptr_t", handle)))
