"""The ``.tflite`` rows of the model benchmark: the models folder the fetching tool fills, a row run on a file
placed there (ours against LiteRT, failing beyond the tolerance), the message of a row whose file is absent, and
a model the mapping refuses reported with its operator."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import fetch_mediapipe_models as fetch

sys.path.pop(0)


def test_the_tool_extracts_only_the_tflite_members_of_a_wheel(tmp_path):
    wheel = tmp_path / "mediapipe-0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("mediapipe/modules/face_landmark/face_landmark.tflite", b"TFL3 model bytes")
        archive.writestr("mediapipe/modules/iris_landmark/iris_landmark.tflite", b"other bytes")
        archive.writestr("mediapipe/python/solutions/face_mesh.py", b"print()")
    written = fetch.extract(wheel, tmp_path / "models")
    assert sorted(p.name for p in written) == ["face_landmark.tflite", "iris_landmark.tflite"]
    assert (tmp_path / "models" / "face_landmark.tflite").read_bytes() == b"TFL3 model bytes"
    assert not (tmp_path / "models" / "face_mesh.py").exists()


def test_the_models_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENVX_NN_TFLITE_MODELS", str(tmp_path))
    assert fetch.models_folder() == tmp_path
    monkeypatch.delenv("OPENVX_NN_TFLITE_MODELS")
    assert fetch.models_folder() == Path.home() / ".cache" / "openvx-nn" / "mediapipe"


def test_tflite_rows_run_on_the_files_present_and_say_why_the_others_are_skipped(tmp_path):
    for module in ("onnxruntime", "onnx", "ai_edge_litert"):
        pytest.importorskip(module, reason="the model benchmark needs the bench and litert extras")
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import models as m
        from benchmarks import tflite_models as t
    finally:
        sys.path.pop(0)
    # a small MobileNet stands in for the face landmark model; a custom operator for the iris one
    (tmp_path / "face_landmark.tflite").write_bytes(t.tflite_mobilenet(m.mobilenet_v1(0.25, 32)))
    w = t.Writer()
    x = w.tensor((1, 4), t.FLOAT32)
    y = w.tensor((1, 4), t.FLOAT32)
    w.operator("Landmarks2TransformMatrix", [x], y)
    (tmp_path / "iris_landmark.tflite").write_bytes(w.serialize([x], [y], "custom"))
    keys = "mediapipe-face-landmark,mediapipe-iris-landmark,mediapipe-hand-landmark-full"
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_models.py"), "--smoke", "--rows", keys],
                            capture_output=True, text=True, timeout=900,
                            env=dict(os.environ, OPENVX_NN_TFLITE_MODELS=str(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    line = next((x for x in result.stdout.splitlines() if x.startswith("| MediaPipe face landmark (.tflite)")), None)
    assert line is not None and "LiteRT " in line and "≤ 0.0001" in line, result.stdout
    assert "mediapipe-hand-landmark-full: skipped (" in result.stdout
    assert "tools/fetch_mediapipe_models.py" in result.stdout
    assert "| MediaPipe iris landmark (.tflite) | not run: operator 0 (CUSTOM:Landmarks2TransformMatrix)" \
        in result.stdout, result.stdout
