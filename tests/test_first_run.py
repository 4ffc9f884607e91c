"""The README's two commands, run in order in one fresh virtual environment, then a C program; and
``pip uninstall`` leaves nothing importable behind.

Before, ``openvx-nn demo`` after ``pip install .`` let numba write its cache into
``site-packages/openvx_nn/``; ``pip install -e .`` then uninstalled the package but left those files, and the
leftover directory, a namespace package, hid the editable install from every C program's embedded Python.

To stay fast the environment reuses this one's packages (numpy, numba, cffi) through a ``.pth`` line instead
of downloading them (``--no-deps``): the install of openvx-nn itself, its build and its uninstall are real.
"""
from __future__ import annotations

import os
import shlex
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT

SKIP = ("build", "_build", "dist", "*.so", "__pycache__", "*.egg-info", ".git", "tests", "conformance",
        "benchmarks")

C_PROGRAM = r"""
#include <VX/vx.h>
#include <stdio.h>
int main(void) {
    vx_context ctx = vxCreateContext();
    vx_uint32 refs = 0;
    vx_status s = vxGetStatus((vx_reference)ctx);
    if (s == VX_SUCCESS)
        s = vxQueryContext(ctx, VX_CONTEXT_REFERENCES, &refs, sizeof refs);
    printf("status %d\n", (int)s);
    vxReleaseContext(&ctx);
    return s == VX_SUCCESS ? 0 : 1;
}
"""


class Env:
    """A new virtual environment that sees this one's third-party packages but not its openvx_nn."""

    def __init__(self, root: Path):
        self.root = root
        venv.EnvBuilder(with_pip=False).create(root)
        self.python = root / "bin" / "python"
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        self.env["PATH"] = f"{root / 'bin'}{os.pathsep}{self.env['PATH']}"
        self.site = Path(self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
        outer = [p for p in site.getsitepackages() + [site.getusersitepackages()] if Path(p).is_dir()]
        (self.site / "outer_packages.pth").write_text("\n".join(outer) + "\n")

    def run(self, *command: str, timeout: float = 600) -> str:
        # outside the checkout: `python -m` would put its openvx_nn first on the path
        done = subprocess.run(command, capture_output=True, text=True, env=self.env, cwd=self.root.parent,
                              timeout=timeout)
        assert done.returncode == 0, f"{shlex.join(command)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    def run_python(self, code: str) -> str:
        return self.run(str(self.python), "-c", code)

    def pip(self, *args: str) -> str:
        # pip of this environment, driving the new one: the new one needs no pip of its own
        return self.run(sys.executable, "-m", "pip", "--python", str(self.python), "-q", *args)


@pytest.fixture
def source(tmp_path) -> Path:
    """A copy of the source tree as a fresh clone has it (no build products)."""
    copy = tmp_path / "openvx-nn"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*SKIP))
    return copy


def _leftovers(env: Env) -> list[str]:
    return sorted(str(p.relative_to(env.site)) for p in env.site.glob("openvx_nn*") if "dist-info" not in p.name)


def test_the_readme_commands_in_order_then_a_c_program(tmp_path, source):
    env = Env(tmp_path / "venv")
    env.pip("install", "--no-deps", str(source))                         # pip install .
    env.run("openvx-nn", "demo", "--limit", "8")                         # && openvx-nn demo
    installed = env.site / "openvx_nn"
    env.pip("install", "--no-deps", "-e", str(source))                   # pip install -e ".[test]"
    assert not installed.exists(), f"left behind: {sorted(p.name for p in installed.rglob('*'))[:20]}"
    where = env.run_python("import openvx_nn; print(openvx_nn.__file__)").strip()
    assert Path(where).resolve() == (source / "openvx_nn" / "__init__.py").resolve()
    flags = shlex.split(env.run(str(env.python), "-m", "openvx_nn.config", "--cflags", "--libs"))
    (tmp_path / "app.c").write_text(C_PROGRAM)
    env.run("cc", str(tmp_path / "app.c"), "-o", str(tmp_path / "app"), *flags)
    assert env.run(str(tmp_path / "app")).strip() == "status 0"


def test_pip_uninstall_leaves_no_openvx_nn_directory(tmp_path, source):
    env = Env(tmp_path / "venv")
    env.pip("install", "--no-deps", str(source))
    env.run("openvx-nn", "demo", "--limit", "8")                         # the use that used to leave files
    env.pip("uninstall", "-y", "openvx-nn")
    assert _leftovers(env) == []
    done = subprocess.run([str(env.python), "-c", "import openvx_nn"], capture_output=True, text=True,
                          env=env.env, cwd=tmp_path)
    assert done.returncode != 0 and "No module named 'openvx_nn'" in done.stderr
