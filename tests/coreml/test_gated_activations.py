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


SUBNORMAL_STEP = 2.0 ** -149


def _thresholded_hard_swish(threshold: float, alpha: float, beta: float, shape, conv: np.ndarray | None = None):
    """x -> thresholdedReLU(threshold) -> t * sigmoidHard(t; alpha, beta), as coremltools writes hard swish (after a
    1x1 convolution of weights ``conv`` when given: its output is then held channels-last on the NHWC route)."""
    b = builder({"x": shape}, ["y"])
    source = "x"
    if conv is not None:
        c = shape[0]
        b.add_convolution("conv", c, c, 1, 1, 1, 1, "valid", 1, conv.reshape(c, c, 1, 1).transpose(2, 3, 1, 0), None,
                          False, input_name="x", output_name="c")
        source = "c"
    b.add_activation("thr", "THRESHOLDEDRELU", source, "t", params=threshold)
    b.add_activation("hs", "SIGMOID_HARD", "t", "h", params=[alpha, beta])
    b.add_elementwise("product", ["t", "h"], "y", mode="MULTIPLY")
    return b


def _edge_values(rng, shape, threshold: float) -> np.ndarray:
    """Random values around the threshold and the hard sigmoid's corners, with the threshold itself, its float32
    neighbours, zeros of both signs, NaN, infinities and huge values among them."""
    t = np.float32(threshold)
    edges = np.array([t, np.nextafter(t, np.float32(-np.inf)), np.nextafter(t, np.float32(np.inf)), 0.0, -0.0, 3.0,
                      -3.0, 2.999999, 1e30, -1e30, 1e-40, -1e-40, np.nan, -np.inf, np.inf, -7.0], np.float32)
    x = (rng.standard_normal(int(np.prod(shape))) * 4).astype(np.float32)
    x[rng.choice(x.size, min(x.size, edges.size), replace=False)] = edges[:min(x.size, edges.size)]
    return x.reshape(shape)


def _plain_layers(x, threshold: float, alpha: float, beta: float) -> np.ndarray:
    """The three layers one by one from CoreML's text, in float64 (NaN >= threshold is false: 0)."""
    with np.errstate(invalid="ignore"):
        t = np.where(x.astype(np.float64) >= np.float64(np.float32(threshold)), x.astype(np.float64), 0.0)
        a, b = np.float64(np.float32(alpha)), np.float64(np.float32(beta))
        return t * np.minimum(np.maximum(a * t + b, 0.0), 1.0)


def _steps(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The distance of float32 values in steps between adjacent float32 values (zeros of both signs 0 apart)."""
    def key(v):
        i = np.ascontiguousarray(v, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(p) - key(q))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("nhwc", [False, True], ids=["coreml-layout", "nhwc"])
def test_a_thresholded_relu_before_a_hard_swish_folds_into_its_pass_with_the_layers_bytes(tmp_path, rng, asked,
                                                                                         monkeypatch, seed, nhwc):
    from openvx_nn.coreml.lowering import fusion
    rng = np.random.default_rng(seed)
    shape = tuple(int(v) for v in rng.integers(1, 9, 3))
    # room for every edge value; behind a convolution (the NHWC route) one channel, the convolution by 1 passing
    # each value on (an infinity times another channel's zero weight would be NaN), but for -0, which it makes +0
    shape = (1 if nhwc else max(shape[0], 2), max(shape[1], 4), max(shape[2], 4))
    # the hard sigmoid vanishes at and below the threshold: coremltools' -3 with (1/6, 1/2), and others
    threshold, alpha, beta = [(-3.0, 1 / 6, 0.5), (-3.0, 1 / 6, 0.5), (-2.0, 0.25, 0.5), (-5.0, 0.2, 0.4)][seed]
    x = _edge_values(rng, shape, threshold)
    b = _thresholded_hard_swish(threshold, alpha, beta, shape, np.ones((1, 1), np.float32) if nhwc else None)
    outputs, hows = {}, {}
    for fold in (True, False):
        if not fold:  # the unfused graph: every layer its own pass
            monkeypatch.setattr(fusion, "gated_products", lambda order, keep: {})
        model = load(tmp_path, b, name=f"fold{fold}", nhwc=nhwc)
        try:
            outputs[fold] = [model.predict({"x": x})["y"] for _ in range(2)][-1].reshape(shape)
            hows[fold] = {layer.name: layer.lowering for layer in model.layers}
        finally:
            model.close()
    assert hows[True]["thr"] == "folded into multiply 'product'", hows[True]
    assert hows[True]["product"].startswith("coreml.pointwise(thresholded_hard_swish)"), hows[True]
    assert hows[True]["product"].endswith("(NHWC)") == nhwc, hows[True]
    assert "thresholded_hard_swish" in asked
    assert not hows[False]["thr"].startswith("folded"), hows[False]
    fused, layers = outputs[True], outputs[False]
    want = _plain_layers(x, threshold, alpha, beta).astype(np.float32)
    # zeros (+0 below the threshold, for NaN and -inf; -0 between the threshold and the hard sigmoid's corner)
    # and infinities: the layers' bytes; every other value within the kernel's step of them. Only -0 itself
    # differs: the spec's thresholded ReLU passes it (-0 >= threshold) and the product is -0, as the fused pass
    # gives, while the unfused layer, evaluated as ``f(scale * x + shift)`` like every pointwise function, adds
    # its shift of +0 first
    exact = (want == 0) | ~np.isfinite(want)
    assert exact.sum() >= 5
    minus_zero = (x == 0) & np.signbit(x)
    assert np.array_equal(fused[exact & ~minus_zero].view(np.uint32), layers[exact & ~minus_zero].view(np.uint32))
    if not nhwc:  # behind the convolution -0 arrives as +0
        assert np.array_equal(fused[exact].view(np.uint32), want[exact].view(np.uint32))
    assert not np.isnan(fused).any() and not np.isnan(layers).any()
    assert _steps(fused, layers).max() <= fa.ULPS["thresholded_hard_swish"]
    assert _steps(fused, want).max() <= fa.ULPS["thresholded_hard_swish"]


@pytest.mark.parametrize("threshold", [-2.0, float("inf"), float("nan")])
def test_a_thresholded_relu_where_the_hard_sigmoid_is_not_zero_stays_its_own_pass(tmp_path, rng, threshold):
    # 1/6 * -2 + 1/2 > 0: values in [-3, -2) would change; an infinite or NaN threshold is never folded
    shape = (3, 4, 5)
    x = _edge_values(rng, shape, -2.0)
    model = load(tmp_path, _thresholded_hard_swish(threshold, 1 / 6, 0.5, shape))
    try:
        y = [model.predict({"x": x})["y"] for _ in range(2)][-1].reshape(shape)
        hows = {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()
    assert not hows["thr"].startswith("folded"), hows
    assert hows["hs"] == "folded into multiply 'product'", hows  # t * hard_sigmoid(t) itself is still one pass
    np.testing.assert_allclose(y, _plain_layers(x, threshold, 1 / 6, 0.5), rtol=2e-7, atol=SUBNORMAL_STEP)
