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


STARTUP_PROGRAM = r"""
#include <stdio.h>
#include <VX/vx.h>

int main(void)
{
    vx_context context = vxCreateContext();
    const char *made = context ? "handle" : "NULL";
    vx_status status = vxGetStatus((vx_reference)context);
    vx_status release = vxReleaseContext(&context);
    printf("context=%s status=%d release=%d\n", made, (int)status, (int)release);
    return 0;
}
"""


@pytest.mark.parametrize("bad", ["/nonexistent/python3", "/", "not-executable"])
def test_an_invalid_openvx_nn_python_fails_loudly(tmp_path, bad):
    """Before: the variable was ignored (the library started its default
    interpreter and every call succeeded)."""
    if bad == "not-executable":
        bad = str(tmp_path / "python3")
        Path(bad).write_text("#!/bin/sh\n")
    exe = build(tmp_path, STARTUP_PROGRAM, shlex.split(config("--cflags", "--libs").stdout), "startup")
    run = subprocess.run([str(exe)], env={"OPENVX_NN_PYTHON": bad}, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "context=NULL status=-1 release=-1"  # VX_FAILURE: no Python
    assert f"OPENVX_NN_PYTHON={bad} is not an executable Python interpreter" in run.stderr
    assert "every OpenVX call will fail" in run.stderr


def test_a_valid_openvx_nn_python_is_used(tmp_path):
    exe = build(tmp_path, STARTUP_PROGRAM, shlex.split(config("--cflags", "--libs").stdout), "startup")
    run = subprocess.run([str(exe)], env={"OPENVX_NN_PYTHON": sys.executable}, capture_output=True, text=True,
                         timeout=60)
    assert run.stdout.strip() == "context=handle status=0 release=0", run.stderr


def test_pkgconfig_without_a_directory_prints_the_file_and_writes_nothing():
    """Before: it wrote openvx.pc into the installed package (site-packages)."""
    libdir = Path(config("--libdir").stdout.strip())
    existed = (libdir / "pkgconfig").exists()
    result = config("--pkgconfig")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("includedir=") and "\nLibs: " in result.stdout
    assert f"libdir={libdir}\n" in result.stdout
    assert (libdir / "pkgconfig").exists() == existed
    both = config("--pkgconfig", "--cflags")
    assert both.returncode == 2 and "give it alone" in both.stderr
