"""``openvx-nn run --model x.mlmodel`` and ``coreml.build_batched``: the graph ``predict`` runs, for a batch
with the batch on the last OpenVX axis; a classifier's run writes its labels, ``map_batches`` gives its
probabilities, both equal to ``predict`` item by item; models a batched run cannot feed are named."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from coremltools.models.utils import save_spec

import openvx_nn.coreml as cm
from openvx_nn.api import Context
from openvx_nn.cli import main
from openvx_nn.distributed import map_batches
from openvx_nn.runner import ModelError, resolve

from .harness import builder
from .test_models import _cnn_classifier

ITEMS = 10   # with batch 4: two full batches and one of 2
LABELS = ["cat", "dog", "bird"]


@pytest.fixture
def classifier(tmp_path, rng):
    path = tmp_path / "cnn.mlmodel"
    save_spec(_cnn_classifier(rng, LABELS).spec, str(path))
    return path


@pytest.fixture
def images(rng) -> np.ndarray:
    return rng.standard_normal((ITEMS, 3, 8, 8)).astype(np.float32)


def _predictions(path, items: np.ndarray) -> list[dict]:
    with cm.load(path) as model:
        return [model.predict({"image": item}) for item in items]


def test_run_writes_the_labels_predict_gives(classifier, images, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ascontiguousarray(images.T))   # OpenVX order: [W, H, C, N]
    assert main(["run", "--model", str(classifier), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "labels.npy"), "--batch", "4"]) == 0
    labels = np.load(tmp_path / "labels.npy")
    assert labels.tolist() == [p["classLabel"] for p in _predictions(classifier, images)]
    captured = capsys.readouterr()
    assert "class labels (10,) <U4" in captured.out and f"{ITEMS}/{ITEMS} images" in captured.err


def test_map_batches_gives_the_probabilities_predict_gives(classifier, images):
    out = map_batches(partial(cm.build_batched, path=str(classifier), batch=4), np.ascontiguousarray(images.T), 4)
    want = np.array([[p["probs"][k] for k in LABELS] for p in _predictions(classifier, images)]).T
    assert out.shape == (3, ITEMS) and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)


def test_a_plain_network_with_a_vector_input_runs_on_its_values(tmp_path, rng):
    b = builder({"x": (5,)}, ["y"], output_shapes={"y": (3,)})
    b.add_inner_product("fc", rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal(3), 5, 3, True,
                        "x", "h")
    b.add_activation("tanh", "TANH", "h", "y")
    save_spec(b.spec, str(tmp_path / "fc.mlmodel"))
    items = rng.standard_normal((ITEMS, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", np.ascontiguousarray(items.T))   # [C, N]
    assert main(["run", "--model", str(tmp_path / "fc.mlmodel"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy"), "--batch", "4"]) == 0
    with cm.load(tmp_path / "fc.mlmodel") as model:
        want = np.stack([model.predict({"x": item})["y"] for item in items], axis=-1)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), want, rtol=1e-6, atol=1e-7)


def test_a_batched_graph_is_released_with_its_context(classifier):
    with Context() as ctx:
        before = ctx.references
        graph, x, y = cm.build_batched(ctx, str(classifier), 2)
        assert x.shape == (8, 8, 3, 2) and y.shape == (3, 2)
        graph.verify()
    with Context() as ctx:   # everything the build made went with the first context
        assert ctx.references == before


def test_models_a_batched_run_cannot_feed_are_named(tmp_path, capsys):
    b = builder({"a": (2,), "b": (2,)}, ["y"])
    b.add_elementwise("add", ["a", "b"], "y", "ADD")
    save_spec(b.spec, str(tmp_path / "two.mlmodel"))
    with pytest.raises(ModelError, match=r"two.mlmodel has 2 inputs \(a, b\); a batched run feeds exactly one"):
        resolve(str(tmp_path / "two.mlmodel"))
    b = builder({"x": (2,)}, ["y"], exact=True)
    b.add_activation("relu", "RELU", "x", "y")
    save_spec(b.spec, str(tmp_path / "exact.mlmodel"))
    with pytest.raises(ModelError, match=r"exact.mlmodel uses the EXACT array shape mapping"):
        resolve(str(tmp_path / "exact.mlmodel"))
    (tmp_path / "bad.mlmodel").write_bytes(b"\xff not a protobuf")
    np.save(tmp_path / "x.npy", np.zeros((2, 1), np.float32))
    assert main(["run", "--model", str(tmp_path / "bad.mlmodel"), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("openvx-nn run: error: ") and "is not a valid .mlmodel" in err, err
    assert not (tmp_path / "y.npy").exists()


def test_the_input_must_have_the_declared_item_shape(classifier, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((8, 8, 2, 3), np.float32))
    assert main(["run", "--model", str(classifier), "--input", str(tmp_path / "x.npy"),
                 "--output", str(tmp_path / "y.npy")]) == 1
    assert "takes items of shape (8, 8, 3)" in capsys.readouterr().err
