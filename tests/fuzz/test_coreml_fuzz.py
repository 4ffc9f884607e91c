"""The CoreML model fuzzer's short form (``tests/fuzz/coreml_fuzz.py``): a few hundred protobuf-aware mutants of
the seed models, each loaded and run in its own child; every one must run or be refused with a ``CoreMLError``
(no invalid model that runs, no other exception, no crash, no hang). It runs as its own process: the fuzzer keeps
the library on one thread before importing it, so that its children fork a whole copy."""
from __future__ import annotations

from pathlib import Path

import pytest
from mutants import short_form

pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) is needed to build .mlmodel files")

FUZZER = Path(__file__).resolve().parent / "coreml_fuzz.py"


@pytest.mark.parametrize("seed", [11])
def test_a_few_hundred_coreml_mutants_run_or_are_refused_with_a_coreml_error(seed):
    counts, result = short_form(FUZZER, ["--count", "300", "--seed", str(seed), "--workers", "2", "--timeout", "60"],
                                "coreml", 600)
    assert counts["mutants"] == 300, counts
    bad = {k: counts[k] for k in ("invalid-ran", "foreign", "crash", "hang")}
    assert not any(bad.values()), result.stdout[-6000:]
    assert result.returncode == 0, result.stdout[-3000:]
    assert counts["ran"] > 0 and counts["refused"] > 0, counts  # the mutants reach both sides
