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
def _copy(planes, pixels, into_pixels):
    """``pixels[n, y, x, c] = planes[n, c, y, x]`` (``into_pixels``) or back: per row, the channels' rows are
    walked in step, so the planes side is read or written contiguously (the branch is the same on every pass:
    LLVM takes it out of the loops)."""
    n_items, channels, height, width = planes.shape
    for n in range(n_items):
        for y in range(height):
            for c in range(channels):
                row = planes[n, c, y]
                if into_pixels:
                    for i in range(width):
                        pixels[n, y, i, c] = row[i]
                else:
                    for i in range(width):
                        row[i] = pixels[n, y, i, c]


_TYPES = (F32[4, True], F32[4, True], jit.BOOL)


def bind(to_nhwc: bool, x: np.ndarray, out: np.ndarray):
    """A no-argument call copying ``x`` into ``out``: ``[N, C, H, W]`` into ``[N, H, W, C]`` (``to_nhwc``) or
    back; both C-contiguous float32 (the tensors' own arrays, viewed)."""
    if not (contiguous_f32(x) and contiguous_f32(out)):
        raise ValueError("the layout copy takes C-contiguous float32 arrays (gather a strided view first)")
    kernel = compiled(_copy, _TYPES)
    planes, pixels = (x, out) if to_nhwc else (out, x)
    return lambda: kernel(planes, pixels, bool(to_nhwc))


_PLANES, _PIXELS, _INTO_PIXELS = at(0), at(1), at(2)


@native.factory
def _copy_entry() -> int:
    def entry(block):
        _copy(native.c_array(block, _PLANES, np.float32)[0, 0], native.c_array(block, _PIXELS, np.float32)[0, 0],
              block[_INTO_PIXELS] != 0)
        return 0
    return jit.native(entry)


def native_layout(to_nhwc: bool, x: np.ndarray, out: np.ndarray) -> native.Entry | None:
    """:func:`bind` as a native entry (run from C without the GIL); None unless both are C-contiguous float32."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0:
        return None
    planes, pixels = (x, out) if to_nhwc else (out, x)
    words, keep = block_of(planes, pixels, int(bool(to_nhwc)))
    return native.Entry(_copy_entry(), words, keep)
