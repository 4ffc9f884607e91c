"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the pools against plain references."""
import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    Q8,
    Out,
    Tensor,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
    dequantize,
    i32,
    quantize,
    random_q8,
    run,
)
from nnapi_reference import activation, conv2d, depthwise, pool, same_padding

from openvx_nn import nnapi

OP = nnapi.OperationType


def _data(rng, kind, shape, bias_units=None):
    """(tensor spec, real values) for the input, filter and bias of a layer."""
    if kind == F32T:
        x = rng.standard_normal(shape).astype(np.float32)
        return Tensor(x), x.astype(np.float64)
    scale, zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(0, 256))
    q = random_q8(rng, shape)
    return Tensor(q, scale, zp), dequantize(q, scale, zp)


def _bias(rng, kind, units, x_spec, w_spec):
    if kind == F32T:
        b = rng.standard_normal(units).astype(np.float32)
        return Tensor(b, const=True), b.astype(np.float64)
    scale = x_spec.scale * w_spec.scale
    b = rng.integers(-2000, 2000, units).astype(np.int32)
    return Tensor(b, scale, 0, const=True), b * scale


def _check(rng, kind, real, shape, act):
    want = activation(real, act)
    if kind == F32T:
        return Out(F32T, shape), want
    lo, hi = want.min(), want.max()
    scale = max(hi - lo, 1e-3) / 255
    zp = int(np.clip(round(-lo / scale), 0, 255))
    return Out(Q8, shape, scale, zp), quantize(want, scale, zp)


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("form", ["explicit", "same", "valid"])
def test_conv2d_matches_the_reference(kind, form):
    rng = np.random.default_rng(hash((int(kind), form)) % 1000)
    n, h, w, c, o, kh, kw = 1, int(rng.integers(4, 8)), int(rng.integers(4, 8)), 3, 4, 3, 2
    sw, sh = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = int(rng.integers(0, 4))
    xs, x = _data(rng, kind, (n, h, w, c))
    ws, wt = _data(rng, kind, (o, kh, kw, c))
    ws.const = True
    bs, b = _bias(rng, kind, o, xs, ws)
    if form == "explicit":
        pads = tuple(int(v) for v in rng.integers(0, 2, 4))
        params = [i32(p) for p in pads] + [i32(sw), i32(sh), i32(act)]
    elif form == "same":
        (left, right), (top, bottom) = same_padding(w, kw, sw), same_padding(h, kh, sh)
        pads = (left, right, top, bottom)
        params = [i32(1), i32(sw), i32(sh), i32(act)]
    else:
        pads = (0, 0, 0, 0)
        params = [i32(2), i32(sw), i32(sh), i32(act)]
    real = conv2d(x, wt, b, pads, (sw, sh))
    out, want = _check(rng, kind, real, real.shape, act)
    (got,) = run(OP.CONV_2D, [xs, ws, bs] + params, [out])
    assert_close(got, want, kind)


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("mult", [1, 2])
def test_depthwise_conv2d_with_depth_multiplier(kind, mult):
    rng = np.random.default_rng(10 + mult + int(kind))
    h, w, c = 6, 5, 3
    xs, x = _data(rng, kind, (2, h, w, c))
    ws, wt = _data(rng, kind, (1, 3, 3, c * mult))
    ws.const = True
    bs, b = _bias(rng, kind, c * mult, xs, ws)
    pads, strides, act = (1, 0, 1, 1), (2, 1), 1
    real = depthwise(x, wt, b, pads, strides, mult)
    out, want = _check(rng, kind, real, real.shape, act)
    params = [i32(p) for p in pads] + [i32(strides[0]), i32(strides[1]), i32(mult), i32(act)]
    (got,) = run(OP.DEPTHWISE_CONV_2D, [xs, ws, bs] + params, [out])
    assert_close(got, want, kind)
    # the implicit form (SAME)
    (left, right), (top, bottom) = same_padding(w, 3, 1), same_padding(h, 3, 1)
    real = depthwise(x, wt, b, (left, right, top, bottom), (1, 1), mult)
    out, want = _check(rng, kind, real, real.shape, 0)
    (got,) = run(OP.DEPTHWISE_CONV_2D, [xs, ws, bs, i32(1), i32(1), i32(1), i32(mult), i32(0)], [out])
    assert_close(got, want, kind)


@pytest.mark.parametrize("kind", [F32T, Q8])
def test_fully_connected_flattens_its_input(kind):
    rng = np.random.default_rng(3 + int(kind))
    xs, x = _data(rng, kind, (2, 3, 2, 2))
    ws, wt = _data(rng, kind, (5, 6))
    ws.const = False  # weights as a model input
    bs, b = _bias(rng, kind, 5, xs, ws)
    real = x.reshape(-1, 6) @ wt.T + b
    out, want = _check(rng, kind, real, real.shape, 3)
    (got,) = run(OP.FULLY_CONNECTED, [xs, ws, bs, i32(3)], [out])
    assert_close(got, want, kind)


