"""The float32 pooling layer on channels-last tensors (``chw_pooling.pool_pixels``, chosen by ``core/rewrites``):
the same bytes as on planes (NaN payloads of both signs, -inf, windows wholly in the padding, both divisors),
against a plain reference written from the layer's rule, and in graphs: the same bytes as with the rewrites off,
with no layout conversion around a pool between the engine's layers."""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run
from test_plan_rewrites import _run_both_ways, _weights

from openvx_nn.api import Context
from openvx_nn.core import rewrites
from openvx_nn.kernels.frontend import chw_pooling


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def reference(x, average, kernel, stride, offset, out_hw):
    """x [N, H, W, C] in float64: per output, over the window's positions inside the input (the padding takes no
    part in a maximum and counts as zeros in an average): the maximum (NaN if any value is NaN) or the sum
    divided by the whole window's area; a window with no position inside gives 0."""
    (kh, kw), (sy, sx), (top, left) = kernel, stride, offset
    n, _, _, c = x.shape
    out = np.zeros((n, out_hw[0], out_hw[1], c))
    for oy in range(out_hw[0]):
        for ox in range(out_hw[1]):
            y0, x0 = oy * sy - top, ox * sx - left
            window = x[:, max(y0, 0):max(y0 + kh, 0), max(x0, 0):max(x0 + kw, 0)].reshape(n, -1, c)
            if window.shape[1] == 0:
                continue
            if average:
                out[:, oy, ox] = window.astype(np.float64).sum(axis=1) / (kh * kw)
            else:
                nan = np.isnan(window).any(axis=1)
                out[:, oy, ox] = np.where(nan, np.nan, np.nanmax(np.where(np.isnan(window), -np.inf, window), axis=1))
    return out


def _edge_values(rng, shape, nan_share=0.04):
    """Normal values with NaN of random payloads and both signs, -inf and +inf sprinkled in."""
    x = rng.standard_normal(shape).astype(np.float32)
    bits = x.view(np.uint32)
    nan = rng.random(shape) < nan_share
    payload = (0x7F800001 + rng.integers(0, 0x3FFFFF, int(nan.sum()))).astype(np.uint32)
    bits[nan] = payload | (rng.integers(0, 2, int(nan.sum())).astype(np.uint32) << 31)
    x[rng.random(shape) < 0.03] = -np.inf
    x[rng.random(shape) < 0.01] = np.inf
    return x


