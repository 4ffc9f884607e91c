"""``Context``: the OpenVX context, owner of everything the API makes."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import vx
from .arguments import constant_array, integer
from .arguments import shape as checked_shape
from .graph import Graph
from .lut import Lut, create_lut
from .reference import Reference, call, create, ffi, register_log, unregister_log
from .tensor import Tensor, create_tensor
from .user_kernel import Param, TensorInfo, UserKernel


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of the context: its standard name and enum."""

    enum: int
    name: str


class Context(Reference):
    """The OpenVX context.  Use as a context manager: closing it releases every
    tensor, LUT and graph made from it, then the context itself.

    >>> with Context() as ctx:
    ...     t = ctx.tensor(np.zeros((4, 3), np.int16), fixed_point_position=8)
    """

    def __init__(self) -> None:
        handle = vx.vxCreateContext()
        status = vx.vxGetStatus(ffi.cast("vx_reference", handle))
        if status != vx.VX_SUCCESS:
            from .errors import error_for
            raise error_for(status, "vxCreateContext", "the library could not start (see stderr)")
        super().__init__(handle)
        register_log(handle)
        self._owned: list[Reference] = []

    # -- queries -----------------------------------------------------------
    def _query(self, attribute: int, ctype: str):
        out = ffi.new(f"{ctype} *")
        call("vxQueryContext", self.handle, attribute, out, ffi.sizeof(ctype))
        return out[0]

    @property
    def references(self) -> int:
        """VX_CONTEXT_REFERENCES: live objects of the context, itself included."""
        return int(self._query(vx.VX_CONTEXT_REFERENCES, "vx_uint32"))

    @property
    def implementation(self) -> str:
        out = ffi.new("vx_char[]", vx.VX_MAX_IMPLEMENTATION_NAME)
        call("vxQueryContext", self.handle, vx.VX_CONTEXT_IMPLEMENTATION, out, len(out))
        return ffi.string(out).decode()

    @property
    def version(self) -> tuple[int, int]:
        value = int(self._query(vx.VX_CONTEXT_VERSION, "vx_uint16"))
        return value >> 8, value & 0xFF

    @property
    def extensions(self) -> list[str]:
        """The extension names (``vx_khr_nn`` among them)."""
        size = int(self._query(vx.VX_CONTEXT_EXTENSIONS_SIZE, "vx_size"))
        out = ffi.new("vx_char[]", max(size, 1))
        call("vxQueryContext", self.handle, vx.VX_CONTEXT_EXTENSIONS, out, size)
        return ffi.string(out).decode().split()

    @property
    def kernels(self) -> list[KernelInfo]:
        """Every kernel of the context (VX_CONTEXT_UNIQUE_KERNEL_TABLE)."""
        count = int(self._query(vx.VX_CONTEXT_UNIQUE_KERNELS, "vx_uint32"))
        table = ffi.new("vx_kernel_info_t[]", count)
        call("vxQueryContext", self.handle, vx.VX_CONTEXT_UNIQUE_KERNEL_TABLE, table,
             count * ffi.sizeof("vx_kernel_info_t"))
        return [KernelInfo(int(k.enumeration), ffi.string(k.name).decode()) for k in table]

    # -- making objects ------------------------------------------------------
    def _own(self, obj):
        self._owned.append(obj)
        return obj

    def tensor(self, array=None, *, shape: Sequence[int] | None = None, dtype=None,
               fixed_point_position: int = 0) -> Tensor:
        """A tensor holding ``array`` (a NumPy array or nested lists: its shape, and its
        dtype or ``dtype``), or a zeroed one of ``shape``/``dtype``."""
        fixed_point_position = integer(fixed_point_position, "fixed_point_position")
        if array is not None:
            if shape is not None:
                raise ValueError("give an array or a shape, not both")
            array = constant_array(array, "array", dtype)
            checked_shape(array.shape, "array shape")
            tensor = self._own(create_tensor(self.handle, array.shape, array.dtype, fixed_point_position))
            tensor.write(array)
            return tensor
        if shape is None or dtype is None:
            raise ValueError("give an array, or both shape and dtype")
        return self._own(create_tensor(self.handle, checked_shape(shape), dtype, fixed_point_position))

    def lut(self, values) -> Lut:
        """A LUT holding ``values`` (1-D uint8 or int16)."""
        return self._own(create_lut(self.handle, values))

    def add_kernel(self, name: str, run: Callable[..., Any], params: Sequence[Param],
                   validate: Callable[..., Sequence[TensorInfo]] | None = None, *,
                   enum: int | None = None) -> UserKernel:
        """A user kernel whose body is ``run``: see :mod:`openvx_nn.api.user_kernel`.

        ``run(*args)`` gets, in ``params`` order, NumPy arrays over the tensors (outputs writable)
        and scalars as numbers; ``validate(*inputs)`` gets a :class:`TensorInfo` per input tensor
        and the value of each input scalar, and returns one per output (shape, dtype, fixed
        point position).  Raising one of this package's ``VXError`` classes rejects with its
        status; any other exception with VX_FAILURE.  ``enum`` defaults to a fresh
        ``vxAllocateUserKernelId``."""
        return self._own(UserKernel(self.handle, name, run, params, validate, enum))

    def graph(self) -> Graph:
        """A new, empty graph."""
        return self._own(Graph(create("vxCreateGraph", self.handle), self))

    def close(self) -> None:
        """Release everything made from this context, then the context."""
        if self.closed:
            return
        while self._owned:
            self._owned.pop().close()
        unregister_log(self.handle)
        holder = ffi.new("vx_context *", self.handle)
        self._handle = None
        call("vxReleaseContext", holder)
