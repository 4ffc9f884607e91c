"""ResNet-18's float32 convolutions one by one, ours against ONNX Runtime's, one thread a side, by CPU time.

Each row is one layer of ResNet-18 at 224x224 (batch 1) with its epilogue as the model fuses it (bias, ReLU, the
residual add): ours is ``float_convolution.bind_conv2d`` on NHWC arrays (the input zero-bordered by one pixel
where the layer pads, as the plan holds it: ``borders``), ORT a one-node ONNX model (Conv, Add, Relu: its
optimizer fuses them into one NCHWc convolution) on one intra-op thread, which runs on the calling thread. Calls
alternate in turns in one process; each call's time is the thread's CPU time (``time.thread_time``), medians
reported, so other work on the machine slows both sides alike. ``ORT conv``: ORT's run's CPU time times the share
of the run its convolution node took in ORT's own profile (wall-clock), so without its input and output reorders
to and from NCHWc (inside a model it runs on NCHWc data throughout). Where the layer adds a residual, ORT's
one-node model keeps the Add (and the ReLU after it) apart from the convolution, which then excludes them, while
ours includes them (in a model ORT fuses them into the convolution). Before timing, our output is checked against a float64 reference (relative 1e-5).

Usage: python benchmarks/bench_resnet_layers.py [--repeat N] [--rows stem,3x3-64,...] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENVX_NN_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openvx_nn.kernels.frontend import float_convolution as fc

# (name, input side, channels in, channels out, kernel, stride, pad, ReLU, residual add)
LAYERS = [("stem 7x7/2 3->64 224", 224, 3, 64, 7, 2, 3, True, False),
          ("3x3 64->64 56", 56, 64, 64, 3, 1, 1, True, False),
          ("3x3 64->64 56 +res", 56, 64, 64, 3, 1, 1, True, True),
          ("3x3/2 64->128 56", 56, 64, 128, 3, 2, 1, True, False),
          ("1x1/2 64->128 56", 56, 64, 128, 1, 2, 0, False, False),
          ("3x3 128->128 28 +res", 28, 128, 128, 3, 1, 1, True, True),
          ("3x3/2 128->256 28", 28, 128, 256, 3, 2, 1, True, False),
          ("1x1/2 128->256 28", 28, 128, 256, 1, 2, 0, False, False),
          ("3x3 256->256 14 +res", 14, 256, 256, 3, 1, 1, True, True),
          ("3x3/2 256->512 14", 14, 256, 512, 3, 2, 1, True, False),
          ("1x1/2 256->512 14", 14, 256, 512, 1, 2, 0, False, False),
          ("3x3 512->512 7", 7, 512, 512, 3, 1, 1, True, False),
          ("3x3 512->512 7 +res", 7, 512, 512, 3, 1, 1, True, True)]
SMOKE = [("smoke 3x3 16->32 9 +res", 9, 16, 32, 3, 1, 1, True, True), ("smoke 7x7/2 3->32 16", 16, 3, 32, 7, 2, 3, True,
                                                                       False)]


def out_side(side: int, k: int, stride: int, pad: int, dilation: int = 1) -> int:
    return (side + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def reference(x, w, bias, stride, pad, relu, res, dilation=1):
    """float64 NHWC convolution from the definition (the taps ``dilation`` inputs apart, summed one by one)."""
    h, k = x.shape[1], w.shape[1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh = out_side(h, k, stride, pad, dilation)
    y = np.zeros(x.shape[:1] + (oh, oh, w.shape[0])) + bias
    for ky in range(k):
        for kx in range(k):
            y0, x0 = ky * dilation, kx * dilation
            window = xp[:, y0:y0 + (oh - 1) * stride + 1:stride, x0:x0 + (oh - 1) * stride + 1:stride]
            y += window @ w[:, ky, kx, :].astype(np.float64).T
    if res is not None:
        y = y + res
    return np.maximum(y, 0) if relu else y


def ours(x, w, bias, stride, pad, relu, res, dilation=1):
    """(the bound call, its output): the input bordered by ``pad`` zeros as the plan holds a padded undilated
    layer's input (a dilated one's is the tensor itself: the layer copies it into a padded buffer per call)."""
    n, h, wd, c = x.shape
    o, k = w.shape[0], w.shape[1]
    oh = out_side(h, k, stride, pad, dilation)
    out = np.empty((n, oh, oh, o), np.float32)
    if dilation > 1:
        return fc.bind_conv2d(x, fc.pack_conv(w), bias, out, (pad,) * 4, (stride, stride), 1 if relu else 0, res,
                              dilations=(dilation, dilation)), out
    if pad:
        xb = np.zeros((n, h + 2 * pad, wd + 2 * pad, c), np.float32)
        xb[:, pad:pad + h, pad:pad + wd] = x
    else:
        xb = x
    call = fc.bind_conv2d(xb, fc.pack_conv(w), bias, out, (pad,) * 4, (stride, stride), 1 if relu else 0, res,
                          borders=(pad, 0, 0))
    return call, out


def ort_model(x, w, bias, stride, pad, relu, res, profile_dir, dilation=1):
    import onnxruntime as rt
    from onnx import TensorProto, helper, numpy_helper
    nchw = (x.shape[0], x.shape[3], x.shape[1], x.shape[2])
    o, k = w.shape[0], w.shape[1]
    oh = out_side(x.shape[1], k, stride, pad, dilation)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], strides=[stride, stride],
                              pads=[pad] * 4, dilations=[dilation, dilation])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, nchw)]
    last = "c"
    if res is not None:
        nodes.append(helper.make_node("Add", ["c", "r"], ["a"]))
        inputs.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, (1, o, oh, oh)))
        last = "a"
    if relu:
        nodes.append(helper.make_node("Relu", [last], ["y"]))
        last = "y"
    graph = helper.make_graph(nodes, "layer", inputs, [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w.transpose(0, 3, 1, 2).copy(), "w"),
                               numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = rt.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(profile_dir, "ort")
    session = rt.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {"x": x.transpose(0, 3, 1, 2).copy()}
    if res is not None:
        feed["r"] = res.transpose(0, 3, 1, 2).copy()
    return session, feed


def conv_shares(session, runs: int) -> list[float]:
    """The share of each of the last ``runs`` runs' wall time spent in the convolution node (ORT's profile, which
    times in wall-clock: its share of the run's CPU time is taken as the same)."""
    events = json.loads(Path(session.end_profiling()).read_text())
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("name") == "model_run"][-runs:]
    nodes = [(e["ts"], e["dur"]) for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")
             and e["args"].get("op_name") in ("Conv", "FusedConv")]
    return [sum(d for t, d in nodes if lo <= t <= hi) / max(1, hi - lo) for lo, hi in spans]


