"""Large float32 depthwise layers (``float_depthwise``) against the order of sums its module doc states.

The doc fixes the order: each output starts from its bias (``bias_last``: from +0.0) and adds its taps inside the
image in row order, each tap one fused multiply-add rounded to float32 (``bias_last``: then the bias, and a NaN
stored as 0x7FC00000 under a finite clamp); the clamp follows. The reference below is that chain written in
NumPy over the zero-free taps: each multiply-add computed in extended precision (``np.longdouble``, 64 mantissa
bits, where the product of two float32 values is exact) and rounded to float32 once, so its bits are the fused
multiply-add's. Channel counts are large and mostly not multiples of 16 (the partial vector and whole ones), maps
wider than a run of pixels, strides 1-3, asymmetric pads up to beyond the window, dilations, the 3- and 5-tap
rows the sliding runs take and other windows, and edge values (zeros, huge and tiny values, NaN, infinities).
Both vector widths must give the reference's bits.
"""
import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_depthwise as fdw

pytestmark = pytest.mark.skipif(np.finfo(np.longdouble).nmant < 63,
                                reason="needs an extended long double to round each multiply-add once")
RANGES = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


def fma_chain(x, w, bias, pads, strides, dilations, lo, hi, bias_last):
    """The layer (multiplier 1) as the documented chain of float32 fused multiply-adds, then the clamp."""
    n, h, wd, c = x.shape
    _, kh, kw, _ = w.shape
    left, right, top, bottom = pads
    (sw, sh), (dw, dh) = strides, dilations
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + left + right - (kw - 1) * dw - 1) // sw + 1
    acc = np.zeros((n, oh, ow, c), np.float32) if bias_last else np.broadcast_to(bias, (n, oh, ow, c)).copy()
    ys, xs = np.arange(oh) * sh - top, np.arange(ow) * sw - left
    for i in range(kh):
        for j in range(kw):
            y, xx = ys + i * dh, xs + j * dw
            inside = ((y >= 0) & (y < h))[:, None] & ((xx >= 0) & (xx < wd))[None, :]
            taps = x[:, np.clip(y, 0, h - 1)][:, :, np.clip(xx, 0, wd - 1)]
            with np.errstate(invalid="ignore", over="ignore"):
                fused = (taps.astype(np.longdouble) * w[0, i, j].astype(np.longdouble)
                         + acc.astype(np.longdouble)).astype(np.float32)
            acc = np.where(inside[None, :, :, None], fused, acc)
    if bias_last:
        with np.errstate(invalid="ignore", over="ignore"):
            acc = acc + bias
    with np.errstate(invalid="ignore"):
        out = np.where(acc < lo, np.float32(lo), np.where(acc > hi, np.float32(hi), acc)).astype(np.float32)
    if bias_last and (lo > -np.inf or hi < np.inf):
        out[np.isnan(out)] = np.uint32(0x7FC00000).view(np.float32)
    return out


def _values(rng, shape, edge):
    x = rng.standard_normal(shape).astype(np.float32)
    if edge:  # exact zeros, values from 2**-20 to 2**20, NaNs and infinities
        x.flat[rng.integers(0, x.size, max(1, x.size // 5))] = 0.0
        x *= np.float32(2.0) ** rng.integers(-20, 20, shape).astype(np.float32)
        x.flat[rng.integers(0, x.size, 2)] = np.nan
        x.flat[rng.integers(0, x.size, 2)] = (np.inf, -np.inf)
    return x


def _same_bits(got, want, canonical):
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), "NaN where the chain has none, or none where it has one"
    if canonical:
        assert np.all(got.view(np.uint32)[nan] == 0x7FC00000)
    differ = (got.view(np.uint32) != want.view(np.uint32)) & ~nan
    assert not differ.any(), f"{int(differ.sum())} outputs differ, first at {np.argwhere(differ)[0]}"


def _geometry(rng, case):
    """(input h, w), (kh, kw), strides (w, h), dilations (w, h), pads (l, r, t, b) with an output."""
    while True:
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        kh, kw = [(3, 3), (5, 5), (3, 5), (5, 3), (int(rng.integers(1, 8)), int(rng.integers(1, 8)))][case % 5]
        strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4))) if case % 3 == 0 else (case % 2 + 1,) * 2
        dilations = (int(rng.integers(1, 4)), int(rng.integers(1, 4))) if case % 7 == 3 else (1, 1)
        pads = tuple(int(p) for p in rng.integers(0, kw + 2, 4))
        oh = (h + pads[2] + pads[3] - (kh - 1) * dilations[1] - 1) // strides[1] + 1
        ow = (w + pads[0] + pads[1] - (kw - 1) * dilations[0] - 1) // strides[0] + 1
        if oh >= 1 and ow >= 1:
            return (h, w), (kh, kw), strides, dilations, pads


@pytest.mark.parametrize("case", range(36))
def test_large_layers_give_the_fused_chain_bits(case):
    rng = np.random.default_rng(27100 + case)
    (h, w), (kh, kw), strides, dilations, pads = _geometry(rng, case)
    bias_last = case % 4 == 1
    c = int(rng.choice([144, 160, 256, 512]) if bias_last else rng.choice([129, 200, 333, 384, 520, 1000, 1024, 1155]))
    if h * w * c > 600_000:  # keep the reference quick
        h = max(1, 600_000 // (w * c))
        pads = (pads[0], pads[1], min(pads[2], kh - 1), min(pads[3], kh - 1))
    n, activation = 1 + (case % 6 == 5), case % 4
    x, wt = _values(rng, (n, h, w, c), case % 3 == 1), _values(rng, (1, kh, kw, c), case % 9 == 4)
    bias = _values(rng, (c,), False)
    lo, hi = (-0.5, 2.0) if bias_last else RANGES[activation]
    kwargs = {"clamp": (lo, hi), "bias_last": True} if bias_last else {}
    if bias_last:
        dilations = (1, 1)
    want = fma_chain(x, wt, bias, pads, strides, dilations, lo, hi, bias_last)
    for lanes in (8, 16):
        got = np.full(want.shape, -7.0, np.float32)
        fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, got, pads, strides, 1, activation, lanes,
                                  dilations=dilations, **kwargs)()
        _same_bits(got, want, bias_last)


@pytest.mark.parametrize("size, c, k, stride", [(112, 32, 3, 1), (56, 144, 5, 2), (28, 240, 5, 1), (14, 672, 5, 2),
                                                (7, 1152, 5, 1), (7, 1155, 3, 1), (30, 200, 3, 2),
                                                (14, 512, 3, 1), (14, 512, 3, 2), (7, 1024, 3, 1), (64, 24, 3, 1),
                                                (28, 88, 5, 2)])
def test_network_shapes_give_the_fused_chain_bits(size, c, k, stride):
    # MobileNet and EfficientNet-B0 depthwise shapes (pads (k - 1) / 2), two of channels not in vectors, and
    # three whose taps' weights are spread (``float_depthwise._spread``), two on narrow vectors alone (``NARROW_BELOW``).
    rng = np.random.default_rng(size * c + k * 10 + stride)
    x, wt, bias = _values(rng, (1, size, size, c), True), _values(rng, (1, k, k, c), False), _values(rng, (c,), False)
    p = (k - 1) // 2
    want = fma_chain(x, wt, bias, (p, p, p, p), (stride, stride), (1, 1), 0.0, 6.0, False)
    for lanes in (8, 16):
        got = np.full(want.shape, -7.0, np.float32)
        fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, got, (p, p, p, p), (stride, stride), 1, 3,
                                  lanes)()
        _same_bits(got, want, False)
