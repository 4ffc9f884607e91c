"""ONNX -> NNEF -> ours: a small CNN built here with ``onnx.helper``, converted by Khronos's converter
(``nnef_tools.convert``, as docs/nnef.md shows), run by ``openvx_nn.nnef`` and compared with ONNX Runtime."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx (the 'bench' extra) builds the network")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime (the 'bench' extra) is the reference")
pytest.importorskip("nnef_tools", reason="nnef-tools (in the 'test' extra) converts ONNX to NNEF")
pytest.importorskip("nnef", reason="the nnef parser (the 'nnef' extra) is needed to read NNEF folders")

from onnx import TensorProto, helper, numpy_helper

from openvx_nn import nnef as nn


def _network(rng: np.random.Generator, size: int):
    def weights(name, *shape, low=-0.5, high=0.5):
        return numpy_helper.from_array(rng.uniform(low, high, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("BatchNormalization", ["c2", "s", "o", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("Add", ["bn", "p1"], ["sum"]),
        helper.make_node("Sigmoid", ["sum"], ["sg"]),
        helper.make_node("ConvTranspose", ["sg", "w3"], ["up"], strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("AveragePool", ["up"], ["ap"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        helper.make_node("Flatten", ["ap"], ["fl"]),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["g"], transB=1),
        helper.make_node("Softmax", ["g"], ["y"], axis=1),
    ]
    side = size // 2
    initializers = [weights("w1", 8, 3, 3, 3), weights("b1", 8), weights("w2", 8, 1, 3, 3), weights("s", 8),
                    weights("o", 8), weights("m", 8), weights("v", 8, low=0.5, high=1.5), weights("w3", 8, 4, 3, 3),
                    weights("wf", 10, 4 * side * side), weights("bf", 10)]
    graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("size", [8, 12])
def test_an_onnx_network_converted_to_nnef_runs_as_onnx_runtime_runs_it(size, tmp_path):
    rng = np.random.default_rng(size)
    onnx.save(_network(rng, size), tmp_path / "net.onnx")
    command = [sys.executable, "-m", "nnef_tools.convert", "--input-format", "onnx", "--output-format", "nnef",
               "--input-model", str(tmp_path / "net.onnx"), "--output-model", str(tmp_path / "net.nnef"),
               "--keep-io-names"]
    converted = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert converted.returncode == 0, converted.stdout + converted.stderr
    x = rng.uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    expected = ort.InferenceSession(str(tmp_path / "net.onnx"),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    with nn.load(tmp_path / "net.nnef") as model:
        got = model.predict({"x": x})["y"]
        kinds = {op.name for op in model.operations}
    assert {"conv", "deconv", "max_pool", "avg_pool", "batch_normalization", "linear", "softmax"} <= kinds
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
