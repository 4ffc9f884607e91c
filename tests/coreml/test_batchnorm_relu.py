"""A batchnorm of stored statistics read by a ReLU alone -- DenseNet's pre-activation ``concat -> BN -> ReLU -> conv``,
which no convolution can fold -- runs as one per-channel ``affine_relu`` pass (``channel_affine``, a native entry),
on the NHWC tensor when its input is held there, and a concatenation of blobs held in NHWC is written in NHWC: the
numbers of a plain NumPy reference of the layers, the same bytes as the graph with both fusions off (the affine
map, then the ReLU; the copies into CoreML's layout), and the graph runs from its native plan."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.api.graph_builder import BuildError, GraphBuilder
from openvx_nn.coreml.lowering import fusion, nhwc
from openvx_nn.operations.coreml.elementwise import POINTWISE_FUNCTIONS

from . import references as ref
from .harness import batchnorm_parameters, builder, load, predict_twice


def _network(rng, c: int, h: int, w: int, growth: int):
    """x -> conv a (3x3) and conv b (3x3) -> concat -> BN -> ReLU -> conv (1x1) -> y."""
    b = builder({"x": (c, h, w)}, ["y"])
    wa = (rng.standard_normal((growth, c, 3, 3)) * 0.5).astype(np.float32)
    wb = (rng.standard_normal((growth + 1, c, 3, 3)) * 0.5).astype(np.float32)
    wy = (rng.standard_normal((3, 2 * growth + 1, 1, 1)) * 0.5).astype(np.float32)
    for name, weights, out in (("conv_a", wa, "a"), ("conv_b", wb, "b")):
        b.add_convolution(name, c, weights.shape[0], 3, 3, 1, 1, "same", 1, weights.transpose(2, 3, 1, 0), None,
                          False, input_name="x", output_name=out)
    b.add_elementwise("cat", ["a", "b"], "cat", mode="CONCAT")
    bn = batchnorm_parameters(rng, 2 * growth + 1)
    b.add_batchnorm("bn", 2 * growth + 1, *bn, input_name="cat", output_name="n", epsilon=1e-5)
    b.add_activation("relu", "RELU", "n", "r")
    b.add_convolution("conv_y", 2 * growth + 1, 3, 1, 1, 1, 1, "valid", 1, wy.transpose(2, 3, 1, 0), None, False,
                      input_name="r", output_name="y")
    return b, (wa, wb, wy, bn)


def _reference(x, wa, wb, wy, bn):
    x = x.astype(np.float64)
    cat = np.concatenate([ref.conv2d(x, wa.astype(np.float64), None, (1, 1), (1, 1), (1, 1, 1, 1), 1),
                          ref.conv2d(x, wb.astype(np.float64), None, (1, 1), (1, 1), (1, 1, 1, 1), 1)])
    gamma, beta, mean, var = (v.astype(np.float64).reshape(-1, 1, 1) for v in bn)
    r = np.maximum(gamma * (cat - mean) / np.sqrt(var + 1e-5) + beta, 0.0)
    return ref.conv2d(r, wy.astype(np.float64), None, (1, 1), (1, 1), (0, 0, 0, 0), 1)


@pytest.mark.parametrize("nhwc_route", [True, False], ids=["nhwc", "coreml-layout"])
@pytest.mark.parametrize("seed", range(3))
def test_concat_batchnorm_relu_is_one_pass_with_the_layers_numbers_and_bytes(tmp_path, monkeypatch, seed,
                                                                               nhwc_route):
    rng = np.random.default_rng([4604, seed])
    c, h, w, growth = (int(v) for v in rng.integers(2, 9, 4))
    b, weights = _network(rng, c, h, w, growth)
    x = (rng.standard_normal((c, h, w)) * 2).astype(np.float32)
    y, hows, runs = predict_twice(tmp_path, b, x, nhwc_route)
    want = _reference(x, *weights)
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    assert hows["bn"] == "folded into activation 'relu'"
    assert hows["relu"].startswith("coreml.pointwise(affine_relu)")
    assert hows["relu"].endswith("with batchnorm 'bn' folded in")
    assert ("(NHWC)" in hows["relu"]) == nhwc_route and ("(NHWC)" in hows["cat"]) == nhwc_route
    assert runs >= 1 or not nhwc_route, "the graph did not run from its native plan"  # CoreML's convolution: none
    # both fusions off: the batchnorm's affine pass, the ReLU, the concatenation in CoreML's layout
    monkeypatch.setattr(fusion, "activated_affines", lambda order, keep: {})
    monkeypatch.setattr(nhwc, "concat", lambda g, layer, blobs: None)
    apart, hows, _ = predict_twice(tmp_path, b, x, nhwc_route)
    assert hows["bn"].startswith("coreml.pointwise(affine)") and "NHWC" not in hows["cat"]
    np.testing.assert_array_equal(y.view(np.int32), apart.view(np.int32))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_edge_values_pass_as_the_separate_layers_pass_them(tmp_path, monkeypatch, rng):
    """NaN, infinities and -0 through ``concat -> BN -> ReLU`` of model inputs (CoreML's layout): NaN stays NaN, a
    value the affine map sends below zero becomes +0, the bytes of the two layers apart."""
    c = 3
    b = builder({"p": (c, 2, 4), "q": (c, 2, 4)}, ["r"])
    b.add_elementwise("cat", ["p", "q"], "cat", mode="CONCAT")
    gamma, beta, mean, var = batchnorm_parameters(rng, 2 * c)
    gamma[0] = -abs(gamma[0])
    b.add_batchnorm("bn", 2 * c, gamma, beta, mean, var, input_name="cat", output_name="n", epsilon=1e-5)
    b.add_activation("relu", "RELU", "n", "r")
    p = rng.standard_normal((c, 2, 4)).astype(np.float32)
    p[0, 0, :] = [np.nan, np.inf, -np.inf, -0.0]
    p[1, 1, :] = [0.0, -0.0, 3.4e38, -3.4e38]
    q = rng.standard_normal((c, 2, 4)).astype(np.float32)

    def predict():
        model = load(tmp_path, b)
        try:
            for _ in range(2):  # the first run binds the graph, the second runs its native plan
                r = model.predict({"p": p, "q": q})["r"]
            return r, {layer.name: layer.lowering for layer in model.layers}, model.graph.native_runs
        finally:
            model.close()

    got, hows, runs = predict()
    assert hows["bn"] == "folded into activation 'relu'"
    assert runs >= 1, "the graph did not run from its native plan"
    cat = np.concatenate([p, q]).astype(np.float64)
    scale = gamma.astype(np.float64) / np.sqrt(var.astype(np.float64) + 1e-5)
    shift = beta - mean * scale
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.maximum(scale.reshape(-1, 1, 1) * cat + shift.reshape(-1, 1, 1), 0.0)
    got = got.reshape(want.shape)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert not np.signbit(got).any(), "a ReLU output is -0 or negative"
    monkeypatch.setattr(fusion, "activated_affines", lambda order, keep: {})
    apart, _, _ = predict()
    np.testing.assert_array_equal(got.view(np.int32), apart.reshape(got.shape).view(np.int32))


def test_a_batchnorm_with_another_reader_keeps_its_own_pass(tmp_path, rng):
    """The ReLU is not the batchnorm's only reader (the batchnorm's output is a model output): no fusion."""
    c = 4
    b = builder({"x": (c, 3, 3)}, ["n", "r"])
    b.add_batchnorm("bn", c, *batchnorm_parameters(rng, c), input_name="x", output_name="n", epsilon=1e-5)
    b.add_activation("relu", "RELU", "n", "r")
    model = load(tmp_path, b)
    try:
        x = rng.standard_normal((c, 3, 3)).astype(np.float32)
        out = model.predict({"x": x})
        hows = {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()
    assert hows["bn"].startswith("coreml.pointwise(affine)")
    np.testing.assert_array_equal(out["r"], np.maximum(out["n"], 0))


@pytest.mark.parametrize("axis", [7.0, float("nan"), 0.5, -1.0])
def test_a_pointwise_channel_axis_that_names_no_axis_is_refused(axis):
    """``coreml.pointwise``'s optional sixth parameter (the channel axis, for tensors held in NHWC) must name an
    axis of the input: anything else is refused at verify, naming it."""
    g = GraphBuilder()
    try:
        g.coreml("pointwise", (g.real((3, 4, 5)), g.enum(POINTWISE_FUNCTIONS.index("affine_relu")),
                               g.floats([1.0, 0.0, 0.0, 0.0, 0.0, axis]), g.constant(np.ones(3, np.float32)), None,
                               g.real((3, 4, 5))))
        with pytest.raises(BuildError, match="channel axis"):
            g.verify()
    finally:
        g.close()
