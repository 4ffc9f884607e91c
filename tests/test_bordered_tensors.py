"""Virtual tensors between float32 convolutions held inside zero-bordered buffers (``core/bordered_tensors.py``).

The producer writes the interior of the buffer, the padded convolutions reading the tensor read the buffer as
already padded, a residual add fused into a convolution's epilogue reads its skip from one. Each graph is checked
against a plain float64 reference written here from the NN extension's text (zeros outside the input, stride and
padding as given) within the float engine's bound, for the same bytes with the plan's rewrites off (every node run
apart on plain tensors, each padded layer copying its input), and for the tensors the plan bordered. The kernel's
side: a layer writing into, reading from and adding a residual from bordered buffers gives the bytes of the same
layer on plain arrays and never writes the borders.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_plan_rewrites import _run_both_ways, _weights, assert_within, ref_conv, ref_relu

from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.support import native


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _network(ctx, g, rng, x, maps, pads, stride_c):
    """x -> conv A (pad pa) -> relu -> ``a`` (read by conv B and conv C) ; conv B (pad pb, same size) + ``a`` -> relu
    -> ``r`` -> conv D (pad pd) -> out1 ; conv C (pad pc, stride ``stride_c``) -> out2. (outputs, their references,
    the depths of their sums.)"""
    pa, pb, pc, pd = pads
    c = x.shape[2]
    wa, wb = _weights(rng, (2 * pa + 1, 2 * pa + 1, c, maps)), _weights(rng, (2 * pb + 1, 2 * pb + 1, maps, maps))
    wc, wd = _weights(rng, (3, 3, maps, 7)), _weights(rng, (2 * pd + 1, 2 * pd + 1, maps, 5))
    ba, bb, bd = _weights(rng, (maps,)), _weights(rng, (maps,)), _weights(rng, (5,))
    out_c = ((x.shape[0] + 2 * pc - 3) // stride_c + 1, (x.shape[1] + 2 * pc - 3) // stride_c + 1)
    t1, a, t2, u, r = (g.virtual() for _ in range(5))
    out1 = ctx.tensor(shape=x.shape[:2] + (5,), dtype=np.float32)
    out2 = ctx.tensor(shape=out_c + (7,), dtype=np.float32)
    g.convolution(ctx.tensor(x), wa, ba, out=t1, padding=(pa, pa))
    g.relu(t1, out=a)
    g.convolution(a, wb, bb, out=t2, padding=(pb, pb))
    g.add(t2, a, out=u)
    g.relu(u, out=r)
    g.convolution(r, wd, bd, out=out1, padding=(pd, pd))
    g.convolution(a, wc, None, out=out2, padding=(pc, pc))
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    ra = ref_relu(ref_conv(x64, wa, ba, (pa, pa)))
    tb = ref_conv(ra, wb, bb, (pb, pb))
    rr = ref_relu((tb[0] + ra[0], tb[1] + ra[1]))
    return [out1, out2], [ref_conv(rr, wd, bd, (pd, pd)), ref_conv(ra, wc, None, (pc, pc), (stride_c,) * 2, out_c)]


@pytest.mark.parametrize("seed", range(6))
def test_convolutions_through_bordered_tensors_give_the_reference_and_the_bytes_of_the_plain_plan(monkeypatch, seed):
    rng = np.random.default_rng([5150, seed])
    shape = (int(rng.integers(3, 19)), int(rng.integers(3, 13)), int(rng.integers(1, 9)))
    maps = int(rng.integers(2, 40))
    pads = tuple(int(p) for p in rng.integers(1, 3, size=4))
    stride_c = 1 + seed % 2
    x = rng.standard_normal(shape).astype(np.float32)
    x[0, 0, 0] = np.inf if seed % 3 == 0 else x[0, 0, 0]
    found = {}

    def build(ctx, g):
        outs, found["refs"] = _network(ctx, g, np.random.default_rng([5151, seed]), x, maps, pads, stride_c)
        return outs
    for python_path in (False, True):
        got, report, plain = _run_both_ways(monkeypatch, build, python_path=python_path)
        for mine, theirs in zip(got, plain):
            assert mine.tobytes() == theirs.tobytes()
        if seed % 3:
            for mine, ref in zip(got, found["refs"]):
                assert_within(mine, ref, 8)
        # ``a`` (read by conv B and conv C, and by conv B's epilogue as its residual) and ``r`` (written by conv B's
        # epilogue through the add and the relu, read by conv D): each bordered by its readers' largest padding
        assert sorted(border for _, border in report.bordered) == sorted([max(pads[1], pads[2]), pads[3]])


def test_a_tensor_that_an_unpadded_layer_alone_reads_keeps_its_plain_storage(monkeypatch):
    rng = np.random.default_rng(5152)
    x = rng.standard_normal((6, 5, 3)).astype(np.float32)
    w1, w2 = _weights(rng, (3, 3, 3, 8)), _weights(rng, (1, 1, 8, 4))

    def build(ctx, g):
        t = g.virtual()
        out = ctx.tensor(shape=(6, 5, 4), dtype=np.float32)
        g.convolution(ctx.tensor(x), w1, None, out=t, padding=(1, 1))
        g.convolution(t, w2, None, out=out)
        return [out]
    got, report, plain = _run_both_ways(monkeypatch, build)
    assert got[0].tobytes() == plain[0].tobytes()
    assert report.bordered == []


def _bordered(a, border):
    n, h, w, c = a.shape
    out = np.zeros((n, h + 2 * border, w + 2 * border, c), np.float32)
    out[:, border:border + h, border:border + w] = a
    return out


@pytest.mark.parametrize("seed", range(10))
def test_the_engine_reads_writes_and_adds_bordered_buffers_with_the_bytes_of_plain_arrays(seed):
    rng = np.random.default_rng([5153, seed])
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(2, 16)), int(rng.integers(2, 31))
    c, o, k = int(rng.integers(1, 40)), int(rng.integers(1, 70)), int(rng.choice([1, 3, 5]))
    pad, stride = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 3))
    x_border, out_border, res_border = pad + int(rng.integers(0, 2)), int(rng.integers(0, 3)), int(rng.integers(0, 3))
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    if min(oh, ow) < 1:
        pytest.skip("no output")
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    wp = fconv.pack_conv(rng.standard_normal((o, k, k, c)).astype(np.float32))
    bias, res = rng.standard_normal(o).astype(np.float32), rng.standard_normal((n, oh, ow, o)).astype(np.float32)
    args = ((pad,) * 4, (stride, stride), (0.0, np.inf))
    plain = np.empty((n, oh, ow, o), np.float32)
    fconv.bind_conv2d(x, wp, bias, plain, *args, res)()
    borders = (x_border, out_border, res_border)
    for entry in (False, True):
        out = np.full((n, oh + 2 * out_border, ow + 2 * out_border, o), 0.0, np.float32)
        xb, rb = _bordered(x, x_border), _bordered(res, res_border)
        if entry:
            assert native.run(fconv.native_conv2d(xb, wp, bias, out, *args, rb, borders=borders)) == 0
        else:
            fconv.bind_conv2d(xb, wp, bias, out, *args, rb, borders=borders)()
        inside = out[:, out_border:out_border + oh, out_border:out_border + ow].copy()
        assert inside.tobytes() == plain.tobytes()
        out[:, out_border:out_border + oh, out_border:out_border + ow] = 0.0
        assert not out.any()


def test_a_bordered_input_narrower_than_the_padding_is_refused():
    x = np.zeros((1, 6, 6, 2), np.float32)
    wp = fconv.pack_conv(np.ones((4, 3, 3, 2), np.float32))
    with pytest.raises(ValueError, match="padded by at most"):
        fconv.bind_conv2d(_bordered(x, 1), wp, np.zeros(4, np.float32), np.empty((1, 6, 6, 4), np.float32),
                          (2, 2, 2, 2), (1, 1), 0, borders=(1, 0, 0))


def test_a_fused_activation_running_itself_writes_its_output_into_the_border_buffer(monkeypatch):
    """Should a fused activation stop being a clamp at a later binding, it runs itself on the tensor's own storage
    and its output is copied into the buffer the padded reader reads (``bordered_tensors.wrapped``)."""
    from native_testing import model

    from openvx_nn.api import Context
    from openvx_nn.core import compiled, rewrites

    rng = np.random.default_rng(5154)
    x = rng.standard_normal((7, 6, 3)).astype(np.float32)
    w1, w2 = _weights(rng, (3, 3, 3, 8)), _weights(rng, (3, 3, 8, 4))
    results = []
    for undone in (False, True):
        with Context() as ctx, ctx.graph() as g:
            t, a = g.virtual(), g.virtual()
            out = ctx.tensor(shape=(7, 6, 4), dtype=np.float32)
            g.convolution(ctx.tensor(x), w1, None, out=t, padding=(1, 1))
            g.relu(t, out=a)
            g.convolution(a, w2, None, out=out, padding=(1, 1))
            g.process()
            graph = model(g.handle)
            assert [border for _, border in graph.rewrites.bordered] == [1]
            if undone:
                monkeypatch.setattr(rewrites, "clamp_of", lambda node: None)
                graph._set_plan(compiled.Plan(memory=graph.plan.memory))  # bound afresh at the next run
                out.numpy()[...] = 0.0
                g.process()
            results.append(out.numpy().copy())
    assert results[1].any() and results[0].tobytes() == results[1].tobytes()
