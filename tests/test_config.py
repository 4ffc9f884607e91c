"""Building C programs against the installed library: the flags
``python -m openvx_nn.config`` prints, the pkg-config file it writes, and the
shipped example."""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import C_FLAGS, ROOT

PROGRAM = r"""
#include <stdio.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <VX/vxu.h>

int main(void)
{
    vx_context context = vxCreateContext();
    vx_graph graph = vxCreateGraph(context);
    vx_uint16 version = 0;
    if (vxGetStatus(NULL) != VX_ERROR_NO_RESOURCES || vxGetStatus((vx_reference)graph) != VX_SUCCESS)
        return 1;
    if (vxQueryContext(context, VX_CONTEXT_VERSION, &version, sizeof version) != VX_SUCCESS)
        return 1;
    if (vxReleaseGraph(&graph) != VX_SUCCESS || vxReleaseContext(&context) != VX_SUCCESS)
        return 1;
    printf("linked version %x\n", version);
    return 0;
}
"""


def config(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openvx_nn.config", *args],
                          capture_output=True, text=True, timeout=60)


def build(tmp_path: Path, source: str | Path, flags: list[str], name: str = "app") -> Path:
    src = source if isinstance(source, Path) else tmp_path / f"{name}.c"
    if not isinstance(source, Path):
        src.write_text(source)
    exe = tmp_path / name
    result = subprocess.run(["cc", *C_FLAGS, str(src), "-o", str(exe), *flags],
                            capture_output=True, text=True)
    assert result.returncode == 0, f"{result.args}\n{result.stderr}"
    return exe


def run_bare(exe: Path) -> subprocess.CompletedProcess:
    """Run with an empty environment: no PATH, no PYTHONPATH, no LD_LIBRARY_PATH."""
    return subprocess.run([str(exe)], env={}, capture_output=True, text=True, timeout=60)


def test_cflags_and_libs_build_a_program_that_runs_with_no_environment(tmp_path):
    result = config("--cflags", "--libs")
    assert result.returncode == 0, result.stderr
    flags = shlex.split(result.stdout)
    assert any(f.startswith("-I") for f in flags) and "-lopenvx" in flags
    exe = build(tmp_path, PROGRAM, flags)
    run = run_bare(exe)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == "linked version 103\n"
    assert run.stderr == ""


def test_includedir_and_libdir_name_the_headers_and_the_library():
    include = Path(config("--includedir").stdout.strip())
    libdir = Path(config("--libdir").stdout.strip())
    assert (include / "VX" / "vx.h").is_file() and (include / "VX" / "vx_khr_nn.h").is_file()
    assert (libdir / "libopenvx.so").is_file()


def test_no_option_prints_help_and_fails():
    result = config()
    assert result.returncode == 2 and "--cflags" in result.stdout


@pytest.mark.skipif(shutil.which("pkg-config") is None, reason="pkg-config is not installed")
def test_pkgconfig_file_is_accepted_by_pkg_config_and_builds_a_program(tmp_path):
    pcdir = tmp_path / "pc"
    result = config("--pkgconfig", str(pcdir))
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == pcdir and (pcdir / "openvx.pc").is_file()
    env = {"PATH": "/usr/bin:/bin", "PKG_CONFIG_PATH": str(pcdir)}
    for query in (["--exists", "openvx"], ["--validate", "openvx"], ["--modversion", "openvx"]):
        check = subprocess.run(["pkg-config", *query], env=env, capture_output=True, text=True)
        assert check.returncode == 0, f"pkg-config {query}: {check.stderr}"
    pc = subprocess.run(["pkg-config", "--cflags", "--libs", "openvx"], env=env,
                        capture_output=True, text=True)
    assert pc.returncode == 0, pc.stderr
    flags = shlex.split(pc.stdout)
    assert shlex.split(config("--cflags").stdout)[0] in flags and "-lopenvx" in flags
    exe = build(tmp_path, PROGRAM, flags, "pkg_app")
    run = run_bare(exe)
    assert run.returncode == 0 and run.stdout == "linked version 103\n", run.stdout + run.stderr


def test_context_info_example_builds_and_prints_both_nn_extensions(tmp_path):
    flags = shlex.split(config("--cflags", "--libs").stdout)
    exe = build(tmp_path, ROOT / "csrc" / "examples" / "context_info.c", flags, "context_info")
    run = run_bare(exe)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "KHR_NN_8 KHR_NN_16" in run.stdout
    assert "version: 1.3" in run.stdout
