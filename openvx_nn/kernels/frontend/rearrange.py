"""Data movement of float tensors: reshape, permute, strided slice, pad, tile, block reorganisation.

Arrays are in OpenVX axis order (axis 0 fastest). A reshape keeps the
linear order of elements with axis 0 fastest, which is the row-major order
of the reversed (CoreML-order) shape, so it never moves data conceptually.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def reshape_copy(x: np.ndarray, out: np.ndarray) -> None:
    """out = x with the same elements in the same linear order (axis 0 fastest)."""
    out[...] = x.reshape(out.shape, order="F")


def permute(x: np.ndarray, out: np.ndarray, axes: Sequence[int]) -> None:
    """out axis i = x axis ``axes[i]``."""
    out[...] = np.transpose(x, tuple(axes))


def strided_view(x: np.ndarray, begin: Sequence[int], step: Sequence[int], sizes: Sequence[int]) -> np.ndarray:
    """The view of ``x`` whose element i is x[begin + i * step] on every axis, ``sizes`` long (steps may be
    negative)."""
    index = []
    for b, s, n in zip(begin, step, sizes):
        stop = b + (n - 1) * s
        index.append(slice(b, (stop + 1) if s > 0 else (None if stop == 0 else stop - 1), s))
    return x[tuple(index)]


def strided_slice(x: np.ndarray, out: np.ndarray, begin: Sequence[int], step: Sequence[int]) -> None:
    """out[i] = x[begin + i * step] on every axis (steps may be negative)."""
    out[...] = strided_view(x, begin, step, out.shape)


PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def pad(x: np.ndarray, out: np.ndarray, before: Sequence[int], mode: str, value: float = 0.0) -> None:
    """out = x padded by ``before`` elements at the start of each axis and the rest at the end;
    reflection excludes the edge element, replication repeats it."""
    widths = [(b, n - s - b) for b, n, s in zip(before, out.shape, x.shape)]
    kwargs = {"constant_values": value} if mode == "constant" else {}
    out[...] = np.pad(x, widths, mode=PAD_MODES[mode], **kwargs)


def tile(x: np.ndarray, out: np.ndarray) -> None:
    """out = x repeated whole along each axis (out's extent is a multiple of x's)."""
    out[...] = np.tile(x, tuple(o // i for o, i in zip(out.shape, x.shape)))


def channel_shuffle(x: np.ndarray, out: np.ndarray, groups: int, axis: int) -> None:
    """``out[.., k * groups + g, ..] = x[.., g * size + k, ..]`` along ``axis`` (``size`` = extent / groups)."""
    lead, n, tail = x.shape[:axis], x.shape[axis], x.shape[axis + 1:]
    split = x.reshape(lead + (groups, n // groups) + tail)
    out[...] = np.swapaxes(split, axis, axis + 1).reshape(out.shape)


def reorganize(x: np.ndarray, out: np.ndarray, block: int, mode: str) -> None:
    """Space-to-depth, depth-to-space or pixel shuffle on [W, H, C, batch...].

    With b = block, C' the smaller channel count and CoreML-order indices:
    depth_to_space   out[c, h*b + i, w*b + j] = x[(i*b + j) * C' + c, h, w]
    pixel_shuffle    out[c, h*b + i, w*b + j] = x[c*b*b + i*b + j, h, w]
    space_to_depth   the inverse of depth_to_space.
    """
    cm = x.T  # CoreML order [batch..., C, H, W]
    lead = cm.shape[:-3]
    if mode == "space_to_depth":
        c, h, w = cm.shape[-3:]
        t = cm.reshape(lead + (c, h // block, block, w // block, block))
        n = len(lead)
        t = np.transpose(t, tuple(range(n)) + (n + 2, n + 4, n, n + 1, n + 3))
        result = t.reshape(lead + (c * block * block, h // block, w // block))
    else:
        c, h, w = cm.shape[-3:]
        small = c // (block * block)
        n = len(lead)
        if mode == "depth_to_space":
            t = cm.reshape(lead + (block, block, small, h, w))
            t = np.transpose(t, tuple(range(n)) + (n + 2, n + 3, n, n + 4, n + 1))
        else:
            t = cm.reshape(lead + (small, block, block, h, w))
            t = np.transpose(t, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
        result = t.reshape(lead + (small, h * block, w * block))
    out[...] = result.T
