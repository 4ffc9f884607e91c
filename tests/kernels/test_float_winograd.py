"""The Winograd F(2x2, 3x3) route of float32 3x3 stride-1 convolutions against a float64 reference written from
the definition, over random shapes, paddings, epilogues and layouts; its bits the same whichever path runs it."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_convolution as fc
from openvx_nn.kernels.frontend import float_winograd as fw
from openvx_nn.kernels.frontend.epilogue_activation import epilogue_of
from openvx_nn.kernels.support import native

TOLERANCE = 1e-5  # relative to the output's largest magnitude (docs/nnapi.md's float32 convolution bound)
THRESHOLDS = (fw.MIN_CHANNELS, fw.MIN_SIDE, fw.MIN_CHANNEL_SUM)  # the module's own, before the fixture lowers them


@pytest.fixture(autouse=True)
def small_layers(monkeypatch):
    """Every 3x3 stride-1 layer of the tests takes the route (switched on; its thresholds are for speed alone)."""
    monkeypatch.setattr(fw, "MIN_CHANNELS", 1)
    monkeypatch.setattr(fw, "MIN_SIDE", 1)
    monkeypatch.setattr(fw, "MIN_CHANNEL_SUM", 1)
    monkeypatch.setenv(fw.ENV, "1")


def reference(x, w, bias, pads, out_hw, residual=None, clamp=(-np.inf, np.inf), prelu=None):
    """float64 NHWC convolution, one tap at a time, from the definition: ``pads`` (left, right, top, bottom)."""
    n, h, wd, c = x.shape
    left, _, top, _ = pads
    oh, ow = out_hw
    xp = np.zeros((n, oh + 2 + h, ow + 2 + wd, c))
    xp[:, top:top + h, left:left + wd] = x
    y = np.zeros((n, oh, ow, w.shape[0])) + bias.astype(np.float64)
    for ky in range(3):
        for kx in range(3):
            y += xp[:, ky:ky + oh, kx:kx + ow] @ w[:, ky, kx, :].astype(np.float64).T
    if residual is not None:
        y += residual
    y = np.minimum(np.maximum(y, clamp[0]), clamp[1])
    if prelu is not None:
        y = np.where(y < 0, y * prelu, y)
    return y


def relative(got, want):
    return np.abs(got - want).max() / max(1.0, np.abs(want).max())


def layer(rng, n, h, w, c, o, pad, scale=1.0):
    x = (rng.standard_normal((n, h, w, c)) * scale).astype(np.float32)
    wt = (rng.standard_normal((o, 3, 3, c)) / np.sqrt(9 * c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    return x, wt, bias, (pad,) * 4, (h + 2 * pad - 2, w + 2 * pad - 2)


BLOCKS = [None, (2, 16), (1, 16), (3, 16), (2, 8), (1, 8), (3, 8)]  # the CPU's own, and each micro-kernel shape


@pytest.mark.parametrize("seed", range(8))
def test_random_layers_match_the_float64_reference(seed):
    rng = np.random.default_rng(seed)
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(3, 20)), int(rng.integers(3, 20))
    c, o, pad = int(rng.integers(1, 70)), int(rng.integers(1, 70)), int(rng.integers(0, 2))
    if min(h, w) + 2 * pad < 3:
        pad = 1
    x, wt, bias, pads, out_hw = layer(rng, n, h, w, c, o, pad)
    block = BLOCKS[seed % len(BLOCKS)]
    assert fw.chosen(x.shape, 0, fc.pack_conv(wt, block), (1, 1), (1, 1), (n, *out_hw, o))
    out = np.full((n, *out_hw, o), np.nan, np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt, block), bias, out, pads, (1, 1), 0)()
    assert relative(out, reference(x, wt, bias, pads, out_hw)) < TOLERANCE


@pytest.mark.parametrize("activation, clamp", [(1, (0.0, np.inf)), (2, (-1.0, 1.0)), (3, (0.0, 6.0)),
                                               ((-0.5, 0.25), (-0.5, 0.25))])
def test_fused_clamps_and_residual(activation, clamp):
    rng = np.random.default_rng(3)
    x, wt, bias, pads, out_hw = layer(rng, 1, 13, 11, 40, 37, 1)
    res = rng.standard_normal((1, *out_hw, 37)).astype(np.float32)
    out = np.empty((1, *out_hw, 37), np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), activation, res)()
    assert relative(out, reference(x, wt, bias, pads, out_hw, res, clamp)) < TOLERANCE


def test_prelu_and_tanh_epilogues():
    rng = np.random.default_rng(4)
    x, wt, bias, pads, out_hw = layer(rng, 1, 9, 10, 33, 48, 1)
    alpha = rng.uniform(0, 0.5, 48).astype(np.float32)
    out = np.empty((1, *out_hw, 48), np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 0, epilogue=epilogue_of("prelu", 48, alpha))()
    assert relative(out, reference(x, wt, bias, pads, out_hw, prelu=alpha)) < TOLERANCE
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 0, epilogue=epilogue_of("tanh", 48))()
    assert np.abs(out - np.tanh(reference(x, wt, bias, pads, out_hw))).max() < TOLERANCE


@pytest.mark.parametrize("scale", [0.0, 1e-30, 1e15])
def test_edge_magnitudes(scale):
    rng = np.random.default_rng(5)
    x, wt, bias, pads, out_hw = layer(rng, 1, 8, 8, 32, 32, 1, scale)
    out = np.empty((1, *out_hw, 32), np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 0)()
    want = reference(x, wt, bias, pads, out_hw)
    if scale == 0.0:
        assert np.array_equal(out, np.broadcast_to(bias, out.shape))
    assert relative(out, want) < TOLERANCE
    assert np.abs(out - want).max() <= TOLERANCE * np.abs(want).max()


def test_nan_stays_and_clamp_makes_it_canonical():
    rng = np.random.default_rng(6)
    x, wt, bias, pads, out_hw = layer(rng, 1, 6, 6, 32, 32, 1)
    x[0, 2, 3, 5] = np.nan
    out = np.empty((1, *out_hw, 32), np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 3)()
    assert np.isnan(out[0, 1:4, 2:5]).all() and not np.isnan(out[0, 5:]).any()
    assert (out[np.isnan(out)].view(np.uint32) == 0x7FC00000).all()


def test_groups_give_the_same_bits_however_they_are_shared(monkeypatch):
    """The tiles' groups are fixed at bind: run serially, in two ranges, or claimed in chunks, the same bytes."""
    monkeypatch.setattr(fw, "GROUP_BYTES", 1 << 18)
    rng = np.random.default_rng(7)
    x, wt, bias, pads, out_hw = layer(rng, 2, 30, 28, 64, 80, 1)
    out = np.empty((2, *out_hw, 80), np.float32)
    call = fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 1)
    assert isinstance(call, fc.float_sharing.Rows) and call.n_rows > 2
    call.serial(*call.args, 0, call.n_rows)
    whole = out.copy()
    out[...] = np.nan
    call.serial(*call.args, call.n_rows // 2, call.n_rows)
    call.serial(*call.args, 0, call.n_rows // 2)
    assert np.array_equal(out, whole)
    out[...] = np.nan
    shared = fc.float_sharing.compiled(call.shared, call.arg_types,
                                       (fc.float_sharing.jit.INT, fc.float_sharing.jit.INT,
                                        fc.float_sharing._COUNTERS, fc.float_sharing.jit.BOOL))
    shared(*call.args, call.n_rows, 3, np.zeros(2, np.int64), True)
    assert np.array_equal(out, whole)
    assert relative(whole, np.maximum(reference(x, wt, bias, pads, out_hw), 0)) < TOLERANCE


@pytest.mark.parametrize("seed", range(3))
def test_group_sizes_and_thread_counts_give_the_same_bits(monkeypatch, seed):
    """The group follows the thread count and the bytes of ``U`` (``group_tiles``): a tile's sums do not."""
    rng = np.random.default_rng(20 + seed)
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(8, 30)), int(rng.integers(8, 30))
    c, o = int(rng.integers(16, 90)), int(rng.integers(16, 90))
    x, wt, bias, pads, out_hw = layer(rng, n, h, w, c, o, 1)
    res = rng.standard_normal((n, *out_hw, o)).astype(np.float32)
    outs = []
    for group_bytes, threads in ((1 << 12, "1"), (1 << 16, "2"), (1 << 20, "1"), (1 << 26, "1"), (1 << 26, "2")):
        monkeypatch.setattr(fw, "GROUP_BYTES", group_bytes)
        monkeypatch.setenv("OPENVX_NN_THREADS", threads)
        out = np.full((n, *out_hw, o), np.nan, np.float32)
        fc.bind_conv2d(x, fc.pack_conv(wt), bias, out, pads, (1, 1), 1, res)()
        outs.append(out)
    assert all(np.array_equal(out, outs[0]) for out in outs[1:])
    assert relative(outs[0], np.maximum(reference(x, wt, bias, pads, out_hw, res), 0)) < TOLERANCE


def test_group_tiles_stream_large_weights_once_a_thread():
    rows = fw.TILES[2, 16].rows
    assert fw.group_tiles(49, 256, 256, 2, 16, 1) >= 49  # U of 4 MB: one group on one thread
    two = fw.group_tiles(49, 256, 256, 2, 16, 2)
    assert two < 49 <= 2 * two and two % rows == 0  # a group a thread
    small = fw.group_tiles(112 * 112 // 4, 128, 128, 2, 16, 1)  # U of 1 MB, V and M of 50 MB: groups of 4 MB
    assert small % rows == 0 and 16 * 4 * 256 * (small - rows) < fw.GROUP_BYTES <= 16 * 4 * 256 * small * 2


def test_the_route_is_on_unless_switched_off(monkeypatch):
    monkeypatch.delenv(fw.ENV, raising=False)
    assert fw.enabled()
    monkeypatch.setenv(fw.ENV, "1")
    assert fw.enabled()
    monkeypatch.setenv(fw.ENV, "0")
    assert not fw.enabled()


def test_bordered_buffers_give_the_same_bits_as_plain_arrays():
    rng = np.random.default_rng(8)
    x, wt, bias, pads, out_hw = layer(rng, 1, 15, 17, 48, 40, 1)
    res = rng.standard_normal((1, *out_hw, 40)).astype(np.float32)
    plain = np.empty((1, *out_hw, 40), np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, plain, pads, (1, 1), 1, res)()
    xb = np.zeros((1, 19, 21, 48), np.float32)
    xb[:, 2:-2, 2:-2] = x
    ob = np.zeros((1, out_hw[0] + 2, out_hw[1] + 2, 40), np.float32)
    rb = np.zeros((1, out_hw[0] + 6, out_hw[1] + 6, 40), np.float32)
    rb[:, 3:-3, 3:-3] = res
    fc.bind_conv2d(xb, fc.pack_conv(wt), bias, ob, pads, (1, 1), 1, rb, borders=(2, 1, 3))()
    assert np.array_equal(ob[:, 1:-1, 1:-1], plain)
    assert not ob[:, 0].any() and not ob[:, -1].any() and not ob[:, :, 0].any() and not ob[:, :, -1].any()
    wide = np.full((1, *out_hw, 40 + 24), 7.0, np.float32)  # a concatenation's slice: channels 10..50
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, wide[..., 10:50], pads, (1, 1), 1, res)()
    assert np.array_equal(wide[..., 10:50], plain)
    assert (wide[..., :10] == 7.0).all() and (wide[..., 50:] == 7.0).all()


def test_the_thresholds_take_resnets_and_densenets_3x3_layers_but_7x7_and_narrow_ones(monkeypatch):
    """ResNet-18's 3x3 layers of 64 channels at 56x56 up to 256 at 14x14 take the route, and DenseNet-121's
    128 -> 32 and layers of 32 to 64; 512 at 7x7 and layers of 32 channels in and out or fewer than 32 on a side
    do not (``MIN_CHANNELS``, ``MIN_CHANNEL_SUM``, ``MIN_SIDE``)."""
    monkeypatch.setattr(fw, "MIN_CHANNELS", THRESHOLDS[0])
    monkeypatch.setattr(fw, "MIN_SIDE", THRESHOLDS[1])
    monkeypatch.setattr(fw, "MIN_CHANNEL_SUM", THRESHOLDS[2])

    def takes(side, c, o):
        packed = fc.pack_conv(np.zeros((o, 3, 3, c), np.float32))
        return fw.chosen((1, side + 2, side + 2, c), 1, packed, (1, 1), (1, 1), (1, side, side, o))

    assert takes(56, 64, 64) and takes(28, 128, 128) and takes(14, 256, 256)
    assert takes(56, 128, 32) and takes(14, 128, 32) and takes(56, 32, 64) and takes(28, 48, 48)
    assert not takes(7, 512, 512) and not takes(56, 32, 32) and not takes(56, 16, 128) and not takes(56, 128, 16)
    assert not takes(13, 128, 32)


def test_switch_off_and_declined_layers_take_the_direct_route(monkeypatch):
    rng = np.random.default_rng(9)
    x, wt, bias, pads, out_hw = layer(rng, 1, 16, 16, 32, 32, 1)
    shape = (1, *out_hw, 32)
    packed = fc.pack_conv(wt)
    assert fw.chosen(x.shape, 0, packed, (1, 1), (1, 1), shape)
    assert not fw.chosen(x.shape, 0, packed, (2, 2), (1, 1), shape)
    assert not fw.chosen(x.shape, 0, packed, (1, 1), (2, 2), shape)
    assert not fw.chosen(x.shape, 0, fc.pack_conv(wt[:, :1, :1]), (1, 1), (1, 1), shape)
    monkeypatch.setenv(fw.ENV, "0")
    assert not fw.chosen(x.shape, 0, packed, (1, 1), (1, 1), shape)
    out = np.empty(shape, np.float32)
    fc.bind_conv2d(x, packed, bias, out, pads, (1, 1), 0)()
    assert relative(out, reference(x, wt, bias, pads, out_hw)) < TOLERANCE


def test_native_entry_gives_the_bound_calls_bits():
    rng = np.random.default_rng(10)
    x, wt, bias, pads, out_hw = layer(rng, 1, 21, 19, 40, 72, 1)
    res = rng.standard_normal((1, *out_hw, 72)).astype(np.float32)
    bound, entry = np.empty((1, *out_hw, 72), np.float32), np.full((1, *out_hw, 72), np.nan, np.float32)
    fc.bind_conv2d(x, fc.pack_conv(wt), bias, bound, pads, (1, 1), 3, res)()
    made = fc.native_conv2d(x, fc.pack_conv(wt), bias, entry, pads, (1, 1), 3, res)
    assert made is not None and native.run(made) == 0
    assert np.array_equal(entry, bound)
    assert relative(bound, reference(x, wt, bias, pads, out_hw, res, (0.0, 6.0))) < TOLERANCE
