"""The release as users get it: ``pip wheel .`` builds a wheel (the C libraries included), the wheel installs
into a fresh virtual environment, and the installed package imports, states its version and license, prints
``openvx-nn --version``, gives C flags into its own directory and runs the demo.

The environment reuses this one's third-party packages (numpy, numba, cffi) through a ``.pth`` line instead
of downloading them; the wheel itself is built from a copy of the tree as a fresh clone has it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT
from test_first_run import SKIP, Env

import openvx_nn


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "openvx-nn"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIP))
    # pip builds in an isolated build environment from the configured index, as any user's pip does
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w",
                           str(work / "dist")], capture_output=True, text=True, cwd=work, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built = sorted((work / "dist").glob("openvx_nn-*.whl"))
    assert len(built) == 1, built
    return built[0]


def test_the_wheel_holds_the_libraries_the_headers_and_the_license(wheel):
    assert wheel.name.startswith(f"openvx_nn-{openvx_nn.__version__}-")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("openvx_nn/libopenvx.so", "openvx_nn/libneuralnetworks.so", "openvx_nn/include/VX/vx.h",
                   "openvx_nn/include/VX/vx_khr_nn.h", "openvx_nn/include/NeuralNetworks.h",
                   "openvx_nn/demo/digits_lenet.npz", "openvx_nn/coreml/samples/digits.mlmodel"):
        assert needed in names, f"{needed} is not in {wheel.name}"
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert f"Version: {openvx_nn.__version__}" in text
    assert "License-Expression: Apache-2.0" in text and "Classifier: Programming Language :: C" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_installed_wheel_imports_runs_and_says_its_version(wheel, tmp_path):
    env = Env(tmp_path / "venv")
    env.pip("install", "--no-deps", str(wheel))
    where = env.run_python("import openvx_nn, importlib.metadata as m; "
                           "print(openvx_nn.__file__, openvx_nn.__version__, m.version('openvx-nn'))").split()
    assert Path(where[0]).is_relative_to(env.site), f"imported {where[0]}, not the installed wheel"
    assert where[1:] == [openvx_nn.__version__] * 2
    assert env.run("openvx-nn", "--version").strip() == f"openvx-nn {openvx_nn.__version__}"
    flags = env.run(str(env.python), "-m", "openvx_nn.config", "--cflags", "--libs")
    assert str(env.site / "openvx_nn") in flags
    demo = env.run("openvx-nn", "demo", "--limit", "8", timeout=900)
    assert "| Q7.8 |" in demo and "| F32 |" in demo
