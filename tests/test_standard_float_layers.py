"""The float32 standard layers on the float engine the front ends share: convolution and fully connected
(``kernels/openvx/float_layers.py``, unless ``OPENVX_NN_F32_SUMS=float64``) and pooling (channel-major plane
kernels, always), through the Pythonic API, against plain NumPy float64 references written from the NN
extension's text; each graph must run in the native plan, and give the same bits on the Python path.

Convolution and fully connected sum in float32, so they are held to ``1e-5`` of the sum of the magnitudes of
their terms (products and bias) -- the float64 reference's own scale. Pooling runs on the plane kernel CoreML's
max pool shares: max exact (the reference's bits), average a float32 sum held to 1e-5 of the mean of its
terms' magnitudes.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from native_testing import model as _model
from native_testing import native_run as _native_run
from native_testing import python_then_native as _python_then_native

from openvx_nn.api import Context
from openvx_nn.kernels.openvx import float_layers

TOLERANCE = 1e-5


@pytest.fixture
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)  # the default: float32 sums


def _values(rng, shape):
    """float32 values of mixed magnitudes, with zeros of both signs."""
    values = (rng.standard_normal(shape) * 2.0 ** rng.integers(-4, 5, shape)).astype(np.float32)
    special = rng.random(shape)
    values[special < 0.05] = 0.0
    values[(special >= 0.05) & (special < 0.1)] = -0.0
    return values


def _out_size(extent: int, pad: int, span: int, stride: int, ceiling: bool) -> int:
    room = extent + 2 * pad - span
    return (math.ceil(room / stride) if ceiling else room // stride) + 1


def _smallest_stride(extent: int, pad: int, span: int, out: int, ceiling: bool) -> int:
    """The stride the NN extension infers: the smallest that gives ``out`` outputs."""
    room = extent + 2 * pad - span
    return next(s for s in range(1, room + 2) if (math.ceil(room / s) if ceiling else room // s) + 1 == out)


def _reference_convolution(x, w, bias, out_wh, pad, stride, dilation):
    """(value, magnitude) in float64 of ``out[ox, oy, k, *b] = bias[k] + sum over kx, ky, c of
    x[ox*sx - px + kx*(dx+1), oy*sy - py + ky*(dy+1), c, *b] * w[kx, ky, c, k]``, zeros outside the input;
    magnitude: the same sum of absolute values."""
    kx_n, ky_n, _, maps = w.shape
    ow, oh = out_wh
    batch = x.shape[3:]
    value = np.zeros((ow, oh, maps) + batch)
    size = np.zeros_like(value)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for ox in range(ow):
        for oy in range(oh):
            for kx in range(kx_n):
                for ky in range(ky_n):
                    ix = ox * stride[0] - pad[0] + kx * (dilation[0] + 1)
                    iy = oy * stride[1] - pad[1] + ky * (dilation[1] + 1)
                    if 0 <= ix < x.shape[0] and 0 <= iy < x.shape[1]:
                        column = x64[ix, iy]                    # [C, *batch]
                        value[ox, oy] += np.einsum("c...,ck->k...", column, w64[kx, ky])
                        size[ox, oy] += np.einsum("c...,ck->k...", np.abs(column), np.abs(w64[kx, ky]))
    if bias is not None:
        b = bias.astype(np.float64).reshape((1, 1, maps) + (1,) * len(batch))
        value, size = value + b, size + np.abs(b)
    return value, size


def _assert_close(got, value, size):
    error = np.abs(got.astype(np.float64) - value)
    bound = TOLERANCE * size + 1e-30
    worst = np.unravel_index(np.argmax(error - bound), error.shape)
    assert np.all(error <= bound), (worst, got[worst], value[worst], size[worst])


def _conv_case(rng, dilated: bool, channels: int | None = None, window: tuple[int, int] | None = None):
    channels, maps = channels or int(rng.integers(1, 20)), int(rng.integers(1, 40))
    kx, ky = window or (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
    dilation = (int(rng.integers(0, 3)), int(rng.integers(0, 3))) if dilated else (0, 0)
    pad = (int(rng.integers(0, kx + 1)), int(rng.integers(0, ky + 1)))
    batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 3))))
    spans = (kx + (kx - 1) * dilation[0], ky + (ky - 1) * dilation[1])
    shape = tuple(max(int(rng.integers(1, 24)), spans[a] - 2 * pad[a]) for a in (0, 1)) + (channels,) + batch
    ceiling = bool(rng.integers(2))
    wanted = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    out_wh = tuple(_out_size(shape[a], pad[a], spans[a], wanted[a], ceiling) for a in (0, 1))
    stride = tuple(_smallest_stride(shape[a], pad[a], spans[a], out_wh[a], ceiling) for a in (0, 1))
    return shape, (kx, ky, channels, maps), pad, dilation, batch, ceiling, out_wh, stride


def _convolution_graph(ctx, g, rng, case, with_bias):
    shape, w_shape, pad, dilation, batch, ceiling, out_wh, _ = case
    x = ctx.tensor(_values(rng, shape))
    w = _values(rng, w_shape)
    b = _values(rng, (w_shape[3],)) if with_bias else None
    out = ctx.tensor(shape=out_wh + (w_shape[3],) + batch, dtype=np.float32)
    g.convolution(x, w, b, out=out, padding=pad, dilation=dilation, ds_rounding="ceiling" if ceiling else "floor")
    return x, w, b, out


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("seed", range(4))
def test_a_float32_convolution_on_the_float_engine_matches_the_float64_reference_natively(seed):
    rng = np.random.default_rng([4000, seed])
    for index in range(4):
        case = _conv_case(rng, dilated=False)
        with Context() as ctx, ctx.graph() as g:
            x, w, b, out = _convolution_graph(ctx, g, rng, case, with_bias=index % 2 == 0)
            python, native = _python_then_native(ctx, g, out)
            assert _model(g.handle).order[0].state["float"], "the layer did not take the float engine"
            assert python.tobytes() == native.tobytes(), case
            value, size = _reference_convolution(x.numpy(), w, b, case[6], case[2], case[7], case[3])
            _assert_close(native, value, size)


def _on_planes(g) -> bool:
    """Whether the graph's first node, a float32 convolution, was planned on the plane kernel."""
    node = _model(g.handle).order[0]
    return node.state["planned"].current(node.params[1]).planes is not None


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("seed", range(3))
def test_a_one_map_convolution_on_the_plane_kernel_gives_the_engines_bits(seed, monkeypatch):
    # one input map and a window of 1, 2 or 9 taps: chw_depthwise, whose sums are the engine's in the same order
    rng = np.random.default_rng([4004, seed])
    for index, window in enumerate([(3, 3), (1, 1), (2, 1), (1, 2), (3, 3), (9, 1)]):
        case = _conv_case(rng, dilated=False, channels=1, window=window)
        outputs = {}
        for planes in (True, False):
            monkeypatch.setattr(float_layers, "ONE_MAP_PLANES", planes)
            values = np.random.default_rng([4005, seed, index])  # the same values for both graphs
            with Context() as ctx, ctx.graph() as g:
                x, w, b, out = _convolution_graph(ctx, g, values, case, with_bias=index % 3 != 1)
                python, native = _python_then_native(ctx, g, out)
                assert _on_planes(g) == planes, (case, planes)
                assert python.tobytes() == native.tobytes(), case
                outputs[planes], inputs = native, x.numpy()
        assert outputs[True].tobytes() == outputs[False].tobytes(), case
        value, size = _reference_convolution(inputs, w, b, case[6], case[2], case[7], case[3])
        _assert_close(outputs[True], value, size)


