"""ROI max pooling (OpenVX NN vxROIPoolingLayer).

Layout. ``x`` has dims ``[W, H, C]`` or ``[W, H, C, B]``; ``rois``
``[4, R]`` or ``[4, R, B]`` of any integer type of at most 32 bits, holding
the raw integers ``x0, y0, x1, y1`` (inclusive corners in input pixels; the
tensor's fixed point position does not scale them); ``out``
``[OW, OH, C, R]`` or ``[OW, OH, C, R, B]``. A missing batch dim counts as
``B = 1``, and the three tensors must agree on ``B``.

Bins (Fast R-CNN). With ``roi_w = max(x1 - x0, 0) + 1`` and ``roi_h = max(y1 - y0, 0) + 1``
(a malformed ROI, ``x1 < x0``, is one pixel wide at ``x0``, as in the Khronos
sample implementation),
bin ``i`` along x spans ``x0 + floor(i * roi_w / OW)`` to
``x0 + ceil((i + 1) * roi_w / OW)`` (exclusive), likewise along y, clipped to
``[0, W)`` and ``[0, H)``. Each output is the largest value of its bin
(float32 by ``window_max.larger``: NaN propagates, +0.0 beats -0.0); an empty
bin (one wholly outside the input) gives 0.

``sample=True`` follows the Khronos sample implementation: a side is
``x1 - x0 + 1`` without the floor of 1, so a malformed ROI (``x1 < x0`` or
``y1 < y0``) has a side of no pixels and all its bins are empty: zeros.

Exactness: coordinates are below ``2**32`` in magnitude, so ``roi_w`` is below
``2**33`` and ``(i + 1) * roi_w`` stays below ``2**62`` while ``OW`` and
``OH`` are below ``2**29``, which the dispatcher checks; all bin arithmetic is
exact int64.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ..support import jit, native
from ..support.jit import kernel
from ..support.layout import detach
from .matmul import PARALLEL_WORK
from .window_max import larger

DTYPES = (np.dtype(np.uint8), np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.float32))
LIMIT = 1 << 29  # OW and OH stay below this (see the module doc)


@kernel
def _bin_edges(bins, start, size, extent, edges):
    """Clipped ``[lo, hi)`` of every bin of an ROI side of ``size >= 1`` into ``edges[bins, 2]`` (empty:
    ``lo >= hi``)."""
    for i in range(bins):
        lo = start + (i * size) // bins
        hi = start - ((-(i + 1) * size) // bins)  # ceil by floor of the negation
        edges[i, 0] = min(max(lo, 0), extent)
        edges[i, 1] = min(max(hi, 0), extent)


def _roi_max_pool(x, rois, out, sample):
    width, height, n_c, n_batch = x.shape
    out_w, out_h, _, n_rois, _ = out.shape
    # Bin edges per (roi, batch), computed once and shared by all channels.
    x_edges = np.empty((n_rois, n_batch, out_w, 2), np.int64)
    y_edges = np.empty((n_rois, n_batch, out_h, 2), np.int64)
    for b in range(n_batch):
        for r in range(n_rois):
            x0, y0, x1, y1 = rois[0, r, b], rois[1, r, b], rois[2, r, b], rois[3, r, b]
            _bin_edges(out_w, x0, max(x1 - x0, 0) + 1, width, x_edges[r, b])
            _bin_edges(out_h, y0, max(y1 - y0, 0) + 1, height, y_edges[r, b])
            if sample and (x1 < x0 or y1 < y0):  # no pixels on a side: every bin empty
                x_edges[r, b, :, 1] = x_edges[r, b, :, 0]
    for task in prange(n_c * n_rois * n_batch):
        c, rest = task % n_c, task // n_c
        r, b = rest % n_rois, rest // n_rois
        src = x[:, :, c, b]
        dst = out[:, :, c, r, b]
        for oy in range(out_h):
            y_lo, y_hi = y_edges[r, b, oy, 0], y_edges[r, b, oy, 1]
            for ox in range(out_w):
                x_lo, x_hi = x_edges[r, b, ox, 0], x_edges[r, b, ox, 1]
                if x_lo >= x_hi or y_lo >= y_hi:
                    dst[ox, oy] = 0
                    continue
                m = src[x_lo, y_lo]
                for y in range(y_lo, y_hi):
                    for xi in range(x_lo, x_hi):
                        m = larger(m, src[xi, y])
                dst[ox, oy] = m


_KERNELS = {parallel: kernel(_roi_max_pool, parallel=parallel) for parallel in (False, True)}


def roi_pooling(x: np.ndarray, rois: np.ndarray, out: np.ndarray, *, parallel: bool | None = None,
                sample: bool = False) -> None:
    """ROI max pooling of ``x`` over the rectangles ``rois`` into ``out`` (layout and bins: the module doc;
    ``sample``: the sample implementation's malformed ROIs, all bins empty).

    In place. ``parallel``: None spreads channels, ROIs and batches over the
    thread pool from ``PARALLEL_WORK`` output elements times the ROI area on
    (when another thread's parallel kernel holds it, the serial kernel runs);
    the result is the same either way. Raises ValueError for mismatched
    ranks, shapes or dtypes, ROI tensors that are not integer of at most 32
    bits, and ``OW`` or ``OH`` of ``2**29`` or more.
    """
    x4, rois3, out5 = _operands(x, rois, out)
    n_c, n_batch, n_rois = x4.shape[2], x4.shape[3], rois3.shape[1]
    if out.size == 0:
        return
    if x.size == 0:  # every bin is empty
        out[...] = 0
        return
    src = detach(out5, x4)
    corners = np.ascontiguousarray(rois3, dtype=np.int64)  # tiny: one compiled kernel for every ROI dtype
    if parallel is None:
        tasks = n_c * n_rois * n_batch
        parallel = tasks > 1 and tasks * max(out5.shape[0] * out5.shape[1], x.shape[0] * x.shape[1]) >= PARALLEL_WORK
    with jit.thread_pool() as pool:
        function = jit.entry(_KERNELS[bool(parallel and pool)], jit.array_in(src), jit.array_in(corners, "C"),
                             jit.array_out(out5), jit.BOOL)
        function(src, corners, out5, bool(sample))


def _operands(x: np.ndarray, rois: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``x``, ``rois`` and ``out`` with their batch axis (4-D, 3-D, 5-D); ValueError for what :func:`roi_pooling`
    refuses."""
    if x.dtype != out.dtype or out.dtype not in DTYPES:
        raise ValueError(f"ROI pooling needs one dtype among {[str(d) for d in DTYPES]} for x and out, "
                         f"got {x.dtype} and {out.dtype}")
    if rois.dtype.kind not in "iu" or rois.dtype.itemsize > 4:
        raise ValueError(f"ROI coordinates must be integers of at most 32 bits, got {rois.dtype}")
    if x.ndim not in (3, 4) or rois.ndim not in (2, 3) or out.ndim not in (4, 5):
        raise ValueError(f"ROI pooling needs x of 3 or 4 dims, rois of 2 or 3 and out of 4 or 5, got "
                         f"x {x.shape}, rois {rois.shape}, out {out.shape}")
    x4 = x if x.ndim == 4 else x[..., None]
    rois3 = rois if rois.ndim == 3 else rois[..., None]
    out5 = out if out.ndim == 5 else out[..., None]
    n_c, n_batch = x4.shape[2], x4.shape[3]
    n_rois = rois3.shape[1]
    if rois3.shape != (4, n_rois, n_batch) or out5.shape[2:] != (n_c, n_rois, n_batch):
        raise ValueError(f"ROI pooling of x {x.shape} with rois {rois.shape} cannot fill out {out.shape}; "
                         f"expected rois (4, R[, B]) and out (OW, OH, {n_c}, R[, B]) with B = {n_batch}")
    if max(out5.shape[0], out5.shape[1]) >= LIMIT:
        raise ValueError(f"ROI pooling output size {out.shape[:2]} is too large; expected below 2**29")
    return x4, rois3, out5


# -- the native entry (a C loop calls it without the GIL; see support/native.py) ----------------------
@jit.kernel
def _corners(rois, corners):
    # corners[...] = rois as int64 (np.ascontiguousarray(rois, np.int64) on the Python path)
    for i in range(rois.shape[0]):
        for r in range(rois.shape[1]):
            for b in range(rois.shape[2]):
                corners[i, r, b] = rois[i, r, b]


@native.factory
def _native_roi(dtype: type, roi_dtype: type) -> int:
    serial = _KERNELS[False]

    def entry(block):
        corners = native.c_array(block, 26, np.int64)[0, 0, 0]
        _corners(native.array(block, 13, roi_dtype)[:, :, :, 0, 0, 0], corners)
        serial(native.array(block, 0, dtype)[:, :, :, :, 0, 0], corners,
               native.array(block, 39, dtype)[:, :, :, :, :, 0], block[52] != 0)
        return 0
    return jit.native(entry)


def native_entry(x: np.ndarray, rois: np.ndarray, out: np.ndarray, *, sample: bool = False) -> native.Entry | None:
    """:func:`roi_pooling` (serial) as a native entry; None when an output or input is empty or ``x`` overlaps
    ``out`` (a copy per run)."""
    x4, rois3, out5 = _operands(x, rois, out)
    if out.size == 0 or x.size == 0 or np.may_share_memory(out, x) or np.may_share_memory(out, rois):
        return None
    corners = np.empty((1, 1, 1) + rois3.shape, np.int64)  # the ROIs as int64, converted per run
    return native.Entry(_native_roi(out.dtype.type, rois.dtype.type),
                        *native.pack(x4[..., None, None], rois3[..., None, None, None], corners, out5[..., None],
                                     bool(sample)))
