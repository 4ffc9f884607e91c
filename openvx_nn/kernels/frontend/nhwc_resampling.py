"""Spatial rearrangements of NHWC data: bilinear resizing, depth-to-space and
space-to-depth, space-to-batch and batch-to-space (pure data movement, any dtype)."""
from __future__ import annotations

import numpy as np

from .asymmetric import dequantize, store


def resize_bilinear(x: np.ndarray, out: np.ndarray, quant_in=None, quant_out=None) -> None:
    """Source position ``y * in_h / out_h`` (no corner alignment, no half-pixel shift),
    the two neighbours clamped to the edge, interpolated in float64."""
    real = dequantize(x, quant_in)
    _, height, width, _ = x.shape
    _, out_h, out_w, _ = out.shape
    sy = np.arange(out_h) * (height / out_h)
    sx = np.arange(out_w) * (width / out_w)
    y0 = np.floor(sy).astype(np.int64)
    x0 = np.floor(sx).astype(np.int64)
    y1 = np.minimum(y0 + 1, height - 1)
    x1 = np.minimum(x0 + 1, width - 1)
    fy = (sy - y0)[None, :, None, None]
    fx = (sx - x0)[None, None, :, None]
    top = real[:, y0][:, :, x0] * (1 - fx) + real[:, y0][:, :, x1] * fx
    bottom = real[:, y1][:, :, x0] * (1 - fx) + real[:, y1][:, :, x1] * fx
    store(top * (1 - fy) + bottom * fy, out, quant_out)


def resize_nearest(x: np.ndarray, out: np.ndarray) -> None:
    """``out[b, y, x, c] = x[b, min(floor(y * in_h / out_h), in_h - 1), min(floor(x * in_w / out_w), in_w - 1),
    c]`` (no corner alignment, no half-pixel shift; the ratios in float32, as TensorFlow Lite computes them);
    raw values are copied."""
    _, height, width, _ = x.shape
    _, out_h, out_w, _ = out.shape
    rows = np.minimum(np.floor(np.arange(out_h, dtype=np.float32) * (np.float32(height) / np.float32(out_h))).astype(np.int64),
                      height - 1)
    cols = np.minimum(np.floor(np.arange(out_w, dtype=np.float32) * (np.float32(width) / np.float32(out_w))).astype(np.int64),
                      width - 1)
    out[...] = x[:, rows][:, :, cols]


def depth_to_space(x: np.ndarray, out: np.ndarray, block: int) -> None:
    """``out[b, h*bs + i, w*bs + j, c] = x[b, h, w, (i*bs + j) * C_out + c]``."""
    n, h, w, c = x.shape
    c_out = c // (block * block)
    blocks = x.reshape(n, h, w, block, block, c_out)
    out[...] = blocks.transpose(0, 1, 3, 2, 4, 5).reshape(out.shape)


def space_to_depth(x: np.ndarray, out: np.ndarray, block: int) -> None:
    """The inverse of ``depth_to_space``: ``out[b, h, w, (i*bs + j) * C + c] = x[b, h*bs + i, w*bs + j, c]``."""
    n, h, w, c = x.shape
    blocks = x.reshape(n, h // block, block, w // block, block, c)
    out[...] = blocks.transpose(0, 1, 3, 2, 4, 5).reshape(out.shape)


def space_to_batch(x: np.ndarray, out: np.ndarray, block: tuple[int, int], pads: tuple[int, int, int, int],
                   pad_value) -> None:
    """``x`` padded by ``pads`` (top, bottom, left, right; ``pad_value``), then cut into blocks of
    ``block`` (height, width) moved to the batch:
    ``out[(i*bw + j) * N + b, h, w, c] = padded[b, h*bh + i, w*bw + j, c]``."""
    n, height, width, c = x.shape
    bh, bw = block
    top, bottom, left, right = pads
    padded = np.full((n, height + top + bottom, width + left + right, c), pad_value, x.dtype)
    padded[:, top:top + height, left:left + width] = x
    oh, ow = padded.shape[1] // bh, padded.shape[2] // bw
    blocks = padded.reshape(n, oh, bh, ow, bw, c)
    out[...] = blocks.transpose(2, 4, 0, 1, 3, 5).reshape(out.shape)


def batch_to_space(x: np.ndarray, out: np.ndarray, block: tuple[int, int]) -> None:
    """The inverse of ``space_to_batch`` without padding:
    ``out[b, h*bh + i, w*bw + j, c] = x[(i*bw + j) * N + b, h, w, c]``, ``N`` the output's batch."""
    bh, bw = block
    n_in, height, width, c = x.shape
    blocks = x.reshape(bh, bw, n_in // (bh * bw), height, width, c)
    out[...] = blocks.transpose(2, 3, 0, 4, 1, 5).reshape(out.shape)