@pytest.mark.usefixtures("float_sums")
def test_other_windows_of_one_map_stay_on_the_engine():
    # 3 to 8 taps, or more than 9: the plane kernel sums three taps a pass, another order
    rng = np.random.default_rng(4006)
    for window in [(3, 1), (2, 2), (5, 5), (4, 3)]:
        case = _conv_case(rng, dilated=False, channels=1, window=window)
        with Context() as ctx, ctx.graph() as g:
            x, w, b, out = _convolution_graph(ctx, g, rng, case, with_bias=True)
            got = _native_run(g, out)
            assert not _on_planes(g), case
            value, size = _reference_convolution(x.numpy(), w, b, case[6], case[2], case[7], case[3])
            _assert_close(got, value, size)


def _depthwise_by_views(planes: bool, monkeypatch, seed: int):
    """A 3x3 depthwise layer written as the standard allows: one single-map convolution per map, on views of a
    virtual input and output, weights and biases views of one tensor each; then abs to a tensor the application
    reads. The output (and the graph's nodes, for the route)."""
    monkeypatch.setattr(float_layers, "ONE_MAP_PLANES", planes)
    rng = np.random.default_rng(seed)
    side, maps, stride = 13, 6, 2
    x_values = _values(rng, (side, side, maps))
    x_values[3, 4, 1] = np.inf  # inf * weight, inf * 0 in a window: the same in both routes
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(x_values)
        weights, biases = ctx.tensor(_values(rng, (3, 3, 1, maps))), ctx.tensor(_values(rng, (maps,)))
        inner = g.relu(x, out=g.virtual(shape=(side, side, maps), dtype=np.float32))
        out_side = (side + 2 - 3) // stride + 1
        deep = g.virtual(shape=(out_side, out_side, maps), dtype=np.float32)
        for m in range(maps):
            g.convolution(inner.view((0, 0, m), (side, side, m + 1)), weights.view((0, 0, 0, m), (3, 3, 1, m + 1)),
                          biases.view((m,), (m + 1,)), out=deep.view((0, 0, m), (out_side, out_side, m + 1)),
                          padding=(1, 1))
        out = ctx.tensor(shape=(out_side, out_side, maps), dtype=np.float32)
        g.activation(deep, "abs", out=out)
        got = _native_run(g, out)
        routes = [n.state["planned"].current(n.params[1]).planes is not None for n in _model(g.handle).order
                  if "convolution" in n.description.name]
        inputs = (np.maximum(x_values, 0), weights.numpy(), biases.numpy())
    return got, routes, inputs, (out_side, out_side), stride


