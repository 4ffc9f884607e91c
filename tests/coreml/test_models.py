"""Whole models: a CNN classifier with labels (coremltools' output shape), a
regressor, image preprocessing, quantized weights (linear 1-8 bits and lookup
tables); malformed and unsupported models give a clear CoreMLError."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models.neural_network.quantization_utils import _convert_array_to_nbit_quantized_bytes
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm

from . import references as ref
from .harness import builder, close, load, weights


def _cnn_classifier(rng, labels):
    b = builder({"image": (3, 8, 8)}, ["probs"], mode="classifier", output_shapes={"probs": (len(labels),)})
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    b.add_convolution("conv", 3, 4, 3, 3, 1, 1, "same", 1, w, rng.standard_normal(4), True, input_name="image",
                      output_name="c")
    b.add_batchnorm("bn", 4, rng.uniform(0.5, 1.5, 4), rng.standard_normal(4), rng.standard_normal(4),
                    rng.uniform(0.5, 1.5, 4), "c", "n")
    b.add_activation("relu", "RELU", "n", "r")
    b.add_pooling("pool", 2, 2, 2, 2, "MAX", "VALID", "r", "p")
    b.add_inner_product("fc", rng.standard_normal((len(labels), 64)).astype(np.float32),
                        rng.standard_normal(len(labels)), 64, len(labels), True, "p", "logits")
    b.add_softmax("softmax", "logits", "probs")
    b.set_class_labels(labels, predicted_feature_name="classLabel", prediction_blob="probs")
    return b


def _cnn_reference(spec, x):
    layers = spec.neuralNetworkClassifier.layers
    conv = layers[0].convolution
    h = ref.conv2d(x, weights(conv.weights, (4, 3, 3, 3)), weights(conv.bias, (4,)), (1, 1), (1, 1), (1, 1, 1, 1), 1)
    bn = layers[1].batchnorm
    g, beta, mean, var = (weights(getattr(bn, f), (4,)).reshape(4, 1, 1) for f in ("gamma", "beta", "mean", "variance"))
    h = np.maximum(g * (h - mean) / np.sqrt(var + bn.epsilon) + beta, 0)
    h = ref.pool2d(h, "max", (2, 2), (2, 2), (0, 0, 0, 0), True)
    fc = layers[4].innerProduct
    n = fc.outputChannels
    return ref.softmax(weights(fc.weights, (n, 64)) @ h.reshape(-1) + weights(fc.bias, (n,)), 0)


@pytest.mark.parametrize("labels", [["cat", "dog", "bird"], [7, 11, 13, 17]])
def test_cnn_classifier_returns_label_and_probability_dict(tmp_path, rng, labels):
    b = _cnn_classifier(rng, labels)
    model = load(tmp_path, b)
    x = rng.standard_normal((3, 8, 8)).astype(np.float32)
    out = model.predict({"image": x})
    want = _cnn_reference(b.spec, x.astype(np.float64))
    assert set(out) == {"classLabel", "probs"}
    assert out["classLabel"] == labels[int(np.argmax(want))]
    assert list(out["probs"]) == labels
    close(np.array([out["probs"][k] for k in labels]), want)
    assert [layer.type for layer in model.layers] == ["convolution", "batchnorm", "activation", "pooling",
                                                       "innerProduct", "softmax"]
    assert model.layers[0].lowering == "nnapi.conv_2d (NHWC) with bn, relu folded in"
    assert model.layers[3].lowering == "nnapi.max_pool_2d (NHWC)"
    assert model.layers[4].lowering == "nnapi.fully_connected (NHWC)"
    assert [layer.lowering for layer in model.layers[1:3]] == ["folded into convolution 'conv'"] * 2
    assert model.graph.verified
    model.close()


def test_regressor_outputs_arrays(tmp_path, rng):
    b = builder({"x": (4,)}, ["y"], mode="regressor", output_shapes={"y": (2,)})
    w = rng.standard_normal((2, 4)).astype(np.float32)
    b.add_inner_product("fc", w, None, 4, 2, False, "x", "y")
    model = load(tmp_path, b)
    x = rng.standard_normal(4).astype(np.float32)
    close(model.predict({"x": x})["y"], weights(b.spec.neuralNetworkRegressor.layers[0].innerProduct.weights,
                                                (2, 4)) @ x)


def test_image_input_gets_scale_and_channel_biases(tmp_path, rng):
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder
    b = NeuralNetworkBuilder([("img", datatypes.Array(3, 4, 5))], [("y", datatypes.Array(3, 4, 5))])
    b.add_activation("id", "LINEAR", "img", "y", [1.0, 0.0])
    b.set_pre_processing_parameters(image_input_names=["img"], is_bgr=False, red_bias=-1.0, green_bias=0.5,
                                    blue_bias=2.0, image_scale=0.5)
    model = load(tmp_path, b)
    x = rng.uniform(0, 255, (3, 4, 5)).astype(np.float32)
    out = model.predict({"img": x})["y"]
    close(out, 0.5 * x + np.array([-1.0, 0.5, 2.0]).reshape(3, 1, 1))


def _pack(codes, bits):
    """Plain MSB-first bit packing, checked against coremltools' packer below."""
    stream = [(int(c) >> i) & 1 for c in codes for i in range(bits - 1, -1, -1)]
    stream += [0] * (-len(stream) % 8)
    return bytes(int("".join(map(str, stream[i:i + 8])), 2) for i in range(0, len(stream), 8))


