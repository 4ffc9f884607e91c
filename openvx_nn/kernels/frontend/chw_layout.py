"""Float32 blobs between CoreML's channel-major layout and NHWC, the layout of the NHWC float engines.

A CoreML graph runs its convolution regions on the NHWC engines (``float_convolution``, ``float_depthwise``,
``float_pooling``) and converts only at the edges of a region: once after the input, once before a layer
that needs CoreML's layout. Both directions are one pass over memory; the arrays are the C-contiguous
``[N, C, H, W]`` and ``[N, H, W, C]`` views of the two tensors (``N`` every leading axis: batch, sequence).
"""
from __future__ import annotations

import numpy as np

from ..support import jit, native
from .float_sharing import F32, at, block_of, compiled, contiguous_f32


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


_TYPES = (F32[4, False], F32[4, True])


def bind(to_nhwc: bool, x: np.ndarray, out: np.ndarray):
    """A no-argument call copying ``x`` into ``out``: ``[N, C, H, W]`` into ``[N, H, W, C]`` (``to_nhwc``) or
    back; both C-contiguous float32 (the tensors' own arrays, viewed)."""
    kernel = compiled(_to_nhwc if to_nhwc else _to_chw, _TYPES)
    return lambda: kernel(x, out)


_X, _OUT = at(0), at(1)


@native.factory
def _to_nhwc_entry() -> int:
    def entry(block):
        _to_nhwc(native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _OUT, np.float32)[0, 0])
        return 0
    return jit.native(entry)


@native.factory
def _to_chw_entry() -> int:
    def entry(block):
        _to_chw(native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _OUT, np.float32)[0, 0])
        return 0
    return jit.native(entry)


def native_layout(to_nhwc: bool, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
    """:func:`bind` as a native entry (run from C without the GIL); None unless both are C-contiguous float32."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0:
        return None
    words, keep = block_of(x, out)
    return native.Entry(_to_nhwc_entry() if to_nhwc else _to_chw_entry(), words, keep)
