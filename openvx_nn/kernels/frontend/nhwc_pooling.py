"""Average, max and L2 pooling over NHWC data with explicit, possibly
asymmetric padding.  Padded positions take no part: the average and the L2
mean divide by the number of input positions inside the window.  Computed on
exact real values in float64 (``asymmetric.dequantize``) and stored once."""
from __future__ import annotations

import numpy as np

from ..support.jit import kernel
from .asymmetric import dequantize, store

AVERAGE, MAX, L2 = 0, 1, 2


@kernel
def _pool(x, out, mode, pad_top, pad_left, stride_h, stride_w, kh, kw):
    n_batch, height, width, depth = x.shape
    _, out_h, out_w, _ = out.shape
    for b in range(n_batch):
        for oy in range(out_h):
            y0 = oy * stride_h - pad_top
            for ox in range(out_w):
                x0 = ox * stride_w - pad_left
                for c in range(depth):
                    total = 0.0
                    best = -np.inf
                    count = 0
                    for iy in range(max(y0, 0), min(y0 + kh, height)):
                        for ix in range(max(x0, 0), min(x0 + kw, width)):
                            v = x[b, iy, ix, c]
                            count += 1
                            if mode == 1:
                                best = max(best, v)
                            elif mode == 2:
                                total += v * v
                            else:
                                total += v
                    if mode == 1:
                        out[b, oy, ox, c] = best if count else 0.0
                    elif count == 0:
                        out[b, oy, ox, c] = 0.0
                    elif mode == 2:
                        out[b, oy, ox, c] = np.sqrt(total / count)
                    else:
                        out[b, oy, ox, c] = total / count


def pool2d(x: np.ndarray, out: np.ndarray, mode: int, pads: tuple[int, int, int, int], strides: tuple[int, int],
           filter_size: tuple[int, int], activation: int, quant_in=None, quant_out=None) -> None:
    """Pool ``x`` into ``out`` (``mode`` AVERAGE, MAX or L2); ``pads`` (left, right, top, bottom),
    ``strides`` and ``filter_size`` (width, height)."""
    result = np.zeros(out.shape, np.float64)
    _pool(np.ascontiguousarray(dequantize(x, quant_in)), result, mode, pads[2], pads[0], strides[1], strides[0],
          filter_size[1], filter_size[0])
    store(result, out, quant_out, activation)