@pytest.mark.parametrize("bits", [1, 3, 4, 8])
def test_linear_quantized_inner_product(tmp_path, rng, bits):
    out_c, in_c = 3, 10
    codes = rng.integers(0, 2 ** bits, (out_c, in_c))
    packed = _pack(codes.reshape(-1), bits)
    assert packed == _convert_array_to_nbit_quantized_bytes(codes.reshape(-1), bits).tobytes()
    scale, qbias = rng.uniform(0.1, 1.0, out_c), rng.standard_normal(out_c)
    b = builder({"x": (in_c,)}, ["y"], output_shapes={"y": (out_c,)})
    b.add_inner_product("fc", packed, None, in_c, out_c, False, "x", "y", is_quantized_weight=True,
                        quantization_type="linear", nbits=bits, quant_scale=scale, quant_bias=qbias)
    model = load(tmp_path, b)
    x = rng.standard_normal(in_c).astype(np.float32)
    w = codes * scale.reshape(-1, 1) + qbias.reshape(-1, 1)
    close(model.predict({"x": x})["y"], w @ x)


def test_lookup_table_quantized_convolution(tmp_path, rng):
    lut = rng.standard_normal(4)
    codes = rng.integers(0, 4, (2, 3, 3, 3))  # [O, C, kh, kw]
    b = builder({"x": (3, 5, 5)}, ["y"])
    given = codes.transpose(2, 3, 1, 0)  # the builder takes [kh, kw, C, O] and stores [O, C, kh, kw]
    b.add_convolution("conv", 3, 2, 3, 3, 1, 1, "valid", 1, _pack(given.reshape(-1), 2), None, False,
                      input_name="x", output_name="y", is_quantized_weight=True, quantization_type="lut", nbits=2,
                      quant_lut=lut)
    model = load(tmp_path, b)
    x = rng.standard_normal((3, 5, 5)).astype(np.float32)
    close(model.predict({"x": x})["y"], ref.conv2d(x.astype(np.float64), lut[codes], None, (1, 1), (1, 1),
                                                   (0, 0, 0, 0), 1))


# -- errors -----------------------------------------------------------------------------------------
def _relu_model(tmp_path):
    b = builder({"x": (2, 3, 3)}, ["y"])
    b.add_activation("relu", "RELU", "x", "y")
    return b


