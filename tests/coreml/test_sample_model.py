"""The CoreML sample model shipped with the package: the digits demo's CNN, whose probabilities equal a
plain NumPy forward pass of the demo's float weights; loading it prints none of coremltools' noise."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

import openvx_nn.coreml as cm
from openvx_nn.demo import load_model


def numpy_forward(weights: dict, image: np.ndarray) -> np.ndarray:
    """conv3x3 p1 + relu + 2x2 max pool, twice; fully connected; softmax. OpenVX order [x, y, c] throughout."""
    h = image.astype(np.float64)
    for layer in ("conv1", "conv2"):
        w, b = weights[f"{layer}_w"].astype(np.float64), weights[f"{layer}_b"].astype(np.float64)
        padded = np.pad(h, ((1, 1), (1, 1), (0, 0)))
        size = h.shape[0]
        out = np.zeros((size, size, w.shape[3]))
        for x in range(size):
            for y in range(size):
                out[x, y] = np.einsum("ijc,ijco->o", padded[x:x + 3, y:y + 3], w) + b
        h = np.maximum(out, 0).reshape(size // 2, 2, size // 2, 2, -1).max(axis=(1, 3))
    logits = h.reshape(-1, order="F") @ weights["fc_w"].astype(np.float64) + weights["fc_b"]
    e = np.exp(logits - logits.max())
    return e / e.sum()


def test_the_sample_model_gives_the_demo_networks_probabilities():
    data = load_model()
    model = cm.load(cm.SAMPLE_MODEL)
    try:
        for i in range(12):
            image = data.test_images[..., i]
            result = model.predict({"image": image.transpose(2, 1, 0)})
            expected = numpy_forward(data.weights, image)
            got = np.array([result["probs"][str(d)] for d in range(10)])
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
            assert result["classLabel"] == str(int(expected.argmax()))
    finally:
        model.close()


def test_loading_a_model_prints_nothing():
    code = ("import openvx_nn.coreml as cm; from openvx_nn.demo import load_model; "
            "m = cm.load(cm.SAMPLE_MODEL); m.predict({'image': load_model().test_images[..., 0].transpose(2, 1, 0)})")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == "", done.stderr
