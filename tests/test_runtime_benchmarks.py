"""The overhead and thread-scaling benchmarks run in their smoke mode (their figures are in the README)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("name", ["bench_overhead.py", "bench_threads.py"])
def test_runtime_benchmark_runs_in_smoke_mode(name):
    result = subprocess.run([sys.executable, str(BENCHMARKS / name), "--smoke"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "relu 1x1x8" in result.stdout
