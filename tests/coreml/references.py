"""Plain NumPy references of CoreML layers, written from the seed's text (000/001),
on CoreML-order arrays ([C, H, W], [Seq, C], ...), in float64."""
from __future__ import annotations

import math

import numpy as np


def conv2d(x, w, b, stride, dilation, pads, groups):
    """x [C, H, W]; w [O, C/groups, kh, kw]; pads (top, bottom, left, right), zeros."""
    top, bottom, left, right = pads
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right)))
    o_ch, kc, kh, kw = w.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh = (xp.shape[1] - eh) // stride[0] + 1
    ow = (xp.shape[2] - ew) // stride[1] + 1
    out = np.zeros((o_ch, oh, ow))
    per_group = o_ch // groups
    for o in range(o_ch):
        g = o // per_group
        for y in range(oh):
            for x_ in range(ow):
                patch = xp[g * kc:(g + 1) * kc, y * stride[0]:y * stride[0] + eh:dilation[0],
                           x_ * stride[1]:x_ * stride[1] + ew:dilation[1]]
                out[o, y, x_] = np.sum(patch * w[o]) + (b[o] if b is not None else 0.0)
    return out


def same_pads(extent, kernel, stride, top_left_heavy=False):
    """SamePadding: (before, after) and the output size."""
    out = -(-extent // stride)
    total = max(0, (out - 1) * stride + kernel - extent)
    small = total // 2
    before = total - small if top_left_heavy else small
    return before, total - before


def deconv2d(x, w, b, stride, groups, crop):
    """Transposed convolution: x [C, H, W], w [C, O/groups, kh, kw]; every input pixel adds
    its weighted kernel at (y*s, x*s) of the full output, then crop (top, bottom, left, right)."""
    c, h, wd = x.shape
    _, og, kh, kw = w.shape
    full = np.zeros((og * groups, (h - 1) * stride[0] + kh, (wd - 1) * stride[1] + kw))
    per_group = c // groups
    for ci in range(c):
        g = ci // per_group
        for y in range(h):
            for x_ in range(wd):
                full[g * og:(g + 1) * og, y * stride[0]:y * stride[0] + kh, x_ * stride[1]:x_ * stride[1] + kw] += \
                    x[ci, y, x_] * w[ci]
    top, bottom, left, right = crop
    # a negative end crop means outputs beyond the full result: they receive no input
    full = np.pad(full, ((0, 0), (0, max(0, -bottom)), (0, max(0, -right))))
    bottom, right = max(0, bottom), max(0, right)
    if b is not None:
        full += np.asarray(b).reshape(-1, 1, 1)
    return full[:, top:full.shape[1] - bottom, left:full.shape[2] - right]


def pool2d(x, kind, kernel, stride, pads, exclude_padding, out_size=None):
    """Max / average / L2 pooling of [C, H, W] with (top, bottom, left, right) padding;
    max ignores padded positions, average counts them unless ``exclude_padding``."""
    top, bottom, left, right = pads
    c, h, w = x.shape
    oh, ow = out_size or ((h + top + bottom - kernel[0]) // stride[0] + 1, (w + left + right - kernel[1]) // stride[1] + 1)
    out = np.zeros((c, oh, ow))
    for y in range(oh):
        for x_ in range(ow):
            y0, x0 = y * stride[0] - top, x_ * stride[1] - left
            ys = slice(max(y0, 0), min(y0 + kernel[0], h))
            xs = slice(max(x0, 0), min(x0 + kernel[1], w))
            win = x[:, ys, xs]
            inside = win.shape[1] * win.shape[2]
            if kind == "max":
                out[:, y, x_] = win.max(axis=(1, 2))
            elif kind == "average":
                out[:, y, x_] = win.sum(axis=(1, 2)) / (inside if exclude_padding else kernel[0] * kernel[1])
            else:
                out[:, y, x_] = np.sqrt((win * win).sum(axis=(1, 2)))
    return out


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


ACTIVATIONS = {
    "RELU": lambda v, a, b: np.maximum(0.0, v),
    "LEAKYRELU": lambda v, a, b: np.where(v >= 0, v, a * v),
    "TANH": lambda v, a, b: (1 - np.exp(-2 * v)) / (1 + np.exp(-2 * v)),
    "SCALED_TANH": lambda v, a, b: a * np.tanh(b * v),
    "SIGMOID": lambda v, a, b: sigmoid(v),
    "LINEAR": lambda v, a, b: a * v + b,
    "SIGMOID_HARD": lambda v, a, b: np.minimum(np.maximum(a * v + b, 0), 1),
    "PRELU": lambda v, a, b: np.where(v >= 0, v, a * v),
    "ELU": lambda v, a, b: np.where(v >= 0, v, a * (np.exp(v) - 1)),
    "THRESHOLDEDRELU": lambda v, a, b: np.where(v >= a, v, 0.0),
    "SOFTSIGN": lambda v, a, b: v / (1 + np.abs(v)),
    "SOFTPLUS": lambda v, a, b: np.log(1 + np.exp(v)),
    "PARAMETRICSOFTPLUS": lambda v, a, b: a * np.log(1 + np.exp(b * v)),
}


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def lrn(x, alpha, beta, size, k):
    """x_i / (k + alpha / size * sum of x_j^2 over the `size` channels around i)^beta; an even
    window reaches one channel further up than down (channels i - (size-1)//2 .. i + size//2)."""
    c = x.shape[0]
    out = np.empty_like(x)
    for i in range(c):
        window = x[max(0, i - (size - 1) // 2):min(c, i + size // 2 + 1)]
        out[i] = x[i] / (k + alpha / size * np.sum(window * window, axis=0)) ** beta
    return out


def linspace_grid(extent, count, method):
    """SamplingMode grid points in [0, extent-1]."""
    if method == "ALIGN_ENDPOINTS_MODE":
        pts = np.zeros(1) if count == 1 else np.linspace(0, extent - 1, count)
    elif method == "STRICT_ALIGN_ENDPOINTS_MODE":
        pts = np.array([(extent - 1) / 2]) if count == 1 else np.linspace(0, extent - 1, count)
    elif method == "UPSAMPLE_MODE":
        pts = np.arange(count) * extent / count
    else:  # ROI_ALIGN_MODE
        pts = np.array([(extent - 1) / 2]) if count == 1 else \
            np.linspace(extent / (2 * count) - 0.5, extent - extent / (2 * count) - 0.5, count)
    return np.clip(pts, 0, extent - 1)


def bilinear(x, ys, xs):
    """Sample [C, H, W] at rows ys and columns xs (each between two neighbours)."""
    c, h, w = x.shape
    out = np.zeros((c, len(ys), len(xs)))
    for i, yy in enumerate(ys):
        y0 = math.floor(yy)
        y1 = min(y0 + 1, h - 1)
        fy = yy - y0
        for j, xx in enumerate(xs):
            x0 = math.floor(xx)
            x1 = min(x0 + 1, w - 1)
            fx = xx - x0
            out[:, i, j] = (x[:, y0, x0] * (1 - fy) * (1 - fx) + x[:, y0, x1] * (1 - fy) * fx +
                            x[:, y1, x0] * fy * (1 - fx) + x[:, y1, x1] * fy * fx)
    return out


def clip50(v):
    return np.clip(v, -50.0, 50.0)


def lstm(xs, W, R, b, p, acts, h0=None, c0=None, reverse=False, coupled=False, clip=50000.0):
    """Seed equations; W [4, H, I] (i, f, z, o), R [4, H, H], b [4, H], p [3, H];
    returns the per-position outputs and the final (h, c)."""
    f_, g_, h_ = acts
    hidden = W.shape[1]
    h = np.zeros(hidden) if h0 is None else h0
    c = np.zeros(hidden) if c0 is None else c0
    ys = np.zeros((len(xs), hidden))
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in order:
        x = xs[t]
        fg = f_(clip50(W[1] @ x + R[1] @ h + p[1] * c + b[1]))
        ig = 1 - fg if coupled else f_(clip50(W[0] @ x + R[0] @ h + p[0] * c + b[0]))
        zg = g_(clip50(W[2] @ x + R[2] @ h + b[2]))
        c = np.clip(c * fg + ig * zg, -clip, clip)
        og = f_(clip50(W[3] @ x + R[3] @ h + p[2] * c + b[3]))
        h = h_(c) * og
        ys[t] = h
    return ys, h, c


def batchnorm(x, bn, relu: bool = False, epsilon: float = 1e-5):
    """x [C, H, W]; bn (gamma, beta, mean, variance): gamma * (x - mean) / sqrt(variance + epsilon) + beta, then
    max(v, 0) if ``relu``."""
    gamma, beta, mean, var = (v.astype(np.float64).reshape(-1, 1, 1) for v in bn)
    v = gamma * (x - mean) / np.sqrt(var + epsilon) + beta
    return np.maximum(v, 0.0) if relu else v
