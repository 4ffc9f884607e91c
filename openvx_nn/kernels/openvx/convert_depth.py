"""Tensor depth conversion (OpenVX 1.2 vxTensorConvertDepthNode)."""
from __future__ import annotations

import numpy as np

from ..support import jit
from ..support.fixed_point import float32_value, float_to_int, int_range
from ..support.jit import kernel
from ..support.layout import detach, loop_views


# error_model="numpy": a zero norm divides to +-inf or nan (IEEE) instead of raising.
@kernel(error_model="numpy")
def _convert_to_int(x, in_unit, offset, norm, out_unit, out, saturate, truncate, lo, hi):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            v = (np.float64(x[i0, i1, i2, i3, i4, i5]) / in_unit - offset) / norm * out_unit
                            if truncate:
                                v = np.trunc(v)
                            out[i0, i1, i2, i3, i4, i5] = float_to_int(v, lo, hi, saturate)


@kernel(error_model="numpy")
def _convert_to_float(x, in_unit, offset, norm, out):
    n0, n1, n2, n3, n4, n5 = out.shape
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        for i5 in range(n5):
                            v = (np.float64(x[i0, i1, i2, i3, i4, i5]) / in_unit - offset) / norm
                            out[i0, i1, i2, i3, i4, i5] = np.float32(v)


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
    views = loop_views(out, detach(out, x, True))
    if views is None:
        return
    o, v = views
    in_unit = 1.0 if x.dtype.kind == "f" else 2.0 ** in_fpp
    offset, norm = float32_value(offset), float32_value(norm)
    head = (jit.array_in(v), jit.FLOAT, jit.FLOAT, jit.FLOAT)
    if out.dtype.kind == "f":
        if out.dtype != np.float32:
            raise ValueError(f"float output must be float32, got {out.dtype}")
        jit.entry(_convert_to_float, *head, jit.array_out(o))(v, in_unit, offset, norm, o)
        return
    lo, hi = int_range(out.dtype)
    function = jit.entry(_convert_to_int, *head, jit.FLOAT, jit.array_out(o), jit.BOOL, jit.BOOL, jit.INT, jit.INT)
    function(v, in_unit, offset, norm, 2.0 ** out_fpp, o, bool(saturate), bool(truncate), lo, hi)
