"""``Tensor``: an OpenVX tensor seen as a NumPy array (dim 0 = axis 0)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import vx
from .formats import numpy_dtype, vx_type
from .reference import Reference, call, create, ffi


def _sizes(values: Sequence[int]):
    return ffi.new("vx_size[]", [int(v) for v in values] or [0])


def _packed_strides(shape: Sequence[int], itemsize: int) -> list[int]:
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= n
    return strides


class Tensor(Reference):
    """A tensor of the library.  OpenVX dims are NumPy axes in the same order
    (dim 0, the fastest-moving, is axis 0).

    Made by :meth:`Context.tensor` (real) or by a :class:`Graph` (virtual, as a
    layer's output).  ``fixed_point_position`` is the Qm.n fraction bits.
    """

    def __init__(self, handle, *, virtual: bool = False, shape: Sequence[int] | None = None,
                 dtype=None, fixed_point_position: int = 0, parent: Tensor | None = None):
        super().__init__(handle)
        self.virtual = virtual
        self.parent = parent
        self._views: list[Tensor] = []
        self._hint = (tuple(shape) if shape else None, None if dtype is None else np.dtype(dtype),
                      fixed_point_position)

    # -- meta-data -------------------------------------------------------
    def _query_size(self, attribute: int) -> int:
        out = ffi.new("vx_size *")
        call("vxQueryTensor", self.handle, attribute, out, ffi.sizeof("vx_size"))
        return int(out[0])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        """The dims; for a virtual tensor before verification, the shape the API inferred (may be ())."""
        rank = self._query_size(vx.VX_TENSOR_NUMBER_OF_DIMS)
        if rank == 0:
            return self._hint[0] or ()
        dims = ffi.new("vx_size[]", rank)
        call("vxQueryTensor", self.handle, vx.VX_TENSOR_DIMS, dims, rank * ffi.sizeof("vx_size"))
        return tuple(int(d) for d in dims)

    @property
    def dtype(self) -> np.dtype | None:
        """The NumPy dtype (None for a virtual tensor whose type is not yet known)."""
        data_type = self._query_type()
        return self._hint[1] if data_type == vx.VX_TYPE_INVALID else numpy_dtype(data_type)

    @property
    def fixed_point_position(self) -> int:
        if self._query_type() == vx.VX_TYPE_INVALID:
            return self._hint[2]
        out = ffi.new("vx_int8 *")
        call("vxQueryTensor", self.handle, vx.VX_TENSOR_FIXED_POINT_POSITION, out, ffi.sizeof("vx_int8"))
        return int(out[0])

    def _query_type(self) -> int:
        out = ffi.new("vx_enum *")
        call("vxQueryTensor", self.handle, vx.VX_TENSOR_DATA_TYPE, out, ffi.sizeof("vx_enum"))
        return int(out[0])

    def known(self) -> tuple[tuple[int, ...] | None, np.dtype | None, int]:
        """(shape, dtype, fixed point position) as far as they are known now."""
        shape = self.shape or None
        return shape, self.dtype, self.fixed_point_position

    # -- data ------------------------------------------------------------
    def _copy(self, array: np.ndarray, usage: int) -> None:
        call("vxCopyTensorPatch", self.handle, array.ndim, _sizes([0] * array.ndim), _sizes(array.shape),
             _sizes(_packed_strides(array.shape, array.itemsize)), ffi.from_buffer(array.T),
             usage, vx.VX_MEMORY_TYPE_HOST)

    def numpy(self) -> np.ndarray:
        """A copy of the contents (raw stored values: Qm.n tensors give integers)."""
        out = np.zeros(self.shape, dtype=self.dtype, order="F")
        self._copy(out, vx.VX_READ_ONLY)
        return out

    def write(self, array) -> None:
        """Copy ``array`` (the tensor's shape and dtype) into the tensor."""
        array = np.asarray(array)
        if array.shape != self.shape:
            raise ValueError(f"array shape {array.shape} differs from the tensor's {self.shape}")
        if array.dtype != self.dtype:
            raise TypeError(f"array dtype {array.dtype} differs from the tensor's {self.dtype}")
        self._copy(np.asfortranarray(array), vx.VX_WRITE_ONLY)

    def view(self, start: Sequence[int], end: Sequence[int]) -> Tensor:
        """A tensor sharing this one's memory, ``start[i] <= index < end[i]`` along each given dim."""
        handle = create("vxCreateTensorFromView", self.handle, len(start), _sizes(start), _sizes(end))
        dims = [e - s for s, e in zip(start, end)]
        shape = self._hint[0]
        full = tuple(dims) + (tuple(shape[len(dims):]) if shape else ())
        view = Tensor(handle, virtual=self.virtual, shape=full, dtype=self._hint[1],
                      fixed_point_position=self._hint[2], parent=self)
        self._views.append(view)
        return view

    def close(self) -> None:
        """Release the tensor and the views made from it."""
        while self._views:
            self._views.pop().close()
        super().close()

    def __repr__(self) -> str:
        if self.closed:
            return "<Tensor closed>"
        kind = "virtual " if self.virtual else ""
        return (f"<{kind}Tensor shape={self.shape} dtype={self.dtype} "
                f"fixed_point_position={self.fixed_point_position}>")


def create_tensor(context_handle, shape: Sequence[int], dtype, fpp: int) -> Tensor:
    handle = create("vxCreateTensor", context_handle, len(shape), _sizes(shape), vx_type(dtype), fpp)
    return Tensor(handle, shape=shape, dtype=dtype, fixed_point_position=fpp)


def create_virtual(graph_handle, shape: Sequence[int] | None, dtype, fpp: int) -> Tensor:
    """A virtual tensor; unknown shape (None) and dtype (None) are left for verification."""
    dims = list(shape or [])
    data_type = vx.VX_TYPE_INVALID if dtype is None else vx_type(dtype)
    handle = create("vxCreateVirtualTensor", graph_handle, len(dims), _sizes(dims) if dims else ffi.NULL,
                    data_type, fpp if dtype is not None else 0)
    return Tensor(handle, virtual=True, shape=shape, dtype=dtype, fixed_point_position=fpp)
