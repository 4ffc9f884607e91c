"""Reductions over chosen axes as one compiled loop (NNAPI's REDUCE_SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN,
REDUCE_ALL, REDUCE_ANY, float MEAN, and ARGMAX and ARGMIN over one axis), for the Python path and a native entry
alike, so a graph holding them runs from C with the Python path's bits.

The input is seen as a 6-D view and the output as the same 6-D view with each reduced axis of extent 1 (its
keep-dims shape: dropping the reduced axes keeps the elements' order). Each output element folds its input
elements in row-major order in a float64 accumulator, stored once in the output's type (booleans as
``!= 0``). MAX and MIN return NaN when any element is NaN (as NumPy's), else the extreme; ARGMAX and ARGMIN
the position (in that order: along the one reduced axis) of the element MAX and MIN settle on, the first of equal
extremes, the first NaN when there is one (as NumPy's ``argmax`` and ``argmin``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import types

from ..support import jit, native
from ..support.layout import RANK

SUM, PROD, MAX, MIN, MEAN, ARGMAX, ARGMIN = 0, 1, 2, 3, 4, 5, 6
OPERATIONS = {"sum": SUM, "prod": PROD, "max": MAX, "min": MIN, "mean": MEAN, "argmax": ARGMAX, "argmin": ARGMIN}


@jit.kernel
def _reduce(x, out, operation):
    o0, o1, o2, o3, o4, o5 = out.shape
    r0, r1, r2, r3, r4, r5 = (x.shape[0] // o0, x.shape[1] // o1, x.shape[2] // o2, x.shape[3] // o3,
                              x.shape[4] // o4, x.shape[5] // o5)
    count = r0 * r1 * r2 * r3 * r4 * r5
    extreme = operation == MAX or operation == MIN or operation == ARGMAX or operation == ARGMIN
    larger = operation == MAX or operation == ARGMAX
    for i0 in range(o0):
        for i1 in range(o1):
            for i2 in range(o2):
                for i3 in range(o3):
                    for i4 in range(o4):
                        for i5 in range(o5):
                            at = 0
                            if operation == PROD:
                                acc = 1.0
                            elif extreme:
                                acc = np.float64(x[i0, i1, i2, i3, i4, i5])
                            else:
                                acc = 0.0
                            for j in range(count):
                                k5 = j % r5
                                k4 = j // r5 % r4
                                k3 = j // (r5 * r4) % r3
                                k2 = j // (r5 * r4 * r3) % r2
                                k1 = j // (r5 * r4 * r3 * r2) % r1
                                k0 = j // (r5 * r4 * r3 * r2 * r1)
                                v = np.float64(x[i0 + k0, i1 + k1, i2 + k2, i3 + k3, i4 + k4, i5 + k5])
                                if operation == PROD:
                                    acc *= v
                                elif extreme:  # a NaN, once met, stays
                                    if not np.isnan(acc) and (np.isnan(v) or (v > acc if larger else v < acc)):
                                        acc = v
                                        at = j
                                else:
                                    acc += v
                            if operation == MEAN:
                                acc /= count
                            elif operation == ARGMAX or operation == ARGMIN:
                                acc = np.float64(at)
                            out[i0, i1, i2, i3, i4, i5] = acc


def _view(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``a`` seen under ``shape`` without a copy, or None."""
    held = a.view()
    try:
        held.shape = shape  # raises instead of copying
    except (AttributeError, ValueError):
        return None
    return held


def views(x: np.ndarray, out: np.ndarray, axes: Sequence[int]) -> tuple[np.ndarray, np.ndarray] | None:
    """6-D views of ``x`` and of ``out`` in its keep-dims shape (reduced axes of extent 1), or None when either
    cannot be seen so without a copy, or ``out`` is empty."""
    if x.ndim > RANK or out.size == 0 or x.size == 0:
        return None
    pad = (1,) * (RANK - x.ndim)
    xs = _view(x, pad + x.shape)
    os = _view(out, pad + tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return None if xs is None or os is None else (xs, os)


def reduce(x: np.ndarray, out: np.ndarray, axes: Sequence[int], operation: str) -> None:
    """``out`` = ``operation`` (sum, prod, max, min, mean; argmax, argmin over one axis) of ``x`` over ``axes``, kept
    as length 1 or dropped."""
    found = views(x, out, axes)
    if found is None:
        if out.size and x.size:  # strided operands: through contiguous copies
            held = np.empty(out.shape, out.dtype)
            reduce(np.ascontiguousarray(x), held, axes, operation)
            out[...] = held
        return
    xs, os = found
    if not os.flags.writeable:
        raise ValueError("out is read-only")
    jit.entry(_reduce, jit.array_in(xs), jit.array_out(os), types.int64)(xs, os, OPERATIONS[operation])


@native.factory
def _native_reduce(in_type: type, out_type: type, operation: int) -> int:
    def entry(block):
        _reduce(native.array(block, 0, in_type), native.array(block, native.ARRAY_WORDS, out_type), operation)
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, out: np.ndarray, axes: Sequence[int], operation: str) -> native.Entry | None:
    """:func:`reduce` as a native entry, or None (an output not viewable as its keep-dims shape, or empty)."""
    found = views(x, out, axes)
    if found is None:
        return None
    xs, os = found
    return native.Entry(_native_reduce(x.dtype.type, out.dtype.type, OPERATIONS[operation]), *native.pack(xs, os))
