"""The verify benchmark runs in its smoke mode: it checks the chain's output itself and prints its rows."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_verify.py"


def test_verify_benchmark_runs_in_smoke_mode():
    result = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.split()[:1] in (["100"], ["1000"])]
    assert len(rows) == 2 and all(len(row) == 11 for row in rows), result.stdout
    assert "memory plan, 1000 nodes: arena" in result.stdout
