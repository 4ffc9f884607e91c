"""``openvx-nn coreml``: prints a model's outputs, per-layer timing with --bench, and errors."""
from __future__ import annotations

import numpy as np
from coremltools.models.utils import save_spec

from openvx_nn.cli import main

from .harness import builder


def _model(tmp_path):
    b = builder({"x": (2, 2, 2)}, ["y"], output_shapes={"y": (2, 2, 2)})
    b.add_activation("relu", "RELU", "x", "r")
    b.add_elementwise("double", ["r"], "y", "MULTIPLY", alpha=2.0)
    path = tmp_path / "m.mlmodel"
    save_spec(b.spec, str(path))
    x = np.arange(-4, 4, dtype=np.float32).reshape(2, 2, 2)
    np.save(tmp_path / "x.npy", x)
    return path


def test_cli_prints_outputs_and_layer_timing(tmp_path, capsys):
    path = _model(tmp_path)
    assert main(["coreml", str(path), "--input", f"x={tmp_path / 'x.npy'}", "--bench"]) == 0
    out = capsys.readouterr().out
    assert "y: shape [2, 2, 2]" in out
    assert "[[0. 0.]" in out and "[4. 6.]" in out  # 2 * relu(-4..3)
    assert "relu" in out and "double" in out and "org.khronos.nn_extension.activation_layer" in out
    assert "total" in out


def test_cli_reports_a_bad_input_argument(tmp_path, capsys):
    path = _model(tmp_path)
    assert main(["coreml", str(path), "--input", "x"]) == 1
    assert "is not NAME=FILE.npy" in capsys.readouterr().err
