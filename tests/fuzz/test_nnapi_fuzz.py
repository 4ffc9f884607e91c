"""The NNAPI fuzzer's short form (``tests/fuzz/nnapi_fuzz.py``): a few hundred mutants of the seed models built
through ``nnapi.Model``, and a few hundred byte-level mutants of their ``.nnapi`` files, each compiled and run in its
own child; every one must run or be refused with an ``NNAPIError`` (no invalid model that runs, no other exception,
no crash, no hang). It runs as its own process: the fuzzer keeps the library on one thread before importing it, so
that its children fork a whole copy."""
from __future__ import annotations

from pathlib import Path

import pytest
from mutants import short_form

FUZZER = Path(__file__).resolve().parent / "nnapi_fuzz.py"


@pytest.mark.parametrize("mode, seed", [("model", 11), ("file", 12)])
def test_a_few_hundred_nnapi_mutants_run_or_are_refused_with_an_nnapi_error(mode, seed):
    counts, result = short_form(FUZZER, ["--mode", mode, "--count", "300", "--seed", str(seed), "--workers", "2",
                                         "--timeout", "60"], f"nnapi-{mode}", 900)
    assert counts["mutants"] == 300, counts
    bad = {k: counts[k] for k in ("invalid-ran", "foreign", "crash", "hang")}
    assert not any(bad.values()), result.stdout[-6000:]
    assert result.returncode == 0, result.stdout[-3000:]
    assert counts["ran"] > 0 and counts["refused"] > 0, counts  # the mutants reach both sides
