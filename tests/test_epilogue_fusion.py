"""Residual sums fused into the convolution's epilogue (``core/epilogue_fusion.py``): ResNet's
``conv -> add(skip) -> relu`` on virtual float32 tensors computed by the convolution's call.

Each graph is checked against the plain float64 reference of ``test_plan_rewrites`` (written from the NN
extension's text) within the float engine's bound, and for the same bytes with the rewrites off (every node run
apart), on the native plan and on the Python path, with NaN of both signs and infinities among the values.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run
from test_plan_rewrites import _input, _run_both_ways, _weights, assert_within, ref_add, ref_conv, ref_relu

from openvx_nn.api import Context
from openvx_nn.core import rewrites


@pytest.fixture(autouse=True)
def float_sums(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_F32_SUMS", raising=False)
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _names(report):
    return [tuple(None if n is None else n.description.name.rsplit(".", 1)[-1] for n in chain)
            for chain in report.residual]


def _block(ctx, g, rng, x, maps, ending, bias=True, skip_first=False):
    """x -> conv 3x3 + relu (the skip ``a``, virtual) -> conv 3x3 (``t``) -> add(t, a) -> ``ending`` (relu, brelu
    or None) -> conv 1x1 -> out (the application's); (out, reference of out, depth). ``skip_first``: the add
    takes ``a`` as its first input."""
    c = x.shape[2]
    w1, w2, w3 = _weights(rng, (3, 3, c, maps)), _weights(rng, (3, 3, maps, maps)), _weights(rng, (1, 1, maps, 4))
    b1, b2, b3 = (_weights(rng, (maps,)), _weights(rng, (maps,)), _weights(rng, (4,))) if bias else (None,) * 3
    t0, a, t, u = g.virtual(), g.virtual(), g.virtual(), g.virtual()
    out = ctx.tensor(shape=x.shape[:2] + (4,), dtype=np.float32)
    g.convolution(ctx.tensor(x), w1, b1, out=t0, padding=(1, 1))
    g.relu(t0, out=a)
    g.convolution(a, w2, b2, out=t, padding=(1, 1))
    g.add(*((a, t) if skip_first else (t, a)), out=u)
    r = u if ending is None else g.activation(u, ending, a=1.25, out=g.virtual())
    g.convolution(r, w3, b3, out=out)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    ra = ref_relu(ref_conv(x64, w1, b1, (1, 1)))
    ru = ref_add(ref_conv(ra, w2, b2, (1, 1)), ra)
    rr = ru if ending is None else ref_relu(ru, 1.25 if ending == "brelu" else None)
    return out, ref_conv(rr, w3, b3, (0, 0)), 4


@pytest.mark.parametrize("seed", range(6))
def test_a_residual_block_matches_the_float64_reference_and_the_bytes_of_the_nodes_run_apart(monkeypatch, seed):
    rng = np.random.default_rng([4060, seed])
    shape = (int(rng.integers(2, 14)), int(rng.integers(2, 14)), int(rng.integers(1, 7)))
    maps, ending, bias = int(rng.integers(2, 40)), [None, "relu", "brelu"][seed % 3], bool(seed % 2)
    x = _input(rng, shape)
    found = {}

    def build(ctx, g):
        out, found["ref"], found["depth"] = _block(ctx, g, np.random.default_rng([4061, seed]), x, maps, ending, bias)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert_within(got, found["ref"], found["depth"])
    assert got.tobytes() == plain.tobytes()
    chain = [("convolution_layer", "tensor_add", None if ending is None else "activation_layer")]
    # one input map: the first layer is on the plane kernel, which writes OpenVX order: the skip keeps it
    assert _names(report) == (chain if shape[2] > 1 else [])


def test_the_python_path_gives_the_bytes_of_the_native_plan(monkeypatch):
    rng = np.random.default_rng(4062)
    x = _input(rng, (9, 7, 3))

    def build(ctx, g):
        return [_block(ctx, g, np.random.default_rng(4063), x, 19, "relu")[0]]
    (python,), report, (plain,) = _run_both_ways(monkeypatch, build, python_path=True)
    (native,), _, _ = _run_both_ways(monkeypatch, build)
    assert report.residual
    assert python.tobytes() == native.tobytes() == plain.tobytes()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ending", [None, "relu", "brelu"])
def test_nan_of_both_signs_and_infinities_give_the_bytes_of_the_nodes_run_apart(monkeypatch, ending):
    """NaN from the input (positive) and from inf - inf or 0 * inf in the sums (negative on x86) meet in the
    add, infinities pass the clamp; the fused epilogue keeps the add's operand order."""
    rng = np.random.default_rng(4064)
    x = _input(rng, (8, 7, 3))
    x[1, 2, 0], x[3, 3, 1], x[5, 1, 2], x[6, 4, 0], x[2, 5, 1] = np.nan, np.inf, -np.inf, 3e38, -np.inf

    def build(ctx, g):
        return [_block(ctx, g, np.random.default_rng(4065), x, 9, ending)[0]]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert report.residual
    signs = set((got.view(np.uint32)[np.isnan(got)] >> 31).tolist())
    assert signs == ({0, 1} if ending is None else {0})  # an activation stores NaN as 0x7FC00000
    assert got.tobytes() == plain.tobytes()


def _fusion_refused(monkeypatch, build):
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes()
    return report


def test_no_fusion_when_the_skip_is_the_adds_first_input(monkeypatch):
    """add(skip, conv): the sum's operand order would change (which of two NaN is kept)."""
    rng = np.random.default_rng(4066)
    x = _input(rng, (6, 6, 2))
    report = _fusion_refused(monkeypatch, lambda ctx, g: [_block(ctx, g, np.random.default_rng(4067), x, 5, "relu",
                                                                 skip_first=True)[0]])
    assert report.residual == [] and report.channels_last


def _projection_block(ctx, g, rng, x, maps, stride, late_input=False):
    """ResNet's projection block as a model compiler writes it: x -> conv 3x3/stride + relu -> conv 3x3 (``t``),
    then the shortcut conv 1x1/stride of x (``s``, created after ``t``'s convolution), add(t, s) -> relu -> conv
    1x1 -> out. ``late_input``: the shortcut reads relu(conv 1x1 of x) made after ``t``'s convolution too, so it
    cannot run before it. (out, reference of out, depth)."""
    c = x.shape[2]
    w1, w2 = _weights(rng, (3, 3, c, maps)), _weights(rng, (3, 3, maps, maps))
    ws, wl, w3 = _weights(rng, (1, 1, c, maps)), _weights(rng, (1, 1, c, c)), _weights(rng, (1, 1, maps, 3))
    b1, b2, bs, b3 = (_weights(rng, (n,)) for n in (maps, maps, maps, 3))
    size = ((x.shape[0] - 1) // stride + 1, (x.shape[1] - 1) // stride + 1)
    xt, t, s, u = ctx.tensor(x), g.virtual(), g.virtual(size + (maps,), np.float32), g.virtual()
    out = ctx.tensor(shape=size + (3,), dtype=np.float32)
    a = g.relu(g.convolution(xt, w1, b1, out=g.virtual(size + (maps,), np.float32), padding=(1, 1)),
               out=g.virtual())
    g.convolution(a, w2, b2, out=t, padding=(1, 1))
    source = g.relu(g.convolution(xt, wl, None, out=g.virtual()), out=g.virtual()) if late_input else xt
    g.convolution(source, ws, bs, out=s)
    g.add(t, s, out=u)
    g.convolution(g.relu(u, out=g.virtual()), w3, b3, out=out)
    x64 = (x.astype(np.float64), np.abs(x.astype(np.float64)))
    src = ref_relu(ref_conv(x64, wl, None, (0, 0))) if late_input else x64
    sub = tuple(v[::stride, ::stride] for v in ref_conv(x64, w1, b1, (1, 1)))
    ra = ref_relu(sub)
    rs = tuple(v[::stride, ::stride] for v in ref_conv(src, ws, bs, (0, 0)))
    ru = ref_relu(ref_add(ref_conv(ra, w2, b2, (1, 1)), rs))
    return out, ref_conv(ru, w3, b3, (0, 0)), 5


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("seed", range(4))
def test_a_projection_shortcut_made_after_the_convolution_runs_before_it_and_fuses(monkeypatch, seed):
    """The shortcut convolution is independent of the block's second one: the plan runs it first, and the add
    fuses into the second convolution's epilogue with its operands in their roles (the same bytes, NaN too)."""
    rng = np.random.default_rng([4068, seed])
    shape = (int(rng.integers(3, 12)), int(rng.integers(3, 12)), int(rng.integers(2, 6)))
    maps, stride = int(rng.integers(2, 20)), 1 + seed % 2
    x = _input(rng, shape)
    if seed >= 2:
        x[0, 0, 0], x[1, 1, 1], x[2, 0, 0] = np.nan, np.inf, -np.inf
    found = {}

    def build(ctx, g):
        out, found["ref"], found["depth"] = _projection_block(ctx, g, np.random.default_rng([4069, seed]), x, maps,
                                                              stride)
        return [out]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes()
    if seed < 2:
        assert_within(got, found["ref"], found["depth"])
    assert _names(report) == [("convolution_layer", "tensor_add", "activation_layer")]
    (python,), _, _ = _run_both_ways(monkeypatch, build, python_path=True)
    assert python.tobytes() == plain.tobytes()


def test_the_shortcut_moves_before_the_convolution_in_the_execution_order(monkeypatch):
    rng = np.random.default_rng(4070)
    x = _input(rng, (6, 5, 3))
    with Context() as ctx, ctx.graph() as g:
        out, _, _ = _projection_block(ctx, g, np.random.default_rng(4071), x, 4, 2)
        native_run(g, out)
        graph = model(g.handle)
        convs = [n for n in graph.order if n.description.name.endswith("convolution_layer")]
        added = [n for n in graph.nodes if n.description.name.endswith("convolution_layer")]
        assert [added.index(n) for n in convs] == [0, 2, 1, 3]


def test_no_fusion_when_the_shortcut_reads_what_is_written_after_the_convolution(monkeypatch):
    """The shortcut's input comes from a node after the block's second convolution: it cannot move before it."""
    rng = np.random.default_rng(4072)
    x = _input(rng, (7, 5, 3))

    def build(ctx, g):
        return [_projection_block(ctx, g, np.random.default_rng(4073), x, 6, 1, late_input=True)[0]]
    (got,), report, (plain,) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes()
    assert report.residual == []


def test_no_fusion_when_another_node_reads_the_sum_or_the_application_sees_it(monkeypatch):
    rng = np.random.default_rng(4070)
    x = _input(rng, (6, 5, 3))
    w1, w2, w3 = _weights(rng, (3, 3, 3, 6)), _weights(rng, (3, 3, 6, 6)), _weights(rng, (1, 1, 6, 6))

    def build(ctx, g):
        xt, a, t, u = ctx.tensor(x), g.virtual(), g.virtual(), g.virtual()
        t2, u2 = g.virtual(), ctx.tensor(shape=(6, 5, 6), dtype=np.float32)
        out = ctx.tensor(shape=(6, 5, 6), dtype=np.float32)
        g.relu(g.convolution(xt, w1, None, out=g.virtual(), padding=(1, 1)), out=a)
        g.convolution(a, w2, None, out=t, padding=(1, 1))
        g.add(t, a, out=u)
        r = g.relu(u, out=g.virtual())  # the relu and the last add read the sum: the add fused, not the relu
        g.convolution(r, w3, None, out=t2)
        g.add(t2, u, out=u2)  # the application reads this sum: not fused
        g.add(u2, r, out=out)
        return [out, u2]
    (got, seen), report, (plain, plain_seen) = _run_both_ways(monkeypatch, build)
    assert got.tobytes() == plain.tobytes() and seen.tobytes() == plain_seen.tobytes()
    assert _names(report) == [("convolution_layer", "tensor_add", None)]


def test_a_bound_written_after_verify_is_followed_by_the_fused_chain(monkeypatch):
    """The brelu after a fused sum: its bound written after verify is read at the next binding."""
    rng = np.random.default_rng(4071)
    x = _input(rng, (7, 6, 3)) * 4
    results = []
    for enabled in (True, False):
        monkeypatch.setattr(rewrites, "ENABLED", enabled)
        with Context() as ctx, ctx.graph() as g:
            out, _, _ = _block(ctx, g, np.random.default_rng(4072), x, 5, "brelu")
            first = native_run(g, out).copy()
            assert len(model(g.handle).rewrites.residual) == (1 if enabled else 0)
            brelu = next(n for n in model(g.handle).order if n.description.name.endswith("activation_layer")
                         and n.state.get("function") == "brelu")
            brelu.params[2].value = np.float32(0.25)
            after = native_run(g, out).copy()
            results.append((first, after))
    (fused_first, fused_after), (plain_first, plain_after) = results
    assert fused_first.tobytes() == plain_first.tobytes()
    assert fused_after.tobytes() == plain_after.tobytes()
    assert fused_after.tobytes() != fused_first.tobytes()


def test_the_native_plan_leaves_out_the_calls_another_call_does_and_every_node_succeeds(monkeypatch):
    """The fused add and activation have no step of their own in C; a native run entered from Python (which sets
    the nodes' statuses from the step C stopped at) still gives every node, those included, VX_SUCCESS."""
    from openvx_nn.core.enums import Status
    rng = np.random.default_rng(4074)
    x = _input(rng, (6, 5, 3))
    with Context() as ctx, ctx.graph() as g:
        out, _, _ = _projection_block(ctx, g, np.random.default_rng(4075), x, 4, 1)
        native_run(g, out)
        graph = model(g.handle)
        plan = graph.plan.native
        assert plan is not None and plan.n_calls == len(graph.order)
        names = [graph.plan.calls[k].node.description.name.rsplit(".", 1)[-1] for k in plan.steps]
        assert names == ["convolution_layer"] * 4  # the first relu, the add and the last relu are fused
        for node in graph.order:
            node.status = Status.VX_FAILURE
        assert graph._execute(graph.plan.calls) == Status.VX_SUCCESS
        assert all(node.status == Status.VX_SUCCESS for node in graph.order)
