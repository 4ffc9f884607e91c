"""Element-wise combination of two float tensors (or one tensor and a constant) with broadcasting.

Arrays are in OpenVX axis order, so CoreML's right-aligned broadcasting
becomes left-aligned here: an input of lower rank is padded with trailing
length-1 axes, then each axis must equal the output's or be 1. The result is
computed in float64 and stored as float32 once.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..support import native
from . import float_elementwise as fe

OPERATIONS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "max": np.maximum, "min": np.minimum, "pow": np.power,
    "prelu": lambda a, b: np.where(a >= 0, a, b * a),
    "floor_divide": lambda a, b: np.floor(a / b),
    "mod": lambda a, b: a - np.floor(a / b) * b,
    "equal": lambda a, b: (a == b).astype(np.float64),
    "not_equal": lambda a, b: (a != b).astype(np.float64),
    "less": lambda a, b: (a < b).astype(np.float64),
    "less_equal": lambda a, b: (a <= b).astype(np.float64),
    "greater": lambda a, b: (a > b).astype(np.float64),
    "greater_equal": lambda a, b: (a >= b).astype(np.float64),
    "logical_and": lambda a, b: ((a != 0) & (b != 0)).astype(np.float64),
    "logical_or": lambda a, b: ((a != 0) | (b != 0)).astype(np.float64),
    "logical_xor": lambda a, b: ((a != 0) ^ (b != 0)).astype(np.float64),
}
"""Comparisons and logic give 1.0 (true) or 0.0; logic reads any non-zero as true."""


def widen(a: np.ndarray, ndim: int) -> np.ndarray:
    """``a`` with trailing length-1 axes up to ``ndim`` (OpenVX-order broadcasting)."""
    a = np.asarray(a, np.float64)
    return a.reshape(a.shape + (1,) * (ndim - a.ndim))


def combine(a: np.ndarray, b: np.ndarray | None, out: np.ndarray, operation: str, constant: float = 0.0) -> None:
    """out = operation(a, b), or operation(a, constant) when ``b`` is None."""
    right = widen(b, out.ndim) if b is not None else np.float64(constant)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[...] = OPERATIONS[operation](widen(a, out.ndim), right)


ENGINE_OPERATIONS = {"add": fe.ADD, "subtract": fe.SUB, "multiply": fe.MUL, "divide": fe.DIV, "max": fe.MAX,
                     "min": fe.MIN, "prelu": fe.PRELU}
"""The operations ``float_elementwise`` computes with these bits (a float32 sum, difference, product or quotient
is the float64 one rounded once; maximum, minimum and PRELU pick an operand): they run there."""


def _engine_operands(a: np.ndarray, b: np.ndarray | None, out: np.ndarray, constant: float):
    """(a, b, out) as ``float_elementwise`` takes them: CoreML order (the transposes), right-aligned broadcast, the
    axes where the output has length 1 dropped; None when the operation or a rank above 4 keeps them off it."""
    if out.ndim == 0 or a.dtype != np.float32 or out.dtype != np.float32 or (b is not None and b.dtype != np.float32):
        return None
    right = np.full((1,) * out.ndim, constant, np.float32) if b is None else b
    kept = [i for i, n in enumerate(out.shape) if n != 1] or [0]  # one axis at least: views, never scalars
    if len(kept) > 4:
        return None

    def squeezed(x: np.ndarray) -> np.ndarray:
        return x.reshape(x.shape + (1,) * (out.ndim - x.ndim))[tuple(slice(None) if i in kept else 0
                                                                     for i in range(out.ndim))].T
    return squeezed(a), squeezed(right), squeezed(out)


def bind_combine(a: np.ndarray, b: np.ndarray | None, out: np.ndarray, operation: str,
                 constant: float = 0.0) -> Callable[[], None]:
    """A no-argument :func:`combine` of the arrays' current values: on ``float_elementwise``'s loop where it
    computes the operation (``ENGINE_OPERATIONS``, float32, at most 4 axes of length above 1), else NumPy's."""
    found = _engine_operands(a, b, out, constant) if operation in ENGINE_OPERATIONS else None
    if found is None:
        return lambda: combine(a, b, out, operation, constant)
    return fe.bind_binary(ENGINE_OPERATIONS[operation], *found, 0)


def native_combine(a: np.ndarray, b: np.ndarray | None, out: np.ndarray, operation: str,
                   constant: float = 0.0) -> native.Entry | None:
    """:func:`bind_combine` as a native entry (``float_elementwise.native_binary``); None off that loop."""
    found = _engine_operands(a, b, out, constant) if operation in ENGINE_OPERATIONS else None
    return None if found is None else fe.native_binary(ENGINE_OPERATIONS[operation], *found, 0)
