"""The CoreML model fuzzer's short form (``tests/fuzz/coreml_fuzz.py``): a few hundred protobuf-aware mutants of
the seed models, each loaded and run in its own child; every one must run or be refused with a ``CoreMLError``
(no invalid model that runs, no other exception, no crash, no hang). It runs as its own process: the fuzzer keeps
the library on one thread before importing it, so that its children fork a whole copy."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) is needed to build .mlmodel files")

FUZZER = Path(__file__).resolve().parent / "coreml_fuzz.py"


@pytest.mark.parametrize("seed", [11])
def test_a_few_hundred_coreml_mutants_run_or_are_refused_with_a_coreml_error(seed):
    result = subprocess.run([sys.executable, str(FUZZER), "--count", "300", "--seed", str(seed), "--workers", "2",
                             "--timeout", "60"], capture_output=True, text=True, timeout=600)
    line = next((line for line in result.stdout.splitlines() if line.startswith("coreml: ")), None)
    assert line is not None, result.stdout[-3000:] + result.stderr[-3000:]
    counts = {k: int(v) for k, v in re.findall(r"([\w-]+)=(\d+)", line)}
    assert counts["mutants"] == 300, line
    bad = {k: counts[k] for k in ("invalid-ran", "foreign", "crash", "hang")}
    assert not any(bad.values()), result.stdout[-6000:]
    assert result.returncode == 0, result.stdout[-3000:]
    assert counts["ran"] > 0 and counts["refused"] > 0, line  # the mutants reach both sides
