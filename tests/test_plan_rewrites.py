"""The plan's rewrites at verify (``core/rewrites.py``): virtual float32 tensors between the float engine's layers
laid out channels-last, and relu / brelu fused into the convolution before them.

Graphs of the standard layers with virtual intermediates are checked against a plain float64 NumPy reference
written from the NN extension's text (convolution, activation, pooling, tensor add), within the float engine's
stated bound: each float32 layer is within 1e-5 of the sum of its terms' magnitudes, so a chain of ``d`` layers
is held to ``d * 1e-5`` of the same network run on magnitudes (``|x|``, ``|w|``, ``|b|``). And every graph gives
the same bytes with the rewrites off, on the native plan and on the Python path, NaN and infinities included.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run, python_run

from openvx_nn.api import Context
from openvx_nn.core import rewrites

TOLERANCE = 1e-5


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


# ---- the plain reference: (value, magnitude) pairs in float64, OpenVX order [W, H, C] ----
def ref_conv(x, w, b, pad, stride=(1, 1), out_wh=None):
    """``out[ox, oy, k] = b[k] + sum over kx, ky, c of x[ox * sx - px + kx, oy * sy - py + ky, c] * w[kx, ky, c, k]``,
    zeros outside the input (by default the whole output the window fits: as large as the input at stride 1 when
    ``pad`` is half the window; ``out_wh`` when given)."""
    (value, size), (kw, kh, _, maps) = x, w.shape
    if out_wh is None:
        out_wh = ((value.shape[0] + 2 * pad[0] - kw) // stride[0] + 1, (value.shape[1] + 2 * pad[1] - kh) // stride[1] + 1)
    out, mag = np.zeros(out_wh + (maps,)), np.zeros(out_wh + (maps,))
    w64 = w.astype(np.float64)
    for ox in range(out_wh[0]):
        for oy in range(out_wh[1]):
            for kx in range(kw):
                for ky in range(kh):
                    ix, iy = ox * stride[0] - pad[0] + kx, oy * stride[1] - pad[1] + ky
                    if 0 <= ix < value.shape[0] and 0 <= iy < value.shape[1]:
                        out[ox, oy] += value[ix, iy] @ w64[kx, ky]
                        mag[ox, oy] += size[ix, iy] @ np.abs(w64[kx, ky])
    if b is not None:
        out, mag = out + b.astype(np.float64), mag + np.abs(b.astype(np.float64))
    return out, mag


def ref_relu(x, bound=None):
    value, size = x
    out = np.where(value > 0, value, 0.0)
    return (out if bound is None else np.minimum(out, bound)), size


def ref_add(x, y):
    return x[0] + y[0], x[1] + y[1]


def ref_max_pool(x):
    """2x2 windows, stride 2, no padding."""
    value, size = x
    w, h = value.shape[0] // 2, value.shape[1] // 2

    def pool(a):
        return a[:2 * w, :2 * h].reshape(w, 2, h, 2, -1).max(axis=(1, 3))
    return pool(value), pool(size)


def assert_within(got, reference, depth):
    value, size = reference
    error = np.abs(got.astype(np.float64) - value)
    bound = depth * TOLERANCE * size + 1e-30
    assert np.all(error <= bound), float(np.max(error - bound))


def _weights(rng, shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[:3]))).astype(np.float32)


def _input(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def _chain(ctx, g, rng, x, maps, app_reads_middle=False):
    """conv 3x3 -> relu -> conv 3x3 -> add (the relu's output again: a virtual tensor with two readers) -> brelu
    -> max pool 2x2 -> conv 1x1 -> out; (out, middle tensor or None, reference of out, of the middle, depth)."""
    c = x.shape[2]
    w1, w2, w3 = _weights(rng, (3, 3, c, maps)), _weights(rng, (3, 3, maps, maps)), _weights(rng, (1, 1, maps, 5))
    b1, b3 = _weights(rng, (maps,)), _weights(rng, (5,))
    t1, t2, s, p = g.virtual(), g.virtual(), g.virtual(), g.virtual()
    a1 = ctx.tensor(shape=x.shape[:2] + (maps,), dtype=np.float32) if app_reads_middle else g.virtual()
    r = g.virtual()
    pooled = (x.shape[0] // 2, x.shape[1] // 2)
    out = ctx.tensor(shape=pooled + (5,), dtype=np.float32)
    xt = ctx.tensor(x)
    g.convolution(xt, w1, b1, out=t1, padding=(1, 1))
    g.activation(t1, "relu", out=a1)
    g.convolution(a1, w2, None, out=t2, padding=(1, 1))
    g.add(t2, a1, out=s)
    g.activation(s, "brelu", a=1.5, out=r)
    g.pooling(r, p, kind="max", size=(2, 2))
    g.convolution(p, w3, b3, out=out)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    ra1 = ref_relu(ref_conv(x64, w1, b1, (1, 1)))
    rr = ref_relu(ref_add(ref_conv(ra1, w2, None, (1, 1)), ra1), 1.5)
    rout = ref_conv(ref_max_pool(rr), w3, b3, (0, 0))
    return out, (a1 if app_reads_middle else None), rout, ra1, 4


def _run_both_ways(monkeypatch, build, python_path=False):
    """(outputs with the rewrites, their report, outputs without): each graph built afresh by ``build(ctx, g)``,
    which returns the tensors to read."""
    results = []
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        with Context() as ctx, ctx.graph() as g:
            tensors = build(ctx, g)
            if python_path:
                read = python_run(ctx, g, tensors)
            else:
                read = [native_run(g, tensors[0]).copy()] + [t.numpy().copy() for t in tensors[1:]]
            results.append((read, model(g.handle).rewrites))
    return results[0][0], results[0][1], results[1][0]


@pytest.mark.parametrize("seed", range(4))
def test_a_chain_with_virtual_intermediates_matches_the_float64_reference_and_the_plain_plan(monkeypatch, seed):
    rng = np.random.default_rng([4040, seed])
    shape = (int(rng.integers(2, 13)) * 2, int(rng.integers(2, 13)) * 2, int(rng.integers(2, 7)))
    maps = int(rng.integers(2, 40))
    x = _input(rng, shape)
    found = {}

    def build(ctx, g):
        out, _, found["ref"], _, found["depth"] = _chain(ctx, g, np.random.default_rng([4041, seed]), x, maps)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert_within(got, found["ref"], found["depth"])
    assert got.tobytes() == plain.tobytes()
    # the relu's input has one reader and a convolution for writer: fused; the brelu reads the add's output: not
    assert [(p.description.name.split(".")[-1], a.description.name.split(".")[-1]) for p, a in report.fused] == [
        ("convolution_layer", "activation_layer")]
    # channels-last: t1, a1, t2, s, r and the pool's output p (the float32 pool reads and writes either order);
    # the conversions: the input into the first layer and the last layer's output back
    assert len(report.channels_last) == 6
    assert report.conversions == 2


def test_the_python_path_gives_the_bytes_of_the_native_plan(monkeypatch):
    rng = np.random.default_rng(4042)
    x = _input(rng, (10, 8, 3))

    def build(ctx, g):
        return [_chain(ctx, g, np.random.default_rng(4043), x, 17)[0]]
    (python,), report, _ = _run_both_ways(monkeypatch, build, python_path=True)
    (native,), _, _ = _run_both_ways(monkeypatch, build)
    assert report.channels_last and report.fused
    assert python.tobytes() == native.tobytes()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_infinities_pass_the_fused_clamp_as_the_activation_layer_passes_them(monkeypatch):
    rng = np.random.default_rng(4044)
    x = _input(rng, (8, 6, 4))
    x[1, 2, 0], x[3, 3, 1], x[5, 1, 2], x[6, 4, 3] = np.nan, np.inf, -np.inf, 1e38

    def build(ctx, g):
        out, _, _, _, _ = _chain(ctx, g, np.random.default_rng(4045), x, 9)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert report.fused and np.isnan(got).any()
    assert got.tobytes() == plain.tobytes()


def test_an_intermediate_the_application_reads_stays_in_openvx_order(monkeypatch):
    rng = np.random.default_rng(4046)
    x = _input(rng, (12, 10, 3))
    found = {}

    def build(ctx, g):
        out, middle, found["ref"], found["middle"], found["depth"] = _chain(ctx, g, np.random.default_rng(4047), x,
                                                                           11, app_reads_middle=True)
        return [out, middle]
    (got, middle), report, (plain, plain_middle) = _run_both_ways(monkeypatch, build)
    assert_within(middle, found["middle"], 1)
    assert_within(got, found["ref"], found["depth"])
    assert middle.tobytes() == plain_middle.tobytes() and got.tobytes() == plain.tobytes()
    # the relu writes a tensor the application sees: it still runs in the convolution's epilogue, in OpenVX order
    assert len(report.fused) == 1 and all(t.virtual for t in report.channels_last)


def test_no_fusion_where_the_convolution_output_has_two_readers_or_is_the_applications(monkeypatch):
    rng = np.random.default_rng(4048)
    x = _input(rng, (9, 7, 4))
    w1, w2 = _weights(rng, (3, 3, 4, 8)), _weights(rng, (3, 3, 8, 8))

    def build(ctx, g):
        xt = ctx.tensor(x)
        t1 = g.virtual()  # read by the relu and by the add: the relu is not fused
        seen = ctx.tensor(shape=(9, 7, 8), dtype=np.float32)  # the application's: its relu is not fused
        a1, a2, out = g.virtual(), g.virtual(), ctx.tensor(shape=(9, 7, 8), dtype=np.float32)
        g.convolution(xt, w1, None, out=t1, padding=(1, 1))
        g.activation(t1, "relu", out=a1)
        g.convolution(a1, w2, None, out=seen, padding=(1, 1))
        g.activation(seen, "relu", out=a2)
        g.add(a2, t1, out=out)
        return [out, seen]
    (got, seen), report, (plain, plain_seen) = _run_both_ways(monkeypatch, build)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    rt1 = ref_conv(x64, w1, None, (1, 1))
    rseen = ref_conv(ref_relu(rt1), w2, None, (1, 1))
    assert_within(seen, rseen, 2)
    assert_within(got, ref_add(ref_relu(rseen), rt1), 2)
    assert report.fused == []
    assert got.tobytes() == plain.tobytes() and seen.tobytes() == plain_seen.tobytes()


def test_a_virtual_tensor_read_by_two_convolutions(monkeypatch):
    rng = np.random.default_rng(4049)
    x = _input(rng, (8, 8, 5))
    w1, w2, w3 = _weights(rng, (3, 3, 5, 6)), _weights(rng, (1, 1, 6, 7)), _weights(rng, (3, 3, 6, 7))

    def build(ctx, g):
        xt, t, a, u, v = ctx.tensor(x), g.virtual(), g.virtual(), g.virtual(), g.virtual()
        out = ctx.tensor(shape=(8, 8, 7), dtype=np.float32)
        g.convolution(xt, w1, None, out=t, padding=(1, 1))
        g.activation(t, "relu", out=a)
        g.convolution(a, w2, None, out=u)
        g.convolution(a, w3, None, out=v, padding=(1, 1))
        g.add(u, v, out=out)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    ra = ref_relu(ref_conv(x64, w1, None, (1, 1)))
    assert_within(got, ref_add(ref_conv(ra, w2, None, (0, 0)), ref_conv(ra, w3, None, (1, 1))), 3)
    assert got.tobytes() == plain.tobytes()
    assert len(report.fused) == 1


def test_the_layout_copies_the_plan_does_for_a_chain(monkeypatch):
    """conv -> relu -> conv -> relu -> conv between two application tensors: the engine's layers copy in and out
    of OpenVX order only at the ends (2 copies), not around each layer (6)."""
    rng = np.random.default_rng(4050)
    x = _input(rng, (10, 10, 8))
    ws = [_weights(rng, (3, 3, 8, 8)) for _ in range(3)]
    counts = {}
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        with Context() as ctx, ctx.graph() as g:
            t = ctx.tensor(x)
            out = ctx.tensor(shape=(10, 10, 8), dtype=np.float32)
            for k, w in enumerate(ws):
                y = out if k == 2 else g.virtual()
                g.convolution(t, w, None, out=y, padding=(1, 1))
                t = y
                if k < 2:
                    t = g.relu(t, out=g.virtual())
            g.verify()
            report = model(g.handle).rewrites
            counts[enabled] = (report.conversions, len(report.fused), native_run(g, out).copy())
    assert counts[True][:2] == (2, 2)
    assert counts[False][:2] == (6, 0)  # off: each layer copies in and out
    assert counts[True][2].tobytes() == counts[False][2].tobytes()


def test_a_graph_parameter_keeps_openvx_order(monkeypatch):
    rng = np.random.default_rng(4051)
    x = _input(rng, (6, 6, 4))
    w1, w2 = _weights(rng, (3, 3, 4, 4)), _weights(rng, (3, 3, 4, 4))
    with Context() as ctx, ctx.graph() as g:
        xt, t, a = ctx.tensor(x), g.virtual(), g.virtual()
        out = ctx.tensor(shape=(6, 6, 4), dtype=np.float32)
        g.convolution(xt, w1, None, out=t, padding=(1, 1))
        g.relu(t, out=a)
        g.convolution(a, w2, None, out=out, padding=(1, 1))
        g.add_parameter(a)
        g.verify()
        report = model(g.handle).rewrites
        assert len(report.fused) == 1  # the convolution writes the graph parameter through the clamp
        assert all(tensor is not model(a.handle) for tensor in report.channels_last)
        assert len(report.channels_last) == 0 and report.conversions == 4


def ref_depthwise(x, w, b, pad, stride):
    """Map c of the output: map c of ``x`` convolved with ``w[:, :, 0, c]`` (``ref_conv`` of that one map), then
    every ``stride``-th output kept."""
    value, size = x
    outs = [ref_conv((value[:, :, c:c + 1], size[:, :, c:c + 1]), w[:, :, :, c:c + 1], None if b is None else b[c:c + 1],
                     pad) for c in range(value.shape[2])]
    out = np.concatenate([o[0] for o in outs], axis=2), np.concatenate([o[1] for o in outs], axis=2)
    return out[0][::stride, ::stride], out[1][::stride, ::stride]


@pytest.mark.parametrize("seed", range(3))
def test_a_depthwise_layer_written_map_by_map_runs_as_one_call_with_the_same_bytes(monkeypatch, seed):
    """conv 1x1 -> relu -> C one-map 3x3 convolutions on views (the standard's depthwise) -> relu -> conv 1x1."""
    rng = np.random.default_rng([4052, seed])
    width, height, c, maps = int(rng.integers(5, 15)), int(rng.integers(5, 15)), int(rng.integers(2, 9)), 6
    stride = int(rng.integers(1, 3))
    x = _input(rng, (width, height, 3))
    w0, w2 = _weights(rng, (1, 1, 3, c)), _weights(rng, (1, 1, c, maps))
    wd, bd = _weights(rng, (3, 3, 1, c)), _weights(rng, (c,))
    out_wh = ((width - 1) // stride + 1, (height - 1) // stride + 1)

    def build(ctx, g):
        xt, t0 = ctx.tensor(x), g.virtual()
        a0 = g.virtual(shape=(width, height, c), dtype=np.float32)
        d = g.virtual(shape=out_wh + (c,), dtype=np.float32)
        wt, bt = ctx.tensor(wd), ctx.tensor(bd)
        out = ctx.tensor(shape=out_wh + (maps,), dtype=np.float32)
        g.convolution(xt, w0, None, out=t0)
        g.relu(t0, out=a0)
        for k in rng.permutation(c):  # added in any order
            k = int(k)
            g.convolution(a0.view((0, 0, k), (width, height, k + 1)), wt.view((0, 0, 0, k), (3, 3, 1, k + 1)),
                          bt.view((k,), (k + 1,)), out=d.view((0, 0, k), out_wh + (k + 1,)), padding=(1, 1))
        g.convolution(g.relu(d, out=g.virtual()), w2, None, out=out)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    rd = ref_depthwise(ref_relu(ref_conv(x64, w0, None, (0, 0))), wd, bd, (1, 1), stride)
    assert_within(got, ref_conv(ref_relu(rd), w2, None, (0, 0)), 3)
    assert got.tobytes() == plain.tobytes()
    assert report.merged == c - 1
    assert len(report.fused) == 2  # the relu after the depthwise layer runs in its one call too


def test_a_bound_written_after_verify_is_followed_by_the_fused_layer(monkeypatch):
    """The fused brelu's bound written after verify (its scalar is read at each binding): the convolution's
    epilogue takes the new bound, the bytes those of the plan without the rewrites."""
    rng = np.random.default_rng(4053)
    x, w = _input(rng, (7, 6, 3)), _weights(rng, (3, 3, 3, 5))
    results = []
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        with Context() as ctx, ctx.graph() as g:
            t, a = g.virtual(), g.virtual()
            out = ctx.tensor(shape=(7, 6, 5), dtype=np.float32)
            g.convolution(ctx.tensor(x * 4), w, None, out=t, padding=(1, 1))
            g.activation(t, "brelu", a=1.5, out=a)
            g.convolution(a, _weights(np.random.default_rng(4054), (1, 1, 5, 5)), None, out=out)
            first = native_run(g, out).copy()
            assert len(model(g.handle).rewrites.fused) == (1 if enabled else 0)
            model(g.handle).order[1].params[2].value = np.float32(0.5)
            after = native_run(g, out).copy()
            results.append((first, after))
    (fused_first, fused_after), (plain_first, plain_after) = results
    assert fused_first.tobytes() == plain_first.tobytes()
    assert fused_after.tobytes() == plain_after.tobytes()
    assert fused_after.tobytes() != fused_first.tobytes()


@pytest.mark.parametrize("seed", range(3))
def test_a_one_map_layer_on_the_plane_kernel_with_a_fused_relu_before_channels_last_layers(monkeypatch, seed):
    """A grayscale input's first convolution (one input map, 3x3: the plane kernel, which writes OpenVX order
    only) with its relu fused, then layers that take channels-last: the relu's output stays in OpenVX order."""
    rng = np.random.default_rng([4055, seed])
    width, height, maps = int(rng.integers(3, 12)), int(rng.integers(3, 12)), int(rng.integers(2, 20))
    x = _input(rng, (width, height, 1))
    w1, w2, w3 = _weights(rng, (3, 3, 1, maps)), _weights(rng, (3, 3, maps, maps)), _weights(rng, (1, 1, maps, 3))

    def build(ctx, g):
        out = ctx.tensor(shape=(width, height, 3), dtype=np.float32)
        a = g.relu(g.convolution(ctx.tensor(x), w1, None, out=g.virtual(), padding=(1, 1)), out=g.virtual())
        t = g.convolution(a, w2, None, out=g.virtual(), padding=(1, 1))
        g.convolution(g.add(t, a, out=g.virtual()), w3, None, out=out)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    ra = ref_relu(ref_conv(x64, w1, None, (1, 1)))
    assert_within(got, ref_conv(ref_add(ref_conv(ra, w2, None, (1, 1)), ra), w3, None, (0, 0)), 3)
    assert got.tobytes() == plain.tobytes()
    assert len(report.fused) == 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_nan_of_either_sign_leaves_a_fused_clamp_as_the_activation_layer_stores_it(monkeypatch):
    """inf - inf in a convolution's sum is a negative NaN on x86; the activation layer stores every NaN as
    0x7FC00000, and so does the fused clamp (the bytes of the two nodes run apart)."""
    rng = np.random.default_rng(4056)
    x = _input(rng, (7, 6, 3))
    x[2, 2, 0], x[2, 3, 1], x[4, 1, 2] = np.inf, -np.inf, np.nan
    w = np.abs(_weights(rng, (3, 3, 3, 5)))

    def build(ctx, g):
        out = ctx.tensor(shape=(7, 6, 5), dtype=np.float32)
        g.activation(g.convolution(ctx.tensor(x), w, None, out=g.virtual(), padding=(1, 1)), "brelu", a=2.0, out=out)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert len(report.fused) == 1
    assert np.isnan(got).any() and set(got.view(np.uint32)[np.isnan(got)].tolist()) == {0x7FC00000}
    assert got.tobytes() == plain.tobytes()
