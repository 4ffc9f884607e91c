"""Virtual U8, S8 and Q7.8 tensors between the integer engine's layers laid out channels-last (``core/rewrites.py``):
the convolutions read and write them pixel-major, element-wise nodes follow, and where a planes-only node (the
integer pooling and fully connected layers) meets a class of tensors the class stays planar. Randomized small
networks (conv -> relu -> conv -> add -> relu -> conv -> max pool -> conv -> fully connected, strides and paddings
drawn) give the bytes of a plain reference written from ``docs/fixed-point.md`` and the same bytes with the
rewrites off, on the native plan and on the Python path; a tensor the application reads keeps OpenVX's order.
The layout is on by default (``rewrites.INTEGER_CHANNELS_LAST``); these tests turn it on whatever the environment says.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run, python_run
from test_integer_map_groups import fit, round_shift

from openvx_nn.api import Context
from openvx_nn.core import rewrites

FORMATS = {"u8": np.uint8, "s8": np.int8, "q78": np.int16}


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)
    monkeypatch.setattr(rewrites, "INTEGER_CHANNELS_LAST", True)  # whatever $OPENVX_NN_INTEGER_CHANNELS_LAST says


def requantize(total: np.ndarray, shift: int, dtype, saturate: bool, nearest_even: bool) -> np.ndarray:
    """Each exact sum shifted to the output position, rounded by the policy, then saturated or wrapped."""
    flat = [fit(round_shift(int(v), shift, nearest_even), dtype, saturate) for v in total.reshape(-1)]
    return np.array(flat, dtype).reshape(total.shape)


def ref_correlation(x, w, b, pad, stride, out_wh, fpp, saturate, nearest_even):
    """``out[ox, oy, k]``: the exact sum over taps inside ``x`` ``[W, H, C]`` of ``x[ix, iy, c] * w[kx, ky, c, k]``
    (``ix = ox * stride - pad + kx``), aligned with the bias to the finer of their positions, then requantized."""
    fx, fw, fb, fo = fpp
    products = fx + fw
    scale = max(products, fb) if b is not None else products
    width, height = x.shape[:2]
    total = np.zeros(out_wh + (w.shape[3],), np.int64)
    for ox in range(out_wh[0]):
        for oy in range(out_wh[1]):
            for kx in range(w.shape[0]):
                for ky in range(w.shape[1]):
                    ix, iy = ox * stride[0] - pad[0] + kx, oy * stride[1] - pad[1] + ky
                    if 0 <= ix < width and 0 <= iy < height:
                        total[ox, oy] += x[ix, iy].astype(np.int64) @ w[kx, ky].astype(np.int64)
    total <<= scale - products
    if b is not None:
        total += b.astype(np.int64) << (scale - fb)
    return requantize(total, scale - fo, x.dtype, saturate, nearest_even)


def ref_fully_connected(x, w, b, fpp, saturate, nearest_even):
    """The 1x1 output of a window as large as the input (weights ``[W, H, C, K]``)."""
    return ref_correlation(x, w, b, (0, 0), (1, 1), (1, 1), fpp, saturate, nearest_even).reshape(-1)


def ref_max_pool(x):
    """2x2 windows, stride 2, no padding."""
    w, h = x.shape[0] // 2, x.shape[1] // 2
    return x[:2 * w, :2 * h].reshape(w, 2, h, 2, -1).max(axis=(1, 3))


def ref_add(a, b, saturate):
    return requantize(a.astype(np.int64) + b.astype(np.int64), 0, a.dtype, saturate, True)


def _draw_weights(rng, dtype, shape):
    """Small weights (sums that do not all saturate): U8 0..3, S8 -4..4, Q7.8 about -1.2..1.2."""
    if dtype == np.uint8:
        return rng.integers(0, 4, shape).astype(dtype)
    if dtype == np.int8:
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.integers(-300, 301, shape).astype(dtype)


def _positions(rng, fmt, fx):
    """(weights, bias, output) positions: Q7.8 all 8; 8-bit ones drawn, the output coarser than the products."""
    if fmt == "q78":
        return 8, int(rng.choice([8, 12])), 8
    fw = int(rng.integers(0, 3))
    return fw, int(rng.integers(0, fx + fw + 1)), int(rng.integers(0, 2))


def _layer(rng, fmt, x_shape, fx, maps, k, pad, stride):
    """A convolution's parameters: weights, bias or None, positions, policies, output size, inferred stride."""
    dtype = FORMATS[fmt]
    fw, fb, fo = _positions(rng, fmt, fx)
    w = _draw_weights(rng, dtype, (k, k, x_shape[2], maps))
    b = _draw_weights(rng, dtype, (maps,)) if rng.random() < 0.7 else None
    out_wh = tuple((n + 2 * pad - k) // stride + 1 for n in x_shape[:2])
    # the layer infers its stride from the sizes: the smallest giving these outputs (the reference takes that one)
    strides = tuple(next(s for s in range(1, n + 2 * pad - k + 2) if (n + 2 * pad - k) // s == o - 1)
                    for n, o in zip(x_shape[:2], out_wh))
    return {"w": w, "b": b, "fpp": (fx, fw, fb, fo), "pad": (pad, pad), "stride": strides, "out_wh": out_wh,
            "overflow": str(rng.choice(["saturate", "wrap"])), "rounding": str(rng.choice(["nearest_even", "to_zero"]))}


def _network(seed, fmt):
    """A random network's input and layers (conv1; conv2 and conv3 keeping conv1's size, conv2 its position too;
    conv4 after the pool; fc)."""
    rng = np.random.default_rng([4070, seed, list(FORMATS).index(fmt)])
    dtype = FORMATS[fmt]
    info = np.iinfo(dtype)
    shape = (int(rng.integers(6, 21)), int(rng.integers(6, 21)), int(rng.integers(1, 7)))
    fx = 8 if fmt == "q78" else int(rng.integers(0, 3))
    x = rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)
    if fmt == "q78":
        x = rng.integers(-1024, 1025, shape).astype(dtype)
    maps = int(rng.integers(2, 41))
    k1 = int(rng.choice([1, 3]))
    conv1 = _layer(rng, fmt, shape, fx, maps, k1, int(rng.integers(0, k1 // 2 + 1)), int(rng.integers(1, 3)))
    middle = conv1["out_wh"] + (maps,)
    fo = conv1["fpp"][3]
    conv2 = _layer(rng, fmt, middle, fo, maps, 3, 1, 1)
    conv2["fpp"] = conv2["fpp"][:3] + (fo,)  # the add takes two tensors at one position
    k3 = int(rng.choice([1, 3]))
    conv3 = _layer(rng, fmt, middle, fo, int(rng.integers(2, 41)), k3, k3 // 2, 1)
    pooled = (middle[0] // 2, middle[1] // 2, conv3["w"].shape[3])
    k4 = int(rng.choice([1, 2])) if min(pooled[:2]) >= 2 else 1
    conv4 = _layer(rng, fmt, pooled, conv3["fpp"][3], int(rng.integers(2, 21)), k4, 0, int(rng.integers(1, 3)))
    u = conv4["out_wh"] + (conv4["w"].shape[3],)
    fc = _layer(rng, fmt, u, conv4["fpp"][3], int(rng.integers(2, 11)), 1, 0, 1)
    fc["w"] = _draw_weights(rng, dtype, u + (fc["w"].shape[3],))
    add_saturates = bool(rng.random() < 0.5)
    return x, (conv1, conv2, conv3, conv4, fc), add_saturates


def _reference(x, layers, add_saturates):
    """(the network's output, conv2's input: the first relu's output)."""
    conv1, conv2, conv3, conv4, fc = layers

    def conv(a, layer):
        return ref_correlation(a, layer["w"], layer["b"], layer["pad"], layer["stride"], layer["out_wh"],
                               layer["fpp"], layer["overflow"] == "saturate", layer["rounding"] == "nearest_even")
    a1 = np.maximum(conv(x, conv1), 0)
    r = np.maximum(ref_add(conv(a1, conv2), a1, add_saturates), 0)
    u = conv(ref_max_pool(conv(r, conv3)), conv4)
    out = ref_fully_connected(u, fc["w"], fc["b"], fc["fpp"], fc["overflow"] == "saturate",
                              fc["rounding"] == "nearest_even")
    return out, a1


def _build(ctx, g, x, layers, add_saturates, app_reads_middle=False):
    """The network's graph; (output tensor, the first relu's output tensor when the application reads it)."""
    conv1, conv2, conv3, conv4, fc = layers
    dtype = x.dtype

    def tensor(layer, shape, virtual=True):
        fo = layer["fpp"][3]
        if virtual:
            return g.virtual(shape=shape, dtype=dtype, fixed_point_position=fo)
        return ctx.tensor(shape=shape, dtype=dtype, fixed_point_position=fo)

    def conv(a, layer, out):
        _, fw, fb, _ = layer["fpp"]
        weights = ctx.tensor(layer["w"], fixed_point_position=fw)
        bias = None if layer["b"] is None else ctx.tensor(layer["b"], fixed_point_position=fb)
        g.convolution(a, weights, bias, out=out, padding=layer["pad"], stride=layer["stride"],
                      overflow=layer["overflow"], rounding=layer["rounding"])

    maps = conv1["w"].shape[3]
    middle = conv1["out_wh"] + (maps,)
    xt = ctx.tensor(x, fixed_point_position=conv1["fpp"][0])
    t1, a1 = tensor(conv1, middle), tensor(conv1, middle, virtual=not app_reads_middle)
    t2, s, r = tensor(conv1, middle), tensor(conv1, middle), tensor(conv1, middle)
    q = tensor(conv3, middle[:2] + (conv3["w"].shape[3],))
    p = tensor(conv3, (middle[0] // 2, middle[1] // 2, conv3["w"].shape[3]))
    u = tensor(conv4, conv4["out_wh"] + (conv4["w"].shape[3],))
    out = tensor(fc, (fc["w"].shape[3],), virtual=False)
    conv(xt, conv1, t1)
    g.activation(t1, "relu", out=a1)
    conv(a1, conv2, t2)
    g.add(t2, a1, out=s, overflow="saturate" if add_saturates else "wrap")
    g.activation(s, "relu", out=r)
    conv(r, conv3, q)
    g.pooling(q, p, kind="max", size=(2, 2))
    conv(p, conv4, u)
    _, fw, fb, _ = fc["fpp"]
    g.fully_connected(u, ctx.tensor(fc["w"], fixed_point_position=fw),
                      None if fc["b"] is None else ctx.tensor(fc["b"], fixed_point_position=fb), out=out,
                      overflow=fc["overflow"], rounding=fc["rounding"])
    return out, (a1 if app_reads_middle else None)


def _run(monkeypatch, enabled, build, python_path=False):
    """(bytes of the tensors ``build(ctx, g)`` returns, after a native run or on the Python path; the report)."""
    monkeypatch.setattr(rewrites, "ENABLED", enabled)
    with Context() as ctx, ctx.graph() as g:
        tensors = [t for t in build(ctx, g) if t is not None]
        if python_path:
            read = python_run(ctx, g, tensors)
        else:
            read = [native_run(g, tensors[0]).copy()] + [t.numpy().copy() for t in tensors[1:]]
        return read, model(g.handle).rewrites


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("seed", range(5))
def test_a_random_network_gives_the_reference_bytes_with_its_virtual_tensors_channels_last(monkeypatch, fmt, seed):
    x, layers, add_saturates = _network(seed, fmt)
    expected, _ = _reference(x, layers, add_saturates)

    def build(ctx, g):
        return _build(ctx, g, x, layers, add_saturates)
    (last,), report = _run(monkeypatch, True, build)
    (python,), _ = _run(monkeypatch, True, build, python_path=True)
    (plain,), plain_report = _run(monkeypatch, False, build)
    assert plain.tobytes() == expected.tobytes()
    assert last.tobytes() == plain.tobytes() and python.tobytes() == plain.tobytes()
    # t1, a1, t2, s and r: one class through the relus and the add, written by conv1 and conv2, read by conv2 and
    # conv3 (channels-last: four conversions fewer); conv3's output meets the pooling layer, the pooling layer's
    # output and conv4's the fully connected layer (planes only): planar
    assert len(report.channels_last) == 5 and all(t.virtual for t in report.channels_last)
    assert report.conversions == plain_report.conversions - 4


@pytest.mark.parametrize("fmt", ["s8", "u8"])
def test_a_tensor_the_application_reads_keeps_openvx_order(monkeypatch, fmt):
    x, layers, add_saturates = _network(7, fmt)
    expected, expected_middle = _reference(x, layers, add_saturates)

    def build(ctx, g):
        return _build(ctx, g, x, layers, add_saturates, app_reads_middle=True)
    (got, middle), report = _run(monkeypatch, True, build)
    assert middle.tobytes() == expected_middle.tobytes() and got.tobytes() == expected.tobytes()
    # a1 is the application's, so the relu and the add that meet it take planes only: t1 and the class of t2, s
    # and r each meet a planes-only node and stay planar
    assert not report.channels_last


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("seed", range(3))
def test_a_chain_of_convolutions_does_no_conversion_between_its_nodes(monkeypatch, fmt, seed):
    """conv -> conv -> conv, every stride and padding drawn: both tensors between them channels-last, the only
    conversions those at the application's tensors (the first input packed, the last output stored)."""
    rng = np.random.default_rng([4071, seed, list(FORMATS).index(fmt)])
    dtype = FORMATS[fmt]
    x, _, _ = _network(seed + 20, fmt)
    fx = 8 if fmt == "q78" else 1
    layers, shape = [], x.shape
    for _ in range(3):
        k = int(rng.choice([1, 3]))
        layer = _layer(rng, fmt, shape, fx, int(rng.integers(2, 33)), k, int(rng.integers(0, k // 2 + 1)),
                       int(rng.integers(1, 3)))
        layer["fpp"] = layer["fpp"][:3] + (fx,)
        layers.append(layer)
        shape = layer["out_wh"] + (layer["w"].shape[3],)
    expected = x
    for layer in layers:
        expected = ref_correlation(expected, layer["w"], layer["b"], layer["pad"], layer["stride"], layer["out_wh"],
                                   layer["fpp"], layer["overflow"] == "saturate", layer["rounding"] == "nearest_even")

    def build(ctx, g):
        a = ctx.tensor(x, fixed_point_position=fx)
        for i, layer in enumerate(layers):
            shape = layer["out_wh"] + (layer["w"].shape[3],)
            last = i == len(layers) - 1
            out = (ctx.tensor if last else g.virtual)(shape=shape, dtype=dtype, fixed_point_position=fx)
            bias = None if layer["b"] is None else ctx.tensor(layer["b"], fixed_point_position=layer["fpp"][2])
            g.convolution(a, ctx.tensor(layer["w"], fixed_point_position=layer["fpp"][1]), bias, out=out,
                          padding=layer["pad"], stride=layer["stride"], overflow=layer["overflow"],
                          rounding=layer["rounding"])
            a = out
        return [a]
    (got,), report = _run(monkeypatch, True, build)
    (python,), _ = _run(monkeypatch, True, build, python_path=True)
    (plain,), _ = _run(monkeypatch, False, build)
    assert plain.tobytes() == expected.tobytes()
    assert got.tobytes() == plain.tobytes() and python.tobytes() == plain.tobytes()
    differs = [layer["out_wh"][0] * layer["out_wh"][1] > 1 for layer in layers[:2]]
    assert len(report.channels_last) == sum(differs)
