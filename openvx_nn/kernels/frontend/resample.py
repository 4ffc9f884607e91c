"""Spatial resampling of [W, H, C, batch...] float tensors: nearest and bilinear upsampling,
bilinear resizing on a sampling grid, and crop-and-resize of boxes.

Grids are input coordinates (float) of each output row/column; bilinear
interpolation weights the two neighbouring inputs linearly, in float64: along W first, then along H
(``top = x[y0, x0] * (1 - fx) + x[y0, x1] * fx``, the same for ``bottom`` at ``y1``, then
``top * (1 - fy) + bottom * fy``, rounded once to float32). One numba loop computes it for every caller
(upsampling, resizing, crop-resize, the native entry): each input row is interpolated along W once into a
float64 scratch and each output row is then a two-row blend, so upsampling by 8 costs about two operations an
output.
"""
from __future__ import annotations

import numpy as np

from ..support import jit, native


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


def _neighbours(points: np.ndarray, extent: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower index, upper index, fraction) of each sampling position (positions inside [0, extent - 1])."""
    low = np.floor(points).astype(np.int64)
    return low, np.minimum(low + 1, extent - 1), np.ascontiguousarray(points - low, np.float64)


@jit.kernel
def _blend(x, out, rows, low_w, high_w, frac_w, low_h, high_h, frac_h):
    """``out[ox, oy, p]`` from ``x[w, h, p]`` (OpenVX's [W, H, planes]); ``rows`` [H, out W] float64 scratch."""
    for p in range(out.shape[2]):
        for y in range(x.shape[1]):
            for ox in range(out.shape[0]):
                f = frac_w[ox]
                rows[y, ox] = np.float64(x[low_w[ox], y, p]) * (1.0 - f) + np.float64(x[high_w[ox], y, p]) * f
        for oy in range(out.shape[1]):
            f = frac_h[oy]
            a, b = low_h[oy], high_h[oy]
            for ox in range(out.shape[0]):
                out[ox, oy, p] = np.float32(rows[a, ox] * (1.0 - f) + rows[b, ox] * f)


@jit.kernel
def _repeat(x, out, sx, sy):
    """``out[ox, oy, p] = x[ox // sx, oy // sy, p]``."""
    for p in range(out.shape[2]):
        for oy in range(out.shape[1]):
            for ox in range(out.shape[0]):
                out[ox, oy, p] = x[ox // sx, oy // sy, p]


def _planes(a: np.ndarray) -> np.ndarray | None:
    """``a`` [W, H, ...] as a [W, H, planes] view, or None when its trailing axes do not merge without a copy."""
    try:
        return np.reshape(a, a.shape[:2] + (-1,), order="F", copy=False)
    except ValueError:
        return None


class Plan:
    """A resampling of ``x`` into ``out`` with its grid, indices and scratch made once: ``run()`` computes it,
    ``entry()`` gives it as a native entry (None when a tensor is not a view of [W, H, planes])."""

    def __init__(self, x: np.ndarray, out: np.ndarray, xs: np.ndarray | None, ys: np.ndarray | None):
        self.x, self.out = x, out
        self.nearest = xs is None
        if self.nearest:
            self.factors = (out.shape[0] // x.shape[0], out.shape[1] // x.shape[1])
        else:
            self.w = _neighbours(np.clip(xs, 0.0, x.shape[0] - 1), x.shape[0])
            self.h = _neighbours(np.clip(ys, 0.0, x.shape[1] - 1), x.shape[1])
            self.rows = np.empty((x.shape[1], out.shape[0]), np.float64)

    def _call(self, x3: np.ndarray, out3: np.ndarray) -> None:
        if self.nearest:
            _repeat(x3, out3, *self.factors)
        else:
            _blend(x3, out3, self.rows, *self.w, *self.h)

    def run(self) -> None:
        """Compute ``out`` (through a copy of a tensor that is not a view of [W, H, planes])."""
        x3, out3 = _planes(self.x), _planes(self.out)
        if x3 is None:
            x3 = _planes(np.asfortranarray(self.x))
        scratch = out3 is None
        if scratch:
            out3 = np.empty(self.out.shape[:2] + (self.out.size // max(1, self.out.shape[0] * self.out.shape[1]),),
                            self.out.dtype, order="F")
        if out3.size:
            self._call(x3, out3)
        if scratch:
            self.out[...] = out3.reshape(self.out.shape, order="F")

    def entry(self) -> native.Entry | None:
        x3, out3 = _planes(self.x), _planes(self.out)
        if x3 is None or out3 is None or x3.dtype != np.float32 or out3.dtype != np.float32 or out3.size == 0:
            return None
        six = [np.reshape(a, (1, 1, 1) + a.shape) for a in (x3, out3)]
        if self.nearest:
            words, keep = native.pack(*six, *self.factors)
            return native.Entry(_entry(True), words, keep)
        tables = [native.as6(t) for t in (*self.w, *self.h)]
        words, keep = native.pack(*six, native.as6(self.rows.reshape(-1)), *tables)
        return native.Entry(_entry(False), words, (keep, self.rows))


_W = native.ARRAY_WORDS


@jit.kernel
def _table(block, k, dtype):
    """The 1-D table packed as the ``k``-th array of ``block``."""
    return native.c_array(block, k * _W, dtype)[0, 0, 0, 0, 0]


@native.factory
def _entry(nearest: bool) -> int:
    def repeat(block):
        x, out = native.array(block, 0, np.float32)[0, 0, 0], native.array(block, _W, np.float32)[0, 0, 0]
        _repeat(x, out, block[2 * _W], block[2 * _W + 1])
        return 0

    def blend(block):
        x, out = native.array(block, 0, np.float32)[0, 0, 0], native.array(block, _W, np.float32)[0, 0, 0]
        rows = _table(block, 2, np.float64).reshape((x.shape[1], out.shape[0]))
        _blend(x, out, rows, _table(block, 3, np.int64), _table(block, 4, np.int64), _table(block, 5, np.float64),
               _table(block, 6, np.int64), _table(block, 7, np.int64), _table(block, 8, np.float64))
        return 0

    return jit.native(repeat if nearest else blend)


def prepare(x: np.ndarray, out: np.ndarray, method: str) -> Plan:
    """The resampling of ``x`` to ``out``'s width and height: ``nearest`` (whole factors) or bilinear on the
    ``method`` grid."""
    if method == "nearest":
        return Plan(x, out, None, None)
    return Plan(x, out, grid(x.shape[0], out.shape[0], method), grid(x.shape[1], out.shape[1], method))


def bilinear(x: np.ndarray, out: np.ndarray, method: str) -> None:
    """out = x resampled to out's width and height on the ``method`` grid."""
    prepare(x, out, method).run()


def nearest_upsample(x: np.ndarray, out: np.ndarray) -> None:
    """out[w, h] = x[w // sx, h // sy] for integer factors sx, sy."""
    prepare(x, out, "nearest").run()


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
            Plan(x[:, :, :, batch, 0], out[:, :, :, slot, n], xs, ys).run()


def _box_grid(start: float, end: float, count: int, method: str) -> np.ndarray:
    if method == "roi_align":
        step = (end - start) / count
        return start + step * (np.arange(count) + 0.5) - 0.5
    if count == 1:
        return np.array([(start + end) / 2.0 if method == "strict_align_endpoints" else start])
    return np.linspace(start, end, count)
