"""CoreML's float32 activations run on the one float32 activation kernel (``float_activation``), and a multiply of
a blob by its own sigmoid or hard sigmoid (how coremltools writes SiLU and hard swish) runs as one swish or hard
swish pass: the same numbers as the layers one by one in float64, within the kernel's stated ulps."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_activation as fa

from . import references as ref
from .harness import builder, load


@pytest.fixture
def asked(monkeypatch):
    """The functions graphs asked ``float_activation`` for (bound or native entries)."""
    calls: list[str] = []
    bind, native_entry = fa.bind, fa.native_entry
    monkeypatch.setattr(fa, "bind", lambda x, out, function, *a: calls.append(function) or bind(x, out, function, *a))
    monkeypatch.setattr(fa, "native_entry",
                        lambda x, out, function, *a: calls.append(function) or native_entry(x, out, function, *a))
    return calls


def _sigmoid(v):
    e = np.exp(-np.abs(v))
    return np.where(v >= 0, 1 / (1 + e), e / (1 + e))


def _hard_sigmoid(v):
    return np.clip(float(np.float32(1 / 6)) * v + 0.5, 0.0, 1.0)


def _network(rng, c: int, gate_is_output: bool):
    """conv -> swish (sigmoid, multiply) -> hard swish (hard sigmoid, multiply, inputs swapped) -> tanh -> softplus
    -> squeeze-and-excitation's gate (a sigmoid of the pooled blob times the blob: no gate of its own input)."""
    outputs = ["y", "s"] if gate_is_output else ["y"]
    b = builder({"x": (c, 7, 6)}, outputs)
    w = rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.5
    b.add_convolution("conv", c, c, 3, 3, 1, 1, "same", 1, w.transpose(2, 3, 1, 0), None, False, input_name="x",
                      output_name="c")
    b.add_activation("sigmoid", "SIGMOID", "c", "s")
    b.add_elementwise("swish", ["c", "s"], "w", mode="MULTIPLY")
    b.add_activation("hard_sigmoid", "SIGMOID_HARD", "w", "h", params=[1 / 6, 0.5])
    b.add_elementwise("hard_swish", ["h", "w"], "hs", mode="MULTIPLY")
    b.add_activation("tanh", "TANH", "hs", "t")
    b.add_activation("softplus", "SOFTPLUS", "t", "p")
    b.add_pooling("pool", 1, 1, 1, 1, "AVERAGE", "VALID", input_name="p", output_name="g", is_global=True)
    b.add_activation("gate", "SIGMOID", "g", "gs")
    b.add_elementwise("excite", ["p", "gs"], "y", mode="MULTIPLY")
    return b, w


def _reference(x, w):
    c = ref.conv2d(x.astype(np.float64), w.astype(np.float64), None, (1, 1), (1, 1), (1, 1, 1, 1), 1)
    s = _sigmoid(c)
    sw = c * s
    hs = sw * _hard_sigmoid(sw)
    p = np.log1p(np.exp(-np.abs(np.tanh(hs)))) + np.maximum(np.tanh(hs), 0)
    return p * _sigmoid(p.mean(axis=(1, 2), keepdims=True)), s


@pytest.mark.parametrize("nhwc", [True, False], ids=["nhwc", "coreml-layout"])
def test_swish_and_hard_swish_run_as_one_pass_on_the_kernel_with_the_layers_numbers(tmp_path, rng, asked, nhwc):
    c = 5
    b, w = _network(rng, c, False)
    model = load(tmp_path, b, nhwc=nhwc)
    try:
        x = rng.standard_normal((c, 7, 6)).astype(np.float32) * 2
        for _ in range(2):  # the first run binds the graph, the second runs its native plan
            y = model.predict({"x": x})["y"]
        runs = model.graph.native_runs
        hows = {layer.name: layer.lowering for layer in model.layers}
        fused = [(p.description.name, a.description.name) for p, a in model.graph.rewrites.fused]
        # a pass after a convolution may run in its epilogue (``core/activation_epilogue.py``), on the same loop
        epilogue = {a.state.get("function") for _, _, a in model.graph.rewrites.activations}
    finally:
        model.close()
    want, _ = _reference(x, w)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=2e-6, atol=1e-7)
    assert hows["sigmoid"] == "folded into multiply 'swish'"
    assert hows["hard_sigmoid"] == "folded into multiply 'hard_swish'"
    assert hows["swish"].startswith("coreml.pointwise(swish)")
    assert hows["hard_swish"].startswith("coreml.pointwise(hard_swish)")
    assert not hows["gate"].startswith("folded")  # the gate multiplies another blob: a sigmoid of its own
    assert {"swish", "hard_swish", "tanh", "softplus"} <= set(asked) | epilogue
    # the gate's sigmoid runs inside the product that reads it (``core/gated_products.py``: the same float32
    # function, on the pooled values only)
    assert ("org.khronos.openvx.tensor_multiply", "org.khronos.nn_extension.activation_layer") in fused
    assert runs > 0 or not nhwc, "the graph did not run from C"  # (CoreML's layout: its convolution runs in Python)


def test_a_sigmoid_read_elsewhere_is_no_gate(tmp_path, rng, asked):
    c = 3
    b, w = _network(rng, c, True)
    model = load(tmp_path, b)
    try:
        x = rng.standard_normal((c, 7, 6)).astype(np.float32)
        out = model.predict({"x": x})
        hows = {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()
    want, s = _reference(x, w)
    assert not hows["sigmoid"].startswith("folded") and hows["hard_sigmoid"].startswith("folded")
    np.testing.assert_allclose(out["s"].reshape(s.shape), s, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(out["y"].reshape(want.shape), want, rtol=2e-6, atol=1e-7)
