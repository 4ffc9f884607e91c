"""Padded float32 convolutions read their input in place (``float_convolution``'s ``BORDERS`` route).

A window that crosses the padding is read from a zero-bordered copy of that window alone; every other window from
the input itself: no copy of the whole input per call. The reference is the definition, written here: the input
surrounded by zeros (the standard's padding), ``bias[o] + sum over ky, kx, c of padded[b, oy*sh + ky, ox*sw + kx,
c] * w[o, ky, kx, c]`` in float64. The engine sums in float32 with fused multiply-adds; the tolerance is
docs/nnapi.md's, ``(n + 3) * 2**-24`` times the same sum over absolute values (``n`` products per output). The same
layer given the input already padded (no padding left to the engine) must give the same bytes, infinite weights
over the padding included (an undilated layer keeps every tap: ``inf * 0`` is NaN there).
"""
from __future__ import annotations

import numpy as np
import pytest
from test_plan_rewrites import _run_both_ways, _weights, assert_within, ref_conv, ref_relu

from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.frontend import float_sharing
from openvx_nn.kernels.support import native

U = 2.0 ** -24
BLOCKS = (None, (2, 8), (1, 8), (2, 16), (1, 16))
CLAMPS = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def zero_padded(x, pads, strides, kernel, out_hw):
    """``x`` [N, H, W, C] with ``pads`` (left, right, top, bottom) of zeros, and more zeros below and to the right
    where the output extent reaches further (an output size rounded up)."""
    n, h, w, c = x.shape
    left, _, top, _ = pads
    big_h = max(top + h, (out_hw[0] - 1) * strides[1] + kernel[0])
    big_w = max(left + w, (out_hw[1] - 1) * strides[0] + kernel[1])
    padded = np.zeros((n, big_h, big_w, c), x.dtype)
    padded[:, top:top + h, left:left + w] = x
    return padded


