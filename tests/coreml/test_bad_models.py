"""Bad models get a CoreMLError naming the layer and the problem, never a crash or a hang: an unknown layer type,
wrong shapes (at load, and at run time for a shape given by data), a loop without a condition, an unregistered
custom layer (the acceptance's four cases in one place; the layer families' own tests hold more)."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.proto import NeuralNetwork_pb2

import openvx_nn.coreml as cm

from .harness import builder, load


def _unknown_type(b):
    layer = b.spec.neuralNetwork.layers.add()
    layer.name, layer.input[:], layer.output[:] = "future", ["x"], ["y"]
    layer.MergeFromString(bytes([0xF8, 0xF0, 0x04, 0x01]))  # field 9999: no type of this specification


def _wrong_shape(b):
    b.add_inner_product("fc", np.ones((4, 5)), None, 5, 4, False, "x", "y")  # x is [2, 3]: 3 features, not 5


def _loop_without_condition(b):
    b.add_loop("forever", body_network=None, input_name=None, condition=None, max_iterations=0)
    b.add_activation("y", "RELU", "x", "y")


def _unregistered_custom(b):
    spec = NeuralNetwork_pb2.CustomLayerParams()
    spec.className = "com.example.Missing"
    b.add_custom("mine", ["x"], ["y"], custom_proto_spec=spec)


@pytest.mark.parametrize("add,words", [
    (_unknown_type, ("'future'", "type is unset or unknown")),
    (_wrong_shape, ("'fc'", "3", "5")),
    (_loop_without_condition, ("'forever'", "no condition")),
    (_unregistered_custom, ("'mine'", "'com.example.Missing' is not registered")),
], ids=["unknown-type", "wrong-shape", "loop-without-condition", "unregistered-custom"])
def test_a_bad_model_is_a_coreml_error_naming_the_layer_and_the_problem(tmp_path, add, words):
    b = builder({"x": (2, 3)}, ["y"], exact=True)
    add(b)
    with pytest.raises(cm.CoreMLError) as caught:
        load(tmp_path, b).predict({"x": np.zeros((2, 3), np.float32)})
    for word in words:
        assert word in str(caught.value)


def test_a_shape_given_by_data_that_does_not_fit_fails_the_run_naming_the_layer(tmp_path):
    b = builder({"x": (2, 3), "shape": (2,)}, ["y"], exact=True)
    b.add_reshape_dynamic("reshape", ["x", "shape"], "y")
    model = load(tmp_path, b)
    with pytest.raises(cm.CoreMLError, match=r"'reshape'.*cannot reshape \[2, 3\] to \[4, 2\]"):
        model.predict({"x": np.zeros((2, 3), np.float32), "shape": np.array([4, 2], np.float32)})
    assert model.predict({"x": np.ones((2, 3), np.float32), "shape": np.array([3, 2], np.float32)})["y"].shape == (3, 2)
