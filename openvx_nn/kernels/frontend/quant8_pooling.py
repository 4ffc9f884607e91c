"""NNAPI's TENSOR_QUANT8_ASYMM AVERAGE_POOL_2D and MAX_POOL_2D on raw integers, vectorized over channels.

``nhwc_pooling`` dequantizes every input to float64 first. Here the window's raw values are reduced
as integers (a maximum, or an exact int32 sum of ``q - zero_point``) and only each result goes
through float64, with the same operations in the same order as there, so the output bits are the
same: ``(q - z) * scale`` is exact in float64 (9 by 24 significant bits) and so is every partial
sum of such terms (they are integer multiples of one scale, far below ``2**53``), hence the
float64 sum equals ``S * scale`` for the integer sum ``S``; then ``/ count``,
``rint(real / s_out) + z_out`` and the activation's clamp as ``asymmetric.store`` does. A window
wholly in padding gives the real value 0.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import types

from ..support import jit, native
from ..support.jit import kernel
from .asymmetric import quantized_range


@kernel
def _pool(x, out, maximum, x_zero, x_scale, out_zero, out_scale, lo, hi, pad_top, pad_left, stride_h, stride_w, kh,
          kw):
    n_batch, height, width, depth = x.shape
    _, out_h, out_w, _ = out.shape
    acc = np.empty(depth, np.int32)
    zero = np.int32(x_zero)
    for b in range(n_batch):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_top
            ys, ye = max(y0, 0), min(y0 + kh, height)
            for ox in range(out_w):
                x0 = ox * stride_w - pad_left
                xs, xe = max(x0, 0), min(x0 + kw, width)
                count = max(ye - ys, 0) * max(xe - xs, 0)
                acc[:] = 0
                for iy in range(ys, ye):
                    for ix in range(xs, xe):
                        pixel = x[b, iy, ix]
                        if maximum:
                            for c in range(depth):
                                acc[c] = max(acc[c], np.int32(pixel[c]))
                        else:
                            for c in range(depth):
                                acc[c] += np.int32(pixel[c]) - zero
                target = out[b, oy, ox]
                for c in range(depth):
                    if count == 0:
                        real = 0.0
                    elif maximum:
                        real = (np.float64(acc[c]) - x_zero) * x_scale
                    else:
                        real = np.float64(acc[c]) * x_scale / count
                    target[c] = min(max(np.rint(real / out_scale) + out_zero, lo), hi)


def prepare_pool(maximum: bool, out_shape: tuple[int, ...], pads: tuple[int, int, int, int], strides: tuple[int, int],
                 filter_size: tuple[int, int], activation: int, quant_in: tuple[float, int],
                 quant_out: tuple[float, int]) -> Callable[[np.ndarray, np.ndarray], None]:
    """``run(x, out)`` pooling uint8 ``x`` [N, H, W, C] into ``out``: ``pads`` (left, right, top, bottom),
    ``strides`` and ``filter_size`` (width, height), as ``nhwc_pooling.pool2d``."""
    scalars = _scalars(maximum, pads, strides, filter_size, activation, quant_in, quant_out)
    return lambda x, out: _entry()(x, out, *scalars)


def _scalars(maximum, pads, strides, filter_size, activation, quant_in, quant_out) -> tuple:
    lo, hi = quantized_range(activation, *quant_out)
    return (bool(maximum), int(quant_in[1]), float(quant_in[0]), int(quant_out[1]), float(quant_out[0]), lo, hi,
            int(pads[2]), int(pads[0]), int(strides[1]), int(strides[0]), int(filter_size[1]), int(filter_size[0]))


@functools.cache
def _entry():
    u8 = types.Array(types.uint8, 4, "A")
    return jit.entry(_pool, u8.copy(readonly=True), u8, jit.BOOL, jit.INT, jit.FLOAT, jit.INT, jit.FLOAT,
                     *(jit.INT,) * 8)


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT = 0, native.ARRAY_WORDS
_S = 2 * native.ARRAY_WORDS  # the scalars of ``prepare_pool``, in its order (floats as their bits)


@native.factory
def _pool_entry() -> int:
    def entry(block):
        _pool(native.c_array(block, _X, np.uint8)[0, 0], native.c_array(block, _OUT, np.uint8)[0, 0], block[_S] != 0,
              block[_S + 1], native.real(block, _S + 2), block[_S + 3], native.real(block, _S + 4), block[_S + 5],
              block[_S + 6], block[_S + 7], block[_S + 8], block[_S + 9], block[_S + 10], block[_S + 11],
              block[_S + 12])
        return 0
    return jit.native(entry)


def native_pool(maximum: bool, x: np.ndarray, out: np.ndarray, pads: tuple[int, int, int, int],
                strides: tuple[int, int], filter_size: tuple[int, int], activation: int, quant_in: tuple[float, int],
                quant_out: tuple[float, int]) -> native.Entry | None:
    """``prepare_pool(...)(x, out)`` as a native entry; None unless ``x`` and ``out`` are C-ordered uint8 apart."""
    if not all(a.dtype == np.uint8 and a.flags.c_contiguous for a in (x, out)) or np.may_share_memory(x, out):
        return None
    scalars = _scalars(maximum, pads, strides, filter_size, activation, quant_in, quant_out)
    words, keep = native.pack(*(a.reshape((1, 1) + a.shape) for a in (x, out)), *scalars)
    return native.Entry(_pool_entry(), words, keep)
