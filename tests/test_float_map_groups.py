"""Float32 depthwise layers written map by map (one single-map ``vxConvolutionLayer`` per map, on views) between
pointwise layers, as MobileNet is written against the standard: the plan lays the group's input and output out
channels-last and runs the group as one call of the NHWC depthwise kernel in its ``bias_last`` order
(``core/map_groups.py``, ``kernels/openvx/float_layers.py``, ``kernels/frontend/float_depthwise.py``).

Each chain is checked against the plain float64 reference of ``test_plan_rewrites`` (written from the NN
extension's text) within the float engine's bound, and for the same bytes with the rewrites off (every node run
apart, on OpenVX's planes), on the native plan and on the Python path, with NaN and infinities among the inputs.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run
from test_plan_rewrites import _input, _weights, assert_within, ref_conv, ref_depthwise, ref_relu

from openvx_nn.api import Context
from openvx_nn.core import map_groups, rewrites


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _activation(g, t, kind):
    if kind is None:
        return t
    return g.activation(t, kind, a=6.0, out=g.virtual())


def _ref_activation(x, kind):
    return x if kind is None else ref_relu(x, 6.0 if kind == "brelu" else None)


def draw(rng, maps=None):
    """One chain's random parameters: input ``[W, H, 3]``, ``maps`` depthwise maps (whole vectors of 8 unless
    given), window 3x3 (or 1x1), stride 1 or 2, padding 0 or 1, biases or not, activations none, relu or brelu."""
    k = 3 if rng.random() < 0.8 else 1
    pad = int(rng.integers(0, 2)) if k == 3 else 0
    return {"width": int(rng.integers(6, 15)), "height": int(rng.integers(6, 15)),
            "maps": int(rng.choice([8, 16, 24, 40])) if maps is None else maps, "k": k, "pad": pad,
            "stride": int(rng.integers(1, 3)), "bias": rng.random() < 0.7, "out_maps": int(rng.integers(1, 12)),
            "first": [None, "relu", "brelu"][int(rng.integers(0, 3))],
            "second": [None, "relu", "brelu"][int(rng.integers(0, 3))]}


def build_and_run(monkeypatch, layer, x, seed, enabled, python_path=False):
    """conv 1x1 -> activation -> C one-map convolutions on views -> activation -> conv 1x1 -> out (the
    application's); (out's bytes, the rewrites' report, the group's route, the reference's (value, size))."""
    rng = np.random.default_rng(seed)
    width, height, c, k, pad, stride = (layer[n] for n in ("width", "height", "maps", "k", "pad", "stride"))
    w0, b0 = _weights(rng, (1, 1, 3, c)), _weights(rng, (c,))
    wd = _weights(rng, (k, k, 1, c))
    bd = _weights(rng, (c,)) if layer["bias"] else None
    w2 = _weights(rng, (1, 1, c, layer["out_maps"]))
    out_wh = tuple((n + 2 * pad - k) // stride + 1 for n in (width, height))
    with Context() as ctx, ctx.graph() as g:
        xt = ctx.tensor(x)
        a0 = g.virtual(shape=(width, height, c), dtype=np.float32)
        t0 = g.virtual() if layer["first"] else a0
        g.convolution(xt, w0, b0, out=t0)
        if layer["first"]:
            g.activation(t0, layer["first"], a=6.0, out=a0)
        d = g.virtual(shape=out_wh + (c,), dtype=np.float32)
        wt, bt = ctx.tensor(wd), None if bd is None else ctx.tensor(bd)
        for m in rng.permutation(c):
            m = int(m)
            g.convolution(a0.view((0, 0, m), (width, height, m + 1)), wt.view((0, 0, 0, m), (k, k, 1, m + 1)),
                          None if bt is None else bt.view((m,), (m + 1,)), out=d.view((0, 0, m), out_wh + (m + 1,)),
                          padding=(pad, pad))
        out = ctx.tensor(shape=out_wh + (layer["out_maps"],), dtype=np.float32)
        g.convolution(_activation(g, d, layer["second"]), w2, None, out=out)
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        if python_path:
            model(ctx.handle).performance_enabled = True
            g.process()
            got = out.numpy().copy()
        else:
            got = native_run(g, out).copy()
        graph = model(g.handle)
        routes = [n.state.get(map_groups.ROUTE) for n in graph.order if map_groups.leads(n)]
        report = graph.rewrites
        last = [model(a0.handle) in report.channels_last, model(d.handle) in report.channels_last]
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    r = _ref_activation(ref_depthwise(_ref_activation(ref_conv(x64, w0, b0, (0, 0)), layer["first"]), wd, bd,
                                      (pad, pad), stride), layer["second"])
    return got, report, routes, last, ref_conv(r, w2, None, (0, 0))


def _check(monkeypatch, layer, x, seed, python_path=False):
    """The chain with the rewrites and without: the same bytes; (bytes, report, routes, sides, reference)."""
    got, report, routes, last, ref = build_and_run(monkeypatch, layer, x, seed, True, python_path)
    plain, _, plain_routes, _, _ = build_and_run(monkeypatch, layer, x, seed, False, python_path)
    assert got.tobytes() == plain.tobytes()
    assert plain_routes == []  # nothing merged without the rewrites: every map ran alone on the planes
    assert report.merged == layer["maps"] - 1
    return got, report, routes, last, ref


@pytest.mark.parametrize("seed", range(8))
def test_a_mobilenet_style_depthwise_group_runs_channels_last_with_the_bytes_of_the_nodes_run_apart(monkeypatch,
                                                                                                    seed):
    rng = np.random.default_rng([4070, seed])
    layer = draw(rng)
    x = _input(rng, (layer["width"], layer["height"], 3))
    got, report, routes, last, ref = _check(monkeypatch, layer, x, [4071, seed])
    assert_within(got, ref, 3)
    assert routes == [map_groups.CHANNELS_LAST] and last == [True, True]
    assert report.conversions == 2  # the application's input and output only: none around the group
    assert len(report.fused) == (layer["first"] is not None) + (layer["second"] is not None)


@pytest.mark.parametrize("seed", range(3))
def test_nan_and_infinities_give_the_bytes_of_the_nodes_run_apart(monkeypatch, seed):
    rng = np.random.default_rng([4072, seed])
    layer = draw(rng)
    layer["second"] = ["relu", "brelu", None][seed]
    x = _input(rng, (layer["width"], layer["height"], 3))
    x[1, 2, 0], x[3, 1, 1], x[0, 0, 2], x[4, 4, 0], x[5, 3, 1] = np.inf, -np.inf, np.nan, -np.nan, np.inf
    got, _, routes, _, _ = _check(monkeypatch, layer, x, [4073, seed])
    assert routes == [map_groups.CHANNELS_LAST]
    assert np.isnan(got).any()


def test_the_python_path_gives_the_bytes_of_the_native_plan(monkeypatch):
    rng = np.random.default_rng(4074)
    layer = draw(rng)
    layer.update(stride=2, pad=1, k=3, bias=True, second="relu")
    x = _input(rng, (layer["width"], layer["height"], 3))
    python, _, routes, _, _ = _check(monkeypatch, layer, x, 4075, python_path=True)
    native, *_ = _check(monkeypatch, layer, x, 4075)
    assert routes == [map_groups.CHANNELS_LAST] and python.tobytes() == native.tobytes()


@pytest.mark.parametrize("maps", [6, 13])
def test_maps_not_in_whole_vectors_stay_on_the_planes(monkeypatch, maps):
    rng = np.random.default_rng([4076, maps])
    layer = draw(rng, maps)
    x = _input(rng, (layer["width"], layer["height"], 3))
    got, _, routes, last, ref = _check(monkeypatch, layer, x, [4077, maps])
    assert_within(got, ref, 3)
    assert routes == [map_groups.PLANES] and last == [False, False]


def test_an_infinite_weight_keeps_the_planes_between_conversions(monkeypatch):
    """A weight on the padding's zeros makes NaN on the planes (0 * inf); the NHWC kernel skips those taps, so
    the group runs on the planes, converting its channels-last sides."""
    rng = np.random.default_rng(4078)
    layer = draw(rng)
    layer.update(k=3, pad=1, maps=8)
    x = _input(rng, (layer["width"], layer["height"], 3))
    original = _weights

    def with_inf(r, shape):
        w = original(r, shape)
        if shape[:3] == (3, 3, 1):
            w[0, 0, 0, 0] = np.inf
        return w
    monkeypatch.setattr(__import__(__name__), "_weights", with_inf)
    got, _, routes, last, _ = _check(monkeypatch, layer, x, 4079)
    assert routes == [map_groups.PLANES] and last == [True, True]
    assert np.isnan(got).any()
