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

from ..engine import gang
from ..engine.chunk_loop import chunk_driver
from ..support import jit, native
from . import float_sharing


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


@jit.jitable
def _band(units, bands, out_h):
    """(plane, first output row, end output row) of unit ``units`` (a plane's ``bands`` bands of output rows)."""
    p = units // bands
    band = units - p * bands
    return p, out_h * band // bands, out_h * (band + 1) // bands


@jit.kernel
def _blend(x, out, rows, low_w, high_w, frac_w, low_h, high_h, frac_h, bands, u0, u1):
    """Units ``[u0, u1)`` of ``out[ox, oy, p]`` from ``x[w, h, p]`` (OpenVX's [W, H, planes]), a unit being one
    of a plane's ``bands`` bands of output rows; ``rows`` [H, out W] float64 scratch of the calling thread. Each
    unit interpolates along W the input rows its band reads, then blends each output row from two of them."""
    for u in range(u0, u1):
        p, oy0, oy1 = _band(u, bands, out.shape[1])
        if oy0 == oy1:
            continue
        first, last = low_h[oy0], high_h[oy0]  # the band's input rows (a box's grid may run backwards)
        for oy in range(oy0, oy1):
            first, last = min(first, low_h[oy]), max(last, high_h[oy])
        for y in range(first, last + 1):
            for ox in range(out.shape[0]):
                f = frac_w[ox]
                rows[y, ox] = np.float64(x[low_w[ox], y, p]) * (1.0 - f) + np.float64(x[high_w[ox], y, p]) * f
        for oy in range(oy0, oy1):
            f = frac_h[oy]
            a, b = low_h[oy], high_h[oy]
            for ox in range(out.shape[0]):
                out[ox, oy, p] = np.float32(rows[a, ox] * (1.0 - f) + rows[b, ox] * f)


