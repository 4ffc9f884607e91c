"""The digits demo: the shipped file is small and self-contained, and the
library's Q7.8 graph reaches 95% held-out accuracy within 1 point of float32."""
from __future__ import annotations

import numpy as np

from openvx_nn.demo import load_model, run_demo
from openvx_nn.demo.model import WEIGHTS_FILE


def test_the_shipped_model_file_is_small_and_holds_a_held_out_set():
    assert WEIGHTS_FILE.stat().st_size < 1_000_000
    model = load_model()
    assert model.test_images.shape[:3] == (8, 8, 1) and model.test_images.shape[3] == len(model.test_labels) > 300
    assert model.weights["conv1_w"].shape == (3, 3, 1, 8) and model.weights["fc_w"].shape == (64, 10)
    for name, q in model.quantized.items():
        assert np.array_equal(q, np.clip(np.rint(model.weights[name] * 256), -32768, 32767).astype(np.int16))


def test_q78_accuracy_is_at_least_95_percent_and_within_one_point_of_float32():
    q78, f32 = run_demo(batch=128, progress=None)
    assert q78.total == f32.total == len(load_model().test_labels)
    assert q78.accuracy >= 0.95
    assert abs(q78.accuracy - f32.accuracy) <= 0.01
