"""Plain references for the convolution and deconvolution layers, written from the seed's formulas.

No code is shared with ``openvx_nn.kernels``. Each reference walks the taps
one by one in the documented order (``c``, then ``my``, then ``mx``) and
handles all output positions of a tap at once with NumPy:

- integers: exact sums in NumPy int64 (asserted to stay far from overflow),
  then per output one exact rational value (``fractions.Fraction``) with the
  bias, rounded and fitted by ``kernel_testing``'s plain helpers;
- float32: float64 products (exact) added one tap at a time, so each output
  sums in exactly the documented order; a tap that meets padding (or, in
  deconvolution, an inserted zero) adds nothing.

Deconvolution is computed the seed's way: the input is upsampled with zeros,
padded with ``p' = K - pad - 1`` zeros on each side (negative: cropped) and
``a`` more at the far end, and correlated with stride 1.

``sample=True`` switches to the Khronos sample implementation's conventions,
as the issue describing its conformance suite states them: a dilated tap ``m``
reads ``x·stride + m·(d + 1) + d - pad`` (an extra ``d``), and a deconvolution
counts only the samples whose position in the zero-inserted input is below
the input width (height) instead of below ``(W - 1)·upscale + 1``.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from kernel_testing import Format, fit_exact, round_exact


def _finish(acc: np.ndarray, bias_at, fmt: Format, fpp: tuple[int, int, int, int], saturate: bool,
            nearest_even: bool) -> np.ndarray:
    """``acc`` (OW, OH, K, *batch) of exact raw sums (or float64 sums) to the output format."""
    fpp_x, fpp_w, fpp_b, fpp_out = fpp
    result = np.empty(acc.shape, fmt.dtype)
    for index in np.ndindex(acc.shape):
        b = bias_at(index)
        if fmt.is_float:
            result[index] = np.float32(acc[index] + (0.0 if b is None else float(b)))
            continue
        value = Fraction(int(acc[index]), 2 ** (fpp_x + fpp_w))
        if b is not None:
            value += Fraction(int(b), 2 ** fpp_b)
        result[index] = fit_exact(round_exact(value * 2 ** fpp_out, nearest_even), fmt, saturate)
    return result


def _bias_lookup(bias: np.ndarray | None):
    if bias is None:
        return lambda index: None
    if bias.ndim == 1:
        return lambda index: bias[index[2]]
    return lambda index: bias[index[0], index[1], index[2]]


def _check_int64_room(x: np.ndarray, w: np.ndarray) -> None:
    taps = w.shape[0] * w.shape[1] * w.shape[2]
    biggest = max(abs(int(np.iinfo(x.dtype).min)), int(np.iinfo(x.dtype).max)) ** 2
    assert taps * biggest < 2 ** 62, "the reference's int64 sums could overflow: use smaller shapes"


def _accumulate(acc: np.ndarray, values: np.ndarray, valid: np.ndarray, weights: np.ndarray, is_float: bool):
    """``acc[ox, oy, k, *b] += values[ox, oy, *b] * weights[k]`` where ``valid``; the tap adds nothing elsewhere."""
    v = values[:, :, None, ...]
    wk = weights.reshape((1, 1, -1) + (1,) * (values.ndim - 2))
    m = valid[:, :, None, ...]
    if is_float:
        return np.where(m, acc + v.astype(np.float64) * wk.astype(np.float64), acc)
    return acc + np.where(m, v.astype(np.int64) * wk.astype(np.int64), 0)


def reference_convolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, out_shape: tuple[int, ...],
                          pad: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
                          fmt: Format, fpp: tuple[int, int, int, int], saturate: bool = True,
                          nearest_even: bool = True, sample: bool = False) -> np.ndarray:
    """The seed's convolution: zero padding, taps ``dilation + 1`` apart, outputs ``stride`` apart."""
    extra = dilation if sample else (0, 0)
    kx, ky, channels, _ = w.shape
    ow, oh = out_shape[0], out_shape[1]
    if not fmt.is_float:
        _check_int64_room(x, w)
    acc = np.zeros(out_shape, np.float64 if fmt.is_float else np.int64)
    for c in range(channels):
        for my in range(ky):
            iy = np.arange(oh) * stride[1] - pad[1] + my * (dilation[1] + 1) + extra[1]
            for mx in range(kx):
                ix = np.arange(ow) * stride[0] - pad[0] + mx * (dilation[0] + 1) + extra[0]
                inside = ((ix >= 0) & (ix < x.shape[0]))[:, None] & ((iy >= 0) & (iy < x.shape[1]))[None, :]
                values = x[np.clip(ix, 0, x.shape[0] - 1)[:, None], np.clip(iy, 0, x.shape[1] - 1)[None, :], c]
                valid = np.broadcast_to(inside.reshape(inside.shape + (1,) * (values.ndim - 2)), values.shape)
                acc = _accumulate(acc, values, valid, w[mx, my, c], fmt.is_float)
    return _finish(acc, _bias_lookup(bias), fmt, fpp, saturate, nearest_even)


