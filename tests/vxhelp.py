"""Small helpers for tests that drive the C-style API: NumPy arrays in, tensors
out and back.  Arrays are in OpenVX axis order (axis 0 = dim 0, fastest)."""
from __future__ import annotations

import numpy as np

VX_TYPES = {np.dtype(np.uint8): "VX_TYPE_UINT8", np.dtype(np.int8): "VX_TYPE_INT8",
            np.dtype(np.int16): "VX_TYPE_INT16", np.dtype(np.int32): "VX_TYPE_INT32",
            np.dtype(np.float32): "VX_TYPE_FLOAT32"}


def as_ref(vx, handle):
    return vx.ffi.cast("vx_reference", handle)


def status(vx, handle) -> int:
    return vx.vxGetStatus(as_ref(vx, handle))


def vx_type(vx, dtype) -> int:
    return getattr(vx, VX_TYPES[np.dtype(dtype)])


def _sizes(vx, values):
    return vx.ffi.new("vx_size[]", [int(v) for v in values])


def empty(vx, ctx, shape, dtype, fpp=0):
    t = vx.vxCreateTensor(ctx, len(shape), _sizes(vx, shape), vx_type(vx, dtype), fpp)
    assert status(vx, t) == vx.VX_SUCCESS
    return t


def virtual(vx, graph, shape, dtype=None, fpp=0):
    t = vx.vxCreateVirtualTensor(graph, len(shape), _sizes(vx, shape),
                                 vx_type(vx, dtype) if dtype is not None else vx.VX_TYPE_INVALID, fpp)
    assert status(vx, t) == vx.VX_SUCCESS
    return t


def packed_strides(shape, itemsize) -> list[int]:
    """Byte strides of a dense OpenVX-order buffer (dim 0 fastest)."""
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= n
    return strides


def write(vx, tensor, array) -> None:
    array = np.asfortranarray(array)
    zeros = _sizes(vx, [0] * array.ndim)
    rc = vx.vxCopyTensorPatch(tensor, array.ndim, zeros, _sizes(vx, array.shape),
                              _sizes(vx, packed_strides(array.shape, array.itemsize)),
                              vx.ffi.from_buffer(array.T), vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST)
    assert rc == vx.VX_SUCCESS


def tensor(vx, ctx, array, fpp=0):
    array = np.asarray(array)
    t = empty(vx, ctx, array.shape, array.dtype, fpp)
    write(vx, t, array)
    return t


def read(vx, tensor, shape, dtype) -> np.ndarray:
    out = np.zeros(shape, dtype=dtype, order="F")
    zeros = _sizes(vx, [0] * out.ndim)
    rc = vx.vxCopyTensorPatch(tensor, out.ndim, zeros, _sizes(vx, out.shape),
                              _sizes(vx, packed_strides(out.shape, out.itemsize)),
                              vx.ffi.from_buffer(out.T), vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST)
    assert rc == vx.VX_SUCCESS, rc
    return out


def scalar(vx, ctx, ctype: str, value, vx_type_name: str):
    s = vx.vxCreateScalar(ctx, getattr(vx, vx_type_name), vx.ffi.new(f"{ctype} *", value))
    assert status(vx, s) == vx.VX_SUCCESS
    return s


def query_dims(vx, tensor) -> tuple[int, ...]:
    n = vx.ffi.new("vx_size *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_NUMBER_OF_DIMS, n, vx.ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    dims = vx.ffi.new("vx_size[]", n[0])
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DIMS, dims, n[0] * vx.ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    return tuple(dims)


def release(vx, *handles) -> None:
    """Release any handles (tensors, scalars, nodes, graphs...) through vxReleaseReference."""
    for h in handles:
        holder = vx.ffi.new("vx_reference *", as_ref(vx, h))
        assert vx.vxReleaseReference(holder) == vx.VX_SUCCESS
