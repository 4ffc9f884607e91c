"""The C-API fuzzer: tests/fuzz/driver.c, compiled with the flags
``python -m openvx_nn.config`` prints, makes random sequences of calls
(creation, attributes, patches, node construction with random parameters and
handles, verify, process, release) from several seeds.

Asserted from its output: no crash, no hang (a timeout per call inside the
driver, and one for the whole run here), every status a defined ``vx_status``,
``VX_CONTEXT_REFERENCES`` back at its starting value after every release-all,
well-formed log entries, and no internal error (a Python exception inside the
library) on stderr.  The longer run is in the README:
``tests/fuzz/run.sh --calls 1000000``."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import compile_c, run_c

DRIVER = Path(__file__).resolve().parent / "driver.c"
SEEDS = (1, 2, 3)
CALLS = 20_000  # per seed: 60,000 calls per CI run


def summary(stdout: str) -> dict[str, int]:
    line = next(line for line in stdout.splitlines() if line.startswith("calls="))
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def table(stdout: str, kind: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(rf"^{kind} (\w+)=(\d+)$", stdout, re.MULTILINE)}


@pytest.fixture(scope="module")
def driver() -> Path:
    return compile_c(DRIVER, "fuzz_driver")


def fuzz(driver: Path, *args: str, timeout: float = 300):
    result = run_c(driver, *args, "--timeout", "120", timeout=timeout)
    assert result.returncode == 0, (f"exit {result.returncode}\n{result.stdout[-4000:]}\n"
                                    f"{result.stderr[-4000:]}")
    assert "internal error" not in result.stderr, result.stderr[-4000:]
    return result


@pytest.mark.parametrize("seed", SEEDS)
def test_random_call_sequences_keep_every_promise(driver, seed):
    result = fuzz(driver, "--calls", str(CALLS), "--seed", str(seed))
    counts = summary(result.stdout)
    assert counts["calls"] >= CALLS and counts["seed"] == seed
    assert counts["undefined"] == 0 and counts["leaks"] == 0 and counts["bad_log_entries"] == 0
    assert counts["epochs"] > counts["steps"] // 2500  # every epoch released everything and checked the count
    rows = table(result.stdout, "row")
    assert all(n > 0 for n in rows.values()), [r for r, n in rows.items() if n == 0]
    statuses = table(result.stdout, "status")
    # The walk reaches both ends: graphs that run and each main kind of refusal.
    for name in ("VX_SUCCESS", "VX_ERROR_INVALID_REFERENCE", "VX_ERROR_INVALID_PARAMETERS",
                 "VX_ERROR_INVALID_TYPE", "VX_ERROR_INVALID_DIMENSION", "VX_ERROR_INVALID_VALUE"):
        assert statuses.get(name, 0) > 0, name
    assert counts["log_entries"] > 0


def test_the_same_seed_makes_the_same_calls(driver):
    first, second = (fuzz(driver, "--calls", "3000", "--seed", "7", "--trace") for _ in range(2))
    steps = [line for line in first.stdout.splitlines() if line.startswith("step ")]
    assert len(steps) > 1000
    assert steps == [line for line in second.stdout.splitlines() if line.startswith("step ")]


def test_the_driver_reports_a_leak(driver, tmp_path):
    """Control: a driver that keeps one reference it should release must fail."""
    source = DRIVER.read_text().replace("    while (n_pool)\n        drop_all(n_pool - 1);",
                                        "    while (n_pool > 1)\n        drop_all(n_pool - 1);")
    assert source != DRIVER.read_text()
    leaky = compile_c(source, "fuzz_driver_leaky")
    result = run_c(leaky, "--calls", "2000", "--seed", "1", timeout=120)
    assert result.returncode == 1 and "LEAK" in result.stdout and summary(result.stdout)["leaks"] > 0


def test_the_driver_reports_an_undefined_status(driver):
    """Control: a row that returns a status outside vx_status_e must fail the run."""
    source = DRIVER.read_text().replace("ROW(get_status, 2, vxGetStatus(ANY()))",
                                        "ROW(get_status, 2, vxGetStatus(ANY()) + 7)")
    assert source != DRIVER.read_text()
    broken = compile_c(source, "fuzz_driver_undefined")
    result = run_c(broken, "--calls", "2000", "--seed", "1", timeout=120)
    assert result.returncode == 1 and "UNDEFINED status" in result.stdout


def test_a_refused_parameter_ref_query_hands_out_no_reference(vx, ctx):
    """Found by the fuzzer: vxQueryParameter(VX_PARAMETER_REF) with a wrong size
    retained the value before checking the size, leaking one reference per call."""
    from vxhelp import empty, release
    graph = vx.vxCreateGraph(ctx)
    a, out = empty(vx, ctx, (4,), "uint8"), empty(vx, ctx, (4,), "uint8")
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    param = vx.vxGetParameterByIndex(node, 0)
    buffer = vx.ffi.new("char[]", 64)
    count = vx.ffi.new("vx_uint32 *")
    for size in (4, 16, 64):
        assert vx.vxQueryParameter(param, vx.VX_PARAMETER_REF, buffer, size) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxQueryReference(vx.ffi.cast("vx_reference", a), vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
    assert count[0] == 1
    release(vx, param, node, graph, a, out)