@pytest.mark.usefixtures("float_sums")
def test_a_depthwise_layer_written_map_by_map_on_views_runs_on_planes_with_the_same_bytes(monkeypatch):
    on, routes_on, (x, w, b), out_wh, stride = _depthwise_by_views(True, monkeypatch, 4007)
    off, routes_off, _, _, _ = _depthwise_by_views(False, monkeypatch, 4007)
    assert all(routes_on) and not any(routes_off)
    assert on.tobytes() == off.tobytes()
    for m in range(x.shape[2]):
        value, size = _reference_convolution(x[:, :, m:m + 1], w[:, :, :, m:m + 1], b[m:m + 1], out_wh, (1, 1),
                                             (stride, stride), (0, 0))
        finite = np.isfinite(value)
        assert np.array_equal(np.isfinite(on[:, :, m:m + 1]), finite)
        _assert_close(np.where(finite, on[:, :, m:m + 1], 0), np.where(finite, np.abs(value), 0),
                      np.where(finite, size, 0))


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("seed", range(3))
def test_a_dilated_float32_convolution_takes_the_float_engine_and_matches_the_reference_natively(seed):
    rng = np.random.default_rng([4001, seed])
    for index in range(4):
        case = _conv_case(rng, dilated=True)
        with Context() as ctx, ctx.graph() as g:
            x, w, b, out = _convolution_graph(ctx, g, rng, case, with_bias=index % 2 == 1)
            python, native = _python_then_native(ctx, g, out)
            assert _model(g.handle).order[0].state["float"], "the dilated layer did not take the float engine"
            assert python.tobytes() == native.tobytes(), case
            value, size = _reference_convolution(x.numpy(), w, b, case[6], case[2], case[7], case[3])
            _assert_close(native, value, size)


@pytest.mark.usefixtures("float_sums")
def test_a_dilated_float32_convolution_called_directly_matches_the_reference():
    # kernels.openvx.convolution.convolution (no graph) takes the same engine with the dilation
    from openvx_nn.kernels.openvx.convolution import convolution
    rng = np.random.default_rng(4004)
    for _ in range(4):
        shape, w_shape, pad, dilation, batch, _, out_wh, stride = _conv_case(rng, dilated=True)
        x, w, b = _values(rng, shape), _values(rng, w_shape), _values(rng, (w_shape[3],))
        out = np.zeros(out_wh + (w_shape[3],) + batch, np.float32)
        convolution(x, w, b, out, *pad, *stride, *dilation, True, True)
        _assert_close(out, *_reference_convolution(x, w, b, out_wh, pad, stride, dilation))


