"""The C conformance suite (conformance/): built with only the flags
``python -m openvx_nn.config --cflags --libs`` prints, run in full, and shown to
catch a broken kernel.

- every tier-1 function of tests/abi/functions.tsv is called somewhere in the suite;
- the suite has at least 1,500 cases and all of them pass (``N passed, 0 failed``);
- with ``CT_BREAK_ROUNDING=1`` the C references round the other way (nearest-even
  <-> toward zero), exactly what a kernel with flipped rounding would produce
  against correct references: the suite must then fail, naming the case, the
  first differing element index and both values.
"""
from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import pytest
import simd_tiles
from conftest import ABI, BUILD, ROOT

SUITE = ROOT / "conformance"
BINARY = BUILD / "conformance" / "conformance"
SITE = BINARY.parent / "site"
ONE_TILE = simd_tiles.sitecustomize(str(ROOT / "tests"))  # one SIMD entry per format in the runs (simd_tiles)


@pytest.fixture(scope="module")
def suite() -> str:
    out = BINARY.parent
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["make", "-s", "-C", str(SUITE), f"PYTHON={sys.executable}", f"OUT={out}", "all"],
                   check=True)
    SITE.mkdir(exist_ok=True)
    (SITE / "sitecustomize.py").write_text(ONE_TILE)
    return str(BINARY)


def run(binary: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The suite's run; its embedded interpreter imports ``SITE``'s sitecustomize unless ``env`` sets PYTHONPATH."""
    path = os.pathsep.join(filter(None, [str(SITE), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([binary, "--quiet", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": path, **(env or {})})


def tier1_functions() -> list[str]:
    with open(ABI / "functions.tsv", newline="") as f:
        return [row["name"] for row in csv.DictReader(f, delimiter="\t") if row["tier"] == "1"]


def test_every_tier1_function_is_exercised():
    sources = "".join(p.read_text() for p in sorted(SUITE.glob("*.c")))
    missing = [name for name in tier1_functions() if not re.search(rf"\b{name}\s*\(", sources)]
    assert not missing, f"tier-1 functions the conformance suite never calls: {missing}"


def test_every_function_with_a_hand_written_wrapper_is_exercised():
    """Tier 2 included: whatever csrc/api implements (not a generated stub) has conformance cases."""
    wrappers = "".join(p.read_text() for p in sorted((ROOT / "csrc" / "api").glob("*.c")))
    implemented = set(re.findall(r"\bVX_API_CALL\s+(\w+)\s*\(", wrappers))
    sources = "".join(p.read_text() for p in sorted(SUITE.glob("*.c")))
    missing = sorted(name for name in implemented if not re.search(rf"\b{name}\s*\(", sources))
    assert not missing, f"implemented functions the conformance suite never calls: {missing}"


def test_case_count(suite):
    listed = subprocess.run([suite, "--list"], capture_output=True, text=True, check=True).stdout.split()
    assert len(listed) >= 1500, len(listed)
    assert len(set(listed)) == len(listed), "case names must be unique"


def test_full_run_passes(suite):
    result = run(suite, "--seed=12345")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    last = result.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"(\d+) passed, 0 failed", last)
    assert m and int(m.group(1)) >= 1500, last
    assert "seed 12345" in result.stdout.splitlines()[0]


def test_filter_selects_by_wildcard(suite):
    result = run(suite, "--filter=nn.pooling/U8/MAX/*")
    assert result.returncode == 0, result.stdout[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "20 passed, 0 failed"


def test_broken_rounding_is_caught(suite):
    """A kernel that rounds the other way fails the suite, and the failure names the case,
    the first differing element index and both values."""
    result = run(suite, "--seed=7", "--filter=nn.convolution/Q78/*:nn.fully_connected/Q78/*:tensor_op.multiply/*",
                 env={"CT_BREAK_ROUNDING": "1"})
    assert result.returncode != 0
    summary = result.stdout.strip().splitlines()[-1]
    failed = int(re.fullmatch(r"\d+ passed, (\d+) failed", summary).group(1))
    assert failed > 0
    line = re.search(r"^FAILED (nn\.convolution/Q78/\S+): .*: first difference at element (\d+) of \d+: "
                     r"expected (-?\d+), got (-?\d+)$", result.stdout, re.MULTILINE)
    assert line, result.stdout[-3000:]
    assert line.group(3) != line.group(4)


BROKEN_KERNEL = '''
"""Loaded by the embedded interpreter of the conformance run (PYTHONPATH): it
makes the library's convolution round the other way. The rounding is planned
into the layer's route at verify, so the planner's arithmetic is what flips."""
import dataclasses

from openvx_nn.operations.openvx import convolution as nn_convolution

_good = nn_convolution._arithmetic


def _flipped(v):
    arithmetic = _good(v)
    return dataclasses.replace(arithmetic, nearest_even=not arithmetic.nearest_even)


nn_convolution._arithmetic = _flipped
'''


def test_a_broken_library_kernel_fails_the_suite(suite, tmp_path):
    """The library itself, not the references, is broken here: its convolution
    kernel is replaced (through a sitecustomize module the embedded Python
    imports) by one with the rounding policy flipped."""
    (tmp_path / "sitecustomize.py").write_text(BROKEN_KERNEL + ONE_TILE)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    result = run(suite, "--seed=7", "--filter=nn.convolution/Q78/*", env={"PYTHONPATH": path})
    assert result.returncode != 0, result.stdout[-2000:]
    line = re.search(r"^FAILED (nn\.convolution/Q78/\S+): .*: first difference at element (\d+) of \d+: "
                     r"expected (-?\d+), got (-?\d+)$", result.stdout, re.MULTILINE)
    assert line, result.stdout[-3000:]
    assert abs(int(line.group(3)) - int(line.group(4))) == 1   # one rounding step off
    clean = run(suite, "--seed=7", "--filter=nn.convolution/Q78/*")
    assert clean.returncode == 0, clean.stdout[-2000:]
