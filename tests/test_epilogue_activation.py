"""The float engine's activation epilogue (``kernels/frontend/epilogue_activation``): a convolution computing a PRELU,
swish, hard swish, logistic or hard sigmoid after its bias (and residual) gives the bytes of the convolution and
the activation's own kernel run apart, and agrees with a plain NumPy reference written from the definitions."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from openvx_nn.kernels.frontend import epilogue_activation as ea
from openvx_nn.kernels.frontend import float_activation as fa
from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.frontend import float_elementwise as few
from openvx_nn.kernels.support import native

FUNCTIONS = ("prelu", "prelu_scalar", "swish", "hard_swish", "logistic", "hard_sigmoid")
EDGES = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e30, -1e30, 88.0, -88.0, 104.0, -104.0, 200.0, -200.0,
                  3.0, -3.0, 1e-40, -1e-40], np.float32)


def _reference_conv(x, w, bias, pads, strides):
    """float64 NHWC convolution from its definition: out[n, y, x, o] = bias[o] + sum x[.., iy, ix, i] w[o, ky, kx, i]."""
    left, right, top, bottom = pads
    sw, sh = strides
    n, h, wd, c = x.shape
    o, kh, kw, _ = w.shape
    padded = np.zeros((n, h + top + bottom, wd + left + right, c))
    padded[:, top:top + h, left:left + wd] = x
    oh, ow = (h + top + bottom - kh) // sh + 1, (wd + left + right - kw) // sw + 1
    out = np.empty((n, oh, ow, o))
    for y in range(oh):
        for xx in range(ow):
            window = padded[:, y * sh:y * sh + kh, xx * sw:xx * sw + kw, :]
            out[:, y, xx, :] = np.tensordot(window, w.astype(np.float64), axes=([1, 2, 3], [1, 2, 3])) + bias
    return out


def _reference_activation(v, function, alpha, a, b):
    """float64 definitions: PRELU ``v if v >= 0 else alpha * v``, ``v * sigmoid(v)``, ``v * min(max(a v + b, 0), 1)``..."""
    with np.errstate(all="ignore"):
        if function.startswith("prelu"):
            return np.where(v >= 0, v, alpha * v)
        sig = 1.0 / (1.0 + np.exp(-v))
        hard = np.minimum(np.maximum(a * v + b, 0.0), 1.0)
        return {"swish": v * sig, "logistic": sig, "hard_swish": v * hard, "hard_sigmoid": hard}[function]


def _setup(rng, function, units):
    a, b = (1.0 / 6.0, 0.5) if function.startswith("hard") else (1.0, 1.0)
    if function == "prelu":
        alpha = rng.uniform(-1, 1, units).astype(np.float32)
        return ea.epilogue_of("prelu", units, alpha), alpha, a, b
    if function == "prelu_scalar":
        alpha = np.float32(rng.uniform(0.01, 0.5))
        return ea.epilogue_of("prelu", units, np.array([alpha])), alpha, a, b
    return ea.epilogue_of(function, units, None, a, b), None, a, b


def _apart(conv_out, function, alpha, a, b):
    """The activation's own kernel on the convolution's output (the node that the epilogue replaces)."""
    out = np.empty_like(conv_out)
    if function.startswith("prelu"):
        few.binary(few.PRELU, conv_out, np.asarray(alpha, np.float32).reshape(-1), out, 0)
    else:
        fa.apply(conv_out, out, function, a, b)
    return out


def _case(rng, function, residual: bool, native_entry: bool, edges: bool):
    n = int(rng.integers(1, 3))
    h, w = (int(v) for v in rng.integers(1, 12, 2))
    c, units = int(rng.integers(1, 40)), int(rng.integers(1, 70))
    kh, kw = (int(v) for v in rng.integers(1, 4, 2))
    strides = tuple(int(v) for v in rng.integers(1, 3, 2))
    pads = tuple(int(v) for v in rng.integers(0, 2, 4))
    kh, kw = min(kh, h + pads[2] + pads[3]), min(kw, w + pads[0] + pads[1])
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    wt = (rng.standard_normal((units, kh, kw, c)) * 0.5).astype(np.float32)
    bias = (rng.standard_normal(units) * 3).astype(np.float32)
    oh, ow = (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1
    res = None
    if residual:
        res = (rng.standard_normal((n, oh, ow, units)) * 4).astype(np.float32)
        if edges:
            flat = res.reshape(-1)
            picks = rng.integers(0, flat.size, min(flat.size, 3 * EDGES.size))
            flat[picks] = np.resize(EDGES, picks.size)
    epilogue, alpha, a, b = _setup(rng, function, units)
    wp = fconv.pack_conv(wt)
    plain = np.empty((n, oh, ow, units), np.float32)
    fconv.conv2d(x, wp, bias, plain, pads, strides, 0, res)
    fused = np.full_like(plain, 7.0)
    if native_entry:
        entry = fconv.native_conv2d(x, wp, bias, fused, pads, strides, 0, res, epilogue)
        assert entry is not None
        native.run(entry)
    else:
        fconv.conv2d(x, wp, bias, fused, pads, strides, 0, res, epilogue)
    return plain, fused, (x, wt, bias, pads, strides, res, alpha, a, b)


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("native_entry", [False, True])
def test_epilogue_is_the_activation_run_apart(function, residual, native_entry):
    rng = np.random.default_rng(zlib.crc32(repr((function, residual, native_entry)).encode()))
    for trial in range(6):
        plain, fused, (x, wt, bias, pads, strides, res, alpha, a, b) = _case(rng, function, residual, native_entry,
                                                                            edges=trial % 2 == 1)
        apart = _apart(plain, function, alpha, a, b)
        nan = np.isnan(apart)
        assert np.array_equal(nan, np.isnan(fused))
        assert np.array_equal(apart[~nan].view(np.int32), fused[~nan].view(np.int32)), (function, trial)
        if trial % 2 == 0:  # finite values: the definitions in float64
            ref = _reference_conv(x, wt, bias, pads, strides)
            if res is not None:
                ref = ref + res
            ref = _reference_activation(ref, function, np.float64(np.asarray(alpha, np.float64))
                                        if alpha is not None else None, a, b)
            scale = _reference_activation(np.abs(_reference_conv(np.abs(x), np.abs(wt), np.abs(bias), pads, strides))
                                          + (0 if res is None else np.abs(res)), "prelu", 1.0, a, b)
            assert np.all(np.abs(fused - ref) <= 1e-5 * scale + 1e-6), function


def test_edge_values_through_each_function():
    """-0, NaN, infinities and magnitudes where the sigmoid saturates, fed as the residual of a 1x1 layer whose
    weights are zero: the epilogue sees exactly these values; each result is the activation's own."""
    units = 16
    res = np.resize(EDGES, 2 * 3 * units).reshape(1, 2, 3, units)
    x = np.ones((1, 2, 3, 4), np.float32)
    wp = fconv.pack_conv(np.zeros((units, 1, 1, 4), np.float32))
    bias = np.zeros(units, np.float32)
    for function in FUNCTIONS:
        epilogue, alpha, a, b = _setup(np.random.default_rng(3), function, units)
        fused = np.empty_like(res)
        fconv.conv2d(x, wp, bias, fused, (0, 0, 0, 0), (1, 1), 0, res, epilogue)
        apart = _apart(0.0 + res, function, alpha, a, b)  # +0.0 sum: the engine's -0.0 + +0.0 is +0.0
        assert np.array_equal(np.isnan(apart), np.isnan(fused))
        keep = ~np.isnan(apart)
        assert np.array_equal(apart[keep].view(np.int32), fused[keep].view(np.int32)), function
        if function in ("swish", "logistic"):
            assert np.all(np.isfinite(fused[np.isfinite(res)]))


