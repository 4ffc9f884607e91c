"""Build a model with NeuralNetworkBuilder, write it to a .mlmodel file, read it back
through ``openvx_nn.coreml.load`` and run it."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm

RTOL = 1e-4
ATOL = 1e-5


def builder(inputs: Mapping[str, Sequence[int]], outputs: Sequence[str], exact: bool = False,
            mode: str | None = None, output_shapes: Mapping[str, Sequence[int]] | None = None) -> NeuralNetworkBuilder:
    shapes = output_shapes or {}
    ins = [(n, datatypes.Array(*s)) for n, s in inputs.items()]
    outs = [(n, datatypes.Array(*shapes.get(n, (1, 1, 1)))) for n in outputs] if not exact else \
        [(n, None) for n in outputs]
    return NeuralNetworkBuilder(ins, outs, mode=mode, disable_rank5_shape_mapping=exact)


def load(tmp_path, b: NeuralNetworkBuilder, name: str = "model", nhwc: bool = True) -> cm.CoreMLModel:
    """``nhwc`` False: every layer on CoreML's layout (the tests of its own kernels)."""
    path = tmp_path / f"{name}.mlmodel"
    save_spec(b.spec, str(path))
    return cm.load(path, nhwc=nhwc)


def predict_twice(tmp_path, b: NeuralNetworkBuilder, x: np.ndarray, nhwc: bool = True):
    """The model's output ``y`` for input ``x`` on its second run (the first binds the graph, the second runs its
    native plan), each layer's lowering text, and the graph's count of native runs."""
    model = load(tmp_path, b, nhwc=nhwc)
    try:
        for _ in range(2):
            y = model.predict({"x": x})["y"]
        return y, {layer.name: layer.lowering for layer in model.layers}, model.graph.native_runs
    finally:
        model.close()


def run(tmp_path, inputs: Mapping[str, np.ndarray], outputs: Sequence[str], add: Callable[[NeuralNetworkBuilder], None],
        exact: bool = False, shapes: Mapping[str, Sequence[int]] | None = None,
        output_shapes: Mapping[str, Sequence[int]] | None = None) -> tuple[dict, object]:
    """One model of the layers ``add`` puts in; returns (predictions, spec)."""
    declared = shapes or {n: a.shape for n, a in inputs.items()}
    b = builder(declared, outputs, exact, output_shapes=output_shapes)
    add(b)
    model = load(tmp_path, b)
    try:
        return model.predict(inputs), b.spec
    finally:
        model.close()


def weights(wp, shape: Sequence[int]) -> np.ndarray:
    """A WeightParams' float values in the seed's row-major layout."""
    return np.asarray(wp.floatValue, np.float64).reshape(shape)


def close(actual, expected, rtol: float = RTOL, atol: float = ATOL) -> None:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def batchnorm_parameters(rng, c: int) -> list[np.ndarray]:
    """Random float32 (gamma, beta, mean, variance) for ``c`` channels, the variances in [0.5, 2)."""
    gamma, beta = rng.standard_normal(c), rng.standard_normal(c)
    mean, var = rng.standard_normal(c), rng.uniform(0.5, 2.0, c)
    return [v.astype(np.float32) for v in (gamma, beta, mean, var)]
