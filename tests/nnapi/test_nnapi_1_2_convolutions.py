"""API level 29's convolutions against plain loops written from the Android 10 ``NeuralNetworks.h``: GROUPED_CONV_2D,
TRANSPOSE_CONV_2D, and CONV_2D and DEPTHWISE_CONV_2D with the NCHW-layout flag and dilation, in float32 and float16
(computed in float32, each output rounded once to float16), over randomized shapes, both padding forms, both
layouts and every fused activation; uint8 CONV_2D and DEPTHWISE_CONV_2D in NCHW and with per-channel filters, uint8
GROUPED_CONV_2D in NHWC (the other uint8 forms: ``test_nnapi_1_2_quant8_convolutions``)."""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, I32T, Q8, Out, Tensor, boolean, collect_garbage, i32, run, run_filter_op  # noqa: F401

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType
ACT = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}
SAME, VALID = 1, 2


# -- references: the header's sums, in float64, on NHWC arrays ------------------------------------------------------

def conv_reference(x, filt, bias, pads, strides, dilations, groups, activation, depthwise=False):
    """out[b, i, j, o] = bias[o] + sum over (ky, kx, c of o's group) of
    x[b, i*sh - top + ky*dh, j*sw - left + kx*dw, c] * filter[o, ky, kx, c], zeros outside the input; depthwise:
    output channel c*m + k sums input channel c with filter[0, ky, kx, c*m + k]."""
    left, right, top, bottom = pads
    sw, sh = strides
    dw, dh = dilations
    x = np.asarray(x, np.float64)
    filt = np.asarray(filt, np.float64)
    n, h, w, c = x.shape
    if depthwise:
        _, kh, kw, o = filt.shape
    else:
        o, kh, kw, cg = filt.shape
    out_h = (h + top + bottom - ((kh - 1) * dh + 1)) // sh + 1
    out_w = (w + left + right - ((kw - 1) * dw + 1)) // sw + 1
    out = np.zeros((n, out_h, out_w, o))
    for b in range(n):
        for i in range(out_h):
            for j in range(out_w):
                for oc in range(o):
                    total = bias[oc]
                    for ky in range(kh):
                        y = i * sh - top + ky * dh
                        for kx in range(kw):
                            xx = j * sw - left + kx * dw
                            if not (0 <= y < h and 0 <= xx < w):
                                continue
                            if depthwise:
                                total += x[b, y, xx, oc // (o // c)] * filt[0, ky, kx, oc]
                            else:
                                g = oc // (o // groups)
                                total += np.dot(x[b, y, xx, g * cg:(g + 1) * cg], filt[oc, ky, kx])
                    out[b, i, j, oc] = total
    low, high = ACT[activation]
    return np.clip(out, low, high)


def transposed_reference(x, filt, bias, top, left, strides, out_hw, activation):
    """Every input pixel (iy, ix) of channel c adds x * filter[o, ky, kx, c] to output (iy*sh - top + ky,
    ix*sw - left + kx) of every channel o; positions outside the output are dropped; then the bias."""
    sw, sh = strides
    x = np.asarray(x, np.float64)
    filt = np.asarray(filt, np.float64)
    n, h, w, _ = x.shape
    o, kh, kw, _ = filt.shape
    out = np.zeros((n, *out_hw, o)) + np.asarray(bias, np.float64)
    for b in range(n):
        for iy in range(h):
            for ix in range(w):
                for ky in range(kh):
                    for kx in range(kw):
                        y, xx = iy * sh - top + ky, ix * sw - left + kx
                        if 0 <= y < out_hw[0] and 0 <= xx < out_hw[1]:
                            out[b, y, xx] += filt[:, ky, kx] @ x[b, iy, ix]
    low, high = ACT[activation]
    return np.clip(out, low, high)


def same_padding(size, kernel, stride):
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


# -- running ----------------------------------------------------------------------------------------------------------

def to_layout(a, nchw):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2)) if nchw else a


