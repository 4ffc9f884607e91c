"""The NNAPI float32 layer benchmark runs in its smoke mode and checks its outputs against ORT's."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_nnapi_layers.py"


def test_nnapi_layer_benchmark_runs_in_smoke_mode():
    result = subprocess.run([sys.executable, str(SCRIPT), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and "ms" not in line]
    assert len(rows) == 5 and any(line.startswith("| depthwise") for line in rows), result.stdout