def test_asked_for_float64_sums_a_float32_convolution_keeps_them(monkeypatch):
    monkeypatch.setenv("OPENVX_NN_F32_SUMS", "float64")
    rng = np.random.default_rng(4002)
    case = _conv_case(rng, dilated=False)
    with Context() as ctx, ctx.graph() as g:
        _convolution_graph(ctx, g, rng, case, with_bias=True)
        g.verify()
        assert not _model(g.handle).order[0].state["float"]


@pytest.mark.usefixtures("float_sums")
def test_weights_written_after_verify_are_packed_again():
    rng = np.random.default_rng(4003)
    case = _conv_case(rng, dilated=False)
    with Context() as ctx, ctx.graph() as g:
        shape, w_shape, pad, dilation, batch, ceiling, out_wh, stride = case
        x = ctx.tensor(_values(rng, shape))
        weights = ctx.tensor(_values(rng, w_shape))
        out = ctx.tensor(shape=out_wh + (w_shape[3],) + batch, dtype=np.float32)
        g.convolution(x, weights, None, out=out, padding=pad, ds_rounding="ceiling" if ceiling else "floor")
        g.process()
        fresh = _values(rng, w_shape)
        weights.write(fresh)
        g.process()
        value, size = _reference_convolution(x.numpy(), fresh, None, out_wh, pad, stride, dilation)
        _assert_close(out.numpy(), value, size)


def _reference_fully_connected(x2, w2, bias):
    """``out[i, b] = sum_j x[j, b] * w[j, i] + bias[i]`` in float64, and the magnitude of its terms."""
    x64, w64 = x2.astype(np.float64), w2.astype(np.float64)
    value, size = w64.T @ x64, np.abs(w64.T) @ np.abs(x64)
    if bias is not None:
        value, size = value + bias.astype(np.float64)[:, None], size + np.abs(bias.astype(np.float64))[:, None]
    return value, size


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("seed", range(3))
def test_a_float32_fully_connected_layer_on_the_float_engine_matches_the_reference_natively(seed):
    rng = np.random.default_rng([4010, seed])
    for index in range(4):
        maps = int(rng.integers(1, 80))
        batch = int(rng.integers(1, 5))
        image = index % 2 == 1  # [W, H, C, B] input, weights [W * H * C, #OFM]
        x_shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 9)), batch) if image \
            else (int(rng.integers(1, 300)), batch)
        ifm = math.prod(x_shape[:-1])
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, x_shape))
            w = _values(rng, (ifm, maps))
            b = _values(rng, (maps,)) if index < 2 else None
            out = ctx.tensor(shape=(maps, batch), dtype=np.float32)
            g.fully_connected(x, w, b, out=out)
            python, native = _python_then_native(ctx, g, out)
            assert _model(g.handle).order[0].state["float"]
            assert python.tobytes() == native.tobytes()
            value, size = _reference_fully_connected(x.numpy().reshape((ifm, batch), order="F"), w, b)
            _assert_close(native, value, size)


def _reference_pooling(x, out_wh, max_pool, size, pad, stride):
    """The NN extension's pooling in float64: window ``(ox, oy)`` covers columns ``ox*sx - px ..`` and rows
    ``oy*sy - py ..`` (``size`` of each); max over the positions inside the input (none: 0), average the sum over
    them (rows outer, columns inner, from 0.0) divided by the whole window's area, rounded to float32 once."""
    out = np.zeros(out_wh + x.shape[2:], np.float32)
    planes = x.reshape(x.shape[:2] + (-1,), order="F")
    flat = out.reshape(out_wh + (-1,), order="F")
    for plane in range(planes.shape[2]):
        for ox in range(out_wh[0]):
            for oy in range(out_wh[1]):
                xs = range(max(0, ox * stride[0] - pad[0]), min(x.shape[0], ox * stride[0] - pad[0] + size[0]))
                ys = range(max(0, oy * stride[1] - pad[1]), min(x.shape[1], oy * stride[1] - pad[1] + size[1]))
                inside = [float(planes[i, j, plane]) for j in ys for i in xs]
                if max_pool:
                    flat[ox, oy, plane] = _largest(inside) if inside else 0.0
                else:
                    total = 0.0
                    for v in inside:
                        total += v
                    flat[ox, oy, plane] = np.float32(total / (size[0] * size[1]))
    return flat.reshape(out.shape, order="F")