def row(layer, repeat: int, profile_dir: str) -> tuple:
    """(name, ours ms, ORT ms, ORT's conv ms, our GMAC/s) of ``layer``: a ``LAYERS`` tuple, with a dilation after
    its nine fields where dilated."""
    name, side, c, o, k, stride, pad, relu, add = layer[:9]
    dilation = layer[9] if len(layer) > 9 else 1
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, side, side, c)).astype(np.float32)
    w = (rng.standard_normal((o, k, k, c)) / np.sqrt(k * k * c)).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32) * 0.1
    oh = out_side(side, k, stride, pad, dilation)
    res = rng.standard_normal((1, oh, oh, o)).astype(np.float32) if add else None
    call, out = ours(x, w, bias, stride, pad, relu, res, dilation)
    call()
    want = reference(x, w, bias, stride, pad, relu, res, dilation)
    error = np.abs(out - want).max() / max(1.0, np.abs(want).max())
    if not error < 1e-5:
        raise SystemExit(f"{name}: ours differs from the float64 reference by {error:.3g}")
    session, feed = ort_model(x, w, bias, stride, pad, relu, res, profile_dir, dilation)
    theirs = session.run(None, feed)[0].transpose(0, 2, 3, 1)
    if not np.abs(theirs - want).max() / max(1.0, np.abs(want).max()) < 1e-4:
        raise SystemExit(f"{name}: ORT differs from the float64 reference")
    for _ in range(3):
        call()
        session.run(None, feed)
    mine, whole = [], []
    for turn in range(repeat):
        for side_k in ((0, 1) if turn % 2 == 0 else (1, 0)):
            start = time.thread_time()
            if side_k == 0:
                call()
                mine.append(time.thread_time() - start)
            else:
                session.run(None, feed)
                whole.append(time.thread_time() - start)
    node = [t * share for t, share in zip(whole, conv_shares(session, repeat))]
    macs = oh * oh * o * k * k * c
    ms = [1e3 * statistics.median(t) for t in (mine, whole, node)]
    return name, ms[0], ms[1], ms[2], macs / ms[0] / 1e6


def main(argv: list[str], table: list | None = None, smoke: list | None = None, width: int = 24,
         timed=row) -> int:
    """Time the rows of ``table`` (default this file's layers; ``smoke`` with ``--smoke``), names ``width`` wide,
    each by ``timed`` (default :func:`row`)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--rows", default="", help="comma-separated substrings of the rows' names")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    layers = (smoke or SMOKE) if args.smoke else (table or LAYERS)
    if args.rows:
        layers = [la for la in layers if any(s in la[0] for s in args.rows.split(","))]
    print(f"one thread a side, CPU time, medians of {args.repeat} turns; load {os.getloadavg()[0]:.2f}")
    print(f"{'layer':{width}s} {'ours ms':>8s} {'ORT ms':>8s} {'ORT conv':>8s} {'conv/ours':>9s} {'GMAC/s':>7s} "
          f"{'ORT GMAC/s':>10s}")
    total = [0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory(prefix="conv-layers-") as profile_dir:
        for layer in layers:
            name, a, b, conv, rate = timed(layer, 2 if args.smoke else args.repeat, profile_dir)
            total = [total[0] + a, total[1] + b, total[2] + conv]
            print(f"{name:{width}s} {a:8.3f} {b:8.3f} {conv:8.3f} {conv / a:9.2f} {rate:7.1f} {rate * a / conv:10.1f}",
                  flush=True)
    print(f"{'sum':{width}s} {total[0]:8.3f} {total[1]:8.3f} {total[2]:8.3f} {total[2] / total[0]:9.2f}")
    print(f"load after {os.getloadavg()[0]:.2f}")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
