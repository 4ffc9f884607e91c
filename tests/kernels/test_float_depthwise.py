"""The float32 depthwise kernel (``float_depthwise``) against plain float64 loops written from the layer's text.

``out[b, y, x, k*m + q] = act(bias[k*m + q] + sum over i, j of xpad[b, y*sh + i*dh, x*sw + j*dw, k] * w[i, j, k*m + q])``
with ``xpad`` the input between zero pads. The bound is docs/nnapi.md's: a sum of ``n`` products and a bias within
``(n + 3) * 2**-24 * S``, ``S`` the same sum over absolute values. Shapes, strides, asymmetric pads, multipliers,
dilations, channel counts (whole vectors and not), activations and edge values (zeros, huge and tiny values, NaN,
infinities) are drawn at random; both vector widths give the same bits, and so does the native entry.
"""
import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_depthwise as fdw

U = 2.0 ** -24
RANGES = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}
"""The fused activation codes (NONE, RELU, RELU1, RELU6) as the range they clamp to."""


def reference(x, w, bias, pads, strides, m, dilations, activation):
    """(the float64 result, the same sum over absolute values) by loops over output pixels and taps."""
    n, h, wd, c = x.shape
    _, kh, kw, units = w.shape
    left, right, top, bottom = pads
    (sw, sh), (dw, dh) = strides, dilations
    xp = np.zeros((n, h + top + bottom, wd + left + right, c))
    xp[:, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + left + right - (kw - 1) * dw - 1) // sw + 1
    w64 = w[0].astype(np.float64)
    out = np.empty((n, oh, ow, units))
    span = np.empty((n, oh, ow, units))
    for b in range(n):
        for y in range(oh):
            for xx in range(ow):
                total = bias.astype(np.float64).copy()
                size = np.abs(bias.astype(np.float64))
                for i in range(kh):
                    for j in range(kw):
                        v = np.repeat(xp[b, y * sh + i * dh, xx * sw + j * dw], m)  # channel k feeds k*m .. k*m+m-1
                        with np.errstate(invalid="ignore"):
                            total = total + v * w64[i, j]
                            size = size + np.abs(v * w64[i, j])
                out[b, y, xx], span[b, y, xx] = total, size
    lo, hi = RANGES[activation]
    with np.errstate(invalid="ignore"):
        out = np.where(out < lo, lo, np.where(out > hi, hi, out))  # NaN fails both tests and stays
    return out, span


def _values(rng, shape, edge):
    x = rng.standard_normal(shape).astype(np.float32)
    if edge:  # exact zeros, values from 2**-20 to 2**20, a NaN and infinities
        x.flat[rng.integers(0, x.size, max(1, x.size // 5))] = 0.0
        x *= np.float32(2.0) ** rng.integers(-20, 20, shape).astype(np.float32)
        x.flat[rng.integers(0, x.size)] = np.nan
        x.flat[rng.integers(0, x.size, 2)] = (np.inf, -np.inf)
    return x


def _geometry(rng, case):
    """(input h, w), kernel, strides (w, h), dilations (w, h), pads (l, r, t, b), output (h, w)."""
    while True:
        h, w = int(rng.integers(1, 16)), int(rng.integers(1, 16))
        kh, kw = [(3, 3), (5, 5), (int(rng.integers(1, 8)), int(rng.integers(1, 8)))][case % 3]
        strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        dilations = (1, 1) if case % 4 else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        pads = tuple(int(p) for p in rng.integers(0, 2 + 2 * dilations[0], 4))
        oh = (h + pads[2] + pads[3] - (kh - 1) * dilations[1] - 1) // strides[1] + 1
        ow = (w + pads[0] + pads[1] - (kw - 1) * dilations[0] - 1) // strides[0] + 1
        if oh >= 1 and ow >= 1:
            return (h, w), (kh, kw), strides, dilations, pads, (oh, ow)


def _check(got, want, span, taps):
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), "NaN where the reference has none, or none where it has one"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf])
    finite = ~(nan | inf)
    err = np.abs(got[finite].astype(np.float64) - want[finite])
    bound = (taps + 3) * U * span[finite]
    assert np.all(err <= bound), f"error {err.max()} above the bound"


