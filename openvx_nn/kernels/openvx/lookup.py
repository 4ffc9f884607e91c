"""Tensor table lookup (OpenVX 1.2 vxTensorTableLookupNode)."""
from __future__ import annotations

import numpy as np

from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import detach, each_element, loop_views


@jit.jitable
def _looked_up(v, lut, offset):
    index = np.int64(v) + offset
    if 0 <= index < lut.shape[0]:
        return lut[index]
    return lut.dtype.type(0)


_EACH = each_element(_looked_up)


@kernel
def _lookup(x, lut, offset, out):
    _EACH(out, (x,), (lut, offset))


def table_lookup(x: np.ndarray, lut: np.ndarray, offset: int, out: np.ndarray) -> None:
    """``out = lut[x + offset]`` element-wise, in place.

    ``lut`` is the LUT's 1-D array of ``count`` entries and ``offset`` its
    ``VX_LUT_OFFSET`` (0 for a uint8 LUT of 256 entries, ``count // 2`` for an
    int16 LUT). The index is the raw value plus the offset (fixed point
    positions play no part); an index outside ``0 .. count - 1``, possible only
    with an int16 LUT of fewer than 65536 entries, gives 0. With int16 data and
    ``offset == count // 2`` this equals OpenVX's "value as an unsigned index
    after adding the offset". ``out`` has the LUT's data type.
    """
    views = loop_views(out, detach(out, x, True))
    if views is None:
        return
    o, v = views
    table = np.ascontiguousarray(lut).reshape(-1)
    jit.entry(_lookup, jit.array_in(v), jit.array_in(table), jit.INT, jit.array_out(o))(v, table, int(offset), o)


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
@native.factory
def _native_lookup(dtype: type) -> int:
    def entry(block):
        _lookup(native.array(block, 0, dtype), native.array(block, 26, dtype)[0, 0, 0, 0, 0], block[39],
                native.array(block, 13, dtype))
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, lut: np.ndarray, offset: int, out: np.ndarray) -> native.Entry | None:
    """:func:`table_lookup` as a native entry reading the LUT's own memory (its values may change between runs);
    None when empty, when ``x`` overlaps ``out`` other than as the very same view, or when the table is not
    one contiguous run."""
    table = lut.reshape(-1)
    if detach(out, x, True) is not x or not table.flags.c_contiguous or not np.may_share_memory(table, lut):
        return None
    views = loop_views(out, x)
    if views is None:
        return None
    o, v = views
    return native.Entry(_native_lookup(out.dtype.type), *native.pack(v, o, native.as6(table), int(offset)))