def reference(x, wt, bias, pads, strides, out_hw):
    """float64 [N, OH, OW, O]: every tap of every window, zeros over the padding (``inf * 0`` is NaN)."""
    o, kh, kw, _ = wt.shape
    sw, sh = strides
    oh, ow = out_hw
    padded = zero_padded(np.asarray(x, np.float64), pads, strides, (kh, kw), out_hw)
    out = np.zeros((x.shape[0], oh, ow, o)) + (0.0 if bias is None else np.asarray(bias, np.float64))
    w64 = np.asarray(wt, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for oy in range(oh):
            for ox in range(ow):
                window = padded[:, oy * sh: oy * sh + kh, ox * sw: ox * sw + kw]  # [N, kh, kw, C]
                for ky in range(kh):
                    for kx in range(kw):
                        for c in range(x.shape[3]):
                            out[:, oy, ox] += window[:, ky, kx, c:c + 1] * w64[:, ky, kx, c]
    return out


def _case(seed):
    rng = np.random.default_rng([5150, seed])
    while True:
        h, w = int(rng.integers(1, 18)), int(rng.integers(1, 18))
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        sw, sh = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        pads = tuple(int(p) for p in rng.integers(0, 4, 4))
        if sum(pads) == 0:
            continue
        oh = (h + pads[2] + pads[3] - kh) // sh + 1 + int(rng.integers(0, 2))  # rounded down, or up
        ow = (w + pads[0] + pads[1] - kw) // sw + 1 + int(rng.integers(0, 2))
        if oh >= 1 and ow >= 1 and h + pads[2] + pads[3] >= kh and w + pads[0] + pads[1] >= kw:
            break
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 20))
    o = int(rng.choice([1, 5, 8, 16, 17, 33, int(rng.integers(1, 70))]))
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    if seed % 3 == 0:  # zeros, tiny and large magnitudes in one tensor
        x.flat[rng.integers(0, x.size, max(1, x.size // 5))] = 0.0
        x *= np.float32(2.0) ** rng.integers(-20, 20, x.shape).astype(np.float32)
    wt = rng.standard_normal((o, kh, kw, c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) if seed % 5 else None
    act = seed % 4
    low, high = CLAMPS[act]
    want = np.clip(reference(x, wt, bias, pads, (sw, sh), (oh, ow)), low, high)
    span = reference(np.abs(x), np.abs(wt), None if bias is None else np.abs(bias), pads, (sw, sh), (oh, ow))
    return x, wt, bias, pads, (sw, sh), act, want, (kh * kw * c + 3) * U * span


def _assert_within(got, want, bound):
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= bound), float(np.max(err - bound))


@pytest.fixture(params=["in place", "copied"])
def route(request, monkeypatch):
    """Every case both ways: windows read in place wherever a filter row fits an input row, or the copy always."""
    monkeypatch.setattr(fconv, "WINDOWS_SHARE", np.inf if request.param == "in place" else -1.0)
    return request.param


@pytest.mark.parametrize("seed", range(30))
def test_a_padded_layer_matches_the_definition_and_the_bytes_of_its_input_padded_beforehand(seed, route):
    x, wt, bias, pads, strides, act, want, bound = _case(seed)
    b = fconv.bias_or_zeros(bias, wt.shape[0])
    padded = zero_padded(x, pads, strides, wt.shape[1:3], want.shape[1:3])
    for block in BLOCKS:
        packed = fconv.pack_conv(wt, block)
        got = np.full(want.shape, np.nan, np.float32)
        fconv.conv2d(x, packed, b, got, pads, strides, act)
        _assert_within(got, want, bound)
        beforehand = np.full(want.shape, np.nan, np.float32)
        fconv.conv2d(padded, packed, b, beforehand, (0, 0, 0, 0), strides, act)
        np.testing.assert_array_equal(got.view(np.int32), beforehand.view(np.int32))


@pytest.mark.parametrize("seed", range(12))
def test_the_native_entry_gives_the_bound_calls_bits(seed, monkeypatch, route):
    # serially and shared with a helper thread (every layer large enough to share)
    x, wt, bias, pads, strides, act, want, bound = _case(100 + seed)
    packed, b = fconv.pack_conv(wt), fconv.bias_or_zeros(bias, wt.shape[0])
    bound_out = np.full(want.shape, np.nan, np.float32)
    fconv.conv2d(x, packed, b, bound_out, pads, strides, act)
    for helpers, work in ((0, float_sharing.NATIVE_PARALLEL_WORK), (1, 0)):
        monkeypatch.setattr(float_sharing.workers, "helpers", lambda n=helpers: n)
        monkeypatch.setattr(float_sharing, "NATIVE_PARALLEL_WORK", work)
        got = np.full(want.shape, np.nan, np.float32)
        assert native.run(fconv.native_conv2d(x, packed, b, got, pads, strides, act)) == 0
        _assert_within(got, want, bound)
        np.testing.assert_array_equal(got.view(np.int32), bound_out.view(np.int32))


def test_a_padded_input_is_read_in_place_where_its_windows_cost_less_than_a_copy():
    # 3x3 stride 2 from 56x56x64 (ResNet's downsampling): 55 windows of 576 values against a 57x57 copy
    x = np.ones((1, 56, 56, 64), np.float32)
    read, copy, (top, left, in_h, _) = fconv._staged_input(x, (1, 1, 1, 1), (2, 2), (28, 28), (3, 3))
    assert read is x and copy is None and (top, left, in_h) == (1, 1, fconv.BORDERS)
    # 3x3 stride 1 at 7x7 over 16 panels: the windows, filled once a panel, would outweigh the copy
    x = np.ones((1, 7, 7, 512), np.float32)
    read, copy, (_, _, in_h, _) = fconv._staged_input(x, (1, 1, 1, 1), (1, 1), (7, 7), (3, 3), panels=16)
    assert read.shape == (1, 9, 9, 512) and copy is not None and in_h == 0
    # a filter row wider than the input: the zero-bordered copy whatever the cost
    x = np.ones((1, 9, 7, 4), np.float32)
    read, copy, _ = fconv._staged_input(x, (4, 4, 0, 0), (1, 1), (9, 7), (1, 9))
    assert read.shape == (1, 9, 15, 4) and copy is not None


@pytest.mark.parametrize("seed", range(4))
def test_windows_and_copy_give_the_same_bytes_through_a_residual_and_an_activation(seed, monkeypatch):
    rng = np.random.default_rng([5153, seed])
    x = rng.standard_normal((1, 12, 17, 24)).astype(np.float32)
    wt = rng.standard_normal((40, 3, 3, 24)).astype(np.float32)
    res = rng.standard_normal((1, 6, 9, 40)).astype(np.float32)
    packed, b = fconv.pack_conv(wt), rng.standard_normal(40).astype(np.float32)
    got = {}
    for share in (np.inf, -1.0):
        monkeypatch.setattr(fconv, "WINDOWS_SHARE", share)
        out = np.full((1, 6, 9, 40), np.nan, np.float32)
        assert native.run(fconv.native_conv2d(x, packed, b, out, (1, 1, 1, 1), (2, 2), 1, res)) == 0
        got[share] = out
    want = np.maximum(reference(x, wt, b, (1, 1, 1, 1), (2, 2), (6, 9)) + res, 0.0)
    _assert_within(got[np.inf], want, (3 * 3 * 24 + 4) * U * (reference(np.abs(x), np.abs(wt), np.abs(b),
                                                                         (1, 1, 1, 1), (2, 2), (6, 9)) + np.abs(res)))
    np.testing.assert_array_equal(got[np.inf].view(np.int32), got[-1.0].view(np.int32))


def test_infinite_and_nan_weights_over_the_padding_give_nan_as_every_tap_is_kept(route):
    rng = np.random.default_rng(5151)
    x = rng.standard_normal((1, 6, 20, 5)).astype(np.float32)
    wt = rng.standard_normal((24, 3, 3, 5)).astype(np.float32)
    wt[3, 0, 0, 1], wt[9, 2, 1, 0], wt[17, 1, 2, 4] = np.inf, -np.inf, np.nan
    pads, strides = (1, 1, 1, 1), (1, 1)
    want = reference(x, wt, None, pads, strides, (6, 20))
    packed, b = fconv.pack_conv(wt), fconv.bias_or_zeros(None, 24)
    for run in ("bound", "native"):
        got = np.full(want.shape, 7.0, np.float32)
        if run == "bound":
            fconv.conv2d(x, packed, b, got, pads, strides, 0)
        else:
            assert native.run(fconv.native_conv2d(x, packed, b, got, pads, strides, 0)) == 0
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(want) & (want > 0))
        finite = np.isfinite(want)
        assert np.isnan(want[0, 0, :, 3]).all() and not np.isnan(want[0, 1:, 1:, 3]).any()  # padding: inf * 0
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_a_graph_of_padded_layers_reads_the_same_bytes_with_the_plans_passes_off(monkeypatch, seed):
    # the application's input (padded in place) -> conv kw x kh -> relu (virtual, channels-last) -> conv 3x3 -> out
    rng = np.random.default_rng([5152, seed])
    shape = (int(rng.integers(3, 20)), int(rng.integers(3, 20)), int(rng.integers(2, 9)))
    maps, (kw, kh) = int(rng.integers(2, 40)), [(3, 3), (5, 3), (1, 5), (5, 5)][seed]
    pad = (kw // 2, kh // 2)
    x = rng.standard_normal(shape).astype(np.float32)
    w1, w2 = _weights(rng, (kw, kh, shape[2], maps)), _weights(rng, (3, 3, maps, 6))
    b1, b2 = _weights(rng, (maps,)), _weights(rng, (6,))
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    want = ref_conv(ref_relu(ref_conv(x64, w1, b1, pad)), w2, b2, (1, 1))

    def build(ctx, g):
        out = ctx.tensor(shape=shape[:2] + (6,), dtype=np.float32)
        t, r = g.virtual(), g.virtual()
        g.convolution(ctx.tensor(x), w1, b1, out=t, padding=pad)
        g.relu(t, out=r)
        g.convolution(r, w2, b2, out=out, padding=(1, 1))
        return [out]
    (got,), _, (plain,) = _run_both_ways(monkeypatch, build)
    assert_within(got, want, 3)
    assert got.tobytes() == plain.tobytes()
