"""NNAPI squeeze-and-excitation blocks reach the plan's gate fusion (``core/gated_products.py``): float32 LOGISTIC
or TANH lowered to the standard activation layer, MUL (no fused activation) computing it on the gate's values.

Models built with the Python builder, conv -> global average (AVERAGE_POOL_2D or MEAN) -> FULLY_CONNECTED ->
(RESHAPE) -> LOGISTIC/TANH -> MUL(x, gate), over randomized shapes, operand orders and NaN/infinities: the fused
graph's bytes equal those of the same model compiled with the rewrites off, and agree with a float64 NumPy
reference written from NNAPI's definitions; the graph's rewrites report names the fused pair. No fusion where
the gate has a second reader, is a model output, or the MUL has a fused RELU.
"""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import add_constant, add_i32, collect_garbage  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi
from openvx_nn.core import rewrites

T, OP = nnapi.OperandType, nnapi.OperationType
F32T, I32T = T.TENSOR_FLOAT32, T.TENSOR_INT32
GATES = {OP.LOGISTIC: lambda v: 1.0 / (1.0 + np.exp(-v)), OP.TANH: np.tanh}
"""NNAPI's LOGISTIC and TANH in float64, from the spec's formulas."""


@pytest.fixture(autouse=True)
def rewrites_on(monkeypatch):
    monkeypatch.delenv("OPENVX_NN_REWRITES", raising=False)


def _se_model(rng, function, case: str = "plain", mean: bool | None = None):
    """(model, weights, sizes, output shapes) of an SE block on a 1x1 convolution's output; ``case`` one of plain,
    second_reader (the gate also feeds an ADD, a model output), gate_output (the gate is a model output), relu
    (the MUL fuses RELU); ``mean``: MEAN rather than AVERAGE_POOL_2D (random when None)."""
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
    c, k = int(rng.integers(1, 17)), int(rng.integers(1, 17))
    swap, draw = bool(rng.integers(2)), bool(rng.integers(2))
    mean = draw if mean is None else mean
    reshape = n > 1 or bool(rng.integers(2))  # [N, K] broadcasts over [N, H, W, K] (trailing dims) when N is 1
    weights = {"conv_w": rng.standard_normal((k, 1, 1, c)).astype(np.float32),
               "conv_b": rng.standard_normal(k).astype(np.float32),
               "fc_w": (rng.standard_normal((k, k)) * 2).astype(np.float32),
               "fc_b": (rng.standard_normal(k) * 2).astype(np.float32)}
    m = nnapi.Model()
    x = m.add_operand(F32T, [n, h, w, c])
    t = m.add_operand(F32T, [n, h, w, k])
    m.add_operation(OP.CONV_2D, [x, add_constant(m, weights["conv_w"]), add_constant(m, weights["conv_b"])]
                    + [add_i32(m, 0) for _ in range(4)] + [add_i32(m, 1), add_i32(m, 1), add_i32(m, 0)], [t])
    pooled = m.add_operand(F32T, [n, 1, 1, k])
    if mean:
        m.add_operation(OP.MEAN, [t, add_constant(m, np.array([1, 2], np.int32)), add_i32(m, 1)], [pooled])
    else:
        m.add_operation(OP.AVERAGE_POOL_2D, [t] + [add_i32(m, 0) for _ in range(4)]
                        + [add_i32(m, 1), add_i32(m, 1), add_i32(m, w), add_i32(m, h), add_i32(m, 0)], [pooled])
    fc = m.add_operand(F32T, [n, k])
    m.add_operation(OP.FULLY_CONNECTED, [pooled, add_constant(m, weights["fc_w"]), add_constant(m, weights["fc_b"]),
                                         add_i32(m, 0)], [fc])
    source = fc
    if reshape:
        source = m.add_operand(F32T, [n, 1, 1, k])
        m.add_operation(OP.RESHAPE, [fc, add_constant(m, np.array([n, 1, 1, k], np.int32))], [source])
    gate_shape = (n, 1, 1, k) if reshape else (n, k)
    gate = m.add_operand(F32T, list(gate_shape))
    m.add_operation(function, [source], [gate])
    y = m.add_operand(F32T, [n, h, w, k])
    m.add_operation(OP.MUL, ([gate, t] if swap else [t, gate]) + [add_i32(m, 1 if case == "relu" else 0)], [y])
    outputs = [y]
    if case == "second_reader":
        z = m.add_operand(F32T, list(gate_shape))
        m.add_operation(OP.ADD, [gate, gate, add_i32(m, 0)], [z])
        outputs.append(z)
    elif case == "gate_output":
        outputs.append(gate)
    m.identify_inputs_and_outputs([x], outputs)
    m.finish()
    return m, weights, (n, h, w, c, k), [(n, h, w, k)] + [gate_shape] * (len(outputs) - 1)


