"""The whole-network C benchmark builds its C program and runs in smoke mode: ResNet-18 and MobileNet v1 (small
input, maps / 16) built from C with the standard layers, in F32 and U8, their outputs checked against ONNX
Runtime's on the same weights by the driver itself (F32 within 1e-4, U8 logits bit-exact)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_c_networks.py"


def test_c_network_benchmark_builds_and_runs_in_smoke_mode():
    for module in ("onnxruntime", "onnx"):
        pytest.importorskip(module, reason="the benchmark compares against onnxruntime (the bench extra)")
    result = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=900,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines()
            if line.startswith(("| resnet18", "| mobilenet_v1"))]
    assert sorted((r[0].strip(), r[1].strip()) for r in rows) == [
        ("mobilenet_v1", "F32"), ("mobilenet_v1", "U8"), ("resnet18", "F32"), ("resnet18", "U8")], result.stdout
    for row in rows:
        assert float(row[3]) > 0 and float(row[4]) > 0, row          # ours ms, ORT ms
        assert ("logits equal" in row[6]) == (row[1].strip() == "U8"), row


def test_ort_profile_gives_a_time_for_every_layer_of_the_onnx_graph():
    """``--ort-profile``'s split: one entry per node ORT runs, the MobileNet's 27 convolutions (ReLU fused into
    them) with the output sizes the network's layers have, and the classifier's Gemm."""
    for module in ("onnxruntime", "onnx"):
        pytest.importorskip(module, reason="the benchmark compares against onnxruntime (the bench extra)")
    import numpy as np
    sys.path.insert(0, str(ROOT))
    from benchmarks import bench_c_networks as bench
    net = bench.Network("f32", 64, seed=1)
    model = net.model("mobilenet_v1", *bench.mobilenet_v1(net, 16))
    x = np.random.default_rng(3).random((1, 3, 64, 64)).astype(np.float32)
    found = bench.ort_profile(model, {"x": x}, threads=1, runs=3)
    assert all(ms >= 0 for _, ms in found)
    # ORT's NCHWc pads the maps to its block (16), and narrow layers run as FusedConv: the spatial sizes, one per
    # convolution, are the layers'
    sides = sorted(label.split("x", 2)[2] for label, _ in found if label.split(" -> ")[0].endswith("Conv"))
    want, side = ["32x32"], 32  # 3x3/2
    for stride in (1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1):
        side //= stride
        want += [f"{side}x{side}"] * 2  # depthwise, pointwise
    assert sides == sorted(want)
    assert any(label == "Gemm -> 1x1000" for label, _ in found)
