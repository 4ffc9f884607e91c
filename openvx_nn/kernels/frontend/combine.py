"""Element-wise combination of two float tensors (or one tensor and a constant) with broadcasting.

Arrays are in OpenVX axis order, so CoreML's right-aligned broadcasting
becomes left-aligned here: an input of lower rank is padded with trailing
length-1 axes, then each axis must equal the output's or be 1. The result is
computed in float64 and stored as float32 once.
"""
from __future__ import annotations

import numpy as np

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