def check(got, want, dtype, nchw):
    want = to_layout(want, nchw)
    if dtype == np.float16:
        assert got.dtype == np.float16
        rounded = want.astype(np.float16).astype(np.float64)
        step = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
        # float32 sums rounded once to float16: the float64 result's rounding, or (on a near-tie) the next step
        assert (np.abs(got.astype(np.float64) - rounded) <= step).all()
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def data(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


KINDS = {np.float32: F32T, np.float16: F16T}
DTYPES = [np.float32, np.float16]
CASES = [(seed, dtype, nchw) for seed in range(4) for dtype in DTYPES for nchw in (False, True)]
IDS = [f"seed{s}-{np.dtype(d).name}-{'nchw' if n else 'nhwc'}" for s, d, n in CASES]


@pytest.mark.parametrize("seed, dtype, nchw", CASES, ids=IDS)
def test_grouped_conv_2d_explicit_and_implicit(seed, dtype, nchw):
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 4))
    cg, og = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(3, 9)), int(rng.integers(3, 9))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = int(rng.integers(0, 4))
    x = data(rng, (n, h, w, groups * cg), dtype)
    filt = data(rng, (groups * og, kh, kw, cg), dtype)
    bias = data(rng, (groups * og,), dtype)
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))
    want = conv_reference(x, filt, bias, pads, (sw, sh), (1, 1), groups, act)
    head = [Tensor(to_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True)]
    tail = [i32(sw), i32(sh), i32(groups), i32(act), boolean(nchw)]
    got, = run(OP.GROUPED_CONV_2D, head + [i32(p) for p in pads] + tail,
               [Out(KINDS[dtype], to_layout(want, nchw).shape)])
    check(got, want, dtype, nchw)
    for scheme in (SAME, VALID):
        if scheme == SAME:
            top, bottom = same_padding(h, kh, sh)
            left, right = same_padding(w, kw, sw)
        else:
            top = bottom = left = right = 0
        want = conv_reference(x, filt, bias, (left, right, top, bottom), (sw, sh), (1, 1), groups, act)
        got, = run(OP.GROUPED_CONV_2D, head + [i32(scheme)] + tail, [Out(KINDS[dtype], to_layout(want, nchw).shape)])
        check(got, want, dtype, nchw)


@pytest.mark.parametrize("seed, dtype, nchw", CASES, ids=IDS)
def test_conv_2d_with_layout_and_dilation(seed, dtype, nchw):
    rng = np.random.default_rng(10 + seed)
    n, h, w, c, o = 1, int(rng.integers(4, 10)), int(rng.integers(4, 10)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dw, dh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = int(rng.integers(0, 4))
    x, filt, bias = data(rng, (n, h, w, c), dtype), data(rng, (o, kh, kw, c), dtype), data(rng, (o,), dtype)
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))
    head = [Tensor(to_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True)]
    want = conv_reference(x, filt, bias, pads, (sw, sh), (dw, dh), 1, act)
    out = [Out(KINDS[dtype], to_layout(want, nchw).shape)]
    got, = run(OP.CONV_2D, head + [i32(p) for p in pads] + [i32(sw), i32(sh), i32(act), boolean(nchw), i32(dw),
                                                             i32(dh)], out)
    check(got, want, dtype, nchw)
    top, bottom = same_padding(h, (kh - 1) * dh + 1, sh)
    left, right = same_padding(w, (kw - 1) * dw + 1, sw)
    want = conv_reference(x, filt, bias, (left, right, top, bottom), (sw, sh), (dw, dh), 1, act)
    got, = run(OP.CONV_2D, head + [i32(SAME), i32(sw), i32(sh), i32(act), boolean(nchw), i32(dw), i32(dh)],
               [Out(KINDS[dtype], to_layout(want, nchw).shape)])
    check(got, want, dtype, nchw)
    if dw == dh == 1:  # the layout flag alone
        got, = run(OP.CONV_2D, head + [i32(SAME), i32(sw), i32(sh), i32(act), boolean(nchw)],
                   [Out(KINDS[dtype], to_layout(want, nchw).shape)])
        check(got, want, dtype, nchw)


