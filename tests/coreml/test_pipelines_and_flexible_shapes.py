"""Pipeline models of neural networks (plain, classifier with its labels and probabilities, regressor), a model
type we do not run refused naming it, and flexible input shapes (enumerated and ranges) run at every shape they
allow and refused outside it; each against a plain reference."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder
from coremltools.models.pipeline import Pipeline, PipelineClassifier, PipelineRegressor
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm

RNG = np.random.default_rng(9)


def _first(w, bias):
    """x [4] -> h = W x + b [3]."""
    b = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("h", datatypes.Array(3))])
    b.add_inner_product("fc", w, bias, 4, 3, True, "x", "h")
    return b.spec


def _second(mode):
    """h [3] -> relu(h) [3] as a plain network; softmax(h) with labels as a classifier; sum(relu(h)) [1] as a
    regressor."""
    if mode == "classifier":
        b = NeuralNetworkBuilder([("h", datatypes.Array(3))], [("classProbability", datatypes.Array(3))], mode=mode)
        b.add_softmax("sm", "h", "classProbability")
        b.set_class_labels(["cat", "dog", "emu"], predicted_feature_name="classLabel",
                           prediction_blob="classProbability")
        return b.spec
    size = 1 if mode == "regressor" else 3
    b = NeuralNetworkBuilder([("h", datatypes.Array(3))], [("y", datatypes.Array(size))], mode=mode)
    if mode == "regressor":
        b.add_activation("relu", "RELU", "h", "r")
        b.add_inner_product("sum", np.ones((1, 3)), None, 3, 1, False, "r", "y")
    else:
        b.add_activation("relu", "RELU", "h", "y")
    return b.spec


def _save(tmp_path, spec, name="pipe"):
    path = tmp_path / f"{name}.mlmodel"
    save_spec(spec, str(path))
    return cm.load(path)


@pytest.mark.parametrize("kind", ["pipeline", "regressor", "classifier"])
def test_a_pipeline_runs_its_networks_in_order(tmp_path, kind):
    w, bias = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    x = RNG.standard_normal(4).astype(np.float32)
    h = [sum(float(w[o, i]) * float(x[i]) for i in range(4)) + float(bias[o]) for o in range(3)]
    if kind == "classifier":
        p = PipelineClassifier([("x", datatypes.Array(4))], ["cat", "dog", "emu"])
        p.add_model(_first(w, bias))
        p.add_model(_second("classifier"))
        model = _save(tmp_path, p.spec)
        out = model.predict({"x": x})
        e = np.exp(np.array(h) - max(h))
        probs = e / e.sum()
        assert out["classLabel"] == ["cat", "dog", "emu"][int(np.argmax(probs))]
        got = out["classProbability"]
        np.testing.assert_allclose([got[c] for c in ("cat", "dog", "emu")], probs, rtol=1e-4, atol=1e-6)
        return
    cls = Pipeline if kind == "pipeline" else PipelineRegressor
    p = cls([("x", datatypes.Array(4))], [("y", datatypes.Array(3) if kind == "pipeline" else datatypes.Double())])
    p.add_model(_first(w, bias))
    p.add_model(_second(None if kind == "pipeline" else "regressor"))
    model = _save(tmp_path, p.spec)
    assert isinstance(model, cm.PipelineModel) and len(model.models) == 2
    out = model.predict({"x": x})
    model.predict({"x": x}, bench=True)
    assert {layer for layer, *_ in model.timings()} >= {"fc", "relu"}  # both stages' nodes, timed
    relu = np.maximum(h, 0)
    np.testing.assert_allclose(out["y"].reshape(-1), relu if kind == "pipeline" else [relu.sum()], rtol=1e-4,
                               atol=1e-6)


def test_a_pipeline_stage_of_another_model_type_is_refused_naming_it(tmp_path):
    p = Pipeline([("x", datatypes.Array(4))], [("y", datatypes.Array(4))])
    p.add_model(_first(np.zeros((3, 4)), np.zeros(3)))
    p.spec.pipeline.models.add().identity.SetInParent()
    with pytest.raises(cm.CoreMLError, match="model 1 of the pipeline is of type 'identity'"):
        _save(tmp_path, p.spec)


def test_a_model_type_we_do_not_run_is_refused_naming_it(tmp_path):
    from coremltools.proto import Model_pb2
    spec = Model_pb2.Model()
    spec.specificationVersion = 4
    spec.glmRegressor.SetInParent()
    with pytest.raises(cm.CoreMLError, match="model type 'glmRegressor' is not a neural network"):
        cm.load(spec)


def _flexible(kind):
    b = NeuralNetworkBuilder([("x", datatypes.Array(2, 3))], [("y", None)], disable_rank5_shape_mapping=True)
    b.add_activation("double", "LINEAR", "x", "y", params=[2.0, 1.0])
    array = b.spec.description.input[0].type.multiArrayType
    if kind == "enumerated":
        for shape in ((2, 3), (4, 5), (1, 7)):
            array.enumeratedShapes.shapes.add().shape.extend(shape)
    else:
        for low, high in ((1, 4), (2, -1)):
            r = array.shapeRange.sizeRanges.add()
            r.lowerBound, r.upperBound = low, high
    return cm.load(b.spec)


@pytest.mark.parametrize("kind,good,bad", [("enumerated", [(2, 3), (4, 5), (1, 7)], [(3, 3), (5, 4)]),
                                           ("range", [(1, 2), (4, 9), (3, 40)], [(5, 3), (2, 1)])])
def test_flexible_shapes_run_what_they_allow_and_refuse_the_rest(kind, good, bad):
    model = _flexible(kind)
    for shape in good:
        x = RNG.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(model.predict({"x": x})["y"], 2.0 * x.astype(np.float64) + 1.0, rtol=1e-6)
    for shape in bad:
        with pytest.raises(cm.CoreMLError, match=rf"input 'x' of shape \[{shape[0]}, {shape[1]}\] is refused"):
            model.predict({"x": np.zeros(shape, np.float32)})
