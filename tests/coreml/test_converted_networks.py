"""Networks as converters write them: a classifier behind a flatten or reshape, and whole PyTorch modules
converted by coremltools. Their graphs run from C (every node has a native entry) and give the numbers of a
plain NumPy reference, or of PyTorch itself."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from . import references as ref
from .harness import builder, close, load


@pytest.mark.parametrize("shaping", ["reshapeStatic", "flattenTo2D", "squeeze", "flatten", "concat"])
def test_a_reshaped_classifier_runs_from_c_with_the_numbers_of_numpy(tmp_path, shaping):
    rng = np.random.default_rng(sum(map(ord, shaping)))
    for _ in range(3):
        c, h, w = (int(v) for v in rng.integers(2, 9, 3))
        o, units = int(rng.integers(2, 17)), int(rng.integers(1, 12))
        x = rng.standard_normal((1, c, h, w)).astype(np.float32)
        kernel = rng.standard_normal((3, 3, c, o)).astype(np.float32)
        fc = rng.standard_normal((units, 2 * o if shaping == "concat" else o)).astype(np.float32)
        bias = rng.standard_normal(units).astype(np.float32)
        b = builder({"x": x.shape}, ["y"], exact=True)
        b.add_convolution("conv", c, o, 3, 3, 1, 1, "valid", 1, kernel, None, False, input_name="x",
                          output_name="conv", padding_top=1, padding_bottom=1, padding_left=1, padding_right=1)
        b.add_pooling("pool", 1, 1, 1, 1, "AVERAGE", "VALID", input_name="conv", output_name="pool", is_global=True)
        if shaping == "reshapeStatic":
            b.add_reshape_static("flat", "pool", "flat", (1, o))
        elif shaping == "flattenTo2D":
            b.add_flatten_to_2d("flat", "pool", "flat", axis=1)
        elif shaping == "squeeze":
            b.add_squeeze("flat", "pool", "flat", axes=[2, 3])
        elif shaping == "flatten":
            b.add_flatten("flat", 0, "pool", "flat")
        else:  # the average and the maximum along the channels (copies into the views of one blob)
            b.add_pooling("peak", 1, 1, 1, 1, "MAX", "VALID", input_name="conv", output_name="peak", is_global=True)
            b.add_concat_nd("joined", ["pool", "peak"], "joined", axis=1)
            b.add_reshape_static("flat", "joined", "flat", (1, 2 * o))
        b.add_inner_product("y", fc, bias, fc.shape[1], units, True, input_name="flat", output_name="y")
        model = load(tmp_path, b)
        try:
            for _ in range(2):  # the first run binds the graph, the second runs its native plan
                out = model.predict({"x": x})["y"]
            runs = model.graph.native_runs
        finally:
            model.close()
        conv = ref.conv2d(x[0].astype(np.float64), kernel.transpose(3, 2, 0, 1).astype(np.float64), None, (1, 1),
                          (1, 1), (1, 1, 1, 1), 1)
        pooled = conv.mean(axis=(1, 2))
        features = np.concatenate([pooled, conv.max(axis=(1, 2))]) if shaping == "concat" else pooled
        close(out.reshape(-1), fc.astype(np.float64) @ features + bias, atol=1e-4)
        assert runs > 0, "the graph did not run from C"


@pytest.mark.parametrize("keep", [False, True])
def test_a_mean_over_the_plane_is_global_average_pooling_and_runs_from_c(tmp_path, keep):
    # x.mean((2, 3)) as the converter writes it (reduceMean over the last two axes) before a classifier
    rng = np.random.default_rng(11 + keep)
    for _ in range(3):
        lead = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 2))))
        c, h, w = (int(v) for v in rng.integers(1, 9, 3))
        x = (3 * rng.standard_normal(lead + (c, h, w))).astype(np.float32)
        x.reshape(-1)[rng.integers(0, x.size)] = 1e30  # a large value beside small ones
        b = builder({"x": x.shape}, ["y"], exact=True)
        b.add_reduce_mean("mean", "x", "mean", axes=[-2, -1], keepdims=keep)
        b.add_activation("y", "LINEAR", "mean", "y", params=[2.0, 0.5])  # a consumer, as the classifier is
        model = load(tmp_path, b)
        try:
            for _ in range(2):
                out = model.predict({"x": x})["y"]
            lowered = {layer.name: layer.lowering for layer in model.layers}
            runs = model.graph.native_runs
        finally:
            model.close()
        want = np.empty(lead + (c,))
        for index in np.ndindex(*lead, c):
            plane = x[index].astype(np.float64)
            want[index] = sum(float(v) for v in plane.ravel()) / plane.size
        want = 2.0 * want + 0.5
        close(out, want.reshape(lead + ((c, 1, 1) if keep else (c,))), rtol=1e-5, atol=1e-5)
        assert lowered["mean"].startswith("vxPoolingLayer(avg) over the whole plane"), lowered
        assert runs > 0, "the graph did not run from C"


def _converted_against_pytorch(tmp_path, key: str, options: dict, size: int, seed: int):
    """(our output of the second run, PyTorch's, the model's layers, its graph's kernel names, its native runs)
    for the ``torch_models`` network ``key`` converted by coremltools."""
    torch = pytest.importorskip("torch")
    import openvx_nn.coreml as cm
    from benchmarks import torch_models as tm
    net = tm.build(key, **options)
    path = tmp_path / "model.mlmodel"
    tm.coreml_file(net, size, str(path))
    x = np.random.default_rng(seed).standard_normal((1, 3, size, size)).astype(np.float32)
    with torch.inference_mode():
        want = net(torch.from_numpy(x)).numpy()
    with cm.load(path) as model:
        for _ in range(2):
            out = model.predict({"image": x})["logits"]
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes]
        return out, want, list(model.layers), kinds, model.graph.native_runs


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the networks are PyTorch modules")
@pytest.mark.parametrize("key", ["mobilenet_v2", "resnet18"])
def test_converted_pytorch_networks_fold_their_activations_run_from_c_and_match_pytorch(tmp_path, key):
    options = {"classes": 7, "width": 0.25 if key == "mobilenet_v2" else 0.125}
    out, want, model_layers, kinds, runs = _converted_against_pytorch(tmp_path, key, options, 40, 3)
    layers = {layer.type: [] for layer in model_layers}
    for layer in model_layers:
        layers[layer.type].append(layer.lowering)
    close(out.reshape(want.shape), want, atol=1e-4)
    assert runs > 0, "the graph did not run from C"
    # every clip (ReLU6) and ReLU is folded into a convolution's epilogue; no element-wise node is left
    activations = layers.get("clip", []) + layers.get("activation", [])
    assert activations and all(how.startswith("folded") for how in activations), activations
    assert "pointwise" not in kinds and "activation_layer" not in kinds, kinds


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the networks are PyTorch modules")
@pytest.mark.parametrize("key", ["mobilenet_v3_small", "efficientnet_b0"])
def test_converted_swish_networks_run_each_swish_as_one_pass_from_c_and_match_pytorch(tmp_path, key):
    # MobileNet v3's hard swish (thresholdedReLU, sigmoidHard, multiply) and EfficientNet's swish (sigmoid,
    # multiply) are one pass each; their squeeze-and-excitation gates multiply another blob and stay apart
    from benchmarks import torch_models as tm
    out, want, model_layers, _, runs = _converted_against_pytorch(tmp_path, key, tm.SIZES[key].smoke_options, 32, 5)
    types = {layer.name: layer.type for layer in model_layers}
    hows = {layer.name: layer.lowering for layer in model_layers}
    close(out.reshape(want.shape), want, atol=1e-4)
    assert runs > 0, "the graph did not run from C"
    gates = [name for name, how in hows.items() if how.startswith("coreml.pointwise(") and types[name] == "multiply"]
    folded = [name for name, how in hows.items() if how.startswith("folded into multiply")]
    if key == "mobilenet_v3_small":
        thresholded = [name for name in hows if name.startswith("thresholded_relu")]
        assert thresholded and all(hows[name].startswith("folded into multiply") for name in thresholded), hows
        assert len(folded) == 2 * len(gates) and all("hard_swish" in hows[name] for name in gates), gates
    else:
        assert gates and len(folded) == len(gates) and all("(swish)" in hows[name] for name in gates), gates


@pytest.mark.parametrize("seed", range(3))
def test_swish_and_squeeze_excitation_stay_in_nhwc_with_the_numbers_of_numpy(tmp_path, seed):
    # EfficientNet's block as the converter writes it: conv, x * sigmoid(x), global pool, 1x1 conv, ReLU,
    # 1x1 conv, sigmoid, x * gate ([C, 1, 1] against [C, H, W]), 1x1 conv
    rng = np.random.default_rng(seed)
    c, h, w = (int(v) for v in rng.integers(2, 9, 3))
    squeezed = int(rng.integers(1, 5))
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    kernels = [rng.standard_normal(shape).astype(np.float32) for shape in
               [(3, 3, c, c), (1, 1, c, squeezed), (1, 1, squeezed, c), (1, 1, c, c)]]
    b = builder({"x": x.shape}, ["y"], exact=True)

    def conv(name, source, k):
        kh, _, c_in, c_out = k.shape
        b.add_convolution(name, c_in, c_out, kh, kh, 1, 1, "valid", 1, k, None, False, input_name=source,
                          output_name=name, padding_top=kh // 2, padding_bottom=kh // 2, padding_left=kh // 2,
                          padding_right=kh // 2)
    conv("conv", "x", kernels[0])
    b.add_activation("sig", "SIGMOID", "conv", "sig")
    b.add_elementwise("swish", ["conv", "sig"], "swish", mode="MULTIPLY")
    b.add_pooling("pool", 1, 1, 1, 1, "AVERAGE", "VALID", input_name="swish", output_name="pool", is_global=True)
    conv("squeeze", "pool", kernels[1])
    b.add_activation("relu", "RELU", "squeeze", "relu")
    conv("excite", "relu", kernels[2])
    b.add_activation("gate", "SIGMOID", "excite", "gate")
    b.add_elementwise("scaled", ["swish", "gate"], "scaled", mode="MULTIPLY")
    conv("y", "scaled", kernels[3])
    out, other, kinds, lowered, runs = _fast_and_plain(tmp_path, b, x)

    def reference_conv(v, k):
        pad = k.shape[0] // 2
        return ref.conv2d(v, k.transpose(3, 2, 0, 1).astype(np.float64), None, (1, 1), (1, 1), (pad,) * 4, 1)
    sigmoid = lambda v: 1 / (1 + np.exp(-v))
    v = reference_conv(x[0].astype(np.float64), kernels[0])
    v = v * sigmoid(v)
    gate = sigmoid(reference_conv(np.maximum(reference_conv(v.mean(axis=(1, 2), keepdims=True), kernels[1]), 0),
                                  kernels[2]))
    want = reference_conv(v * gate, kernels[3])
    close(out[0], want, atol=1e-4)
    close(out, other, atol=1e-4)
    assert lowered["sig"] == "folded into multiply 'swish'", lowered  # x * sigmoid(x): one pass
    assert lowered["swish"] == "coreml.pointwise(swish) (NHWC)", lowered
    assert lowered["scaled"] == "vxTensorMultiply (NHWC)", lowered
    assert lowered["gate"] == "vxActivationLayer(logistic) (NHWC)", lowered
    assert kinds.count("to_nhwc") == 1 and kinds.count("to_chw") == 1, kinds
    assert runs > 0, "the graph did not run from C"


@pytest.mark.parametrize("seed", range(3))
def test_hard_swish_as_the_converter_writes_it_stays_in_nhwc_with_the_numbers_of_numpy(tmp_path, seed):
    # MobileNet v3's hard-swish: t = thresholdedReLU(x, -3), t * sigmoidHard(t; 1/6, 1/2), between convolutions
    rng = np.random.default_rng(seed)
    c, h, w = (int(v) for v in rng.integers(2, 9, 3))
    x = (3 * rng.standard_normal((1, c, h, w))).astype(np.float32)
    kernels = [rng.standard_normal((1, 1, c, c)).astype(np.float32) for _ in range(2)]
    b = builder({"x": x.shape}, ["y"], exact=True)
    b.add_convolution("conv", c, c, 1, 1, 1, 1, "valid", 1, kernels[0], None, False, input_name="x",
                      output_name="conv")
    b.add_activation("thr", "THRESHOLDEDRELU", "conv", "thr", params=-3.0)
    b.add_activation("hs", "SIGMOID_HARD", "thr", "hs", params=[1 / 6, 0.5])
    b.add_elementwise("swish", ["thr", "hs"], "swish", mode="MULTIPLY")
    b.add_convolution("y", c, c, 1, 1, 1, 1, "valid", 1, kernels[1], None, False, input_name="swish",
                      output_name="y")
    out, other, kinds, lowered, runs = _fast_and_plain(tmp_path, b, x)
    conv = np.einsum("chw,co->ohw", x[0].astype(np.float64), kernels[0][0, 0].astype(np.float64))
    t = np.where(conv > -3.0, conv, 0.0)
    swish = t * np.clip(t / 6 + 0.5, 0.0, 1.0)
    want = np.einsum("chw,co->ohw", swish, kernels[1][0, 0].astype(np.float64))
    close(out[0], want, atol=1e-4)
    close(out, other, atol=1e-4)
    # t * hard_sigmoid(t), the hard sigmoid 0 wherever the thresholded ReLU zeroes: one pass from the convolution
    assert lowered["thr"] == "folded into multiply 'swish'", lowered
    assert lowered["hs"] == "folded into multiply 'swish'", lowered
    assert lowered["swish"] == "coreml.pointwise(thresholded_hard_swish) (NHWC)", lowered
    assert kinds.count("to_nhwc") == 1 and kinds.count("to_chw") == 1, kinds
    assert runs > 0, "the graph did not run from C"


def _fast_and_plain(tmp_path, b, x):
    """(output of the NHWC route's second run, of the plain route, the fast graph's kernel names, each
    layer's lowering, the fast graph's native runs): the second run of a graph is native when it can be."""
    fast, plain = load(tmp_path, b), load(tmp_path, b, name="plain", nhwc=False)
    try:
        for _ in range(2):
            out = fast.predict({"x": x})["y"]
        other = plain.predict({"x": x})["y"]
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in fast.graph.nodes]
        lowered = {layer.name: layer.lowering for layer in fast.layers}
        return out, other, kinds, lowered, fast.graph.native_runs
    finally:
        fast.close()
        plain.close()
