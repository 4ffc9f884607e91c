"""Region arithmetic of detection networks: bilinear ROI alignment (average of sampled points), the integer
corners of ROI max pooling, and the refinement of axis-aligned boxes by per-class deltas.

Boxes are rows ``[x1, y1, x2, y2]`` of real values (float64 here; a caller dequantizes first) in the image's
coordinates; a feature map is ``[batch, height, width, channels]`` (a channel-first map is passed as that view).
ROI max pooling itself is ``openvx.roi_pooling`` (the Fast R-CNN bins): this module only gives it the corners.
"""
from __future__ import annotations

import math

import numpy as np

from ..support.jit import kernel


@kernel
def _bilinear_add(x, b, y, xx, acc):
    """``acc += x[b]`` interpolated at (y, xx) (Caffe2's rule: a point more than one pixel outside adds
    nothing, one within a pixel of an edge reads the edge)."""
    height, width = x.shape[1], x.shape[2]
    if y < -1.0 or y > height or xx < -1.0 or xx > width:
        return
    y = max(y, 0.0)
    xx = max(xx, 0.0)
    y0 = int(y)
    x0 = int(xx)
    if y0 >= height - 1:
        y0 = y1 = height - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= width - 1:
        x0 = x1 = width - 1
        xx = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, xx - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    for c in range(x.shape[3]):
        acc[c] += (hy * hx * x[b, y0, x0, c] + hy * lx * x[b, y0, x1, c]
                   + ly * hx * x[b, y1, x0, c] + ly * lx * x[b, y1, x1, c])


@kernel
def _roi_align(x, rois, batches, height_ratio, width_ratio, sampling_h, sampling_w, out):
    n_rois, out_h, out_w, channels = out.shape
    acc = np.empty(channels, np.float64)
    for r in range(n_rois):
        b = batches[r]
        w_start, h_start = rois[r, 0] / width_ratio, rois[r, 1] / height_ratio
        roi_w = max(rois[r, 2] / width_ratio - w_start, 1.0)
        roi_h = max(rois[r, 3] / height_ratio - h_start, 1.0)
        bin_w, bin_h = roi_w / out_w, roi_h / out_h
        grid_w = sampling_w if sampling_w > 0 else math.ceil(bin_w)
        grid_h = sampling_h if sampling_h > 0 else math.ceil(bin_h)
        for oy in range(out_h):
            for ox in range(out_w):
                acc[:] = 0.0
                for iy in range(grid_h):
                    y = h_start + oy * bin_h + (iy + 0.5) * bin_h / grid_h
                    for ix in range(grid_w):
                        _bilinear_add(x, b, y, w_start + ox * bin_w + (ix + 0.5) * bin_w / grid_w, acc)
                for c in range(channels):
                    out[r, oy, ox, c] = acc[c] / (grid_h * grid_w)


def roi_align(x: np.ndarray, rois: np.ndarray, batches: np.ndarray, height_ratio: float, width_ratio: float,
              sampling_h: int, sampling_w: int, out: np.ndarray) -> None:
    """``out[r, i, j, :]`` = the mean of ``sampling_h x sampling_w`` points (0: ``ceil`` of the bin's side) spread
    evenly over bin (i, j) of ROI ``r`` (its corners divided by the ratios; a side below 1 is 1), each point
    interpolated bilinearly in image ``batches[r]`` of ``x`` (float64, [batch, height, width, channels])."""
    _roi_align(np.ascontiguousarray(x, np.float64), np.ascontiguousarray(rois, np.float64),
               np.ascontiguousarray(batches, np.int64), float(height_ratio), float(width_ratio),
               int(sampling_h), int(sampling_w), out)