def upsampled_padded(x: np.ndarray, upscale: tuple[int, int], pad: tuple[int, int], kernel: tuple[int, int],
                     extra: tuple[int, int], sample: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(U, real)``: the seed's upsampled, padded input (W, H of it first) and where it holds a real sample."""
    lengths = []
    sources = []
    for axis in range(2):
        p = kernel[axis] - pad[axis] - 1  # may be negative: a crop
        n = (x.shape[axis] - 1) * upscale[axis] + 1 + 2 * p + extra[axis]
        source = []
        for t in range(max(n, 0)):
            s = t - p
            bound = s if sample else s // upscale[axis]  # the zero-inserted position, or the sample's index
            ok = s >= 0 and s % upscale[axis] == 0 and bound < x.shape[axis]
            source.append(s // upscale[axis] if ok else -1)
        lengths.append(max(n, 0))
        sources.append(np.array(source, dtype=np.int64))
    shape = (lengths[0], lengths[1]) + x.shape[2:]
    u = np.zeros(shape, x.dtype)
    real = np.zeros(shape, bool)
    for tx, sx in enumerate(sources[0]):
        for ty, sy in enumerate(sources[1]):
            if sx >= 0 and sy >= 0:
                u[tx, ty] = x[sx, sy]
                real[tx, ty] = True
    return u, real


def reference_deconvolution(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, pad: tuple[int, int],
                            upscale: tuple[int, int], extra: tuple[int, int], fmt: Format,
                            fpp: tuple[int, int, int, int], saturate: bool = True,
                            nearest_even: bool = True, sample: bool = False) -> np.ndarray:
    """The seed's deconvolution: ``out[ox, oy] = sum_m U[ox + mx, oy + my] * w[mx, my]`` (no kernel flip).

    ``bias``: None, (K,) or per output location (OW, OH, K)."""
    kx, ky, channels, k_out = w.shape
    ow = (x.shape[0] - 1) * upscale[0] - 2 * pad[0] + kx + extra[0]
    oh = (x.shape[1] - 1) * upscale[1] - 2 * pad[1] + ky + extra[1]
    u, real = upsampled_padded(x, upscale, pad, (kx, ky), extra, sample)
    assert u.shape[:2] == (ow + kx - 1, oh + ky - 1)
    if not fmt.is_float:
        _check_int64_room(x, w)
    acc = np.zeros((ow, oh, k_out) + x.shape[3:], np.float64 if fmt.is_float else np.int64)
    for c in range(channels):
        for my in range(ky):
            for mx in range(kx):
                values = u[mx:mx + ow, my:my + oh, c]
                acc = _accumulate(acc, values, real[mx:mx + ow, my:my + oh, c], w[mx, my, c], fmt.is_float)
    return _finish(acc, _bias_lookup(bias), fmt, fpp, saturate, nearest_even)