@pytest.mark.parametrize("case", range(40))
def test_depthwise_matches_float64_loops(case):
    rng = np.random.default_rng(9100 + case)
    (h, w), (kh, kw), strides, dilations, pads, _ = _geometry(rng, case)
    m = 1 if case % 5 else int(rng.integers(2, 4))
    c = int(rng.choice([1, 3, 8, 16, 24, 28, 40, 42, int(rng.integers(1, 300))]))
    n, activation, edge = int(rng.integers(1, 3)), case % 4, case % 3 == 1
    x, wt = _values(rng, (n, h, w, c), edge), _values(rng, (1, kh, kw, c * m), False)
    bias = _values(rng, (c * m,), False)
    want, span = reference(x, wt, bias, pads, strides, m, dilations, activation)
    results = []
    for lanes in (8, 16):
        got = np.full(want.shape, -7.0, np.float32)
        fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, got, pads, strides, m, activation, lanes,
                                  dilations=dilations)()
        _check(got, want, span, kh * kw)
        results.append(got)
    np.testing.assert_array_equal(results[1], results[0])  # one order of the sums whatever the width


@pytest.mark.parametrize("case", range(12))
def test_the_native_entry_gives_the_bound_calls_bits(case):
    from openvx_nn.kernels.support import native
    rng = np.random.default_rng(9300 + case)
    (h, w), (kh, kw), strides, dilations, pads, (oh, ow) = _geometry(rng, case)
    c = 8 * int(rng.integers(1, 40)) if case % 2 else int(rng.integers(1, 90))
    x, wt, bias = _values(rng, (1, h, w, c), case % 3 == 0), _values(rng, (1, kh, kw, c), False), \
        _values(rng, (c,), False)
    bias_last = case % 2 == 1
    kwargs = {"clamp": (-0.5, 2.0), "bias_last": True} if bias_last else {}
    bound = np.full((1, oh, ow, c), -7.0, np.float32)
    fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, bound, pads, strides, 1, 3, dilations=dilations,
                              **kwargs)()
    ran = np.full_like(bound, -7.0)
    entry = fdw.native_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, ran, pads, strides, 1, 3,
                                        dilations=dilations, **kwargs)
    native.run(entry)
    np.testing.assert_array_equal(ran.view(np.uint32), bound.view(np.uint32))
    want, span = reference(x, wt, bias, pads, strides, 1, dilations, 0)
    lo, hi = (-0.5, 2.0) if bias_last else (0.0, 6.0)
    with np.errstate(invalid="ignore"):
        want = np.where(want < lo, lo, np.where(want > hi, hi, want))
    _check(bound, want, span, kh * kw)


@pytest.mark.parametrize("size, c, k, stride, dilation", [(7, 1152, 5, 1, 1), (14, 72, 5, 2, 1), (9, 40, 3, 1, 2),
                                                          (20, 24, 3, 2, 3), (6, 130, 5, 1, 2)])
def test_model_shapes_with_same_padding(size, c, k, stride, dilation):
    # Layers of MobileNet v3 / EfficientNet shape: many channel blocks, maps smaller than a run of pixels.
    rng = np.random.default_rng(size * c + k)
    x, wt, bias = _values(rng, (1, size, size, c), False), _values(rng, (1, k, k, c), False), \
        _values(rng, (c,), False)
    reach = (k - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + reach - size, 0)
    pads = (total // 2, total - total // 2, total // 2, total - total // 2)
    want, span = reference(x, wt, bias, pads, (stride, stride), 1, (dilation, dilation), 3)
    got = np.full(want.shape, -7.0, np.float32)
    fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), bias, got, pads, (stride, stride), 1, 3,
                              dilations=(dilation, dilation))()
    _check(got, want, span, k * k)


def test_a_dilation_below_one_is_refused():
    x, wt = np.zeros((1, 5, 5, 8), np.float32), np.zeros((1, 3, 3, 8), np.float32)
    with pytest.raises(ValueError, match="dilations"):
        fdw.bind_depthwise_conv2d(x, fdw.pack_depthwise(wt), np.zeros(8, np.float32), np.empty((1, 3, 3, 8),
                                  np.float32), (0, 0, 0, 0), (1, 1), 1, 0, dilations=(0, 1))
