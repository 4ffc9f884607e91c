"""PyTorch modules after published architectures (ShuffleNet v2, a Transformer encoder, a ViT-style patch model, a
GRU and a bidirectional LSTM tagger, a U-Net, EfficientNet-B0, DenseNet-121, ResNet-50, a DeepLab v3 head), converted by coremltools to
NeuralNetwork files by ``tools/make_converted_networks.py`` and committed in ``networks/`` with PyTorch's outputs:
each runs here and matches PyTorch within 1e-4 relative (no PyTorch needed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import openvx_nn.coreml as cm

NETWORKS = Path(__file__).resolve().parent / "networks"
NAMES = ["shufflenet_v2", "transformer_encoder", "vit", "gru_tagger", "lstm_tagger", "unet", "efficientnet_b0",
         "densenet121", "resnet50", "deeplab_head"]


def test_every_network_is_committed():
    assert sorted(p.stem for p in NETWORKS.glob("*.mlmodel")) == sorted(NAMES)


@pytest.mark.parametrize("nhwc", [True, False], ids=["nhwc", "chw"])
@pytest.mark.parametrize("name", NAMES)
def test_converted_network_matches_pytorch(name, nhwc):
    data = np.load(NETWORKS / f"{name}.npz")
    want = data["y"].astype(np.float64)
    with cm.load(NETWORKS / f"{name}.mlmodel", nhwc=nhwc) as model:
        got = model.predict({"x": data["x"]})["y"]
    assert got.shape == want.shape
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)


def test_the_unet_stays_on_the_nhwc_engines_from_input_to_output():
    """Its transposed convolutions (kernel 2, stride 2) and the concatenations after them take the NHWC route, so
    the layout changes once after the input and once before the output; each up-sampling writes into its slice of
    the concatenation, whose one copy is the skip's."""
    with cm.load(NETWORKS / "unet.mlmodel") as model:
        convolutions = [layer.lowering for layer in model.layers if layer.type == "convolution"]
        concats = [layer.lowering for layer in model.layers if layer.type == "concat"]
        kinds = [node.description.name.rsplit(".", 1)[-1] for node in model.graph.nodes]
    assert convolutions and all(how.startswith("nnapi.") for how in convolutions), convolutions
    assert concats and all(how == "1 x coreml.reshape into views along C, 1 written there (NHWC)"
                           for how in concats), concats
    assert kinds.count("to_nhwc") == 1 and kinds.count("to_chw") == 1, kinds


@pytest.mark.parametrize("name", ["gru_tagger", "lstm_tagger"])
def test_recurrent_taggers_run_their_native_plan(name):
    """The taggers' graphs (a recurrent layer, a dense read-out, softmax and log) run from C, run after run, with
    PyTorch's numbers; the LSTM's two directions as one call (``core/side_by_side``)."""
    from openvx_nn.core import rewrites

    data = np.load(NETWORKS / f"{name}.npz")
    want = data["y"].astype(np.float64)
    with cm.load(NETWORKS / f"{name}.mlmodel") as model:
        outs = [model.predict({"x": data["x"]})["y"].copy() for _ in range(3)]
        graphs = [g.graph for g in model._graphs.values()]
        runs = sum(g.native_runs for g in graphs)
        idle = sum(c.native is rewrites.no_entry() and c.node.description.name.endswith(".lstm")
                   for g in graphs for c in g.plan.calls)
    assert runs > 0, "the graph did not run from C"
    assert idle == (1 if name == "lstm_tagger" else 0)
    for got in outs:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("name", ["transformer_encoder", "vit"])
def test_reshapes_run_as_views_with_the_same_bytes(name, monkeypatch):
    """The heads' splits and merges and the layer norms' rank changes cost no copy (``core/reshape_views.py``),
    and the output is the one the copies give, to the bit."""
    from openvx_nn.core import reshape_views
    data = np.load(NETWORKS / f"{name}.npz")
    outputs, viewed, native = {}, {}, {}
    for views in ("0", "1"):
        monkeypatch.setenv(reshape_views.ENV, views)
        with cm.load(NETWORKS / f"{name}.mlmodel") as model:
            for _ in range(2):  # the second on the native plan, where the graph has one
                outputs[views] = model.predict({"x": data["x"]})["y"]
            calls = model.graph.plan.calls
            viewed[views] = sum(reshape_views.viewed(call.node) for call in calls)
            native[views] = model.graph.plan.native is not None
            # every reshape between two of the graph's own tensors (not into a concatenation's slice, an output)
            between = sum(call.node.description.name in reshape_views.KERNELS and call.node.params[1].parent is None
                          and call.node.params[1].virtual and call.node.params[0].root.virtual for call in calls)
    assert viewed["0"] == 0 and viewed["1"] == between > 0, (viewed, between)
    assert outputs["0"].tobytes() == outputs["1"].tobytes()
    assert native["0"] == native["1"] == (name == "transformer_encoder")
