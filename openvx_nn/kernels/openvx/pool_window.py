"""Where a pooling window meets its input: the clamp every pooling kernel makes for each output row and column."""
from __future__ import annotations

from ..support import jit


@jit.jitable
def inside(o, stride, pad, size, extent):
    """``(start, stop)``: the input positions of output ``o``'s window (from ``o * stride - pad``, ``size`` long)
    that lie in ``[0, extent)``; none when ``start >= stop``."""
    start = o * stride - pad
    return max(start, 0), min(start + size, extent)