def _largest(values):
    """The maximum with +0.0 above -0.0."""
    best = values[0]
    for v in values[1:]:
        if v > best or (v == best == 0.0 and math.copysign(1.0, best) < 0):
            best = v
    return best


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("seed", range(3))
def test_float32_pooling_on_planes_matches_the_reference_natively(kind, seed):
    rng = np.random.default_rng([4020, seed, kind == "max"])
    for _ in range(4):
        size = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        pad = (int(rng.integers(0, size[0])), int(rng.integers(0, size[1])))
        batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 3))))
        shape = tuple(max(int(rng.integers(1, 20)), size[a] - 2 * pad[a]) for a in (0, 1)) + \
            (int(rng.integers(1, 9)),) + batch
        ceiling = bool(rng.integers(2))
        wanted = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        out_wh = tuple(_out_size(shape[a], pad[a], size[a], wanted[a], ceiling) for a in (0, 1))
        stride = tuple(_smallest_stride(shape[a], pad[a], size[a], out_wh[a], ceiling) for a in (0, 1))
        with Context() as ctx, ctx.graph() as g:
            x = ctx.tensor(_values(rng, shape))
            out = ctx.tensor(shape=out_wh + shape[2:], dtype=np.float32)
            g.pooling(x, out, kind=kind, size=size, padding=pad, ds_rounding="ceiling" if ceiling else "floor")
            python, native = _python_then_native(ctx, g, out)
            expected = _reference_pooling(x.numpy(), out_wh, kind == "max", size, pad, stride)
            assert python.tobytes() == native.tobytes()
            if kind == "max":
                assert native.view(np.uint32).tolist() == expected.view(np.uint32).tolist(), \
                    (shape, size, pad, stride, out_wh)
            else:
                magnitude = _reference_pooling(np.abs(x.numpy()), out_wh, False, size, pad, stride)
                _assert_close(native, expected.astype(np.float64), magnitude.astype(np.float64))


@pytest.mark.parametrize("seed", range(2))
def test_float32_average_pooling_with_exact_sums_gives_the_references_bits(monkeypatch, seed):
    monkeypatch.setenv("OPENVX_NN_F32_SUMS", "float64")
    rng = np.random.default_rng([4021, seed])
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(_values(rng, (13, 9, 5, 2)))
        out = ctx.tensor(shape=(7, 5, 5, 2), dtype=np.float32)
        g.pooling(x, out, kind="avg", size=(3, 3), padding=(1, 1), ds_rounding="floor")
        python, native = _python_then_native(ctx, g, out)
        expected = _reference_pooling(x.numpy(), (7, 5), False, (3, 3), (1, 1), (2, 2))
        assert python.tobytes() == native.tobytes() == expected.tobytes()


@pytest.mark.usefixtures("float_sums")
def test_a_large_float32_layer_shares_its_work_and_still_matches():
    # big enough that the native entries lend chunks to the helper threads: every run the same bits
    rng = np.random.default_rng(4030)
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(_values(rng, (30, 30, 32, 1)))
        w = _values(rng, (3, 3, 32, 48))
        b = _values(rng, (48,))
        out = ctx.tensor(shape=(30, 30, 48, 1), dtype=np.float32)
        pooled = ctx.tensor(shape=(15, 15, 48, 1), dtype=np.float32)
        g.convolution(x, w, b, out=out, padding=(1, 1))
        g.pooling(out, pooled, kind="max", size=(2, 2))
        first = _native_run(g, pooled)
        for _ in range(5):
            assert _native_run(g, pooled).tobytes() == first.tobytes()
        value, size = _reference_convolution(x.numpy(), w, b, (30, 30), (1, 1), (1, 1), (0, 0))
        _assert_close(out.numpy(), value, size)