@pytest.mark.parametrize("seed", range(4))
def test_a_dilated_float32_conv_2d_in_nhwc_runs_on_the_float_engine_with_its_dilation(seed, monkeypatch):
    # the one float32 convolution engine (float_convolution) takes the dilation: its calls are recorded
    from openvx_nn.kernels.frontend import float_convolution as fconv
    seen = []

    def spying(real):
        def spy(*args, **kwargs):
            seen.append(tuple(kwargs.get("dilations", (1, 1))))
            return real(*args, **kwargs)
        return spy
    for name in ("bind_conv2d", "native_conv2d"):
        monkeypatch.setattr(fconv, name, spying(getattr(fconv, name)))
    rng = np.random.default_rng(40 + seed)
    h, w, c, o = int(rng.integers(6, 20)), int(rng.integers(6, 20)), int(rng.integers(1, 40)), int(rng.integers(1, 70))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dw, dh = int(rng.integers(1, 5)), int(rng.integers(2, 5))
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = seed % 4
    x, filt, bias = data(rng, (2, h, w, c), np.float32), data(rng, (o, kh, kw, c), np.float32), \
        data(rng, (o,), np.float32)
    top, bottom = same_padding(h, (kh - 1) * dh + 1, sh)
    left, right = same_padding(w, (kw - 1) * dw + 1, sw)
    want = conv_reference(x, filt, bias, (left, right, top, bottom), (sw, sh), (dw, dh), 1, act)
    head = [Tensor(x), Tensor(filt, const=True), Tensor(bias, const=True)]
    got, = run(OP.CONV_2D, head + [i32(SAME), i32(sw), i32(sh), i32(act), boolean(False), i32(dw), i32(dh)],
               [Out(F32T, want.shape)])
    assert seen and set(seen) == {(dw, dh)}, seen
    scale = conv_reference(np.abs(x), np.abs(filt), np.abs(bias), (left, right, top, bottom), (sw, sh), (dw, dh), 1, 0)
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-30)


@pytest.mark.parametrize("seed", range(4))
def test_a_dilated_float32_depthwise_conv_2d_in_nhwc_runs_on_the_depthwise_kernel_with_its_dilation(seed,
                                                                                                  monkeypatch):
    # the depthwise kernel (float_depthwise) takes the dilation: its calls are recorded
    from openvx_nn.kernels.frontend import float_depthwise as fdepthwise
    seen = []

    def spying(real):
        def spy(*args, **kwargs):
            seen.append(tuple(kwargs.get("dilations", (1, 1))))
            return real(*args, **kwargs)
        return spy
    for name in ("bind_depthwise_conv2d", "native_depthwise_conv2d"):
        monkeypatch.setattr(fdepthwise, name, spying(getattr(fdepthwise, name)))
    rng = np.random.default_rng(60 + seed)
    h, w, c, m = int(rng.integers(6, 20)), int(rng.integers(6, 20)), int(rng.integers(1, 40)), 1 + seed % 2
    kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    dw, dh = int(rng.integers(1, 5)), int(rng.integers(2, 5))
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = seed % 4
    x, filt, bias = data(rng, (2, h, w, c), np.float32), data(rng, (1, kh, kw, c * m), np.float32), \
        data(rng, (c * m,), np.float32)
    top, bottom = same_padding(h, (kh - 1) * dh + 1, sh)
    left, right = same_padding(w, (kw - 1) * dw + 1, sw)
    pads = (left, right, top, bottom)
    want = conv_reference(x, filt, bias, pads, (sw, sh), (dw, dh), c, act, depthwise=True)
    head = [Tensor(x), Tensor(filt, const=True), Tensor(bias, const=True)]
    got, = run(OP.DEPTHWISE_CONV_2D, head + [i32(SAME), i32(sw), i32(sh), i32(m), i32(act), boolean(False), i32(dw),
                                             i32(dh)], [Out(F32T, want.shape)])
    assert seen and set(seen) == {(dw, dh)}, seen
    scale = conv_reference(np.abs(x), np.abs(filt), np.abs(bias), pads, (sw, sh), (dw, dh), c, 0, depthwise=True)
    assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-30)


