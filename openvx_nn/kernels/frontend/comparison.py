"""Comparisons and selection as compiled loops (NNAPI's EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS,
LESS_EQUAL and SELECT), for the Python path and a native entry alike, so a graph holding them runs from C with the
Python path's bits.

Operands are the 6-D loop views of ``layout.loop_views`` (inputs broadcast to the output by stride 0). A comparison
reads each operand as its real value in float64, ``(q - zero_point) * scale`` (scale 1 and zero point 0 for float,
int32 and boolean data: the value itself, exactly), and stores 1 or 0; NaN compares unequal to everything, as in
IEEE. SELECT moves raw values (its lowering keeps this for operands of one quantization).
"""
from __future__ import annotations

import numpy as np
from numba import types

from ..support import jit, native
from ..support.layout import each_element, loop_views

EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL = range(6)
RULES = {"equal": EQUAL, "not_equal": NOT_EQUAL, "greater": GREATER, "greater_equal": GREATER_EQUAL,
         "less": LESS, "less_equal": LESS_EQUAL}
COMPILED = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8))
"""Element types the loops take (float16 has no numba type: its callers keep NumPy)."""


@jit.kernel
def _holds(rule, x, y):
    if rule == EQUAL:
        return x == y
    if rule == NOT_EQUAL:
        return x != y
    if rule == GREATER:
        return x > y
    if rule == GREATER_EQUAL:
        return x >= y
    if rule == LESS:
        return x < y
    return x <= y


@jit.jitable
def _compared(x, y, rule, scale_a, zero_a, scale_b, zero_b):
    return 1 if _holds(rule, (np.float64(x) - zero_a) * scale_a, (np.float64(y) - zero_b) * scale_b) else 0


@jit.jitable
def _selected(condition, x, y):
    if condition != 0:
        return x
    return y


_EACH_COMPARED, _EACH_SELECTED = each_element(_compared), each_element(_selected)


@jit.kernel
def _compare(a, b, out, rule, scale_a, zero_a, scale_b, zero_b):
    _EACH_COMPARED(out, (a, b), (rule, scale_a, zero_a, scale_b, zero_b))


@jit.kernel
def _select(condition, a, b, out):
    _EACH_SELECTED(out, (condition, a, b), ())


def _quant(q: tuple[float, int] | None) -> tuple[float, float]:
    return (1.0, 0.0) if q is None else (float(q[0]), float(q[1]))


def takes(*arrays: np.ndarray) -> bool:
    """Whether the loops take these arrays: element types they compile, outputs of rank at most 6."""
    return all(np.dtype(a.dtype) in COMPILED for a in arrays)


def compare(rule: str, a: np.ndarray, b: np.ndarray, out: np.ndarray, qa: tuple[float, int] | None = None,
            qb: tuple[float, int] | None = None) -> None:
    """``out`` (uint8) = 1 where ``rule`` holds between ``a``'s and ``b``'s real values (broadcast), else 0."""
    views = loop_views(out, a, b)
    if views is None:
        return
    o, x, y = views
    kernel = jit.entry(_compare, jit.array_in(x), jit.array_in(y), jit.array_out(o), types.int64, types.float64,
                       types.float64, types.float64, types.float64)
    kernel(x, y, o, RULES[rule], *_quant(qa), *_quant(qb))


def select(condition: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out`` = ``a`` where ``condition`` is non-zero, else ``b`` (raw values, broadcast)."""
    views = loop_views(out, condition, a, b)
    if views is None:
        return
    o, c, x, y = views
    jit.entry(_select, jit.array_in(c), jit.array_in(x), jit.array_in(y), jit.array_out(o))(c, x, y, o)


@native.factory
def _native_compare(a_type: type, b_type: type) -> int:
    at = native.ARRAY_WORDS

    def entry(block):
        _compare(native.array(block, 0, a_type), native.array(block, at, b_type), native.array(block, 2 * at, np.uint8),
                 block[3 * at], native.real(block, 3 * at + 1), native.real(block, 3 * at + 2),
                 native.real(block, 3 * at + 3), native.real(block, 3 * at + 4))
        return 0
    return jit.native(entry)


@native.factory
def _native_select(condition_type: type, value_type: type) -> int:
    at = native.ARRAY_WORDS

    def entry(block):
        _select(native.array(block, 0, condition_type), native.array(block, at, value_type),
                native.array(block, 2 * at, value_type), native.array(block, 3 * at, value_type))
        return 0
    return jit.native(entry)


def native_compare(rule: str, a: np.ndarray, b: np.ndarray, out: np.ndarray, qa: tuple[float, int] | None = None,
                   qb: tuple[float, int] | None = None) -> native.Entry | None:
    """:func:`compare` as a native entry, or None (an empty output, or an element type the loop does not take)."""
    if not takes(a, b) or out.dtype != np.uint8:
        return None
    views = loop_views(out, a, b)
    if views is None:
        return None
    o, x, y = views
    return native.Entry(_native_compare(a.dtype.type, b.dtype.type),
                        *native.pack(x, y, o, RULES[rule], *_quant(qa), *_quant(qb)))


def native_select(condition: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> native.Entry | None:
    """:func:`select` as a native entry, or None (an empty output, or an element type the loop does not take)."""
    if not takes(condition, a, b) or not a.dtype == b.dtype == out.dtype:
        return None
    views = loop_views(out, condition, a, b)
    if views is None:
        return None
    o, c, x, y = views
    return native.Entry(_native_select(condition.dtype.type, a.dtype.type), *native.pack(c, x, y, o))