def test_truncated_file_is_a_clear_error(tmp_path):
    path = tmp_path / "m.mlmodel"
    save_spec(_relu_model(tmp_path).spec, str(path))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(cm.CoreMLError, match="truncated or corrupt"):
        cm.load(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(cm.CoreMLError, match="cannot read"):
        cm.load(tmp_path / "absent.mlmodel")


def test_unregistered_custom_layer_names_layer_and_class(tmp_path):
    b = _relu_model(tmp_path)
    layer = b.spec.neuralNetwork.layers.add()
    layer.name = "mystery"
    layer.input.append("y")
    layer.output.append("z")
    layer.custom.className = "MyLayer"
    with pytest.raises(cm.CoreMLError, match=r"layer 'mystery' \(custom\): custom layer class 'MyLayer' is not "
                                             "registered"):
        load(tmp_path, b)


def test_unknown_layer_type_names_the_layer(tmp_path):
    b = _relu_model(tmp_path)
    layer = b.spec.neuralNetwork.layers.add()
    layer.name = "future"
    layer.input.append("y")
    layer.output.append("z")
    layer.MergeFromString(bytes([0xF8, 0xF0, 0x04, 0x01]))  # field 9999 (varint 1): no layer type this spec has
    with pytest.raises(cm.CoreMLError, match=r"layer 'future' \(none\): the layer's type is unset or unknown"):
        load(tmp_path, b)


def test_dangling_input_name(tmp_path):
    b = _relu_model(tmp_path)
    b.spec.neuralNetwork.layers[0].input[0] = "nowhere"
    with pytest.raises(cm.CoreMLError, match=r"layer 'relu' \(activation\): input 'nowhere' is produced by no layer"):
        load(tmp_path, b)


def test_cycle_between_layers(tmp_path):
    b = builder({"x": (2, 3, 3)}, ["y"])
    b.add_elementwise("a", ["x", "d"], "c", "ADD")
    b.add_activation("b", "RELU", "c", "d")
    b.add_activation("out", "RELU", "d", "y")
    with pytest.raises(cm.CoreMLError, match="cycle"):
        load(tmp_path, b)


@pytest.mark.parametrize("case", ["lrn-size", "fractional-upsample", "bad-split", "weights-count"])
def test_unsupported_parameters_are_refused_with_the_reason(tmp_path, case):
    b = builder({"x": (4, 3, 3)}, ["y"])
    if case == "lrn-size":
        b.add_lrn("norm", "x", "y", 1e-3, 0.75, 3)
        b.spec.neuralNetwork.layers[0].lrn.localSize = 0
        match = r"layer 'norm' \(lrn\): localSize 0 must be at least 1"
    elif case == "fractional-upsample":
        b.add_upsample("up", 2, 2, "x", "y", "BILINEAR")
        b.spec.neuralNetwork.layers[0].upsample.fractionalScalingFactor.extend([1.5, 1.5])
        match = "fractionalScalingFactor needs BILINEAR mode with ALIGN_CORNERS_TRUE or ALIGN_CORNERS_FALSE"
    elif case == "bad-split":
        b.add_split("sp", "x", ["y", "a", "b"])
        match = r"layer 'sp' \(split\): 4 channels do not split into 3"
    else:
        b.add_inner_product("fc", np.ones((2, 36), np.float32), None, 36, 2, False, "x", "y")
        del b.spec.neuralNetwork.layers[0].innerProduct.weights.floatValue[-1]
        match = "weights holds 71 values"
    with pytest.raises(cm.CoreMLError, match=match):
        load(tmp_path, b)


def test_predict_names_a_missing_input(tmp_path):
    model = load(tmp_path, _relu_model(tmp_path))
    with pytest.raises(cm.CoreMLError, match="input 'x' is missing"):
        model.predict({"z": np.zeros((2, 3, 3))})


def test_a_sequence_input_builds_a_graph_for_its_length(tmp_path, rng):
    b = builder({"x": (3,)}, ["y"], output_shapes={"y": (3,)})
    b.add_activation("relu", "RELU", "x", "y")
    model = load(tmp_path, b)
    for steps in (1, 4):
        x = rng.standard_normal((steps, 3)).astype(np.float32)
        close(model.predict({"x": x})["y"], np.maximum(x, 0).reshape((steps, 3) if steps > 1 else (3,)))
