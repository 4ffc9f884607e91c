"""Fast float32 AVERAGE, MAX and L2 pooling on NHWC data, vectorized over the channels.

Same contract as ``nhwc_pooling.pool2d`` (padded positions take no part; the average and the L2 mean
divide by the number of input positions inside the window), computed in float32 straight into the
output: the loop over the channels is innermost (contiguous), so LLVM vectorizes it. Maxima are exact;
sums are float32 (within docs/nnapi.md's bound of the float64 reference).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..support import jit, native
from .asymmetric import real_range
from .float_sharing import F32, at, block_of, compiled, contiguous_f32, finish, output_target, staged

AVERAGE, MAX, L2 = 0, 1, 2


@jit.kernel
def _pool(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw, lo, hi):
    n_batch, height, width, depth = x.shape
    _, out_h, out_w, _ = out.shape
    low, high = np.float32(lo), np.float32(hi)
    for b in range(n_batch):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_top
            ya, yb = max(y0, 0), min(y0 + kh, height)
            for ox in range(out_w):
                x0 = ox * stride_w - pad_left
                xa, xb = max(x0, 0), min(x0 + kw, width)
                count = max(0, yb - ya) * max(0, xb - xa)
                for c in range(depth):
                    out[b, oy, ox, c] = -np.inf if mode == 1 else 0.0
                for iy in range(ya, yb):
                    for ix in range(xa, xb):
                        if mode == 1:
                            for c in range(depth):
                                v = x[b, iy, ix, c]
                                out[b, oy, ox, c] = max(out[b, oy, ox, c], v)
                        elif mode == 2:
                            for c in range(depth):
                                out[b, oy, ox, c] += x[b, iy, ix, c] * x[b, iy, ix, c]
                        else:
                            for c in range(depth):
                                out[b, oy, ox, c] += x[b, iy, ix, c]
                for c in range(depth):
                    v = out[b, oy, ox, c]
                    if count == 0:
                        v = np.float32(0.0)
                    elif mode == 2:
                        v = np.sqrt(v / np.float32(count))
                    elif mode == 0:
                        v = v / np.float32(count)
                    v = max(v, low)
                    v = min(v, high)
                    out[b, oy, ox, c] = v


_POOL_TYPES = (F32[4, False], F32[4, True], *(jit.INT,) * 7, jit.FLOAT, jit.FLOAT)


def bind_pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int],
                strides: tuple[int, int], filter_size: tuple[int, int], activation: int) -> Callable[[], None]:
    """A no-argument call pooling float32 ``x`` into ``out`` (``mode`` AVERAGE, MAX or L2) from their current
    values; ``pads`` (left, right, top, bottom), ``strides`` and ``filter_size`` (width, height)."""
    lo, hi = real_range(activation)
    target = output_target(out)
    xs, copy = staged(x)
    kernel = compiled(_pool, _POOL_TYPES)
    args = (xs, target, int(mode), int(pads[2]), int(pads[0]), int(strides[1]), int(strides[0]),
            int(filter_size[1]), int(filter_size[0]), float(lo), float(hi))
    return finish(lambda: kernel(*args), [copy], target, out)


def pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int], strides: tuple[int, int],
           filter_size: tuple[int, int], activation: int) -> None:
    """``bind_pool2d(...)()``: one call."""
    bind_pool2d(x, out, mode, pads, strides, filter_size, activation)()


# ---- the native entry (a C loop calls it without the GIL; ``support/native.py``) ----------------------------
_X, _OUT = at(0), at(1)
_MODE, _TOP, _LEFT, _SH, _SW, _KH, _KW, _LO, _HI = range(at(2), at(2) + 9)


@native.factory
def _pool_entry() -> int:
    def entry(block):
        _pool(native.c_array(block, _X, np.float32)[0, 0], native.c_array(block, _OUT, np.float32)[0, 0],
              block[_MODE], block[_TOP], block[_LEFT], block[_SH], block[_SW], block[_KH], block[_KW],
              native.real(block, _LO), native.real(block, _HI))
        return 0
    return jit.native(entry)


def native_pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int],
                  strides: tuple[int, int], filter_size: tuple[int, int], activation: int) -> native.Entry | None:
    """:func:`bind_pool2d` as a native entry; None when ``x`` or ``out`` is not C-contiguous float32 or they
    overlap."""
    if not (contiguous_f32(x) and contiguous_f32(out)) or out.size == 0 or np.may_share_memory(x, out):
        return None
    lo, hi = real_range(activation)
    words, keep = block_of(x, out, int(mode), int(pads[2]), int(pads[0]), int(strides[1]), int(strides[0]),
                           int(filter_size[1]), int(filter_size[0]), float(lo), float(hi))
    return native.Entry(_pool_entry(), words, keep)
