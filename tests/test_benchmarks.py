"""The layer benchmarks run (in their smoke mode) and check their own results."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "alexnet.py"


def test_benchmarks_run_in_smoke_mode():
    result = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke conv" in result.stdout and "smoke FC" in result.stdout and "smoke max pool" in result.stdout
    assert "every result equals the reference: yes" in result.stdout


def test_onnx_runtime_comparison_runs_in_smoke_mode():
    # Without onnxruntime installed it times ours only and says so; either way it must run.
    script = BENCH.parent / "bench_ort.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke conv" in result.stdout and "smoke FC" in result.stdout and "integer engine:" in result.stdout
    assert result.stdout.count("ours S8 0.") == 2, result.stdout  # an S8 graph timed in the convolution and FC row


def test_model_benchmark_runs_in_smoke_mode_and_prints_the_table():
    # The rows compare our outputs with ONNX Runtime's and fail beyond their tolerance, so a pass means agreement.
    pytest.importorskip("onnxruntime", reason="the model benchmark compares against onnxruntime (the bench extra)")
    pytest.importorskip("onnx", reason="the model benchmark builds ONNX models (the bench extra)")
    script = BENCH.parent / "bench_models.py"
    keys = "nnapi-float,nnapi-uint8,coreml-mobilenet-v2,coreml-resnet18,vx-small-cnn"
    result = subprocess.run([sys.executable, str(script), "--smoke", "--rows", keys], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "| model | MMAC | ours ms | ORT ms |" in result.stdout
    rows = ["NNAPI MobileNet v1 0.25 32² float32", "NNAPI MobileNet v1 0.25 32² uint8", "OpenVX C API small CNN"]
    if importlib.util.find_spec("coremltools"):
        rows += ["CoreML MobileNet v2 0.25 32²", "CoreML ResNet-18 0.125 32²"]
    for row in rows:
        assert f"| {row}" in result.stdout, result.stdout


def test_converted_model_rows_run_in_smoke_mode_and_match_pytorch():
    # PyTorch modules converted by coremltools: each row fails beyond its tolerance against ORT and PyTorch.
    for module in ("onnxruntime", "onnx", "coremltools", "torch"):
        pytest.importorskip(module, reason="the converted rows convert PyTorch modules and run ORT")
    script = BENCH.parent / "bench_models.py"
    keys = "converted-mobilenet-v2,converted-resnet18,converted-mobilenet-v3-small,converted-efficientnet-b0"
    result = subprocess.run([sys.executable, str(script), "--smoke", "--rows", keys], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    for row in ("MobileNet v2 0.25 32²", "ResNet-18 0.125 32²", "MobileNet v3 small 32²", "EfficientNet-B0 32²"):
        line = next((x for x in result.stdout.splitlines() if x.startswith(f"| converted {row}")), None)
        assert line is not None, result.stdout
        assert "ORT " in line and "PyTorch " in line and "≤ 0.0001" in line, line


def test_converted_architecture_rows_run_in_smoke_mode_and_match_pytorch():
    # ResNet-50, DenseNet-121, a U-Net, a DeepLab v3 head, a Transformer encoder and the recurrent taggers as the
    # converter writes them, each row failing beyond its tolerance against ORT and PyTorch.
    for module in ("onnxruntime", "onnx", "coremltools", "torch"):
        pytest.importorskip(module, reason="the converted rows convert PyTorch modules and run ORT")
    script = BENCH.parent / "bench_models.py"
    keys = ("converted-resnet50,converted-densenet121,converted-unet,converted-deeplab-head,"
            "converted-transformer-encoder,converted-lstm-tagger,converted-gru-tagger")
    result = subprocess.run([sys.executable, str(script), "--smoke", "--rows", keys], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    for row in ("ResNet-50 0.0625 32²", "DenseNet-121 32²", "U-Net 32²", "DeepLab v3 head 32²",
                "Transformer encoder 16×32", "LSTM tagger 10×12", "GRU tagger 10×12"):
        line = next((x for x in result.stdout.splitlines() if x.startswith(f"| converted {row} |")), None)
        assert line is not None, result.stdout
        assert "ORT " in line and "PyTorch " in line and "≤ 0.0001" in line, line


def test_quant8_layer_profile_runs_in_smoke_mode_and_checks_its_layers():
    # Each uint8 layer is checked against the NumPy route and the Q7.8 kernel chain against the OpenVX graph.
    pytest.importorskip("onnxruntime", reason="the layer profile reads onnxruntime's per-node profile (the bench extra)")
    pytest.importorskip("onnx", reason="the layer profile builds ONNX models (the bench extra)")
    script = BENCH.parent / "bench_quant8_layers.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ours 26 conv 1x1/1 1² 256->256" in result.stdout and "ours fully connected 256->10" in result.stdout
    assert result.stdout.count("sum of our kernels") == 2


def test_coreml_layer_comparison_runs_in_smoke_mode():
    script = BENCH.parent / "bench_coreml_layers.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke depthwise" in result.stdout and "smoke grouped" in result.stdout


def test_coreml_route_comparison_runs_in_smoke_mode():
    # Each route's outputs are checked against ORT's (it fails beyond the model benchmark's tolerance).
    for module in ("onnxruntime", "onnx", "coremltools"):
        pytest.importorskip(module, reason="the route comparison loads .mlmodel files and runs ORT")
    script = BENCH.parent / "bench_coreml_routes.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "ORT / numpy" in line and "default" in line]
    assert [line.split(" 32²")[0] for line in lines] == ["CoreML MobileNet v2 0.25", "CoreML ResNet-18 0.125"], lines


def test_converted_profile_times_the_native_calls_in_smoke_mode():
    # --native: every call of the native plan timed alone and in order; the reshapes between the graph's own
    # tensors are views (core/reshape_views.py), so of the smoke Transformer's reshapes only the output's runs;
    # then ORT's nodes on one thread, by operator.
    for module in ("coremltools", "torch", "onnxruntime"):
        pytest.importorskip(module, reason="the profile converts a PyTorch module and runs ORT")
    script = BENCH.parent / "profile_converted.py"
    result = subprocess.run([sys.executable, str(script), "transformer_encoder", "--smoke", "--native", "1",
                             "--calls", "1"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    rows = [line.split() for line in lines if line.startswith("  ") and " calls " in line]
    counts = {row[0]: int(row[1]) for row in rows if row[1].isdigit()}
    assert counts["fully_connected_layer"] == 8 and counts["batched_matmul"] == 4, result.stdout
    assert counts.get("reshape", 0) == 1, result.stdout
    assert any(line.strip().startswith("whole runs: graph.process") for line in lines), result.stdout
    ort = lines[next(i for i, line in enumerate(lines) if line.startswith("ORT (operator), one thread")):]
    assert any(line.split()[:1] == ["Gemm"] or line.split()[:1] == ["MatMul"] for line in ort), result.stdout


def test_standard_layer_comparison_runs_in_smoke_mode():
    # The float32 standard layers against ORT: it fails when an output differs beyond 1e-5 of the largest value;
    # then the float16 ones: it fails when an output is not the float32 layer's rounded once.
    for module in ("onnxruntime", "onnx"):
        pytest.importorskip(module, reason="the comparison runs ORT")
    script = BENCH.parent / "bench_standard_layers.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    tables = [i for i, line in enumerate(lines) if line.startswith(("| float32 layer", "| float16 layer"))]
    assert len(tables) == 2, result.stdout
    float32 = [line for line in lines[tables[0]:tables[1]] if line.startswith("| smoke")]
    float16 = [line for line in lines[tables[1]:] if line.startswith("| smoke")]
    assert len(float32) == len(float16) == 8, result.stdout
    assert sum("smoke deconv" in line for line in float32 + float16) == 4, result.stdout


def test_cold_start_benchmark_skips_the_no_cache_case_at_zero_cold_runs(monkeypatch, capsys):
    # --cold-runs 0 took the median of no runs (StatisticsError); now it skips the case that compiles for minutes.
    from benchmarks import bench_cold_start
    runs = []

    def run(prefix, env, cwd):
        runs.append(env)
        return 1.0, 0.5
    monkeypatch.setattr(bench_cold_start, "_run", run)
    monkeypatch.setattr(sys, "argv", ["bench_cold_start.py", "--cold-runs", "0", "--runs", "1"])
    bench_cold_start.main()
    out = capsys.readouterr().out
    assert "no cache: skipped" in out
    assert "warm cache" in out and "new install" in out
    assert runs and not any("OPENVX_NN_CACHE_DIR" in env for env in runs)  # no process ran with an empty cache
    for bad in (["--cold-runs", "-1"], ["--runs", "0"]):
        monkeypatch.setattr(sys, "argv", ["bench_cold_start.py", *bad])
        with pytest.raises(SystemExit) as refused:
            bench_cold_start.main()
        assert refused.value.code == 2  # argparse's refusal, before any process runs
