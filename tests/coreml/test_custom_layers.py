"""Custom layers: a Python function registered for the layer's class (inputs, parameters and weights in, outputs
out, output shapes from ``shapes``), a user kernel of the class's name in the context's kernel table (added through
the C API), and a clear CoreMLError for a class registered neither way or a function breaking the contract."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.proto import NeuralNetwork_pb2

import openvx_nn.coreml as cm
from openvx_nn.api import Context, tensor_input, tensor_output

from .harness import builder, close, load

RNG = np.random.default_rng(7)


def _custom_model(tmp_path, class_name, inputs, outputs, parameters=None, weights=()):
    b = builder(inputs, outputs, exact=True)
    spec = NeuralNetwork_pb2.CustomLayerParams()
    spec.className = class_name
    for key, value in (parameters or {}).items():
        field = {float: "doubleValue", str: "stringValue", int: "longValue", bool: "boolValue"}[type(value)]
        setattr(spec.parameters[key], field, value)
    for w in weights:
        spec.weights.add().floatValue.extend(np.asarray(w, np.float32).reshape(-1))
    b.add_custom("mine", list(inputs), list(outputs), custom_proto_spec=spec)
    return load(tmp_path, b)


@pytest.fixture
def registered():
    names = []

    def register(name, function, shapes=None):
        cm.register_custom_layer(name, function, shapes)
        names.append(name)
    yield register
    for name in names:
        cm.unregister_custom_layer(name)


def test_a_python_function_gets_inputs_parameters_and_weights(tmp_path, registered):
    seen = {}

    def function(inputs, parameters, weights):
        seen.update(parameters=parameters, shapes=[a.shape for a in inputs], weights=[w.tolist() for w in weights])
        x, y = inputs
        return [parameters["alpha"] * x + y + weights[0].reshape(x.shape[-1]), np.maximum(x, y).sum(axis=-1)]
    registered("com.example.AlphaAdd", function, lambda shapes, params: [shapes[0], shapes[0][:-1]])
    shape = (3, 4, 5)
    w = RNG.standard_normal(5)
    model = _custom_model(tmp_path, "com.example.AlphaAdd", {"x": shape, "y": shape}, ["a", "m"],
                          {"alpha": 0.5, "tag": "t", "n": 3, "on": True}, [w])
    x, y = RNG.standard_normal(shape).astype(np.float32), RNG.standard_normal(shape).astype(np.float32)
    got = model.predict({"x": x, "y": y})
    assert seen["parameters"] == {"alpha": 0.5, "tag": "t", "n": 3, "on": True}
    assert seen["shapes"] == [shape, shape]
    close(seen["weights"][0], w)
    expected = np.empty(shape)
    for index in np.ndindex(*shape):
        expected[index] = 0.5 * x[index] + y[index] + np.float32(w[index[-1]])
    close(got["a"], expected)
    close(got["m"], np.maximum(x, y).sum(axis=-1))
    assert any("Python function" in info.lowering for info in model.layers)


def test_an_unregistered_class_is_a_coreml_error_naming_it(tmp_path):
    with pytest.raises(cm.CoreMLError, match="'mine'.*custom layer class 'com.example.Nowhere' is not registered"):
        _custom_model(tmp_path, "com.example.Nowhere", {"x": (2, 3)}, ["y"])


def test_a_function_returning_the_wrong_shape_fails_the_run(tmp_path, registered):
    registered("com.example.Wrong", lambda inputs, parameters, weights: inputs[0][:1])
    model = _custom_model(tmp_path, "com.example.Wrong", {"x": (2, 3)}, ["y"])
    with pytest.raises(cm.CoreMLError):
        model.predict({"x": np.zeros((2, 3), np.float32)})


def test_a_user_kernel_named_as_the_class_runs_the_layer(tmp_path):
    with Context() as ctx:
        ctx.add_kernel("com.example.Cube", lambda a, out: np.power(a, 3, out=out),
                       [tensor_input(), tensor_output()], lambda a: [a])
        model = _custom_model(tmp_path, "com.example.Cube", {"x": (2, 3, 4)}, ["y"])
        x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
        close(model.predict({"x": x})["y"], x.astype(np.float64) ** 3)
        assert any("kernel 'com.example.Cube'" in info.lowering for info in model.layers)
        model.close()


def test_a_user_kernel_with_the_wrong_parameter_count_is_refused(tmp_path):
    with Context() as ctx:
        ctx.add_kernel("com.example.Pair", lambda a, b, out: np.add(a, b, out=out),
                       [tensor_input(), tensor_input(), tensor_output()], lambda a, b: [a])
        with pytest.raises(cm.CoreMLError, match="kernel 'com.example.Pair' takes 3 parameters; the layer passes 2"):
            _custom_model(tmp_path, "com.example.Pair", {"x": (2, 3)}, ["y"])
