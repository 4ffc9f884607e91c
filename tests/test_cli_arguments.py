"""Every CLI argument is checked with a one-line error and no traceback; ``run`` writes through a temporary file
of its own and renames it whole; Ctrl-C ends a command with one line and no partial file; NaN inputs to a
quantized model are an error."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from openvx_nn.api import Context
from openvx_nn.cli import main
from openvx_nn.demo import classify, load_model
from openvx_nn.demo.model import Q78
from openvx_nn.distributed import batches
from openvx_nn.runner import RunError, run
from openvx_nn.runner.command import ResultWriter

ITEMS = 100


@pytest.fixture
def images(tmp_path):
    path = tmp_path / "images.npy"
    np.save(path, load_model().test_images[..., :ITEMS])
    return path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip() and "first run of this version" not in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, message", [
    (["warm", "/nonexistent.txt"], "openvx-nn warm: error: '/nonexistent.txt' is not a signatures file"),
    (["demo", "--limit", "0"], "argument --limit: must be at least 1, got 0"),
    (["demo", "--limit", "-1"], "argument --limit: must be at least 1, got -1"),
    (["demo", "--batch", "0"], "argument --batch: must be at least 1, got 0"),
    (["demo", "--batch", "many"], "argument --batch: 'many' is not an integer"),
    (["nnapi-demo", "--runs", "0"], "argument --runs: must be at least 1, got 0"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "/nodir/o.npy"],
     "--output '/nodir/o.npy': directory '/nodir' does not exist"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "."], "--output '.' is a directory"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "{images}"], "is the --input file"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "{out}", "--scheduler", "notanaddress"],
     "--scheduler 'notanaddress' is not a scheduler address"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "{out}", "--workers", "0"],
     "argument --workers: must be at least 1"),
    (["run", "--model", "digits", "--input", "{images}", "--output", "{out}", "--connect-timeout", "nan"],
     "argument --connect-timeout: must be a positive number of seconds"),
])
def test_a_bad_argument_gets_a_one_line_error(argv, message, images, tmp_path, capsys):
    names = {"images": images, "out": tmp_path / "out.npy"}
    try:
        code = main([a.format(**names) for a in argv])
    except SystemExit as exit_info:  # argparse's own errors
        code = exit_info.code
    assert code in (1, 2)
    assert message in _one_line_error(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images.npy"]


def test_an_unreachable_scheduler_fails_within_its_timeout(images, tmp_path, capsys):
    begin = time.perf_counter()
    code = main(["run", "--model", "digits", "--input", str(images), "--output", str(tmp_path / "o.npy"),
                 "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"])
    assert code == 1 and time.perf_counter() - begin < 20
    assert "no scheduler answered within 1 s" in _one_line_error(capsys)


def test_nan_or_infinite_inputs_to_the_quantized_model_are_an_error(tmp_path, capsys):
    data = load_model().test_images[..., :10].copy()
    for bad in (np.nan, np.inf):
        data[2, 3, 0, 7] = bad
        np.save(tmp_path / "bad.npy", data)
        assert main(["run", "--model", "digits", "--input", str(tmp_path / "bad.npy"),
                     "--output", str(tmp_path / "o.npy")]) == 1
        assert "NaN or infinite value(s) (the first in item 7" in _one_line_error(capsys)
        assert not (tmp_path / "o.npy").exists()


def test_each_writer_has_a_temporary_file_of_its_own_and_nothing_is_left_on_discard(tmp_path):
    plan = batches(10, 4)
    one, two = ResultWriter(tmp_path / "o.npy", 10, plan), ResultWriter(tmp_path / "o.npy", 10, plan)
    assert one.partial != two.partial and one.partial.parent == tmp_path
    one.discard()
    two.discard()
    assert list(tmp_path.iterdir()) == []


def test_two_runs_with_one_output_each_write_whole_correct_labels(images, tmp_path):
    with Context() as ctx:
        expected, _ = classify(ctx, load_model(), Q78, batch=64, limit=ITEMS)
    out = tmp_path / "labels.npy"
    command = [sys.executable, "-m", "openvx_nn", "run", "--model", "digits", "--input", str(images),
               "--output", str(out), "--batch", "8"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in runs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert np.array_equal(np.load(out), expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["images.npy", "labels.npy"]


def test_run_refuses_its_input_as_output_even_by_another_name(images, tmp_path):
    link = tmp_path / "same.npy"
    os.link(images, link)
    with pytest.raises(RunError, match="is the --input file"):
        run("digits", images, link, progress=None, report=None)


def _interrupt(argv: list[str], tmp_path, ready, settle: float = 0.5) -> tuple[int, str]:
    """Run ``openvx-nn argv`` in ``tmp_path/work``, send SIGINT ``settle`` seconds after ``ready(output so far)``
    holds, and return its exit status and output (stdout and stderr merged)."""
    log = tmp_path / "output.txt"
    with open(log, "w") as out:
        p = subprocess.Popen([sys.executable, "-u", "-m", "openvx_nn", *argv], cwd=tmp_path / "work", stdout=out,
                             stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not ready(log.read_text()) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(settle)  # inside the work, not at its first line
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    return p.returncode, log.read_text()


def test_ctrl_c_ends_the_demo_with_one_line(tmp_path):
    (tmp_path / "work").mkdir()
    # at once when the first progress bar starts: the whole demo takes some 30 ms of classifying on an AVX-512 machine
    code, output = _interrupt(["demo", "--batch", "1"], tmp_path, lambda text: "Q7.8  [" in text, settle=0.0)
    assert code == 130, output
    assert "Traceback" not in output and output.rstrip().endswith("openvx-nn demo: interrupted")


def test_ctrl_c_ends_run_with_one_line_and_no_partial_file(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    data = np.repeat(load_model().test_images.astype(np.float32), 100, axis=-1)  # long enough to be interrupted
    np.save(work / "images.npy", data)
    code, output = _interrupt(["run", "--model", "digits", "--input", "images.npy", "--output", "out.npy",
                               "--batch", "1"], tmp_path,
                              lambda _: any(p.name.endswith(".partial.npy") for p in work.iterdir()))
    assert code == 130, output
    assert "Traceback" not in output and output.rstrip().endswith("openvx-nn run: interrupted")
    assert sorted(p.name for p in work.iterdir()) == ["images.npy"]


def test_a_command_that_will_compile_the_kernels_says_so_once(tmp_path, monkeypatch, capsys):
    import openvx_nn.demo
    monkeypatch.setattr(openvx_nn.demo, "main", lambda limit, batch: 0)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr("numba.config.CACHE_DIR", "")
    monkeypatch.setenv("OPENVX_NN_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["demo"]) == 0
    err = capsys.readouterr().err
    assert "openvx-nn demo: first run of this version on this machine: compiling" in err and str(tmp_path) in err
    from openvx_nn.kernels.support import jit
    compiled = tmp_path / "cache" / jit.PACKAGE_STAMP[:16] / "kernels"
    compiled.mkdir(parents=True)
    (compiled / "relu.py311.nbi").write_bytes(b"")
    assert main(["demo"]) == 0
    assert capsys.readouterr().err == ""
