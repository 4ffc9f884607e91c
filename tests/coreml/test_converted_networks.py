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


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the networks are PyTorch modules")
@pytest.mark.parametrize("key", ["mobilenet_v2", "resnet18"])
def test_converted_pytorch_networks_fold_their_activations_run_from_c_and_match_pytorch(tmp_path, key):
    torch = pytest.importorskip("torch")
    import openvx_nn.coreml as cm
    from benchmarks import torch_models as tm
    net = tm.build(key, classes=7, width=0.25 if key == "mobilenet_v2" else 0.125)
    size = 40
    path = tmp_path / "model.mlmodel"
    tm.coreml_file(net, size, str(path))
    x = np.random.default_rng(3).standard_normal((1, 3, size, size)).astype(np.float32)
    with torch.inference_mode():
        want = net(torch.from_numpy(x)).numpy()
    with cm.load(path) as model:
        for _ in range(2):
            out = model.predict({"image": x})["logits"]
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes]
        layers = {layer.type: [] for layer in model.layers}
        for layer in model.layers:
            layers[layer.type].append(layer.lowering)
        runs = model.graph.native_runs
    close(out.reshape(want.shape), want, atol=1e-4)
    assert runs > 0, "the graph did not run from C"
    # every clip (ReLU6) and ReLU is folded into a convolution's epilogue; no element-wise node is left
    activations = layers.get("clip", []) + layers.get("activation", [])
    assert activations and all(how.startswith("folded") for how in activations), activations
    assert "pointwise" not in kinds and "activation_layer" not in kinds, kinds
