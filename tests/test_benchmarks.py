"""The layer benchmarks run (in their smoke mode) and check their own results."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "alexnet.py"


def test_benchmarks_run_in_smoke_mode():
    result = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "bench_convolution.py" in result.stdout and "bench_layers.py" in result.stdout


def test_onnx_runtime_comparison_runs_in_smoke_mode():
    # Without onnxruntime installed it times ours only and says so; either way it must run.
    script = BENCH.parent / "bench_ort.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke conv" in result.stdout and "smoke FC" in result.stdout and "integer engine:" in result.stdout


def test_coreml_layer_comparison_runs_in_smoke_mode():
    script = BENCH.parent / "bench_coreml_layers.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke depthwise" in result.stdout and "smoke grouped" in result.stdout