@pytest.mark.parametrize("seed, dtype, nchw", CASES, ids=IDS)
def test_depthwise_conv_2d_with_layout_and_dilation(seed, dtype, nchw):
    rng = np.random.default_rng(20 + seed)
    n, h, w, c, m = int(rng.integers(1, 3)), int(rng.integers(4, 9)), int(rng.integers(4, 9)), \
        int(rng.integers(1, 5)), int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    dw, dh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = int(rng.integers(0, 4))
    x, filt, bias = data(rng, (n, h, w, c), dtype), data(rng, (1, kh, kw, c * m), dtype), data(rng, (c * m,), dtype)
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))
    head = [Tensor(to_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True)]
    want = conv_reference(x, filt, bias, pads, (sw, sh), (dw, dh), c, act, depthwise=True)
    got, = run(OP.DEPTHWISE_CONV_2D, head + [i32(p) for p in pads] + [i32(sw), i32(sh), i32(m), i32(act),
                                                                       boolean(nchw), i32(dw), i32(dh)],
               [Out(KINDS[dtype], to_layout(want, nchw).shape)])
    check(got, want, dtype, nchw)
    want = conv_reference(x, filt, bias, (0, 0, 0, 0), (sw, sh), (1, 1), c, act, depthwise=True)
    got, = run(OP.DEPTHWISE_CONV_2D, head + [i32(VALID), i32(sw), i32(sh), i32(m), i32(act), boolean(nchw)],
               [Out(KINDS[dtype], to_layout(want, nchw).shape)])
    check(got, want, dtype, nchw)


@pytest.mark.parametrize("seed, dtype, nchw", CASES, ids=IDS)
def test_transpose_conv_2d_explicit_and_with_output_shape(seed, dtype, nchw):
    rng = np.random.default_rng(30 + seed)
    n, h, w, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), \
        int(rng.integers(1, 4)), int(rng.integers(1, 4))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sw, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    act = int(rng.integers(0, 4))
    x, filt, bias = data(rng, (n, h, w, c), dtype), data(rng, (o, kh, kw, c), dtype), data(rng, (o,), dtype)
    head = [Tensor(to_layout(x, nchw)), Tensor(filt, const=True), Tensor(bias, const=True)]
    full_h, full_w = (h - 1) * sh + kh, (w - 1) * sw + kw
    left, right = int(rng.integers(0, min(2, full_w - 1) + 1)), 0
    top, bottom = 0, int(rng.integers(0, min(2, full_h - 1) + 1))
    out_hw = (full_h - top - bottom, full_w - left - right)
    want = transposed_reference(x, filt, bias, top, left, (sw, sh), out_hw, act)
    got, = run(OP.TRANSPOSE_CONV_2D, head + [i32(v) for v in (left, right, top, bottom, sw, sh, act)] + [boolean(nchw)],
               [Out(KINDS[dtype], to_layout(want, nchw).shape)])
    check(got, want, dtype, nchw)
    for scheme in (SAME, VALID):
        out_hw = (h * sh, w * sw) if scheme == SAME else (full_h, full_w)
        shape = to_layout(np.zeros((n, *out_hw, o)), nchw).shape
        pad_top = max(full_h - out_hw[0], 0) // 2 if scheme == SAME else 0
        pad_left = max(full_w - out_hw[1], 0) // 2 if scheme == SAME else 0
        want = transposed_reference(x, filt, bias, pad_top, pad_left, (sw, sh), out_hw, act)
        got, = run(OP.TRANSPOSE_CONV_2D, head + [Tensor(np.asarray(shape, np.int32), const=True), i32(scheme),
                                                 i32(sw), i32(sh), i32(act), boolean(nchw)],
                   [Out(KINDS[dtype], shape)])
        check(got, want, dtype, nchw)