def pooling_corners(rois: np.ndarray, height_ratio: float, width_ratio: float) -> np.ndarray:
    """The integer corners ``[4, R]`` ROI max pooling takes: each coordinate divided by its ratio and rounded
    half away from zero (C's ``round``), as int32 (beyond its range: clamped to it; NaN: 0)."""
    scaled = np.asarray(rois, np.float64) / np.array([width_ratio, height_ratio, width_ratio, height_ratio])
    rounded = np.nan_to_num(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5))
    return np.clip(rounded, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int32).T


def bbox_transform(rois: np.ndarray, deltas: np.ndarray, batches: np.ndarray, image_info: np.ndarray,
                   out: np.ndarray) -> None:
    """``out[r, 4k:4k+4]`` = box ``r`` moved by class ``k``'s ``[dx, dy, dw, dh]``: centre ``+ (dx * w, dy * h)``,
    size ``* (exp(dw), exp(dh))`` (``w = x2 - x1``, ``h = y2 - y1``), then clipped to ``[0, width]`` and
    ``[0, height]`` of its image (``image_info[b] = [height, width]``); float64."""
    boxes = np.asarray(rois, np.float64)
    d = np.asarray(deltas, np.float64).reshape(len(boxes), -1, 4)
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    cx, cy = boxes[:, 0] + w / 2, boxes[:, 1] + h / 2
    cx = cx[:, None] + d[..., 0] * w[:, None]
    cy = cy[:, None] + d[..., 1] * h[:, None]
    nw, nh = w[:, None] * np.exp(d[..., 2]), h[:, None] * np.exp(d[..., 3])
    info = np.asarray(image_info, np.float64)[np.asarray(batches, np.int64)]
    height, width = info[:, 0:1], info[:, 1:2]
    result = np.stack([np.clip(cx - nw / 2, 0, width), np.clip(cy - nh / 2, 0, height),
                       np.clip(cx + nw / 2, 0, width), np.clip(cy + nh / 2, 0, height)], axis=-1)
    out[...] = result.reshape(out.shape)


def store_quant16(real: np.ndarray, out: np.ndarray, scale: float, zero_point: int) -> None:
    """TENSOR_QUANT16_ASYMM boxes (bits in an int16 array): ``zero_point + real / scale`` rounded half to even,
    clamped to 0..65535."""
    raw = np.clip(np.rint(np.asarray(real, np.float64) / np.float64(scale)) + zero_point, 0, 65535)
    out.view(np.uint16)[...] = raw.astype(np.uint16)


def shifted_anchors(anchors: np.ndarray, height: int, width: int, height_ratio: float,
                    width_ratio: float) -> np.ndarray:
    """``[height, width, anchors, 4]``: each anchor ``[x1, y1, x2, y2]`` moved to feature-map position (y, x), by
    ``x * width_ratio`` and ``y * height_ratio`` in the image."""
    ys = np.arange(height, dtype=np.float64)[:, None, None] * height_ratio
    xs = np.arange(width, dtype=np.float64)[None, :, None] * width_ratio
    shift = np.stack(np.broadcast_arrays(xs, ys, xs, ys), axis=-1)
    return shift + np.asarray(anchors, np.float64)[None, None]


def decode_centre_boxes(deltas: np.ndarray, anchors: np.ndarray, scales: tuple[float, float, float, float]
                        ) -> np.ndarray:
    """``[..., 4]`` boxes ``[y1, x1, y2, x2]`` of deltas ``[dy, dx, dh, dw]`` (``[..., >= 4]``, the rest ignored) on
    anchors ``[ctr_y, ctr_x, h, w]``: centre ``anchor centre + d / scale * anchor size``, size
    ``anchor size * exp(d / scale)``; float64, not clipped."""
    d = np.asarray(deltas, np.float64)[..., :4] / np.asarray(scales, np.float64)
    a = np.asarray(anchors, np.float64)
    centre = a[..., :2] + d[..., :2] * a[..., 2:]
    half = a[..., 2:] * np.exp(d[..., 2:]) / 2
    return np.concatenate([centre - half, centre + half], axis=-1)
