"""What makes a native plan stale is counted per object, so a change rebuilds only the
plans that depend on it: a scalar written rebinds the graphs that read it, a node callback or
``native_allowed`` its own graph; every other graph keeps its plan and stays on the native path."""
from __future__ import annotations

import numpy as np

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.core import reference


def _model(handle):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)


def _scaled_graphs(ctx, rng, count):
    """``count`` graphs, each ``out = a * b * scale`` (int16, saturating, truncation) with its own scale
    scalar; processed once so each has its native plan."""
    graphs = []
    for _ in range(count):
        g = ctx.graph()
        a, b = (rng.integers(-20, 20, size=(3, 4)).astype(np.int16) for _ in range(2))
        out = g.multiply(ctx.tensor(a), ctx.tensor(b), ctx.tensor(shape=(3, 4), dtype=np.int16), scale=1.0)
        g.process()
        assert _model(g.handle).plan.native is not None
        graphs.append((g, a, b, out, _model(g.handle).order[0].params[2]))
    return graphs


def _c_run(g) -> bool:
    """vxProcessGraph from C; whether it ran natively (no Python entered)."""
    runs = _model(g.handle).native_runs
    assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
    return _model(g.handle).native_runs == runs + 1


def test_a_written_scalar_rebinds_only_the_graphs_that_read_it():
    rng = np.random.default_rng(11)
    with Context() as ctx:
        graphs = _scaled_graphs(ctx, rng, 3)
        plans = [_model(g.handle).plan.native for g, *_ in graphs]
        for step, k in enumerate(rng.permutation(3)):
            g, a, b, out, scale = graphs[k]
            scale.value = float(step + 2)
            assert not _c_run(g), "the written scalar's graph must rebind on the Python path"
            new = _model(g.handle).plan.native
            assert new is not None and new is not plans[k]
            plans[k] = new
            expected = np.clip(a.astype(np.int64) * b * (step + 2), -32768, 32767)
            assert np.array_equal(out.numpy(), expected)
            for j, (other, *_rest) in enumerate(graphs):
                if j != k:
                    assert _c_run(other), "a scalar of another graph rebound this one"
                    assert _model(other.handle).plan.native is plans[j]
            assert _c_run(g)  # and the rebuilt plan runs natively from now on
        for g, *_ in graphs:
            g.close()


def test_a_node_callback_and_native_allowed_rebind_only_their_graph():
    rng = np.random.default_rng(12)
    calls = []

    @vx.ffi.callback("vx_nodecomplete_f")
    def on_complete(node):
        calls.append(node)
        return vx.VX_ACTION_CONTINUE

    with Context() as ctx:
        (g, *_), (other, *_) = _scaled_graphs(ctx, rng, 2)
        kept = _model(other.handle).plan.native
        node = vx.ffi.cast("vx_node", _model(g.handle).order[0].handle)
        assert vx.vxAssignNodeCallback(node, on_complete) == vx.VX_SUCCESS
        assert not _c_run(g) and len(calls) == 1 and _model(g.handle).plan.native is None
        assert _c_run(other) and _model(other.handle).plan.native is kept
        assert vx.vxAssignNodeCallback(node, vx.ffi.NULL) == vx.VX_SUCCESS
        g.process()  # rebinds: native again
        assert _c_run(g) and len(calls) == 1
        _model(g.handle).native_allowed = False
        assert not _c_run(g) and _model(g.handle).plan.native is None
        assert _c_run(other) and _model(other.handle).plan.native is kept
        g.close()
        other.close()