def test_a_written_filter_is_seen_by_the_next_execution():
    """The filter is rearranged at bind: a model input filter changes between executions."""
    rng = np.random.default_rng(5)
    x, bias = data(rng, (1, 4, 4, 4), np.float32), np.zeros(4, np.float32)
    for _ in range(2):
        filt = data(rng, (4, 3, 3, 2), np.float32)
        got, = run(OP.GROUPED_CONV_2D, [Tensor(x), Tensor(filt), Tensor(bias, const=True), i32(SAME), i32(1), i32(1),
                                        i32(2), i32(0), boolean(False)], [Out(F32T, (1, 4, 4, 4))])
        check(got, conv_reference(x, filt, bias, (1, 1, 1, 1), (1, 1), (1, 1), 2, 0), np.float32, False)


# -- uint8 -------------------------------------------------------------------------------------------------------------

def _per_channel_run(op, x, filt, scales, bias, tail, out_shape, out_quant, nchw):
    return run_filter_op(op, x, (0.5, 100), filt, scales, 0, 3 if op == OP.DEPTHWISE_CONV_2D else 0, bias, 0.0,
                         tail + [(T.BOOL, nchw)], out_shape, out_quant)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_a_per_channel_filter_requantizes_each_channel_by_its_scale(depthwise, nchw, seed):
    """acc[o] = bias[o] + sum (x - 100) * q_filter (exact integers); out = round(acc * 0.5 * scale[o] / s_out) + zo,
    clamped, within 1 of the real-valued rounding (NNAPI's multiplier is a 31-bit approximation)."""
    rng = np.random.default_rng(seed)
    n, h, w, c = int(rng.integers(1, 3)), int(rng.integers(3, 7)), int(rng.integers(3, 7)), int(rng.integers(1, 4))
    kh, kw, act = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(0, 4))
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    if depthwise:
        mult = int(rng.integers(1, 3))
        filt = rng.integers(-127, 128, (1, kh, kw, c * mult), dtype=np.int8)
        o = c * mult
    else:
        o = int(rng.integers(1, 5))
        filt = rng.integers(-127, 128, (o, kh, kw, c), dtype=np.int8)
    scales = [float(v) for v in rng.uniform(0.001, 0.02, o).astype(np.float32)]
    bias = rng.integers(-2000, 2000, o).astype(np.int32)
    acc = conv_reference(x.astype(np.float64) - 100, filt, bias, (0, 1, 1, 0), (1, 1), (1, 1), 1, 0,
                         depthwise=depthwise)
    out_scale, out_zero = 0.05, 120
    real = acc * 0.5 * np.asarray(scales, np.float64) / out_scale
    low, high = {0: (0, 255), 1: (120, 255), 2: (100, 140), 3: (120, 240)}[act]
    want = np.clip(np.sign(real) * np.floor(np.abs(real) + 0.5) + out_zero, low, high)
    tail = [(T.INT32, v) for v in (0, 1, 1, 0, 1, 1)] + ([(T.INT32, mult)] if depthwise else []) + [(T.INT32, act)]
    got = _per_channel_run(OP.DEPTHWISE_CONV_2D if depthwise else OP.CONV_2D, to_layout(x, nchw), filt, scales, bias,
                           tail, to_layout(want, nchw).shape, (out_scale, out_zero), nchw)
    assert np.abs(got.astype(np.int64) - to_layout(want, nchw)).max() <= 1


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("per_channel", [False, True], ids=["one-scale", "per-channel"])
def test_a_uint8_grouped_conv_2d_sums_each_group_and_requantizes(per_channel, seed):
    """acc = bias + sum over the group's channels of (x - 100) * (filter - filter zero point); out =
    round(acc * 0.5 * filter scale / s_out) + zo, clamped, within 1 of the real-valued rounding."""
    rng = np.random.default_rng(40 + seed)
    groups, cg, og = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(3, 7)), int(rng.integers(3, 7))
    kh, kw, act = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(0, 4))
    x = rng.integers(0, 256, (n, h, w, groups * cg), dtype=np.uint8)
    units = groups * og
    bias = rng.integers(-2000, 2000, units).astype(np.int32)
    if per_channel:
        filt = rng.integers(-127, 128, (units, kh, kw, cg), dtype=np.int8)
        scales, zero = rng.uniform(0.001, 0.02, units).astype(np.float32), 0
    else:
        filt = rng.integers(0, 256, (units, kh, kw, cg), dtype=np.uint8)
        scales, zero = np.full(units, 0.0078125, np.float32), 128
    acc = conv_reference(x.astype(np.float64) - 100, filt.astype(np.float64) - zero, bias, (1, 0, 0, 1), (1, 2),
                         (1, 1), groups, 0)
    out_scale, out_zero = 0.05, 120
    real = acc * 0.5 * scales.astype(np.float64) / out_scale
    low, high = {0: (0, 255), 1: (120, 255), 2: (100, 140), 3: (120, 240)}[act]
    want = np.clip(np.sign(real) * np.floor(np.abs(real) + 0.5) + out_zero, low, high)
    scalars = [(T.INT32, p) for p in (1, 0, 0, 1, 1, 2, groups, act)] + [(T.BOOL, False)]
    got = run_filter_op(OP.GROUPED_CONV_2D, x, (0.5, 100), filt, scales, zero, 0 if per_channel else None, bias,
                        0.0 if per_channel else 0.5 * 0.0078125, scalars, want.shape, (out_scale, out_zero))
    assert np.abs(got.astype(np.int64) - want).max() <= 1