def _geometry(rng):
    kh, kw, sy, sx = (int(v) for v in rng.integers(1, 5, 4))
    return (kh, kw), (sy, sx), (int(rng.integers(0, kh)), int(rng.integers(0, kw)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_pixels_give_the_bytes_of_planes_and_the_plain_reference(seed, average):
    rng = np.random.default_rng([4100, seed, average])
    n, h, w, c = int(rng.integers(1, 3)), int(rng.integers(1, 13)), int(rng.integers(1, 13)), int(rng.integers(1, 70))
    kernel, stride, offset = _geometry(rng)
    extra = int(rng.integers(0, 3))  # outputs past the last window (ceiling rounding, declared sizes): all padding
    out_hw = (max(1, (h + 2 * offset[0] - kernel[0]) // stride[0] + 1 + extra),
              max(1, (w + 2 * offset[1] - kernel[1]) // stride[1] + 1 + extra))
    x = _edge_values(rng, (n, h, w, c), nan_share=0.04 if seed % 2 else 0.0)
    pixels = np.empty((n,) + out_hw + (c,), np.float32)
    chw_pooling.pool_pixels(x, pixels, average, *kernel, *stride, *offset, np.float32(0.0), 0, n * out_hw[0])
    planes_in = np.ascontiguousarray(x.transpose(0, 3, 1, 2)).reshape(n * c, h, w)
    planes = np.empty((n * c,) + out_hw, np.float32)
    chw_pooling.pool_planes(planes_in, planes, average, *kernel, *stride, *offset, np.float32(0.0), 0, n * c)
    assert pixels.tobytes() == planes.reshape(n, c, *out_hw).transpose(0, 2, 3, 1).tobytes()
    ref = reference(x, average, kernel, stride, offset, out_hw)
    assert np.array_equal(np.isnan(pixels), np.isnan(ref))
    finite = np.isfinite(ref)
    assert np.array_equal(pixels[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    if average:
        magnitude = reference(np.abs(x), True, kernel, stride, offset, out_hw)  # chw_pooling's bound
        bound = ((kernel[0] + kernel[1]) * 2.0 ** -24 * magnitude + kernel[0] * kernel[1] * 2.0 ** -148)[finite]
        assert np.all(np.abs(pixels[finite] - ref[finite]) <= bound)
    else:
        assert np.array_equal(pixels[finite], ref[finite])


def _pool_block(ctx, g, rng, x, kind, size, padding, stride, maps=8, application_in=False, application_out=False):
    """conv 3x3 + relu -> pool -> conv 1x1 -> out, or the pool reading the application's input or writing the
    application's output (then no convolution on that side)."""
    c = x.shape[2]
    w1, w2 = _weights(rng, (3, 3, c, maps)), _weights(rng, (1, 1, maps, 3))
    xt = ctx.tensor(x)
    source = xt if application_in else g.relu(g.convolution(xt, w1, None, out=g.virtual(), padding=(1, 1)),
                                              out=g.virtual())
    out_c = c if application_in else maps
    known = source.known()[0] if application_in else x.shape[:2] + (maps,)
    ow, oh = ((known[i] + 2 * padding[i] - size[i]) // stride[i] + 1 for i in (0, 1))
    pooled = ctx.tensor(shape=(ow, oh, out_c), dtype=np.float32) if application_out else g.virtual()
    g.pooling(source, pooled, kind=kind, size=size, padding=padding, stride=stride)
    if application_out:
        return pooled
    out = ctx.tensor(shape=(ow, oh, 3), dtype=np.float32)
    g.convolution(pooled, w2 if not application_in else _weights(rng, (1, 1, c, 3)), None, out=out)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(6))
def test_a_pool_between_channels_last_layers_converts_nothing_and_keeps_the_bytes(monkeypatch, seed):
    rng = np.random.default_rng([4101, seed])
    kind = ["max", "avg"][seed % 2]
    size = (int(rng.integers(2, 4)), int(rng.integers(2, 4)))
    padding = (int(rng.integers(0, size[0])), int(rng.integers(0, size[1])))
    stride = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
    x = _edge_values(rng, (int(rng.integers(4, 12)), int(rng.integers(4, 12)), int(rng.integers(2, 5))),
                     nan_share=0.02 if seed >= 4 else 0.0)

    def build(ctx, g):
        return [_pool_block(ctx, g, np.random.default_rng([4102, seed]), x, kind, size, padding, stride)]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes()
    (python,), _, _ = _run_both_ways(monkeypatch, build, python_path=True)
    assert python.tobytes() == plain.tobytes()
    # the convolution's output, the relu's and the pool's are channels-last; the application's input and output
    # convert once each, nothing around the pool
    assert report.conversions == 2 and len(report.channels_last) == 3


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("side", ["application_in", "application_out"])
def test_a_pool_with_one_planar_side_converts_once_and_keeps_the_bytes(monkeypatch, side):
    rng = np.random.default_rng(4103)
    x = _edge_values(rng, (9, 7, 5), nan_share=0.02)

    def build(ctx, g):
        return [_pool_block(ctx, g, np.random.default_rng(4104), x, "max", (3, 3), (1, 1), (2, 2), **{side: True})]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes()
    (python,), _, _ = _run_both_ways(monkeypatch, build, python_path=True)
    assert python.tobytes() == plain.tobytes()
    # the pool's channels-last side: its output (read by the convolution) or its input (the convolution and
    # relu's); one conversion by the pool, one at the application's other end
    assert len(report.channels_last) == (1 if side == "application_in" else 2) and report.conversions == 2


def test_a_global_average_pool_reads_channels_last_and_writes_its_one_pixel_as_is(monkeypatch):
    """ResNet's head: the 1x1 output's two orders are the same bytes, so the pool converts nothing."""
    rng = np.random.default_rng(4105)
    x = _edge_values(rng, (7, 7, 3), nan_share=0.0)
    w = _weights(rng, (3, 3, 3, 16))
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        with Context() as ctx, ctx.graph() as g:
            t = g.relu(g.convolution(ctx.tensor(x), w, None, out=g.virtual(), padding=(1, 1)), out=g.virtual())
            out = ctx.tensor(shape=(1, 1, 16), dtype=np.float32)
            g.pooling(t, out, kind="avg", size=(7, 7))
            got = native_run(g, out).copy()
            pool = next(n for n in model(g.handle).order if n.description.name.endswith("pooling_layer"))
            assert (pool.state.get(rewrites.LAYOUT) == {0: rewrites.CHANNELS_LAST}) == enabled
            if enabled:
                fused = got
            else:
                assert fused.tobytes() == got.tobytes()


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_the_exact_float64_average_keeps_planes(monkeypatch, kind):
    """``$OPENVX_NN_F32_SUMS=float64``: the average is not the plane kernel's arithmetic, so it takes planes only;
    the maximum is exact on every route and still follows its neighbours."""
    monkeypatch.setenv("OPENVX_NN_F32_SUMS", "float64")
    x = _edge_values(np.random.default_rng(4106), (8, 8, 3), nan_share=0.0)
    with Context() as ctx, ctx.graph() as g:
        out = _pool_block(ctx, g, np.random.default_rng(4107), x, kind, (2, 2), (0, 0), (2, 2))
        native_run(g, out)
        pool = next(n for n in model(g.handle).order if n.description.name.endswith("pooling_layer"))
        roles = pool.description.layouts(pool.params, pool.state)
    assert roles == ({} if kind == "avg" else {0: rewrites.EITHER_ORDER, 7: rewrites.EITHER_ORDER})
