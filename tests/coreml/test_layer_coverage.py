"""Every layer type of the NeuralNetwork specification's ``layer`` oneof has a lowering, and none refuses its type:
a model holding one layer of each type (default parameters, one to three inputs) loads and runs, or is refused
with a CoreMLError that names the layer and is not a "not supported" refusal -- never another exception."""
from __future__ import annotations

import numpy as np
import pytest
from coremltools.models import datatypes
from coremltools.models.neural_network import NeuralNetworkBuilder
from coremltools.proto import NeuralNetwork_pb2

import openvx_nn.coreml as cm
from openvx_nn.coreml.lowering import LOWERINGS

KINDS = sorted(f.name for f in NeuralNetwork_pb2.NeuralNetworkLayer.DESCRIPTOR.oneofs_by_name["layer"].fields)


def test_every_layer_type_has_a_lowering():
    assert len(KINDS) == 158  # the seed's 157 *LayerParams and activation (ActivationParams)
    assert set(LOWERINGS) == set(KINDS), (sorted(set(KINDS) - set(LOWERINGS)), sorted(set(LOWERINGS) - set(KINDS)))


@pytest.mark.parametrize("inputs", [1, 2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_no_lowering_refuses_its_type(tmp_path, kind, inputs):
    names = [f"x{i}" for i in range(inputs)]
    b = NeuralNetworkBuilder([(n, datatypes.Array(2, 3, 4, 5)) for n in names], [("y", None)],
                             disable_rank5_shape_mapping=True)
    layer = b.nn_spec.layers.add()
    layer.name = "L"
    layer.input.extend(names)
    if kind not in ("branch", "loop", "loopBreak", "loopContinue"):
        layer.output.append("y")
    getattr(layer, kind).SetInParent()
    try:
        model = cm.load(b.spec)
        model.predict({n: np.ones((2, 3, 4, 5), np.float32) for n in names})
    except cm.CoreMLError as err:
        assert "not supported" not in str(err), str(err)
        assert err.layer == "L" or "'L'" in str(err) or "output 'y'" in str(err), str(err)


def test_the_docs_table_lists_every_layer_type_with_its_lowering_module():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "coreml.md").read_text()
    table = text[text.index("## Every layer type"):]
    rows = {line.split("|")[1].strip().strip("`"): line.split("|")[2].strip().strip("`")
            for line in table.splitlines() if line.startswith("| `")}
    assert rows == {kind: LOWERINGS[kind].__module__.rsplit(".", 1)[-1] for kind in KINDS}
