"""3-D convolution and pooling over ``[batch, channels, depth, height, width]`` (row-major in meaning: the caller
passes OpenVX tensors transposed). The output extent along each axis is ``(in + before + after - span) // stride
+ 1`` with ``span = (kernel - 1) * dilation + 1``. Both run tap by tap over the zero-padded input: one strided view
per kernel position: pooling takes one max / sum per tap over the whole output, the convolution copies the taps
into a patch matrix for one matrix product (im2col); sums in float64.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np


def extent(size: int, kernel: int, stride: int, dilation: int, before: int, after: int) -> int:
    """Output positions along one axis (may be < 1: the caller refuses such a geometry)."""
    return (size + before + after - (kernel - 1) * dilation - 1) // stride + 1


def _padded(x: np.ndarray, before: Sequence[int], after: Sequence[int], fill: float) -> np.ndarray:
    widths = [(0, 0), (0, 0)] + [(int(b), int(a)) for b, a in zip(before, after)]
    return np.pad(np.asarray(x, np.float64), widths, constant_values=fill)


def _tap(v: np.ndarray, offset: Sequence[int], stride: Sequence[int], count: Sequence[int]) -> np.ndarray:
    """The input elements tap ``offset`` reads for every output position: a strided view."""
    return v[(Ellipsis,) + tuple(slice(o, o + (n - 1) * s + 1, s) for o, s, n in zip(offset, stride, count))]


def pool3d(x: np.ndarray, out: np.ndarray, kernel: Sequence[int], stride: Sequence[int], before: Sequence[int],
           after: Sequence[int], average: bool, exclude_padding: bool) -> None:
    """Max or average pooling; max leaves padding out, average counts it as zeros unless ``exclude_padding``
    (then it divides by the input positions the window covers). Every window must cover an input position."""
    count = out.shape[2:]
    v = _padded(x, before, after, 0.0 if average else -np.inf)
    acc = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        t = _tap(v, offset, stride, count)
        acc = t.copy() if acc is None else (acc + t if average else np.maximum(acc, t))
    if average:
        if exclude_padding:
            ones = _padded(np.ones((1, 1) + x.shape[2:]), before, after, 0.0)
            covered = sum(_tap(ones, offset, stride, count) for offset in itertools.product(*(range(k) for k in kernel)))
            acc = acc / covered
        else:
            acc = acc / float(np.prod(kernel))
    out[...] = acc


PATCH_BYTES = 32 << 20
"""The most a convolution's patch matrix (float64) takes at once: output depth slices are done in chunks below it."""


def convolution3d(x: np.ndarray, weights: np.ndarray, bias: np.ndarray | None, out: np.ndarray, groups: int,
                  stride: Sequence[int], dilation: Sequence[int], before: Sequence[int], after: Sequence[int]) -> None:
    """``out[b, o] = bias[o] + sum over the group's channels c and taps (a, h, w) of weights[o, c, a, h, w] times the
    input at the tap``; ``weights`` is ``[out_channels, in_channels / groups, kd, kh, kw]``. Per batch item, group
    and chunk of output depth slices: the taps' strided views copied into one patch matrix ``[c * taps, pixels]``,
    then one matrix product with the weights ``[o, c * taps]`` (float64)."""
    count = out.shape[2:]
    v = _padded(x, before, after, 0.0)
    w = np.asarray(weights, np.float64)
    o_group, per = w.shape[0] // groups, w.shape[1]
    taps = list(itertools.product(*(range(k) for k in w.shape[2:])))
    plane = count[1] * count[2]
    chunk = max(1, min(count[0], PATCH_BYTES // (8 * per * len(taps) * plane)))
    result = np.empty(out.shape, np.float64)
    for g in range(groups):
        outs = slice(g * o_group, (g + 1) * o_group)
        matrix = w[outs].reshape(o_group, per * len(taps))
        for b in range(x.shape[0]):
            channels = v[b, g * per:(g + 1) * per]
            for z in range(0, count[0], chunk):
                depth = min(chunk, count[0] - z)
                patches = np.empty((per, len(taps), depth, count[1], count[2]))
                for t, tap in enumerate(taps):
                    start = [z * stride[0] + tap[0] * dilation[0], tap[1] * dilation[1], tap[2] * dilation[2]]
                    patches[:, t] = _tap(channels, start, stride, (depth,) + tuple(count[1:]))
                product = matrix @ patches.reshape(per * len(taps), depth * plane)
                result[b, outs, z:z + depth] = product.reshape(o_group, depth, count[1], count[2])
    if bias is not None:
        result += np.asarray(bias, np.float64).reshape(1, -1, 1, 1, 1)
    out[...] = result


def deconvolution3d(x: np.ndarray, weights: np.ndarray, bias: np.ndarray | None, out: np.ndarray, groups: int,
                    stride: Sequence[int], dilation: Sequence[int], before: Sequence[int]) -> None:
    """Transposed 3-D convolution: input position ``p`` and tap ``t`` of channel ``c`` add ``x[b, c, p] *
    weights[c, o', t]`` to output position ``p * stride + t * dilation - before`` of output channel ``g * O' + o'``
    (``g`` the group of ``c``, ``weights`` ``[in_channels, out_channels / groups, kd, kh, kw]`` as CoreML stores
    them); ``out`` keeps the positions from ``before`` on, those past the full result holding the bias alone.
    Per batch item and group one float64 matrix product gives every tap's contribution ``[o', taps, positions]``,
    each added into a strided view of the full result (col2im: the taps of ``convolution3d`` written instead of
    read)."""
    w = np.asarray(weights, np.float64)
    o_group, per = w.shape[1], x.shape[1] // groups
    kernel = w.shape[2:]
    taps = list(itertools.product(*(range(k) for k in kernel)))
    count = x.shape[2:]
    full = [(n - 1) * s + (k - 1) * d + 1 for n, s, k, d in zip(count, stride, kernel, dilation)]
    reach = [max(f, b + e) for f, b, e in zip(full, before, out.shape[2:])]
    result = np.zeros(out.shape[:2] + tuple(reach), np.float64)
    for g in range(groups):
        matrix = w[g * per:(g + 1) * per].reshape(per, o_group * len(taps)).T
        for b in range(x.shape[0]):
            columns = matrix @ np.asarray(x[b, g * per:(g + 1) * per], np.float64).reshape(per, -1)
            columns = columns.reshape((o_group, len(taps)) + tuple(count))
            target = result[b, g * o_group:(g + 1) * o_group]
            for t, tap in enumerate(taps):
                _tap(target, [a * d for a, d in zip(tap, dilation)], stride, count)[...] += columns[:, t]
    window = result[(Ellipsis,) + tuple(slice(b, b + e) for b, e in zip(before, out.shape[2:]))]
    if bias is not None:
        window = window + np.asarray(bias, np.float64).reshape(1, -1, 1, 1, 1)
    out[...] = window
