"""A batchnorm, scale, bias or linear activation and a ReLU, ReLU6 (as coremltools writes it) or clip after
a convolution fold into its one node, with the numbers of the layers run one by one (references from the seed's text);
a layer whose input has another reader or is a model output is not folded."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import builder, close, load


def _conv(b, rng, name, x, c, o, groups):
    w = rng.standard_normal((3, 3, c // groups, o)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    b.add_convolution(name, c // groups, o, 3, 3, 1, 1, "valid", groups, w, bias, True, input_name=x,
                      output_name=name, padding_top=1, padding_bottom=1, padding_left=1, padding_right=1)
    return w, bias


def _bn(b, rng, name, x, c):
    gamma, beta = rng.uniform(0.5, 2, c), rng.standard_normal(c)
    mean, var = rng.standard_normal(c), rng.uniform(0.2, 2, c)
    b.add_batchnorm(name, c, gamma, beta, mean, var, x, name, epsilon=1e-3)
    return lambda v: gamma.reshape(-1, 1, 1) * (v - mean.reshape(-1, 1, 1)) / np.sqrt(var.reshape(-1, 1, 1) + 1e-3) \
        + beta.reshape(-1, 1, 1)


def _relu6(b, x, out):
    b.add_activation(out + "_relu", "RELU", x, out + "_relu")
    b.add_activation(out + "_neg", "LINEAR", out + "_relu", out + "_neg", params=[-1.0, 0.0])
    b.add_unary(out + "_thr", out + "_neg", out + "_thr", mode="threshold", alpha=-6.0)
    b.add_activation(out, "LINEAR", out + "_thr", out, params=[-1.0, 0.0])
    return lambda v: np.minimum(np.maximum(v, 0.0), 6.0)


def _run(tmp_path, b, x, nhwc: bool = True):
    """Output ``y`` of the model for input ``x``, and how each layer was lowered."""
    model = load(tmp_path, b, nhwc=nhwc)
    try:
        return model.predict({"x": x})["y"], {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()


def _reference_conv(x, wb, groups):
    w, bias = wb
    return ref.conv2d(x, np.transpose(w, (3, 2, 0, 1)).astype(np.float64), bias, (1, 1), (1, 1), (1, 1, 1, 1), groups)


@pytest.mark.parametrize("nhwc", [True, False], ids=["nhwc", "chw"])
@pytest.mark.parametrize("activation", ["relu6", "relu", "clip", "linear", "sigmoid"])
@pytest.mark.parametrize("groups", ["dense", "depthwise"])
def test_batchnorm_and_activation_fold_into_the_convolution(tmp_path, rng, activation, groups, nhwc):
    c = 4
    g = 1 if groups == "dense" else c
    x = (3 * rng.standard_normal((c, 6, 5))).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    wb = _conv(b, rng, "conv", "x", c, c, g)
    norm = _bn(b, rng, "bn", "conv", c)
    if activation == "relu6":
        act = _relu6(b, "bn", "y")
    elif activation == "relu":
        b.add_activation("y", "RELU", "bn", "y")
        act = lambda v: np.maximum(v, 0.0)
    elif activation == "clip":
        b.add_clip("y", "bn", "y", min_value=-0.5, max_value=1.5)
        act = lambda v: np.clip(v, -0.5, 1.5)
    elif activation == "linear":  # an affine layer: into the weights and bias
        b.add_activation("y", "LINEAR", "bn", "y", params=[-0.75, 0.5])
        act = lambda v: -0.75 * v + 0.5
    else:  # no convolution computes it: its own layer
        b.add_activation("y", "SIGMOID", "bn", "y")
        act = lambda v: 1 / (1 + np.exp(-v))
    model = load(tmp_path, b, nhwc=nhwc)
    try:
        nodes = len(model.graph.nodes)
        out = model.predict({"x": x})["y"]
        lowered = [layer.lowering for layer in model.layers]
    finally:
        model.close()
    # the NHWC engines fuse ReLU and ReLU6 (not this clip), and add a conversion on each side
    folds = activation != "sigmoid" and (activation != "clip" or not nhwc)
    assert nodes == (1 if folds else 2) + (2 if nhwc else 0)
    assert (lowered[-1].startswith("folded")) == folds
    assert lowered[0].startswith("nnapi." if nhwc else "coreml.convolution")
    close(out, act(norm(_reference_conv(x.astype(np.float64), wb, g))), atol=1e-4)


def _affine_layer(b, rng, kind, name, x, c):
    """A ``scale``, ``bias``, ``linear`` or batchnorm layer of random values, one or one per channel; its
    function on [C, H, W] arrays."""
    if kind == "batchnorm":
        return _bn(b, rng, name, x, c)
    shape = [(1,), (c,), (c, 1, 1)][rng.integers(3)]
    if kind == "linear":
        alpha, beta = rng.uniform(-2, 2, 2)
        b.add_activation(name, "LINEAR", x, name, params=[float(alpha), float(beta)])
        return lambda v: alpha * v + beta
    shift = rng.standard_normal(shape).astype(np.float32)
    if kind == "bias":
        b.add_bias(name, shift, x, name, shape_bias=list(shape))
        return lambda v: v + shift.reshape(-1, 1, 1)
    factor = rng.uniform(-2, 2, shape).astype(np.float32)
    with_bias = bool(rng.integers(2))
    b.add_scale(name, factor, shift if with_bias else None, with_bias, x, name, shape_scale=list(shape),
                shape_bias=list(shape) if with_bias else None)
    return lambda v: factor.reshape(-1, 1, 1) * v + (shift.reshape(-1, 1, 1) if with_bias else 0.0)


@pytest.mark.parametrize("nhwc", [True, False], ids=["nhwc", "chw"])
@pytest.mark.parametrize("seed", range(6))
def test_chains_of_scale_bias_linear_and_batchnorm_fold_with_the_numbers_of_the_layers(tmp_path, seed, nhwc):
    # random shapes, groups and chains of one to three affine layers, then ReLU, ReLU6, clip or nothing
    rng = np.random.default_rng(seed)
    c, h, w = (int(v) for v in rng.integers(1, 7, 3))
    g = [1, c][rng.integers(2)]
    x = (2 * rng.standard_normal((c, h + 2, w + 2))).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    wb = _conv(b, rng, "conv", "x", c, c, g)
    blob, functions = "conv", []
    kinds = [["scale", "bias", "linear", "batchnorm"][k] for k in rng.integers(4, size=int(rng.integers(1, 4)))]
    for i, kind in enumerate(kinds):
        functions.append(_affine_layer(b, rng, kind, f"affine{i}", blob, c))
        blob = f"affine{i}"
    last = ["relu", "relu6", "clip", "none"][seed % 4]
    if last == "relu":
        b.add_activation("y", "RELU", blob, "y")
        act = lambda v: np.maximum(v, 0.0)
    elif last == "relu6":
        act = _relu6(b, blob, "y")
    elif last == "clip":
        b.add_clip("y", blob, "y", min_value=-0.5, max_value=1.5)
        act = lambda v: np.clip(v, -0.5, 1.5)
    else:
        b.add_activation("y", "LINEAR", blob, "y", params=[1.0, 0.0])
        act = lambda v: v
    out, lowered = _run(tmp_path, b, x, nhwc)
    for i, kind in enumerate(kinds):
        assert lowered[f"affine{i}"].startswith("folded"), (kinds, lowered)
    want = _reference_conv(x.astype(np.float64), wb, g)
    for function in functions:
        want = function(want)
    close(out, act(want), atol=1e-4)


def test_a_scale_that_varies_over_the_plane_is_not_folded(tmp_path, rng):
    c = 3
    x = rng.standard_normal((c, 6, 6)).astype(np.float32)
    factor = rng.standard_normal((1, 6, 6)).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    wb = _conv(b, rng, "conv", "x", c, c, 1)
    b.add_scale("y", factor, None, False, "conv", "y", shape_scale=[1, 6, 6])
    out, lowered = _run(tmp_path, b, x)
    assert "folded" not in lowered["y"]
    close(out, factor * _reference_conv(x.astype(np.float64), wb, 1), atol=1e-4)


@pytest.mark.parametrize("blocker", ["second-reader", "model-output"])
def test_a_layer_whose_input_is_needed_elsewhere_is_not_folded(tmp_path, rng, blocker):
    c = 3
    x = rng.standard_normal((c, 5, 5)).astype(np.float32)
    outputs = ["y", "conv"] if blocker == "model-output" else ["y"]
    b = builder({"x": x.shape}, outputs)
    wb = _conv(b, rng, "conv", "x", c, c, 1)
    b.add_activation("relu", "RELU", "conv", "relu")
    if blocker == "second-reader":
        b.add_elementwise("y", ["relu", "conv"], "y", mode="ADD")
    else:
        b.add_activation("y", "LINEAR", "relu", "y", params=[2.0, 0.0])
    model = load(tmp_path, b)
    try:
        out = model.predict({"x": x})
        lowered = {layer.name: layer.lowering for layer in model.layers}
    finally:
        model.close()
    assert "folded" not in lowered["relu"]
    conv = _reference_conv(x.astype(np.float64), wb, 1)
    relu = np.maximum(conv, 0.0)
    close(out["y"], relu + conv if blocker == "second-reader" else 2 * relu)
    if blocker == "model-output":
        close(out["conv"], conv)


@pytest.mark.parametrize("residual", ["input", "earlier-layer", "broadcast", "later-layer"])
@pytest.mark.parametrize("groups", ["dense", "depthwise"])
def test_a_residual_add_and_relu_fold_when_the_residual_is_ready_and_the_same_shape(tmp_path, rng, residual, groups):
    c = 4
    g = 1 if groups == "dense" else c
    x = rng.standard_normal((c, 5, 6)).astype(np.float32)
    shortcut = rng.standard_normal((c, 1, 1)).astype(np.float32)
    b = builder({"x": x.shape}, ["y"])
    if residual == "earlier-layer":  # the shortcut is computed before the convolution in the file
        b.add_activation("short", "LINEAR", "x", "short", params=[0.5, 0.25])
        other, other_value = "short", 0.5 * x.astype(np.float64) + 0.25
    elif residual == "broadcast":
        b.add_load_constant("short", "short", shortcut, list(shortcut.shape))
        other, other_value = "short", shortcut.astype(np.float64)
    else:
        other, other_value = "x", x.astype(np.float64)
    wb = _conv(b, rng, "conv", "x", c, c, g)
    norm = _bn(b, rng, "bn", "conv", c)
    if residual == "later-layer":  # made after the convolution in the file: the add stays a layer
        b.add_activation("short", "LINEAR", "x", "short", params=[0.5, 0.25])
        other, other_value = "short", 0.5 * x.astype(np.float64) + 0.25
    b.add_elementwise("sum", ["bn", other], "sum", mode="ADD")
    b.add_activation("y", "RELU", "sum", "y")
    out, lowered = _run(tmp_path, b, x)
    folds = residual in ("input", "earlier-layer")
    assert ("folded" in lowered["sum"]) == folds and ("folded" in lowered["y"]) == folds
    assert "folded" in lowered["bn"]
    want = np.maximum(norm(_reference_conv(x.astype(np.float64), wb, g)) + other_value, 0.0)
    close(out, want, atol=1e-4)
