"""Tensor depth conversion (OpenVX 1.2 vxTensorConvertDepthNode)."""
from __future__ import annotations

import numpy as np

from ..support import jit, native
from ..support.fixed_point import float32_value, float_to_int, int_range
from ..support.jit import kernel
from ..support.layout import detach, each_element, loop_views


@jit.jitable
def _converted_int(x, in_unit, offset, norm, out_unit, saturate, truncate, lo, hi):
    v = (np.float64(x) / in_unit - offset) / norm * out_unit
    if truncate:
        v = np.trunc(v)
    return float_to_int(v, lo, hi, saturate)


@jit.jitable
def _converted_float(x, in_unit, offset, norm):
    return np.float32((np.float64(x) / in_unit - offset) / norm)


_EACH_INT, _EACH_FLOAT = each_element(_converted_int), each_element(_converted_float)


# error_model="numpy": a zero norm divides to +-inf or nan (IEEE) instead of raising.
@kernel(error_model="numpy")
def _convert_to_int(x, in_unit, offset, norm, out_unit, out, saturate, truncate, lo, hi):
    _EACH_INT(out, (x,), (in_unit, offset, norm, out_unit, saturate, truncate, lo, hi))


@kernel(error_model="numpy")
def _convert_to_float(x, in_unit, offset, norm, out):
    _EACH_FLOAT(out, (x,), (in_unit, offset, norm))


def convert_depth(x: np.ndarray, in_fpp: int, out: np.ndarray, out_fpp: int, norm: float, offset: float,
                  saturate: bool, *, truncate: bool = False) -> None:
    """``out = ((x / 2**in_fpp) - offset) / norm * 2**out_fpp`` element-wise, in place.

    Evaluated in float64 in exactly that order, with ``norm`` and ``offset``
    taken as float32 values (OpenVX passes them as vx_float32). float32
    tensors count as fixed point position 0 whatever is passed. Integer
    output: rounded to nearest, ties to even (``truncate``: toward zero, the
    Khronos sample implementation's C cast), then saturated (``saturate``) or
    wrapped two's-complement; float32 output: the float64 result cast to
    float32, no other rounding. ``norm == 0`` is rejected by graph
    verification; here it follows IEEE division: ``x - offset`` of either sign
    gives +-inf, saturated to the type's limits, wrapped to 0; ``0 / 0`` gives
    nan, stored as 0 (and as nan in float32).
    """
    found = _operands(x, in_fpp, out, out_fpp, norm, offset, saturate, truncate, detach(out, x, True))
    if found is None:
        return
    v, o, arguments = found
    head = (jit.array_in(v), jit.FLOAT, jit.FLOAT, jit.FLOAT)
    if out.dtype.kind == "f":
        jit.entry(_convert_to_float, *head, jit.array_out(o))(v, *arguments[:3], o)
        return
    function = jit.entry(_convert_to_int, *head, jit.FLOAT, jit.array_out(o), jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    function(v, *arguments[:4], o, *arguments[4:])


def _operands(x, in_fpp, out, out_fpp, norm, offset, saturate, truncate, source) -> tuple | None:
    """(input view, output view, the kernel's scalars: in_unit, offset, norm[, out_unit, saturate, truncate,
    lo, hi]) with ``source`` (``x`` or its copy) as the input; None when empty."""
    views = loop_views(out, source)
    if views is None:
        return None
    o, v = views
    in_unit = 1.0 if x.dtype.kind == "f" else 2.0 ** in_fpp
    head = (in_unit, float32_value(offset), float32_value(norm))
    if out.dtype.kind == "f":
        if out.dtype != np.float32:
            raise ValueError(f"float output must be float32, got {out.dtype}")
        return v, o, head
    return v, o, head + (2.0 ** out_fpp, bool(saturate), bool(truncate), *int_range(out.dtype))


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
@native.factory
def _native_convert(x_dtype: type, out_dtype: type, to_float: bool) -> int:
    if to_float:
        def entry(block):
            _convert_to_float(native.array(block, 0, x_dtype), native.real(block, 26), native.real(block, 27),
                              native.real(block, 28), native.array(block, 13, out_dtype))
            return 0
    else:
        def entry(block):
            _convert_to_int(native.array(block, 0, x_dtype), native.real(block, 26), native.real(block, 27),
                            native.real(block, 28), native.real(block, 29), native.array(block, 13, out_dtype),
                            block[30] != 0, block[31] != 0, block[32], block[33])
            return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, in_fpp: int, out: np.ndarray, out_fpp: int, norm: float, offset: float,
                 saturate: bool, *, truncate: bool = False) -> native.Entry | None:
    """:func:`convert_depth` as a native entry; None when empty or when ``x`` overlaps ``out`` other than as
    the very same view."""
    if detach(out, x, True) is not x:
        return None
    found = _operands(x, in_fpp, out, out_fpp, norm, offset, saturate, truncate, x)
    if found is None:
        return None
    v, o, arguments = found
    return native.Entry(_native_convert(x.dtype.type, out.dtype.type, out.dtype.kind == "f"),
                        *native.pack(v, o, *arguments))
