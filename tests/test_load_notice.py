"""A slow load says so (``runner.Pending``): ``openvx-nn run`` and ``openvx-nn coreml``."""
from __future__ import annotations

import io
import time

import numpy as np
import pytest

from openvx_nn import cli
from openvx_nn.runner import Pending, progress, run


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_the_load_ends_in_time(monkeypatch):
    monkeypatch.setattr(progress, "NOTICE_AFTER", 5.0)
    stream = io.StringIO()
    with Pending("loading m", stream):
        time.sleep(0.01)
    assert stream.getvalue() == ""


def test_a_pipe_gets_one_line_when_it_starts_and_one_at_the_end(monkeypatch):
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.05)
    stream = io.StringIO()
    with Pending("loading m", stream):
        time.sleep(1.3)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "loading m... 0:00"
    assert lines[1].startswith("loading m: done in 1.") and lines[1].endswith(" s")
    assert len(lines) == 2


def test_a_terminal_gets_one_line_redrawn_each_second(monkeypatch):
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.05)
    stream = _Terminal()
    loading = Pending("loading m", stream).start()
    time.sleep(1.3)
    loading.stop()
    loading.stop()  # idempotent
    text = stream.getvalue()
    assert text.count("\rloading m... ") == 2 and text.endswith(" s\n") and text.count("\n") == 1


def test_run_says_a_slow_first_batch_is_loading(monkeypatch, tmp_path):
    from openvx_nn.runner import command
    build = command.local_graph

    def slow_build(*args):
        time.sleep(0.3)  # a load the notice outlasts
        return build(*args)

    monkeypatch.setattr(command, "local_graph", slow_build)
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.05)
    images = np.zeros((8, 8, 1, 3), np.float32)
    np.save(tmp_path / "in.npy", images)
    stream = io.StringIO()
    run("digits", tmp_path / "in.npy", tmp_path / "out.npy", progress=stream, report=None)
    text = stream.getvalue()
    assert text.index("loading digits") < text.index("(graphs built, verified and run once): done in ") \
        < text.index("3/3 images")


@pytest.mark.parametrize("slow", [True, False])
def test_coreml_command_notices_only_a_slow_load(monkeypatch, capsys, tmp_path, slow):
    from openvx_nn.coreml import SAMPLE_MODEL
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.0 if slow else 60.0)
    if slow:  # a parse the notice outlasts
        from openvx_nn.coreml import cli as coreml_cli
        parse = coreml_cli.load
        monkeypatch.setattr(coreml_cli, "load", lambda path: (time.sleep(0.3), parse(path))[1])
    np.save(tmp_path / "x.npy", np.zeros((1, 8, 8), np.float32))
    status = cli.main(["coreml", str(SAMPLE_MODEL), "--input", f"image={tmp_path / 'x.npy'}"])
    err = capsys.readouterr().err
    assert status == 0
    assert (f"loading {SAMPLE_MODEL}: done in " in err) is slow


def test_an_interrupted_load_claims_no_time(monkeypatch):
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.0)
    stream = io.StringIO()
    with pytest.raises(KeyboardInterrupt), Pending("loading m", stream):
        time.sleep(0.2)
        raise KeyboardInterrupt
    assert stream.getvalue() == "loading m... 0:00\n"
