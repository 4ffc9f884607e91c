"""Sorting along an axis: the first ``k`` values of each line in ascending or descending order, and where they
were (top-K, bottom-K and argsort are this one function).

Ties keep their input order (the lower index first) in both directions; NaN sorts after every number in both
directions. Arrays are row-major in meaning and ``axis`` counts from the first.
"""
from __future__ import annotations

import numpy as np


def sort_first(x: np.ndarray, k: int, axis: int, descending: bool, values: np.ndarray | None,
               indices: np.ndarray | None) -> None:
    """``values`` = the first ``k`` of each line along ``axis`` in sorted order, ``indices`` = their positions
    along ``axis`` (as floats); either output may be None."""
    v = np.asarray(x, np.float64)
    if not 1 <= k <= v.shape[axis]:
        raise ValueError(f"k = {k} is outside 1..{v.shape[axis]}")
    # a stable sort of the negated values keeps ties in input order when descending; NaN stays last either way
    order = np.argsort(-v if descending else v, axis=axis, kind="stable")
    order = np.take(order, np.arange(k), axis=axis)
    if values is not None:
        values[...] = np.take_along_axis(v, order, axis=axis)
    if indices is not None:
        indices[...] = order
