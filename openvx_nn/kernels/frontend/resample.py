"""Spatial resampling of [W, H, C, batch...] float tensors: nearest and bilinear upsampling,
bilinear resizing on a sampling grid, and crop-and-resize of boxes.

Grids are input coordinates (float) of each output row/column; bilinear
interpolation weights the two neighbouring inputs linearly, in float64.
"""
from __future__ import annotations

import numpy as np


def grid(extent: int, count: int, method: str) -> np.ndarray:
    """Sampling positions in [0, extent-1] for ``count`` outputs (CoreML SamplingMode and
    LinearUpsampleMode)."""
    i = np.arange(count, dtype=np.float64)
    if method == "strict_align_endpoints":
        points = np.full(count, (extent - 1) / 2.0) if count == 1 else np.linspace(0, extent - 1, count)
    elif method == "align_endpoints":
        points = np.zeros(count) if count == 1 else np.linspace(0, extent - 1, count)
    elif method == "upsample":
        points = i * (extent / count)
    elif method == "roi_align":
        points = (np.full(count, (extent - 1) / 2.0) if count == 1
                  else np.linspace(extent / (2.0 * count) - 0.5, extent - extent / (2.0 * count) - 0.5, count))
    elif method == "upsample_default":
        points = i * ((extent - extent / count) / (count - 1)) if count > 1 else np.zeros(1)
    elif method == "align_corners_true":
        points = i * ((extent - 1) / (count - 1)) if count > 1 else np.zeros(1)
    elif method == "align_corners_false":
        spacing = extent / count
        points = i * spacing + 0.5 * spacing - 0.5
    else:
        raise ValueError(f"unknown sampling method {method!r}")
    return np.clip(points, 0.0, extent - 1)


def _interpolate(x: np.ndarray, axis: int, points: np.ndarray) -> np.ndarray:
    low = np.floor(points).astype(np.int64)
    high = np.minimum(low + 1, x.shape[axis] - 1)
    frac = points - low
    shape = [1] * x.ndim
    shape[axis] = points.size
    frac = frac.reshape(shape)
    return np.take(x, low, axis=axis) * (1.0 - frac) + np.take(x, high, axis=axis) * frac


def bilinear(x: np.ndarray, out: np.ndarray, method: str) -> None:
    """out = x resampled to out's width and height on the ``method`` grid."""
    v = np.asarray(x, np.float64)
    v = _interpolate(v, 0, grid(x.shape[0], out.shape[0], method))
    out[...] = _interpolate(v, 1, grid(x.shape[1], out.shape[1], method))


def nearest_upsample(x: np.ndarray, out: np.ndarray) -> None:
    """out[w, h] = x[w // sx, h // sy] for integer factors sx, sy."""
    sx, sy = out.shape[0] // x.shape[0], out.shape[1] // x.shape[1]
    out[...] = np.repeat(np.repeat(x, sx, axis=0), sy, axis=1)


def crop_resize(x: np.ndarray, boxes: np.ndarray, out: np.ndarray, method: str, normalized: bool,
                box_mode: str, spatial_scale: float) -> None:
    """CoreML crop-resize. ``x`` is [W, H, C, B, 1], ``boxes`` [1, 1, 4 or 5, 1, N]; ``out`` is
    [W', H', C, B or 1, N]. A box is (y1, x1, y2, x2) corners or centre/size, height or width
    first; normalized boxes are scaled by the extent - 1, others by ``spatial_scale``."""
    width, height = x.shape[0], x.shape[1]
    rois = np.asarray(boxes, np.float64).reshape(boxes.shape[2], boxes.shape[4]).T  # [N, 4 or 5]
    for n, roi in enumerate(rois):
        batches = [int(roi[0])] if rois.shape[1] == 5 else list(range(x.shape[3]))
        a, b, c, d = roi[-4:]
        if box_mode.endswith("width_first"):
            a, b, c, d = b, a, d, c
        if box_mode.startswith("center"):
            a, b, c, d = a - c / 2.0, b - d / 2.0, a + c / 2.0, b + d / 2.0
        y1, x1, y2, x2 = a, b, c, d
        if normalized:
            y1, y2, x1, x2 = y1 * (height - 1), y2 * (height - 1), x1 * (width - 1), x2 * (width - 1)
        else:
            y1, y2, x1, x2 = (v * spatial_scale for v in (y1, y2, x1, x2))
        ys = _box_grid(y1, y2, out.shape[1], method)
        xs = _box_grid(x1, x2, out.shape[0], method)
        for slot, batch in enumerate(batches):
            plane = np.asarray(x[:, :, :, batch, 0], np.float64)
            out[:, :, :, slot, n] = _sample(plane, xs, ys)


def _box_grid(start: float, end: float, count: int, method: str) -> np.ndarray:
    if method == "roi_align":
        step = (end - start) / count
        return start + step * (np.arange(count) + 0.5) - 0.5
    if count == 1:
        return np.array([(start + end) / 2.0 if method == "strict_align_endpoints" else start])
    return np.linspace(start, end, count)


def _sample(plane: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Bilinear samples of [W, H, C] at columns ``xs`` and rows ``ys`` (clamped to the plane)."""
    xs = np.clip(xs, 0.0, plane.shape[0] - 1)
    ys = np.clip(ys, 0.0, plane.shape[1] - 1)
    return _interpolate(_interpolate(plane, 0, xs), 1, ys)