@pytest.mark.usefixtures("float_sums")
def test_views_into_larger_tensors_are_read_and_written_in_place():
    # strided views: no native entry (the Python path copies them), the same values
    rng = np.random.default_rng(4040)
    with Context() as ctx, ctx.graph() as g:
        big = ctx.tensor(_values(rng, (12, 10, 4, 2)))
        x = big.view((1, 2, 0, 0), (10, 9, 3, 2))               # [9, 7, 3, 2]
        w = _values(rng, (3, 2, 3, 5))
        b = _values(rng, (5,))
        whole = ctx.tensor(np.zeros((9, 8, 6, 2), np.float32))
        out = whole.view((1, 1, 1, 0), (8, 7, 6, 2))             # [7, 6, 5, 2]
        g.convolution(x, w, b, out=out)
        g.process()
        value, size = _reference_convolution(x.numpy(), w, b, (7, 6), (0, 0), (1, 1), (0, 0))
        _assert_close(out.numpy(), value, size)
        around = whole.numpy()
        around[1:8, 1:7, 1:6] = 0
        assert not around.any(), "the layer wrote outside its output view"


@pytest.mark.usefixtures("float_sums")
@pytest.mark.parametrize("seed", range(3))
def test_a_padded_input_copied_into_its_bordered_buffer_gives_the_old_copies_bits(seed, monkeypatch):
    # the edge copies in squares into a zero-bordered buffer the engine reads in place, against the plain loop
    # and the engine's own padded copy: the same bytes, over channels and widths around the squares' sides
    from openvx_nn.kernels.frontend import chw_layout
    rng = np.random.default_rng([4040, seed])
    for index in range(4):
        case = _conv_case(rng, dilated=False, channels=int(rng.choice([3, 8, 17, 24, 33])))
        outputs = {}
        for blocks in ("0", "1"):
            monkeypatch.setenv(chw_layout.BLOCKS_ENV, blocks)
            values = np.random.default_rng([4041, seed, index])
            with Context() as ctx, ctx.graph() as g:
                x, w, b, out = _convolution_graph(ctx, g, values, case, with_bias=True)
                python, native = _python_then_native(ctx, g, out)
                assert python.tobytes() == native.tobytes(), case
                outputs[blocks], inputs = native, x.numpy()
        assert outputs["0"].tobytes() == outputs["1"].tobytes(), case
        value, size = _reference_convolution(inputs, w, b, case[6], case[2], case[7], case[3])
        _assert_close(outputs["1"], value, size)


def test_the_edge_border_is_the_padding_every_window_needs(monkeypatch):
    from openvx_nn.kernels.frontend import chw_layout
    monkeypatch.setenv(chw_layout.BLOCKS_ENV, "1")
    x, planar = np.zeros((20, 20, 4, 1), np.float32, order="F"), (False, False)
    layer = float_layers.Convolution(np.zeros((3, 3, 4, 8), np.float32), (1, 2), (1, 1))
    assert layer.edge_border(x, np.zeros((20, 22, 8, 1), np.float32, order="F"), planar) == 2
    # ceiling rounding: a last window past the padding on the right
    layer = float_layers.Convolution(np.zeros((3, 3, 4, 8), np.float32), (0, 0), (2, 2))
    assert layer.edge_border(x, np.zeros((10, 9, 8, 1), np.float32, order="F"), planar) == 1
    assert layer.edge_border(x, np.zeros((9, 9, 8, 1), np.float32, order="F"), planar) == 0
    dilated = float_layers.Convolution(np.zeros((3, 3, 4, 8), np.float32), (2, 2), (1, 1), (1, 1))
    assert dilated.edge_border(x, np.zeros((20, 20, 8, 1), np.float32, order="F"), planar) == 0
    monkeypatch.setenv(chw_layout.BLOCKS_ENV, "0")
    assert layer.edge_border(x, np.zeros((10, 9, 8, 1), np.float32, order="F"), planar) == 0
