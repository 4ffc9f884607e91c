"""Integer max pooling (U8, S8, Q7.8) on C-ordered planes ``[P, H, W]``: the transposes of OpenVX-ordered
tensors, each plane's rows contiguous.

The generic 6-D kernel of ``pooling.py`` reads through views whose strides LLVM does not know, one value at a
time (ResNet-18's 3x3 stride-2 max pool of 112x112x64 U8: 0.6 ms on one core; here 0.06). Here each output row
is two passes over contiguous runs that vectorize. Down: the largest value of each input column over the
window's rows inside the input. Across: for the outputs whose window lies wholly inside the row, the largest
of the window's columns; the few outputs at the edges take the columns inside the input only, and a window
with none inside (rows or columns) gives 0, as the module doc of ``pooling.py`` states. Integers have one
maximum whatever the order, so the bytes are those of the generic kernel.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..support.jit import kernel
from .pool_window import inside


def _max_planes(x, out, size_x, size_y, pad_x, pad_y, stride_x, stride_y):
    # Indexed in place, not through row views or calls taking arrays: each costs reference counting, which on
    # short rows is more than the row's work.
    n_planes, height, width = x.shape
    out_h, out_w = out.shape[1], out.shape[2]
    # outputs ox in [inner_lo, inner_hi) have every window column inside the row
    inner_lo = min(-(-pad_x // stride_x), out_w)
    inner_hi = max(min((width + pad_x - size_x) // stride_x + 1, out_w), inner_lo)
    n_edges = inner_lo + out_w - inner_hi
    # The inner run below: the usual windows are written out with constant strides, which LLVM turns into shuffles
    # of whole vectors (a loop over a window's taps inside the loop over outputs does not vectorize, and its
    # branches mispredict); its indices are built from values clamped at 0 (which they are already), so that LLVM
    # knows them non-negative and drops the check for negative indices that would keep the loops scalar.
    lo = max(inner_lo, 0)
    base = max(lo * stride_x - pad_x, 0)  # the first inner window's first column
    n = inner_hi - lo
    columns = np.empty((n_planes, width), x.dtype)  # a row of column maxima per plane (none allocated in prange)
    for plane in prange(n_planes):
        for oy in range(out_h):
            y_start, y_stop = inside(oy, stride_y, pad_y, size_y, height)
            if y_start >= y_stop:
                for ox in range(out_w):
                    out[plane, oy, ox] = 0
                continue
            for xi in range(width):
                columns[plane, xi] = x[plane, y_start, xi]
            for y in range(y_start + 1, y_stop):
                for xi in range(width):
                    columns[plane, xi] = max(columns[plane, xi], x[plane, y, xi])
            for k in range(n_edges):  # the outputs whose windows reach past the row: the columns inside, or 0
                ox = k if k < inner_lo else inner_hi + k - inner_lo
                x_start, x_stop = inside(ox, stride_x, pad_x, size_x, width)
                m = columns[plane, x_start] if x_start < x_stop else 0
                for xi in range(x_start + 1, x_stop):
                    m = max(m, columns[plane, xi])
                out[plane, oy, ox] = m
            if size_x == 3 and stride_x == 2:
                for j in range(n):
                    at = base + 2 * j
                    out[plane, oy, lo + j] = max(max(columns[plane, at], columns[plane, at + 1]), columns[plane, at + 2])
            elif size_x == 2 and stride_x == 2:
                for j in range(n):
                    at = base + 2 * j
                    out[plane, oy, lo + j] = max(columns[plane, at], columns[plane, at + 1])
            elif size_x == 3 and stride_x == 1:
                for j in range(n):
                    at = base + j
                    out[plane, oy, lo + j] = max(max(columns[plane, at], columns[plane, at + 1]), columns[plane, at + 2])
            elif size_x == 2 and stride_x == 1:
                for j in range(n):
                    at = base + j
                    out[plane, oy, lo + j] = max(columns[plane, at], columns[plane, at + 1])
            else:  # one pass over the outputs per tap
                for j in range(n):
                    out[plane, oy, lo + j] = columns[plane, base + stride_x * j]
                for i in range(1, size_x):
                    for j in range(n):
                        out[plane, oy, lo + j] = max(out[plane, oy, lo + j], columns[plane, base + i + stride_x * j])


MAX_PLANES = {parallel: kernel(_max_planes, parallel=parallel) for parallel in (False, True)}
"""The kernel, serial and spread over the thread pool's planes."""
