"""Plain references for the fully connected, pooling and ROI pooling layers.

Written to be read, not to be fast: Python loops, Python ints and
``fractions.Fraction``, each output computed on its own from the definition
in the layer's contract. Nothing is shared with ``openvx_nn.kernels``.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from kernel_testing import Format, fit_exact, round_exact


def fully_connected_ref(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, fmt: Format, saturate: bool,
                        nearest_even: bool, fpp_x: int = 0, fpp_w: int = 0, fpp_b: int = 0,
                        fpp_out: int = 0) -> np.ndarray:
    """out[i, b] = sum_j x[j, b] * w[j, i] + bias[i], exact then rounded once (ints) or float64 in order j."""
    n_in, n_batch = x.shape
    n_out = w.shape[1]
    out = np.empty((n_out, n_batch), fmt.dtype)
    for i, b in itertools.product(range(n_out), range(n_batch)):
        if fmt.is_float:
            acc = 0.0
            for j in range(n_in):
                acc += float(x[j, b]) * float(w[j, i])  # float32 * float32 is exact in a double
            if bias is not None:
                acc += float(bias[i])
            out[i, b] = np.float32(acc)
            continue
        total = Fraction(sum(int(x[j, b]) * int(w[j, i]) for j in range(n_in)), 2 ** (fpp_x + fpp_w))
        if bias is not None:
            total += Fraction(int(bias[i]), 2 ** fpp_b)
        out[i, b] = fit_exact(round_exact(total * 2 ** fpp_out, nearest_even), fmt, saturate)
    return out


def _float_max(values: list[float]) -> float:
    """The largest value; NaN if any is NaN; +0.0 over -0.0 (IEEE 754-2019 maximum)."""
    if any(math.isnan(v) for v in values):
        return math.nan
    top = max(values)
    if top == 0.0 and any(v == 0.0 and math.copysign(1.0, v) > 0 for v in values):
        return 0.0
    return top


def window_max(values: list, fmt: Format):
    """Max-pool rule over a window's inside values: the largest, or 0 when there are none."""
    if not values:
        return 0
    if fmt.is_float:
        return _float_max([float(v) for v in values])
    return max(int(v) for v in values)


def pooling_ref(x: np.ndarray, out_shape: tuple[int, ...], fmt: Format, max_pool: bool, size_x: int, size_y: int,
                pad_x: int, pad_y: int, stride_x: int, stride_y: int) -> np.ndarray:
    """Every output from its own window, per the layer's contract (see openvx_nn.kernels.openvx.pooling)."""
    width, height = x.shape[:2]
    out = np.empty(out_shape, fmt.dtype)
    for index in np.ndindex(out_shape):
        ox, oy, plane = index[0], index[1], index[2:]
        x0, y0 = ox * stride_x - pad_x, oy * stride_y - pad_y
        inside = [x[(xi, yi) + plane]
                  for yi in range(y0, y0 + size_y)  # row-major: rows outer, columns inner
                  for xi in range(x0, x0 + size_x)
                  if 0 <= xi < width and 0 <= yi < height]
        if max_pool:
            out[index] = window_max(inside, fmt)
        elif fmt.is_float:
            total = 0.0
            for v in inside:
                total += float(v)
            out[index] = np.float32(total / (size_x * size_y))
        else:
            out[index] = round(Fraction(sum(int(v) for v in inside), size_x * size_y))  # ties to even
    return out


def roi_bins(start: int, stop: int, bins: int, extent: int) -> list[range]:
    """Fast R-CNN bins of the inclusive span start..stop, clipped to 0..extent-1.

    A reversed span (stop < start) is the one pixel at start (the conformance suite's rule:
    width = max(x1 - x0, 0) + 1)."""
    size = max(stop - start, 0) + 1
    edges = []
    for i in range(bins):
        lo = start + math.floor(Fraction(i * size, bins))
        hi = start + math.ceil(Fraction((i + 1) * size, bins))
        edges.append(range(max(lo, 0), min(hi, extent)))
    return edges


def roi_pooling_ref(x: np.ndarray, rois: np.ndarray, out_shape: tuple[int, ...], fmt: Format) -> np.ndarray:
    """ROI max pooling with an optional batch dim, each output from its own bin."""
    batched = x.ndim == 4
    x4 = x if batched else x[..., None]
    rois3 = rois if rois.ndim == 3 else rois[..., None]
    out = np.empty(out_shape if batched else tuple(out_shape) + (1,), fmt.dtype)
    width, height, n_c, n_batch = x4.shape
    out_w, out_h = out.shape[:2]
    for b, r in itertools.product(range(n_batch), range(rois3.shape[1])):
        x0, y0, x1, y1 = (int(v) for v in rois3[:, r, b])
        x_bins, y_bins = roi_bins(x0, x1, out_w, width), roi_bins(y0, y1, out_h, height)
        for c, ox, oy in itertools.product(range(n_c), range(out_w), range(out_h)):
            values = [x4[xi, yi, c, b] for yi in y_bins[oy] for xi in x_bins[ox]]
            out[ox, oy, c, r, b] = window_max(values, fmt)
    return out if batched else out[..., 0]
