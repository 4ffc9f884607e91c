"""Plain references for the NNAPI operations, written from the HAL 1.0 text:
loops over real values in float64, no code shared with the library."""
from __future__ import annotations

import math

import numpy as np


def activation(v, code):
    return {0: v, 1: np.maximum(v, 0), 2: np.clip(v, -1, 1), 3: np.clip(v, 0, 6)}[code]


def out_size(x_shape, kh, kw, pads, strides):
    """(out_h, out_w) of a window layer: (in + pads - k) // stride + 1."""
    left, right, top, bottom = pads
    return (x_shape[1] + top + bottom - kh) // strides[1] + 1, (x_shape[2] + left + right - kw) // strides[0] + 1


def conv2d(x, w, b, pads, strides):
    """output[b, y, x, o] = sum_{i,j,k} input[b, y*sh + i - top, x*sw + j - left, k] * filter[o, i, j, k] + bias[o]."""
    left, right, top, bottom = pads
    sw, sh = strides
    n, h, wd, _c = x.shape
    o, kh, kw, _ = w.shape
    oh = (h + top + bottom - kh) // sh + 1
    ow = (wd + left + right - kw) // sw + 1
    out = np.zeros((n, oh, ow, o))
    for bi in range(n):
        for y in range(oh):
            for xx in range(ow):
                for oc in range(o):
                    total = b[oc]
                    for i in range(kh):
                        for j in range(kw):
                            iy, ix = y * sh + i - top, xx * sw + j - left
                            if 0 <= iy < h and 0 <= ix < wd:
                                total += float(np.dot(x[bi, iy, ix, :], w[oc, i, j, :]))
                    out[bi, y, xx, oc] = total
    return out


def depthwise(x, w, b, pads, strides, mult):
    """output[b, y, x, k*m + q] = sum_{i,j} input[b, y*sh + i - top, x*sw + j - left, k] * filter[0, i, j, k*m + q]."""
    left, _, top, _ = pads
    sw, sh = strides
    n, h, wd, c = x.shape
    _, kh, kw, o = w.shape
    oh, ow = out_size(x.shape, kh, kw, pads, strides)
    out = np.zeros((n, oh, ow, o))
    for bi in range(n):
        for y in range(oh):
            for xx in range(ow):
                for k in range(c):
                    for q in range(mult):
                        total = b[k * mult + q]
                        for i in range(kh):
                            for j in range(kw):
                                iy, ix = y * sh + i - top, xx * sw + j - left
                                if 0 <= iy < h and 0 <= ix < wd:
                                    total += x[bi, iy, ix, k] * w[0, i, j, k * mult + q]
                        out[bi, y, xx, k * mult + q] = total
    return out


def pool(x, kind, pads, strides, size):
    """Average / max / L2 over the window positions inside the input."""
    left, _, top, _ = pads
    sw, sh = strides
    fw, fh = size
    n, h, wd, c = x.shape
    oh, ow = out_size(x.shape, fh, fw, pads, strides)
    out = np.zeros((n, oh, ow, c))
    for bi in range(n):
        for y in range(oh):
            for xx in range(ow):
                for ch in range(c):
                    vals = [x[bi, y * sh + i - top, xx * sw + j - left, ch] for i in range(fh) for j in range(fw)
                            if 0 <= y * sh + i - top < h and 0 <= xx * sw + j - left < wd]
                    if kind == "max":
                        out[bi, y, xx, ch] = max(vals)
                    elif kind == "avg":
                        out[bi, y, xx, ch] = sum(vals) / len(vals)
                    else:
                        out[bi, y, xx, ch] = math.sqrt(sum(v * v for v in vals) / len(vals))
    return out


def same_padding(size, k, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


def softmax(x, beta):
    out = np.zeros_like(x, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    res = out.reshape(-1, x.shape[-1])
    for r in range(flat.shape[0]):
        e = [math.exp((v - max(flat[r])) * beta) for v in flat[r]]
        res[r] = [v / sum(e) for v in e]
    return out


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm(x, W, R, C, B, P, pb, h, c, act, cell_clip, proj_clip, gates=None):
    """The LSTM step from the HAL text (CIFG when W has no 'i'; peepholes when C is given); ``gates``, a
    list, receives the activated gates in the scratch order (input, cell, forget, output)."""
    f = sigmoid(x @ W["f"].T + h @ R["f"].T + (C["f"] * c if C else 0) + B["f"])
    i = 1 - f if "i" not in W else sigmoid(x @ W["i"].T + h @ R["i"].T + (C["i"] * c if C else 0) + B["i"])
    g = act(x @ W["c"].T + h @ R["c"].T + B["c"])
    c_new = f * c + i * g
    if cell_clip > 0:
        c_new = np.clip(c_new, -cell_clip, cell_clip)
    o = sigmoid(x @ W["o"].T + h @ R["o"].T + (C["o"] * c_new if C else 0) + B["o"])
    out = o * act(c_new)
    if gates is not None:
        gates.extend(([] if "i" not in W else [i]) + [g, f, o])
    if P is not None:
        out = out @ P.T + (pb if pb is not None else 0)
        if proj_clip > 0:
            out = np.clip(out, -proj_clip, proj_clip)
    return out, c_new