@jit.kernel
def _repeat(x, out, sx, sy, bands, u0, u1):
    """Units ``[u0, u1)`` (as :func:`_blend`'s) of ``out[ox, oy, p] = x[ox // sx, oy // sy, p]``."""
    for u in range(u0, u1):
        p, oy0, oy1 = _band(u, bands, out.shape[1])
        for oy in range(oy0, oy1):
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
            _repeat(x3, out3, *self.factors, 1, 0, out3.shape[2])
        else:
            _blend(x3, out3, self.rows, *self.w, *self.h, 1, 0, out3.shape[2])

    def run(self) -> None:
        """Compute ``out`` (through a copy of a tensor that is not a Fortran-ordered view of [W, H, planes]: the
        Python path keeps the loops' one compiled layout; the native entry reads and writes any strides)."""
        x3, out3 = _planes(self.x), _planes(self.out)
        if x3 is None or not x3.flags.f_contiguous:
            x3 = _planes(np.asfortranarray(self.x))
        scratch = out3 is None or not out3.flags.f_contiguous
        if scratch:
            out3 = np.empty(self.out.shape[:2] + (self.out.size // max(1, self.out.shape[0] * self.out.shape[1]),),
                            self.out.dtype, order="F")
        if out3.size:
            self._call(x3, out3)
        if scratch:
            self.out[...] = out3.reshape(self.out.shape, order="F")

    def entry(self) -> native.Entry | None:
        """The native entry (shared with the gang's helpers when large); None when a tensor is not a view of
        [W, H, planes] or is empty."""
        x3, out3 = _planes(self.x), _planes(self.out)
        if x3 is None or out3 is None or x3.dtype != np.float32 or out3.dtype != np.float32 or out3.size == 0:
            return None
        planes = out3.shape[2]
        bands = min(out3.shape[1], -(-UNITS // planes))
        task = gang.NativeTask(planes * bands, out3.size * COST_PER_OUTPUT >= float_sharing.NATIVE_PARALLEL_WORK)
        six = [np.reshape(a, (1, 1, 1) + a.shape) for a in (x3, out3)]
        counters = native.as6(task.counters)
        if self.nearest:
            words, keep = native.pack(*six, counters, bands, *self.factors, *task.words())
        else:
            tables = [native.as6(t) for t in (*self.w, *self.h)]
            words, keep = native.pack(*six, counters, native.as6(self.rows.reshape(-1)), *tables, bands,
                                      *task.words())
        return native.Entry(_entry(self.nearest), words,
                            (keep, self.rows if not self.nearest else None) + task.finish(_helper(self.nearest),
                                                                                          words))


UNITS = 32
"""Units (a plane's band of output rows) a native call is cut into at least, where its planes are fewer: the
chunks the threads claim are then near one size (DeepLab's last upsampling has 21 planes)."""
COST_PER_OUTPUT = 8
"""An output's time in a convolution multiply-add's (the native entry shares its units above
``float_sharing.NATIVE_PARALLEL_WORK``)."""
_W = native.ARRAY_WORDS
_X, _OUT, _COUNTERS, _ROWS = 0, _W, 2 * _W, 3 * _W
_NEAREST_AT, _BLEND_AT = 3 * _W, 10 * _W  # the scalars after the arrays: bands, (sx, sy,) mailbox, task, chunks


@jit.kernel
def _table(block, k, dtype):
    """The 1-D table packed as the ``k``-th array of ``block``."""
    return native.c_array(block, k * _W, dtype)[0, 0, 0, 0, 0]


_BLEND_CHUNKS, _REPEAT_CHUNKS = chunk_driver(_blend), chunk_driver(_repeat)


@jit.kernel
def _repeat_lines(code, block, chunks, wait):
    """A native nearest upsampling's units: all (``chunks`` 0), or chunks of them claimed from the block's
    counters (``wait``: until every claimed one is done) (``gang.shared_entry``'s ``lines``)."""
    x, out = native.array(block, _X, np.float32)[0, 0, 0], native.array(block, _OUT, np.float32)[0, 0, 0]
    bands, sx, sy = block[_NEAREST_AT], block[_NEAREST_AT + 1], block[_NEAREST_AT + 2]
    n_units = out.shape[2] * bands
    if chunks == 0:
        _repeat(x, out, sx, sy, bands, 0, n_units)
    else:
        _REPEAT_CHUNKS((x, out, sx, sy, bands), n_units, chunks,
                       native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


@jit.kernel
def _blend_lines(code, block, chunks, wait):
    """A native bilinear resampling's units, as :func:`_repeat_lines`'; each helper interpolates into scratch
    rows of its own, the calling thread into the plan's."""
    x, out = native.array(block, _X, np.float32)[0, 0, 0], native.array(block, _OUT, np.float32)[0, 0, 0]
    bands = block[_BLEND_AT]
    n_units = out.shape[2] * bands
    lw, hw, fw = _table(block, 4, np.int64), _table(block, 5, np.int64), _table(block, 6, np.float64)
    lh, hh, fh = _table(block, 7, np.int64), _table(block, 8, np.int64), _table(block, 9, np.float64)
    if chunks > 0 and not wait:
        rows = np.empty((x.shape[1], out.shape[0]), np.float64)
    else:
        rows = _table(block, 3, np.float64).reshape((x.shape[1], out.shape[0]))
    if chunks == 0:
        _blend(x, out, rows, lw, hw, fw, lh, hh, fh, bands, 0, n_units)
    else:
        _BLEND_CHUNKS((x, out, rows, lw, hw, fw, lh, hh, fh, bands), n_units, chunks,
                      native.c_array(block, _COUNTERS, np.int64)[0, 0, 0, 0, 0], wait)


def _words(nearest: bool) -> tuple[int, int, int, int]:
    at = _NEAREST_AT if nearest else _BLEND_AT
    return at + 1 + 2 * nearest, at + 2 + 2 * nearest, at + 3 + 2 * nearest, _COUNTERS


_BODIES = {nearest: gang.shared_entry(_repeat_lines if nearest else _blend_lines, gang.nothing_first, _words(nearest))
           for nearest in (False, True)}


@native.factory
def _entry(nearest: bool) -> int:
    return jit.native(_BODIES[nearest][0])


@native.factory
def _helper(nearest: bool) -> int:
    return jit.native(_BODIES[nearest][1])


def prepare(x: np.ndarray, out: np.ndarray, method: str) -> Plan:
    """The resampling of ``x`` to ``out``'s width and height: ``nearest`` (whole factors) or bilinear on the
    ``method`` grid."""
    if method == "nearest":
        return Plan(x, out, None, None)
    return Plan(x, out, grid(x.shape[0], out.shape[0], method), grid(x.shape[1], out.shape[1], method))


def prepare_channels_last(x: np.ndarray, out: np.ndarray, method: str) -> Plan:
    """:func:`prepare` of channels-last arrays ``[C, W, H, N]`` (OpenVX order, each pixel's channels one run: the
    NHWC route's tensors), on their ``[W, H, C, N]`` views: the same loops, grid and bytes, each channel a plane."""
    return prepare(np.moveaxis(x, 0, 2), np.moveaxis(out, 0, 2), method)


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
