"""The maximum of two tensor values as the max-pooling layers define it, for every dtype.

Integers: the larger raw value. float32: the larger value, where NaN wins
over everything (a window holding a NaN pools to NaN, as ``np.max`` does) and
+0.0 wins over -0.0. With those two rules the maximum of a window does not
depend on the order its elements are visited in (IEEE 754-2019
``maximum``).
"""
from __future__ import annotations

import math

from ..support.jit import kernel


@kernel
def larger(m, v):
    """``maximum(m, v)`` by the rules of the module doc; for integers simply the larger one."""
    if v > m or math.isnan(v):  # false for integers
        return v
    if v == m and v == 0 and math.copysign(1.0, m) < 0.0:  # +0.0 over -0.0
        return v
    return m
