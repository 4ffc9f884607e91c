"""``openvx-nn run``: labels equal to the demo's, a progress bar on stderr, Dask with --workers,
clear errors, and model files dispatched to front ends by suffix."""
from __future__ import annotations

import io
import re
import sys
import types

import numpy as np
import pytest

from openvx_nn.api import Context
from openvx_nn.cli import main
from openvx_nn.demo import classify, load_model
from openvx_nn.demo.model import Q78, build
from openvx_nn.runner import ModelError, Progress, RunError, resolve, run

ITEMS = 150   # with --batch 64: two full batches and one of 22


@pytest.fixture(scope="module")
def demo_labels():
    with Context() as ctx:
        labels, _ = classify(ctx, load_model(), Q78, batch=64, limit=ITEMS)
    return labels


@pytest.fixture
def images(tmp_path):
    path = tmp_path / "images.npy"
    np.save(path, load_model().test_images[..., :ITEMS])
    return path


def test_run_writes_the_demos_labels_and_shows_progress(images, tmp_path, capsys, demo_labels):
    assert main(["run", "--model", "digits", "--input", str(images), "--output", str(tmp_path / "labels.npy"),
                 "--batch", "64"]) == 0
    labels = np.load(tmp_path / "labels.npy")
    assert labels.dtype == np.int64 and np.array_equal(labels, demo_labels)
    captured = capsys.readouterr()
    assert f"{ITEMS}/{ITEMS} images" in captured.err and "images/s" in captured.err
    assert "on this process" in captured.out and not list(tmp_path.glob("*.partial*"))


def test_run_with_two_workers_uses_dask_and_writes_the_same_labels(images, tmp_path, capsys, demo_labels):
    pytest.importorskip("distributed", reason="the dask extra (pip install .[dask]) is not installed")
    assert main(["run", "--model", "digits", "--input", str(images), "--output", str(tmp_path / "labels.npy"),
                 "--batch", "64", "--workers", "2"]) == 0
    assert np.array_equal(np.load(tmp_path / "labels.npy"), demo_labels)
    captured = capsys.readouterr()
    assert "on 2 Dask workers" in captured.out and f"{ITEMS}/{ITEMS} images" in captured.err


def test_an_empty_dataset_gives_an_empty_result(tmp_path):
    np.save(tmp_path / "none.npy", np.zeros((8, 8, 1, 0), np.float32))
    labels = run("digits", tmp_path / "none.npy", tmp_path / "labels.npy", report=None, progress=None)
    assert labels.shape == (0,) and labels.dtype == np.int64


@pytest.mark.parametrize("argv, message", [
    (["--input", "{missing}"], "cannot read a .npy array"),
    (["--input", "{flat}"], r"shape \(64, 3\), but digits \(Q7.8\) takes items of shape \(8, 8, 1\) with the batch"),
    (["--model", "net.onnx"], "neither a built-in model"),
    (["--model", "{missing_model}"], "no such file"),
])
def test_bad_arguments_give_a_clear_error_and_no_output(argv, message, images, tmp_path, capsys):
    np.save(tmp_path / "flat.npy", np.zeros((64, 3), np.float32))
    names = {"missing": tmp_path / "nope.npy", "flat": tmp_path / "flat.npy", "missing_model": tmp_path / "m.mlmodel"}
    args = {"--model": "digits", "--input": str(images), "--output": str(tmp_path / "out.npy")}
    args.update(dict(zip(argv[::2], (value.format(**names) for value in argv[1::2]))))
    assert main(["run"] + [item for pair in args.items() for item in pair]) == 1
    err = capsys.readouterr().err
    assert err.startswith("openvx-nn run: error: ")
    assert re.search(message, err), err
    assert not (tmp_path / "out.npy").exists()


def test_workers_and_scheduler_together_are_refused(images, tmp_path):
    with pytest.raises(SystemExit):
        main(["run", "--model", "digits", "--input", str(images), "--output", str(tmp_path / "o.npy"),
              "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])


def test_a_model_file_runs_through_the_front_end_its_suffix_names(images, tmp_path, monkeypatch, demo_labels):
    """The plug-in contract of front ends: ``build_batched(ctx, path, batch)`` from the suffix's module."""
    calls = []

    def build_batched(ctx, path, batch):
        calls.append((path, batch))
        return build(ctx, batch)

    monkeypatch.setitem(sys.modules, "openvx_nn.nnapi", types.SimpleNamespace(build_batched=build_batched))
    model = tmp_path / "digits.nnapi"
    model.write_bytes(b"")
    images_q78 = tmp_path / "q78.npy"   # front-end models take the input tensor's own values
    np.save(images_q78, Q78.to_raw(np.load(images)))
    out = run(str(model), images_q78, tmp_path / "probabilities.npy", batch_size=64, report=None, progress=None)
    assert calls == [(str(model.resolve()), 64)]
    assert out.shape == (10, ITEMS) and np.array_equal(out.argmax(axis=0), demo_labels)


def test_a_missing_front_end_is_named_when_the_model_is_resolved(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openvx_nn.coreml", None)   # import fails as if not installed
    model = tmp_path / "net.mlmodel"
    model.write_bytes(b"")
    with pytest.raises(ModelError, match=r"net.mlmodel: this kind of model needs openvx_nn.coreml"):
        resolve(str(model))


def test_a_front_end_without_the_run_hook_is_named(tmp_path, monkeypatch, images):
    monkeypatch.setitem(sys.modules, "openvx_nn.coreml", types.SimpleNamespace())
    model = tmp_path / "net.mlmodel"
    model.write_bytes(b"")
    with pytest.raises(ModelError, match=r"openvx_nn.coreml has no build_batched\(ctx, path, batch\)"):
        run(str(model), images, tmp_path / "o.npy", report=None, progress=None)


def test_the_progress_bar_reports_count_rate_and_time_left(monkeypatch):
    now = [100.0]
    monkeypatch.setattr("openvx_nn.runner.progress.time.perf_counter", lambda: now[0])
    stream = io.StringIO()
    bar = Progress(1000, stream, log_interval=0.0)
    now[0] = 102.0
    bar.update(250)
    assert stream.getvalue().splitlines()[-1] == "[#######.......................] 250/1,000 images  125 images/s  ETA 0:06"
    now[0] = 108.0
    bar.update(750)
    bar.close()
    assert stream.getvalue().splitlines()[-1].endswith("1,000/1,000 images  125 images/s  in 0:08")


def test_run_refuses_a_run_error_before_work(images, tmp_path):
    with pytest.raises(RunError, match="--workers must be at least 1"):
        run("digits", images, tmp_path / "o.npy", workers=0)
