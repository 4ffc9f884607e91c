"""Every operation family's folder (``tools/make_nnef_samples.py``: expected outputs from NumPy references
written from the NNEF specification) run three ways: ``openvx_nn.nnef.load(...).predict``, imported from C with
``vxImportKernelFromURL`` as a node of a graph, and ``openvx-nn run``. Floats within 1e-4 relative (near zero:
relative to a hundredth of the output's largest value), integers and logicals exactly."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import compile_c, run_c

from openvx_nn import nnef as nn

from .conftest import NEEDS_PARSER, _samples_module, read_dat

pytest.importorskip("nnef", reason=NEEDS_PARSER)

FAMILIES = list(_samples_module().FAMILIES)
C_PROGRAM = Path(__file__).with_name("nnef_import.c")


def assert_matches(got: np.ndarray, expected: np.ndarray, what: str) -> None:
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: type {got.dtype}, expected {expected.dtype}"
    if expected.dtype == np.float32:
        # relative to each value, and near zero (sums that cancel) to a hundredth of the output's largest value
        magnitude = np.abs(expected.astype(np.float64))
        scale = np.maximum(magnitude, max(0.01 * float(magnitude.max(initial=0.0)), 1e-6))
        worst = float(np.max(np.abs(got.astype(np.float64) - expected) / scale, initial=0.0))
        assert worst <= 1e-4, f"{what}: relative error {worst:.3g}"
    else:
        assert np.array_equal(got, expected), f"{what}: {np.argwhere(got != expected)[:5].tolist()} differ"


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("family", FAMILIES)
def test_predict_matches_the_numpy_reference(written, family, seed):
    folder, case = written(family, seed)
    with nn.load(folder) as model:
        assert [i.name for i in model.inputs] == list(case.inputs)
        assert [o.name for o in model.outputs] == list(case.outputs)
        inputs = {name: read_dat(folder / "inputs" / f"{name}.dat") for name in case.inputs}
        results = model.predict(inputs)
    for name in case.outputs:
        assert_matches(results[name], read_dat(folder / "outputs" / f"{name}.dat"), f"{family} output '{name}'")


@pytest.mark.parametrize("family", FAMILIES)
def test_imported_from_c_as_a_node_matches_the_numpy_reference(written, family):
    folder, case = written(family)
    exe = compile_c(C_PROGRAM, "nnef_import", ["-lm"])
    result = run_c(exe, str(folder), *case.inputs, "--", *case.outputs, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("ok")
    assert result.stdout.count(" 0 wrong") == len(case.outputs)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("linear", "elementwise", "logical")])
def test_the_run_command_runs_the_folder(written, family, tmp_path):
    """``openvx-nn run``: the one input in OpenVX order (NNEF's axes reversed, the batch last), the first
    output written the same way."""
    folder, case = written(family)
    x = next(iter(case.inputs.values()))
    np.save(tmp_path / "in.npy", x.T)
    command = [sys.executable, "-m", "openvx_nn", "run", "--model", str(folder), "--input", str(tmp_path / "in.npy"),
               "--output", str(tmp_path / "out.npy"), "--batch", str(x.shape[0])]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    first = next(iter(case.outputs))
    expected = read_dat(folder / "outputs" / f"{first}.dat")
    assert_matches(np.load(tmp_path / "out.npy").T.astype(expected.dtype), expected, f"{family} run '{first}'")


def test_a_batched_run_gives_each_item_what_predict_gives_it(written, tmp_path):
    """A run of more items than the graph declares rebuilds it for the batch (shapes inferred anew)."""
    folder, case = written("convolution")
    x = np.random.default_rng(3).uniform(-1, 1, (5,) + case.inputs["x"].shape[1:]).astype(np.float32)
    np.save(tmp_path / "in.npy", x.T)
    command = [sys.executable, "-m", "openvx_nn", "run", "--model", str(folder), "--input", str(tmp_path / "in.npy"),
               "--output", str(tmp_path / "out.npy"), "--batch", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    got = np.load(tmp_path / "out.npy").T
    with nn.load(folder) as model:
        for i in range(5):
            item = model.predict({"x": x[i:i + 1]})["dense"]
            assert_matches(got[i:i + 1], item, f"item {i}")
