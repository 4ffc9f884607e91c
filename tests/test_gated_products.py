"""The plan's fusion of a gate activation into the product that reads it (``core/gated_products.py``):
squeeze-and-excitation's ``x * f(g)`` with ``g`` broadcast over ``x``, as one pass.

Graphs of the standard layers (activation layer, tensor multiply) over randomized shapes and broadcast patterns
give the bytes of the same graph with the rewrites off, on the native plan and on the Python path, NaN and
infinities included, and agree with a plain float64 NumPy reference within the activation kernel's stated ulps
(docs/fixed-point.md) plus the product's rounding; the report names the fused pairs, and no fusion happens where
the gate has another reader, is the application's, or the product scales.
"""
from __future__ import annotations

import numpy as np
import pytest
from native_testing import model, native_run

from openvx_nn.api import Context
from openvx_nn.core import rewrites

FUNCTIONS = {
    "logistic": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "tanh": lambda v: np.tanh(v),
    "softrelu": lambda v: np.log1p(np.exp(v)),
}
"""The float32 activations of the standard layer that run on the float32 kernel, in float64 from the spec."""
RELATIVE = 8 * 2.0 ** -24
"""The activation within a few float32 steps of float64 (at most 3, ``float_activation.ULPS``), then one product
rounded: well within 8 steps of the float64 product."""


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _shapes(rng) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(x's shape, the gate's) in OpenVX order (the first dim fastest): a gate per map of planar [W, H, C, N]
    tensors, per channel of channels-last [C, W, H, N] ones, or per element (no broadcast)."""
    w, h, c, n = (int(v) for v in rng.integers(1, 12, 4))
    c, n = c + 1, 1 + int(rng.integers(0, 2)) * int(rng.integers(1, 3))
    kind = int(rng.integers(3))
    if kind == 0:
        return (w, h, c, n), (1, 1, c, n)
    if kind == 1:
        return (c, w, h, n), (c, 1, 1, n)
    return (w, h, c), (w, h, c)


def _reference(x, g, function):
    return x.astype(np.float64) * FUNCTIONS[function](g.astype(np.float64))


def _run(monkeypatch, build, enabled: bool, python_path: bool = False):
    monkeypatch.setattr(rewrites, "ENABLED", enabled)
    with Context() as ctx, ctx.graph() as g:
        out = build(ctx, g)
        if python_path:  # the context may be shared with other tests (OpenVX's is one per process): reset after
            model(ctx.handle).performance_enabled = True
            try:
                g.process()
            finally:
                model(ctx.handle).performance_enabled = False
            got = out.numpy().copy()
        else:
            got = native_run(g, out).copy()
        return got, [(p.description.name.split(".")[-1], a.description.name.split(".")[-1])
                     for p, a in model(g.handle).rewrites.fused]


def _se(x, gate, function, swap=False, gate_from_sum=False):
    """A builder of ``x * function(gate)``: the gate's activation writes a virtual tensor only the product reads
    (``gate_from_sum``: the activation's own input is virtual too, the sum of the gate and zeros)."""
    def build(ctx, g):
        xt, source = ctx.tensor(x), ctx.tensor(gate)
        if gate_from_sum:
            summed = g.virtual()
            g.add(source, ctx.tensor(np.zeros_like(gate)), out=summed)
            source = summed
        squashed = g.virtual()
        g.activation(source, function, a=1.0, b=1.0, out=squashed)
        out = ctx.tensor(shape=x.shape, dtype=np.float32)
        if swap:
            g.multiply(squashed, xt, out=out)
        else:
            g.multiply(xt, squashed, out=out)
        return out
    return build


@pytest.mark.parametrize("seed", range(12))
def test_a_gated_product_matches_the_unfused_graph_and_the_float64_reference(monkeypatch, seed):
    rng = np.random.default_rng([4600, seed])
    shape, gate_shape = _shapes(rng)
    function = list(FUNCTIONS)[seed % 3]
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    gate = (rng.standard_normal(gate_shape) * 4).astype(np.float32)
    build = _se(x, gate, function, swap=bool(seed % 2), gate_from_sum=seed % 4 >= 2)
    fused, pairs = _run(monkeypatch, build, True)
    plain, none = _run(monkeypatch, build, False)
    assert pairs == [("tensor_multiply", "activation_layer")] and none == []
    assert fused.tobytes() == plain.tobytes()
    want = _reference(x, gate, function)
    np.testing.assert_allclose(fused, want, rtol=RELATIVE, atol=1e-37)


def test_the_python_path_gives_the_bytes_of_the_native_plan(monkeypatch):
    rng = np.random.default_rng(4601)
    x = rng.standard_normal((6, 5, 7, 2)).astype(np.float32)
    gate = rng.standard_normal((1, 1, 7, 2)).astype(np.float32)
    native, pairs = _run(monkeypatch, _se(x, gate, "logistic"), True)
    python, _ = _run(monkeypatch, _se(x, gate, "logistic"), True, python_path=True)
    assert pairs and python.tobytes() == native.tobytes()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_infinities_give_the_bytes_of_the_unfused_graph(monkeypatch):
    rng = np.random.default_rng(4602)
    x = rng.standard_normal((9, 4, 3, 1)).astype(np.float32)
    gate = rng.standard_normal((9, 1, 1, 1)).astype(np.float32)
    x[0, 0, 0, 0], x[1, 1, 1, 0], x[2, 2, 2, 0], x[3, 3, 0, 0] = np.nan, np.inf, -np.inf, -0.0
    gate[4, 0, 0, 0], gate[5, 0, 0, 0], gate[6, 0, 0, 0], gate[7, 0, 0, 0] = np.nan, np.inf, -np.inf, -100.0
    for function in FUNCTIONS:
        fused, pairs = _run(monkeypatch, _se(x, gate, function), True)
        plain, _ = _run(monkeypatch, _se(x, gate, function), False)
        assert pairs and np.isnan(fused).any()
        assert fused.tobytes() == plain.tobytes()


def test_no_fusion_where_the_gate_has_another_reader_is_the_applications_or_the_product_scales(monkeypatch):
    rng = np.random.default_rng(4603)
    x = rng.standard_normal((5, 4, 6)).astype(np.float32)
    gate = rng.standard_normal((1, 1, 6)).astype(np.float32)

    def build(ctx, g, case):
        xt, source = ctx.tensor(x), ctx.tensor(gate)
        squashed = ctx.tensor(shape=gate.shape, dtype=np.float32) if case == "shown" else g.virtual()
        g.activation(source, "logistic", out=squashed)
        out = ctx.tensor(shape=x.shape, dtype=np.float32)
        if case == "two readers":
            other = g.virtual()
            g.multiply(xt, squashed, out=other)
            g.add(other, squashed, out=out)
        else:
            g.multiply(xt, squashed, out=out, scale=0.5 if case == "scaled" else 1.0)
        return out

    for case in ("two readers", "shown", "scaled"):
        fused, pairs = _run(monkeypatch, lambda ctx, g, case=case: build(ctx, g, case), True)
        plain, _ = _run(monkeypatch, lambda ctx, g, case=case: build(ctx, g, case), False)
        assert pairs == [], case
        assert fused.tobytes() == plain.tobytes(), case
