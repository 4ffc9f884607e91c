"""Plain NumPy references of NNEF operations, written from the NNEF 1.0 specification's definitions (loops
over windows and indices, float64), for the sample folders ``make_nnef_samples.py`` writes and the tests."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def auto_padding(extent, kernel, stride, dilation):
    """NNEF's ``padding = []``: output ``ceil(extent / stride)``, the total padding split smaller half first."""
    pads = []
    for n, k, s, d in zip(extent, kernel, stride, dilation):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
        pads.append((total // 2, total - total // 2))
    return pads


def _source_index(i: int, n: int, border: str):
    """The input index read at position ``i`` of an axis of ``n`` under ``border`` (None: outside, no value)."""
    if 0 <= i < n:
        return i
    if border == "replicate":
        return min(max(i, 0), n - 1)
    if border == "reflect":
        period = 2 * (n - 1) if n > 1 else 1
        i = abs(i) % period if n > 1 else 0
        return period - i if i >= n else i
    return None


def windows(x, kernel, stride, dilation, padding, border):
    """Yield (output index, the window's values) of a 2-D window over x [N, C, H, W] per item and channel;
    ``constant`` fills outside positions with 0, ``ignore`` leaves them out."""
    n_, c_, h, w = x.shape
    (pt, pb), (pl, pr) = padding
    oh = (h + pt + pb - ((kernel[0] - 1) * dilation[0] + 1)) // stride[0] + 1
    ow = (w + pl + pr - ((kernel[1] - 1) * dilation[1] + 1)) // stride[1] + 1
    for oy in range(oh):
        for ox in range(ow):
            values = []
            for ky in range(kernel[0]):
                for kx in range(kernel[1]):
                    iy = oy * stride[0] - pt + ky * dilation[0]
                    ix = ox * stride[1] - pl + kx * dilation[1]
                    sy, sx = _source_index(iy, h, border), _source_index(ix, w, border)
                    if sy is None or sx is None:
                        if border == "constant":
                            values.append(np.zeros((n_, c_)))
                        continue
                    values.append(x[:, :, sy, sx].astype(np.float64))
            yield (oy, ox), (oh, ow), np.stack(values, axis=-1)


def pool(x, kind, size, stride=None, dilation=None, padding=None, border="constant"):
    """max_pool, avg_pool, rms_pool and box (sum) as the spec defines them."""
    stride, dilation = stride or [1, 1], dilation or [1, 1]
    padding = padding or auto_padding(x.shape[2:], size, stride, dilation)
    out = None
    for (oy, ox), (oh, ow), v in windows(x, size, stride, dilation, padding, border):
        if out is None:
            out = np.zeros(x.shape[:2] + (oh, ow))
        if kind == "max":
            out[:, :, oy, ox] = v.max(axis=-1)
        elif kind == "box":
            out[:, :, oy, ox] = v.sum(axis=-1)
        elif kind == "avg":
            out[:, :, oy, ox] = v.mean(axis=-1) if border == "ignore" else v.sum(axis=-1) / math.prod(size)
        elif kind == "rms":
            squares = v * v
            mean = squares.mean(axis=-1) if border == "ignore" else squares.sum(axis=-1) / math.prod(size)
            out[:, :, oy, ox] = np.sqrt(mean)
    return out


def conv(x, w, bias, stride=None, dilation=None, padding=None, groups=1, border="constant"):
    """NNEF ``conv``: filter [O, C / groups, KH, KW], ``groups = 0`` one group per input channel."""
    groups = groups or x.shape[1]
    stride, dilation = stride or [1, 1], dilation or [1, 1]
    padding = padding or auto_padding(x.shape[2:], w.shape[2:], stride, dilation)
    per_in, per_out = x.shape[1] // groups, w.shape[0] // groups
    out = None
    for (oy, ox), (oh, ow), v in windows(x, w.shape[2:], stride, dilation, padding, border):
        if out is None:
            out = np.zeros((x.shape[0], w.shape[0], oh, ow))
        for o in range(w.shape[0]):
            g = o // per_out
            patch = v[:, g * per_in:(g + 1) * per_in, :]  # [N, C/groups, KH*KW]
            out[:, o, oy, ox] = np.einsum("nck,ck->n", patch, w[o].reshape(per_in, -1).astype(np.float64))
    return out + np.asarray(bias, np.float64).reshape(1, -1, 1, 1)


def deconv(x, w, bias, stride=None, padding=None, groups=1, output_shape=None, dilation=None):
    """NNEF ``deconv`` (the transpose of ``conv``): filter [C, O / groups, KH, KW]; every input scatters its
    window (taps ``dilation`` apart), then the padding is cropped (``padding = []``: output ``input * stride``)."""
    groups = groups or x.shape[1]
    stride, dilation = stride or [1, 1], dilation or [1, 1]
    n_, c_, h, w_ = x.shape
    kh, kw = w.shape[2:]
    per_in, per_out = c_ // groups, w.shape[1]
    full = np.zeros((n_, per_out * groups, (h - 1) * stride[0] + (kh - 1) * dilation[0] + 1,
                     (w_ - 1) * stride[1] + (kw - 1) * dilation[1] + 1))
    for c in range(c_):
        g = c // per_in
        for iy, ix, ky, kx in np.ndindex(h, w_, kh, kw):
            y, x_ = iy * stride[0] + ky * dilation[0], ix * stride[1] + kx * dilation[1]
            full[:, g * per_out:(g + 1) * per_out, y, x_] += x[:, c, iy, ix].reshape(-1, 1) * w[c, :, ky, kx]
    if padding:
        (pt, pb), (pl, pr) = padding
        out = full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]
    else:
        oh, ow = (output_shape[2:] if output_shape else (h * stride[0], w_ * stride[1]))
        pt, pl = max(0, full.shape[2] - oh) // 2, max(0, full.shape[3] - ow) // 2
        out = full[:, :, pt:pt + oh, pl:pl + ow]
    return out + np.asarray(bias, np.float64).reshape(1, -1, 1, 1)


def upsample_linear(x, factor, method, border="replicate"):
    """``multilinear_upsample`` on [N, C, H, W]: each output reads the input at a position per axis (``aligned``:
    corners on corners; ``symmetric``: pixel centres; ``asymmetric``: pixel corners) between its two neighbours;
    a neighbour outside the input is the edge (``replicate``) or 0 (``constant``)."""
    v = np.asarray(x, np.float64)
    n_, c_, h, w = v.shape

    def position(i, n, f):
        if method == "aligned":
            return i * (n - 1) / (n * f - 1) if n * f > 1 else 0.0
        return (i + 0.5) / f - 0.5 if method == "symmetric" else i / f

    def value(y, x_):
        inside = 0 <= y < h and 0 <= x_ < w
        if border == "constant" and not inside:
            return np.zeros((n_, c_))
        return v[:, :, min(max(y, 0), h - 1), min(max(x_, 0), w - 1)]

    out = np.zeros((n_, c_, h * factor[0], w * factor[1]))
    for oy in range(out.shape[2]):
        py = position(oy, h, factor[0])
        y0, fy = math.floor(py), py - math.floor(py)
        for ox in range(out.shape[3]):
            px = position(ox, w, factor[1])
            x0, fx = math.floor(px), px - math.floor(px)
            out[:, :, oy, ox] = ((1 - fy) * ((1 - fx) * value(y0, x0) + fx * value(y0, x0 + 1))
                                 + fy * ((1 - fx) * value(y0 + 1, x0) + fx * value(y0 + 1, x0 + 1)))
    return out


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def local_response_normalization(x, size, alpha, beta, bias):
    """``x / (bias + alpha * box(sqr(x), size, normalize = true)) ^ beta``: the window centred (automatic
    padding), zeros outside it counted, the sum divided by the whole window's size."""
    v = np.asarray(x, np.float64)
    squares = np.pad(v * v, [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in size])
    sums = np.zeros_like(v)
    for index in np.ndindex(*v.shape):
        sums[index] = squares[tuple(slice(i, i + k) for i, k in zip(index, size))].sum()
    return v / (bias + alpha * sums / math.prod(size)) ** beta


def min_max_quantize(x, low, high, bits, signed=False, symmetric=False):
    """The spec's ``min_max_linear_quantize`` (``linear_quantize``: unsigned, not symmetric)."""
    r = 2 ** bits - 1 - int(signed and symmetric)
    z = np.clip(np.asarray(x, np.float64), low, high)
    q = np.round((z - low) / (high - low) * r)
    return q / r * (high - low) + low


def zero_point_quantize(x, zero_point, scale, bits, signed=False, symmetric=False):
    """The spec's ``zero_point_linear_quantize``."""
    s = np.round(np.asarray(x, np.float64) / scale) + zero_point
    r = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
    q = np.clip(s, 0.0 if not signed else -r if symmetric else -r - 1.0, r)
    return (q - zero_point) * scale


# -- the asymmetric uint8 arithmetic of the NNAPI quant8 kernels ------------------------------------------------
def nnapi_requantize(acc, real_multiplier: float, zero_point: int):
    """int32 sums to uint8 codes by the multiplier-and-shift rule: the real multiplier written as a 31-bit
    mantissa ``m`` (``2**30 <= m < 2**31``, frexp's fraction times ``2**31`` rounded to nearest) and a right
    shift, the product ``acc * m`` rounded once to the nearest integer after the shift (ties away from zero),
    plus the zero point, clamped to [0, 255]. (Android's reference rounds twice, after a doubling high product
    and again after the shift; the two differ by one code on about one sum in a thousand.)"""
    fraction, exponent = math.frexp(real_multiplier)
    m = math.floor(fraction * 2 ** 31 + 0.5)
    if m == 2 ** 31:
        m, exponent = m // 2, exponent + 1
    shift = 31 - exponent
    out = np.empty(np.shape(acc), np.int64)
    for i, a in np.ndenumerate(np.asarray(acc, np.int64)):
        product = Fraction(int(a) * m, 2 ** shift)
        magnitude = math.floor(abs(product) + Fraction(1, 2))
        out[i] = magnitude if product >= 0 else -magnitude
    return np.clip(out + zero_point, 0, 255)

def grid_average(codes, zero_point: int, size, stride, padding):
    """``avg_pool`` with the ``ignore`` border of a tensor on a grid, rounded back to the same grid as the spec's
    ``zero_point_linear_quantize`` does (ties to even), computed exactly: the codes' offsets from the zero point
    summed over each window's part inside the input, divided as a fraction."""
    codes = np.asarray(codes, np.int64)
    n_, c_, h, w = codes.shape
    oh = (h + padding[0][0] + padding[0][1] - size[0]) // stride[0] + 1
    ow = (w + padding[1][0] + padding[1][1] - size[1]) // stride[1] + 1
    out = np.zeros((n_, c_, oh, ow), np.int64)
    for b, c, i, j in np.ndindex(out.shape):
        top, left = i * stride[0] - padding[0][0], j * stride[1] - padding[1][0]
        window = codes[b, c, max(top, 0):max(top + size[0], 0), max(left, 0):max(left + size[1], 0)]
        out[b, c, i, j] = round(Fraction(int((window - zero_point).sum()), window.size)) + zero_point
    return np.clip(out, 0, 255)
