"""The openvx-nn command line, run as a user would (subprocesses)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from openvx_nn import __version__, config


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "openvx_nn", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_info_prints_version_extensions_and_every_kernel():
    result = _run("info")
    assert result.returncode == 0, result.stderr
    assert f"openvx-nn {__version__}" in result.stdout and "KHR_NN_16" in result.stdout
    from openvx_nn import operations  # noqa: F401  (fills the registry here, as the library does there)
    from openvx_nn.core.kernels import all_kernels
    assert f"kernels ({len(all_kernels())}):" in result.stdout
    for name in ("org.khronos.nn_extension.convolution_layer", "org.khronos.openvx.tensor_matrix_multiply",
                 "org.khronos.nn_extension.roi_pooling_layer"):
        assert name in result.stdout


def test_config_prints_the_same_flags_as_the_config_module():
    result = _run("config", "--cflags", "--libs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{config.cflags()} {config.libs()}"


def test_demo_with_a_limit_prints_the_accuracy_table():
    result = _run("demo", "--limit", "64")
    assert result.returncode == 0, result.stderr
    assert "| Q7.8 |" in result.stdout and "| F32 |" in result.stdout and "images/s" in result.stdout


def test_bench_smoke_runs_the_source_tree_benchmark():
    result = _run("bench", "--smoke", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "yes" in result.stdout


def test_an_unknown_command_fails_with_one_line_pointing_to_help():
    result = _run("frobnicate")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert "invalid choice: 'frobnicate'" in result.stderr and "(see openvx-nn --help)" in result.stderr


def test_bench_is_not_offered_where_the_benchmarks_are_not_installed(monkeypatch, capsys):
    """A normal install has no benchmarks/ beside the package: before, bench was
    listed in --help and then failed; now it is not offered."""
    from openvx_nn import cli
    assert "bench" in cli.parser().format_help()  # this source checkout has them
    monkeypatch.setattr(cli, "BENCHMARK", cli.SOURCE_ROOT / "no-such-dir" / "alexnet.py")
    text = cli.parser().format_help()
    commands = text.split("{", 1)[1].split("}", 1)[0].split(",")
    assert "demo" in commands and "bench" not in commands and "pip install -e ." in text
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["bench", "--smoke"])
    assert exit_info.value.code == 2 and "invalid choice: 'bench'" in capsys.readouterr().err


def test_info_names_the_integer_instruction_set_in_force():
    from openvx_nn.kernels.engine import isa
    result = _run("info")
    assert result.returncode == 0, result.stderr
    assert f"integer engine: {isa.selected()} (available: {', '.join(isa.available())};" in result.stdout


def test_info_piped_into_a_reader_that_stops_early_ends_quietly():
    # `openvx-nn info | head -1`: the reader leaves while the kernel table is printed.
    result = subprocess.run(f"{sys.executable} -m openvx_nn info | head -1", shell=True, capture_output=True,
                            text=True, timeout=300)
    assert result.stdout.startswith("openvx-nn ") and "BrokenPipe" not in result.stderr, result.stderr


def test_info_prints_vendor_kernel_enums_as_c_does():
    from openvx_nn import cli
    enums = {name: enum for enum, name, _ in cli.kernel_rows()}
    assert enums["org.openvx_nn.nnapi.add"] == "0xffe01000"  # (VX_ID_USER << 20) | (1 << 12), unsigned