def test_the_uint8_conv_2d_in_api_level_29s_form_with_nhwc_runs_on_the_nhwc_engine():
    """The layout flag false and no dilation: the 1.0 path, exact as before (a 1x1 filter of 1s, scale 1)."""
    x = np.arange(32, dtype=np.uint8).reshape(1, 4, 4, 2)
    inputs = [Tensor(x, scale=0.5, zero_point=0), Tensor(np.ones((1, 1, 1, 2), np.uint8), scale=1.0, const=True),
              Tensor(np.zeros(1, np.int32), scale=0.5, const=True), i32(VALID), i32(1), i32(1), i32(0),
              boolean(False), i32(1), i32(1)]
    got, = run(OP.CONV_2D, inputs, [Out(Q8, (1, 4, 4, 1), scale=1.0)])
    want = np.floor(x.astype(np.float64).sum(axis=3, keepdims=True) * 0.5 + 0.5)  # halves up, as NNAPI's rounding
    np.testing.assert_array_equal(got, np.minimum(want, 255))


@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_a_uint8_convolution_in_nchw_is_the_nhwc_one_transposed(depthwise):
    """A reference in exact integers: NNAPI's uint8 sum, then out = round(acc * in_scale * w_scale / out_scale)
    + out_zero_point, clamped (the multiplier is a power of two here, so rounding is exact: halves up)."""
    rng = np.random.default_rng(7)
    n, h, w, c = 2, 5, 4, 3
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    if depthwise:
        filt = rng.integers(0, 256, (1, 3, 3, c), dtype=np.uint8)
    else:
        filt = rng.integers(0, 256, (4, 3, 3, c), dtype=np.uint8)
    o = filt.shape[3] if depthwise else filt.shape[0]
    bias = rng.integers(-500, 500, o).astype(np.int32)
    real = conv_reference(x.astype(np.float64) - 128, filt.astype(np.float64) - 120, bias, (1, 1, 1, 1), (1, 1),
                          (1, 1), 1, 0, depthwise=depthwise)  # sums of integers: exact in float64
    scaled = real / 256  # scale 0.5 * 0.5 / 64 = 2**-8; NNAPI's rounding: to nearest, halves away from zero
    want = np.clip(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + 10, 0, 255).astype(np.uint8)
    inputs = [Tensor(np.ascontiguousarray(x.transpose(0, 3, 1, 2)), scale=0.5, zero_point=128),
              Tensor(filt, scale=0.5, zero_point=120, const=True), Tensor(bias, scale=0.25, const=True),
              i32(SAME), i32(1), i32(1)] + ([i32(1)] if depthwise else []) + [i32(0), boolean(True)]
    got, = run(OP.DEPTHWISE_CONV_2D if depthwise else OP.CONV_2D, inputs,
               [Out(Q8, (n, o, h, w), scale=64.0, zero_point=10)])
    np.testing.assert_array_equal(got, want.transpose(0, 3, 1, 2))