@pytest.mark.parametrize("kind", [F32T, Q8])
@pytest.mark.parametrize("op", [OP.AVERAGE_POOL_2D, OP.MAX_POOL_2D, OP.L2_POOL_2D])
def test_pools_ignore_padded_positions(kind, op):
    if op == OP.L2_POOL_2D and kind == Q8:
        pytest.skip("L2_POOL_2D is float32 only in NNAPI 1.0")
    rng = np.random.default_rng(int(op) * 7 + int(kind))
    xs, x = _data(rng, kind, (1, 7, 6, 3))
    pads, strides, size = (1, 1, 0, 1), (2, 2), (3, 2)
    ref = {OP.AVERAGE_POOL_2D: "avg", OP.MAX_POOL_2D: "max", OP.L2_POOL_2D: "l2"}[op]
    real = pool(x, ref, pads, strides, size)
    if kind == F32T:
        out, want = Out(F32T, real.shape), real
    else:
        out, want = Out(Q8, real.shape, xs.scale, xs.zero_point), quantize(real, xs.scale, xs.zero_point)
    params = [i32(p) for p in pads] + [i32(strides[0]), i32(strides[1]), i32(size[0]), i32(size[1]), i32(0)]
    (got,) = run(op, [xs] + params, [out])
    assert_close(got, want, kind)
    # implicit VALID with RELU6
    real = activation(pool(x, ref, (0, 0, 0, 0), (1, 2), (2, 2)), 3)
    if kind == F32T:
        out, want = Out(F32T, real.shape), real
    else:
        out, want = Out(Q8, real.shape, xs.scale, xs.zero_point), quantize(real, xs.scale, xs.zero_point)
    (got,) = run(op, [xs, i32(2), i32(1), i32(2), i32(2), i32(2), i32(3)], [out])
    assert_close(got, want, kind)


def _kernels(op, inputs, outputs):
    from nnapi_harness import build
    m, _, _ = build(op, inputs, outputs)
    c = nnapi.Compilation(m)
    c.finish()
    names = [n.description.name.rsplit(".", 1)[1] for n in c.prepared.graph.nodes]
    c.release()
    return names


@pytest.mark.parametrize("pads,act", [((1, 1, 1, 1), 1), ((0, 0, 2, 2), 0), ((1, 1, 0, 0), 3)])
def test_float32_conv2d_runs_as_one_nhwc_node_without_transposes(pads, act):
    rng = np.random.default_rng(sum(pads) + act)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    real = activation(conv2d(x.astype(np.float64), w, b, pads, (1, 2)), act)
    inputs = [Tensor(x), Tensor(w, const=True), Tensor(b, const=True)] + [i32(p) for p in pads] + \
        [i32(1), i32(2), i32(act)]
    assert _kernels(OP.CONV_2D, inputs, [Out(F32T, real.shape)]) == ["conv_2d"]
    (got,) = run(OP.CONV_2D, inputs, [Out(F32T, real.shape)])
    assert_close(got, real, F32T)


@pytest.mark.parametrize("op,pads", [(OP.MAX_POOL_2D, (1, 1, 1, 1)), (OP.AVERAGE_POOL_2D, (0, 0, 0, 0))])
def test_float32_pools_run_as_one_nhwc_node_without_transposes(op, pads):
    x = np.random.default_rng(int(op)).standard_normal((2, 7, 6, 3)).astype(np.float32)
    ref = "max" if op == OP.MAX_POOL_2D else "avg"
    real = activation(pool(x.astype(np.float64), ref, pads, (2, 2), (3, 2)), 3)
    inputs = [Tensor(x)] + [i32(p) for p in pads] + [i32(2), i32(2), i32(3), i32(2), i32(3)]
    assert _kernels(op, inputs, [Out(F32T, real.shape)]) == [op.name.lower()]
    (got,) = run(op, inputs, [Out(F32T, real.shape)])
    assert_close(got, real, F32T)


@pytest.mark.parametrize("mult", [1, 2, 3])
def test_float32_depthwise_is_one_node_for_any_depth_multiplier(mult):
    # NNAPI's grouped convolution: groups = input channels, each with `mult` filters (one node, no
    # per-channel nodes, views or copies, whatever the multiplier).
    rng = np.random.default_rng(mult)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    w = rng.standard_normal((1, 3, 2, 3 * mult)).astype(np.float32)
    b = rng.standard_normal(3 * mult).astype(np.float32)
    pads, strides = (1, 0, 1, 1), (1, 2)
    real = activation(depthwise(x.astype(np.float64), w, b, pads, strides, mult), 1)
    inputs = [Tensor(x), Tensor(w, const=True), Tensor(b, const=True)] + [i32(p) for p in pads] + \
        [i32(strides[0]), i32(strides[1]), i32(mult), i32(1)]
    assert _kernels(OP.DEPTHWISE_CONV_2D, inputs, [Out(F32T, real.shape)]) == ["depthwise_conv_2d"]
    (got,) = run(OP.DEPTHWISE_CONV_2D, inputs, [Out(F32T, real.shape)])
    assert_close(got, real, F32T)
