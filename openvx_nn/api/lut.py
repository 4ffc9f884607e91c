"""``Lut``: a lookup table for :meth:`Graph.table_lookup`."""
from __future__ import annotations

import numpy as np

from .. import vx
from .formats import vx_type
from .reference import Reference, call, create, ffi

LUT_DTYPES = (np.dtype(np.uint8), np.dtype(np.int16))


class Lut(Reference):
    """A ``vx_lut`` of UINT8 (1..256 entries, index = value) or INT16
    (1..65536 entries, index = value + count // 2)."""

    def __init__(self, handle, dtype: np.dtype, count: int):
        super().__init__(handle)
        self.dtype = dtype
        self.count = count

    def numpy(self) -> np.ndarray:
        out = np.zeros(self.count, self.dtype)
        call("vxCopyLUT", self.handle, ffi.from_buffer(out), vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST)
        return out


def create_lut(context_handle, values) -> Lut:
    table = np.ascontiguousarray(values)
    if table.dtype not in LUT_DTYPES or table.ndim != 1:
        raise TypeError(f"a LUT is a 1-D uint8 or int16 array, got {table.ndim}-D {table.dtype}")
    handle = create("vxCreateLUT", context_handle, vx_type(table.dtype), table.size)
    lut = Lut(handle, table.dtype, table.size)
    call("vxCopyLUT", handle, ffi.from_buffer(table), vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST)
    return lut
