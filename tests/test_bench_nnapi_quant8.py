"""benchmarks/bench_nnapi_quant8.py runs in smoke mode: with onnxruntime it prints the comparison (and the
two networks agree), without it it says so."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_nnapi_quant8.py"


def test_quant8_mobilenet_benchmark_runs_in_smoke_mode():
    result = subprocess.run([sys.executable, str(SCRIPT), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        assert "not installed" in result.stdout
        return
    assert "ORT time / our time" in result.stdout
    assert "100.0% within 1 of ORT's" in result.stdout, result.stdout  # same weights, same requantized values
