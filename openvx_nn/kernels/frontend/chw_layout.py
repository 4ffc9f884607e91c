"""Float32 blobs between CoreML's channel-major layout and NHWC, the layout of the NHWC float engines.

A CoreML graph runs its convolution regions on the NHWC engines (``float_convolution``, ``float_depthwise``,
``float_pooling``) and converts only at the edges of a region: once after the input, once before a layer
that needs CoreML's layout. Both directions are one pass over memory; the arrays are the C-contiguous
``[N, C, H, W]`` and ``[N, H, W, C]`` views of the two tensors (``N`` every leading axis: batch, sequence).
"""
from __future__ import annotations

import numpy as np

from ..support import jit


@jit.kernel
def _to_nhwc(x, out):
    """``out[n, y, x, c] = x[n, c, y, x]``: per row, the channels' rows are read in step and written interleaved."""
    n_items, channels, height, width = x.shape
    for n in range(n_items):
        for y in range(height):
            for c in range(channels):
                row = x[n, c, y]
                for i in range(width):
                    out[n, y, i, c] = row[i]


@jit.kernel
def _to_chw(x, out):
    """``out[n, c, y, x] = x[n, y, x, c]``."""
    n_items, height, width, channels = x.shape
    for n in range(n_items):
        for y in range(height):
            for c in range(channels):
                row = out[n, c, y]
                for i in range(width):
                    row[i] = x[n, y, i, c]


def to_nhwc(x: np.ndarray, out: np.ndarray) -> None:
    """Copy the ``[N, C, H, W]`` array ``x`` into the ``[N, H, W, C]`` array ``out`` (both C-contiguous)."""
    _to_nhwc(x, out)


def to_chw(x: np.ndarray, out: np.ndarray) -> None:
    """Copy the ``[N, H, W, C]`` array ``x`` into the ``[N, C, H, W]`` array ``out`` (both C-contiguous)."""
    _to_chw(x, out)