def _run(monkeypatch, m, x, out_shapes, enabled: bool, python_path: bool = False):
    """The model's outputs after three executions (the last on the bound plan: native, or with
    ``python_path`` each node's Python runner), and the fused (product, activation) pairs of its graph."""
    monkeypatch.setattr(rewrites, "ENABLED", enabled)
    c = nnapi.Compilation(m)
    c.finish()
    graph = c.prepared.lowered.graph
    outs = []
    for turn in range(3):
        e = nnapi.Execution(c)
        e.set_input(0, x)
        outs = [np.full(s, 7.0, np.float32) for s in out_shapes]
        for i, o in enumerate(outs):
            e.set_output(i, o)
        runs = graph.native_runs
        if not python_path:
            e.compute()
        else:  # performance timing: no native plan (the context is shared: reset after)
            graph.context.performance_enabled = True
            try:
                e.compute()
            finally:
                graph.context.performance_enabled = False
        native = graph.native_runs > runs  # the last run's: earlier ones bind the plan and publish the native one
        assert not (python_path and native)
    pairs = [(p.description.name.split(".")[-1], a.description.name.split(".")[-1]) for p, a in graph.rewrites.fused]
    c.release()
    return outs, pairs, native


def _reference(x, wt, function, relu=False):
    """The block in float64 from NNAPI's definitions: 1x1 conv, mean over H and W, FC, the gate, the product."""
    x = x.astype(np.float64)
    w = {k: v.astype(np.float64) for k, v in wt.items()}
    with np.errstate(all="ignore"):
        t = np.einsum("nhwc,kc->nhwk", x, w["conv_w"][:, 0, 0, :]) + w["conv_b"]
        f = t.mean(axis=(1, 2)) @ w["fc_w"].T + w["fc_b"]
        y = t * GATES[function](f)[:, None, None, :]
    return np.maximum(y, 0) if relu else y


@pytest.mark.parametrize("function", sorted(GATES), ids=lambda f: OP(f).name.lower())
@pytest.mark.parametrize("seed", range(6))
def test_an_se_block_fuses_with_the_bytes_of_the_unfused_model(monkeypatch, function, seed):
    rng = np.random.default_rng(seed + 100 * function)
    m, weights, (n, h, w, c, k), _ = _se_model(rng, function)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    (fused,), pairs, _ = _run(monkeypatch, m, x, [(n, h, w, k)], True)
    (plain,), none, _ = _run(monkeypatch, m, x, [(n, h, w, k)], False)
    assert pairs == [("mul", "activation_layer")] and none == []
    assert fused.tobytes() == plain.tobytes()
    np.testing.assert_allclose(fused, _reference(x, weights, function), rtol=1e-4, atol=1e-4)


def test_the_python_path_gives_the_bytes_of_the_native_plan(monkeypatch):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        function = (OP.LOGISTIC, OP.TANH)[seed % 2]
        m, weights, (n, h, w, c, k), _ = _se_model(rng, function, mean=False)  # every node has a native entry
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        (python,), pairs, _ = _run(monkeypatch, m, x, [(n, h, w, k)], True, python_path=True)
        (native,), _, ran = _run(monkeypatch, m, x, [(n, h, w, k)], True)
        assert pairs == [("mul", "activation_layer")] and ran
        assert python.tobytes() == native.tobytes()
        np.testing.assert_allclose(python, _reference(x, weights, function), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("function", sorted(GATES), ids=lambda f: OP(f).name.lower())
def test_nan_and_infinities_give_the_bytes_of_the_unfused_model(monkeypatch, function):
    for seed in range(4):
        rng = np.random.default_rng(seed)
        m, _, (n, h, w, c, k), _ = _se_model(rng, function)
        x = rng.standard_normal((n, h, w, c)).astype(np.float32) * 50
        x.reshape(-1)[rng.integers(0, x.size, max(1, x.size // 8))] = rng.choice([np.nan, np.inf, -np.inf])
        (fused,), pairs, _ = _run(monkeypatch, m, x, [(n, h, w, k)], True)
        (plain,), _, _ = _run(monkeypatch, m, x, [(n, h, w, k)], False)
        assert pairs == [("mul", "activation_layer")]
        assert not np.isfinite(fused).all()
        assert fused.tobytes() == plain.tobytes()


@pytest.mark.parametrize("case", ["second_reader", "gate_output", "relu"])
def test_no_fusion_where_the_gate_is_read_again_is_an_output_or_the_product_has_an_activation(monkeypatch, case):
    for seed in range(3):
        rng = np.random.default_rng(seed)
        m, weights, (n, h, w, c, _), shapes = _se_model(rng, OP.LOGISTIC, case)
        x = rng.standard_normal((n, h, w, c)).astype(np.float32)
        fused, pairs, _ = _run(monkeypatch, m, x, shapes, True)
        plain, _, _ = _run(monkeypatch, m, x, shapes, False)
        assert pairs == [], case
        for a, b in zip(fused, plain):
            assert a.tobytes() == b.tobytes(), case
        np.testing.assert_allclose(fused[0], _reference(x, weights, OP.LOGISTIC, case == "relu"), rtol=1e-4,
                                   atol=1e-4)