def test_bad_epilogues_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        ea.epilogue_of("prelu", 8, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="epilogue"):
        ea.epilogue_of("exp", 8)
    with pytest.raises(ValueError, match="unknown"):
        ea.epilogue_of("gelu", 8)
    x = np.ones((1, 2, 2, 3), np.float32)
    out = np.empty((1, 2, 2, 8), np.float32)
    with pytest.raises(ValueError, match="per channel"):
        fconv.conv2d(x, fconv.pack_conv(np.ones((8, 1, 1, 3), np.float32)), np.zeros(8, np.float32), out,
                     (0, 0, 0, 0), (1, 1), 0, None, (ea.PRELU, np.ones(4, np.float32), 1.0, 1.0))


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("native_entry", [False, True])
def test_depthwise_epilogue_is_the_activation_run_apart(function, native_entry):
    """The depthwise kernel applies the same epilogue to each output row once written: 3x3 windows inside the
    image (the register kernel), edges and other windows (tap by tap), multipliers (the plain loop)."""
    from openvx_nn.kernels.frontend import float_depthwise as fdw
    rng = np.random.default_rng(zlib.crc32(repr((function, native_entry, "dw")).encode()))
    for trial in range(6):
        n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 12)), int(rng.integers(1, 12))
        c, m = 8 * int(rng.integers(1, 5)), 1 if trial % 3 else int(rng.integers(1, 3))
        c = c if m == 1 else int(rng.integers(1, 12))
        kh, kw = (3, 3) if trial % 2 == 0 else (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        pads = (kw // 2, (kw - 1) // 2, kh // 2, (kh - 1) // 2)
        strides = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        units = c * m
        x = (rng.standard_normal((n, h, w, c)) * 3).astype(np.float32)
        if trial == 5:
            flat = x.reshape(-1)
            flat[rng.integers(0, flat.size, EDGES.size)] = EDGES
        wt = rng.standard_normal((1, kh, kw, units)).astype(np.float32)
        bias = (rng.standard_normal(units) * 3).astype(np.float32)
        oh, ow = (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1
        epilogue, alpha, a, b = _setup(rng, function, units)
        wp = fdw.pack_depthwise(wt)
        plain = np.empty((n, oh, ow, units), np.float32)
        fdw.depthwise_conv2d(x, wp, bias, plain, pads, strides, m, 0)
        fused = np.full_like(plain, 7.0)
        if native_entry:
            entry = fdw.native_depthwise_conv2d(x, wp, bias, fused, pads, strides, m, 0, epilogue=epilogue)
            native.run(entry)
        else:
            fdw.bind_depthwise_conv2d(x, wp, bias, fused, pads, strides, m, 0, epilogue=epilogue)()
        apart = _apart(plain, function, alpha, a, b)
        nan = np.isnan(apart)
        assert np.array_equal(nan, np.isnan(fused))
        assert np.array_equal(apart[~nan].view(np.int32), fused[~nan].view(np.int32)), (function, trial)


def test_prelu_span_over_any_channels_and_rows():
    """``activate_span``'s PRELU (16 lanes at a time, then one by one) on spans of any rows and channels, edge
    values included: each value inside the span is ``v if v >= 0 else alpha * v`` in float32, every other byte
    untouched."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        pixels, units = int(rng.integers(1, 20)), int(rng.integers(1, 100))
        values = (rng.standard_normal((pixels, units)) * 5).astype(np.float32)
        flat = values.reshape(-1)
        picks = rng.integers(0, flat.size, min(flat.size, EDGES.size))
        flat[picks] = EDGES[:picks.size]
        alpha = rng.uniform(-2, 2, units).astype(np.float32)
        alpha[rng.integers(0, units)] = np.float32(np.nan) if trial % 7 == 0 else alpha[0]
        p0, c0 = int(rng.integers(0, pixels)), int(rng.integers(0, units))
        n_rows, c1 = int(rng.integers(0, pixels - p0 + 1)), int(rng.integers(c0, units + 1))
        expect = values.copy()
        span = expect[p0:p0 + n_rows, c0:c1]
        with np.errstate(invalid="ignore"):
            expect[p0:p0 + n_rows, c0:c1] = np.where(span >= 0, span, alpha[c0:c1] * span)
        got = values.copy()
        ea.activate_span(got, got.reshape(-1), p0, n_rows, c0, c1, ea.PRELU, alpha, 1.0, 1.0)
        assert np.array_equal(expect.view(np.int32), got.view(np.int32)), (trial, p0, n_rows, c0, c1)


@pytest.mark.parametrize("shape", [(2, 2, 64, 128), (2, 2, 128, 72), (4, 4, 64, 128), (1, 3, 24, 100),
                                   (8, 8, 32, 200)])
def test_prelu_epilogue_on_panels_of_channels(shape):
    """Layers of few pixels, whose work units split the output channels into panels (``work_units``): the PRELU
    on each tile's panel gives the bytes of the convolution and PRELU run apart, with and without a residual."""
    h, w, c, units = shape
    rng = np.random.default_rng(zlib.crc32(repr(shape).encode()))
    x = rng.standard_normal((1, h, w, c)).astype(np.float32)
    wt = (rng.standard_normal((units, 1, 1, c)) * 0.5).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    wp = fconv.pack_conv(wt, pixels=h * w)
    panel, _ = fconv.work_units(wp, h * w)
    assert panel < wp.shape[0]  # the case this test is for
    alpha = rng.uniform(-1, 1, units).astype(np.float32)
    for res in (None, (rng.standard_normal((1, h, w, units)) * 3).astype(np.float32)):
        plain = np.empty((1, h, w, units), np.float32)
        fconv.conv2d(x, wp, bias, plain, (0, 0, 0, 0), (1, 1), 0, res)
        fused = np.full_like(plain, 7.0)
        native.run(fconv.native_conv2d(x, wp, bias, fused, (0, 0, 0, 0), (1, 1), 0, res,
                                       ea.epilogue_of("prelu", units, alpha)))
        apart = _apart(plain, "prelu", alpha, 1.0, 1.0)
        assert np.array_equal(apart.view(np.int32), fused.view(np.int32))
