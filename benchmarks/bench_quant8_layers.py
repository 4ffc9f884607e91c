"""Kernel time per layer of two model rows (``bench_models.py``), beside ONNX Runtime's per-node profile and the
whole inference: where a model's time goes, apart from the per-call work around the kernels.

- ``nnapi-uint8``: the quantized MobileNet v1 0.25: each CONV_2D / DEPTHWISE_CONV_2D as our prepared uint8 runner
  (``kernels/frontend/quant8_*``) on the layer's real input, the input and output quantization of the model;
- ``vx-small-cnn``: the Q7.8 CNN: each convolution, activation, pooling and fully connected kernel
  (``kernels/openvx``) planned once, as a verified node plans it, on OpenVX-ordered arrays.

Ours: the median over interleaved calls of each layer (wall time; ``--cpu``: the calling thread's CPU time,
run with ``OPENVX_NN_THREADS=1``); the chain of layers is checked (uint8: each layer against the NumPy route it
replaced, with ``--check`` or ``--smoke``; Q7.8: the chain's logits equal the OpenVX graph's). ORT: its own
profiler's kernel time per node of the whole model (its node names: ORT fuses and reorders), same threads.
The whole inference (ours through the public API, ORT's ``run``) is timed interleaved beside the layers.

Usage: python benchmarks/bench_quant8_layers.py [--rows nnapi-uint8,vx-small-cnn] [--repeat N] [--smoke] [--cpu]
[--check] [--ort-threads N]. Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import models as m
from benchmarks import vx_models as v
from benchmarks.bench_nnapi_quant8 import medians
from benchmarks.model_rows import ROWS


def uint8_layers(row, check: bool) -> list[tuple[str, callable]]:
    """(name, call) per convolution of the quantized MobileNet, each on its real input."""
    from openvx_nn.kernels.frontend import nhwc_convolution as reference
    from openvx_nn.kernels.frontend.quant8_convolution import prepare_conv
    from openvx_nn.kernels.frontend.quant8_depthwise import prepare_depthwise
    qnet = row.quant
    x, size, quant_in = row.inputs[0], qnet.float_net.size, (qnet.input.scale, qnet.input.zero_point)
    layers = []
    for i, ql in enumerate(qnet.features):
        layer = ql.layer
        out_size = m.same_output(size, layer.stride)
        low, high = m.same_pads(size, layer.kernel, layer.stride)
        pads, strides = (low, high, low, high), (layer.stride, layer.stride)
        quant_w, quant_out = (ql.weights.scale, ql.weights.zero_point), (ql.output.scale, ql.output.zero_point)
        out = np.zeros((1, out_size, out_size, layer.channels_out), np.uint8)
        if layer.depthwise:
            run = prepare_depthwise(ql.weights.values, ql.bias, out.shape, pads, strides, 1, 3, quant_in, quant_w,
                                    quant_out)
        else:
            run = prepare_conv(ql.weights.values, ql.bias, x.shape, out.shape, pads, strides, 3, quant_in, quant_w,
                               quant_out)
        run(x, out)
        if check:
            want = np.zeros_like(out)
            (reference.depthwise_conv2d if layer.depthwise else reference.conv2d)(
                x, ql.weights.values, ql.bias, want, pads, strides, *((1,) if layer.depthwise else ()), 3, quant_in,
                quant_w, quant_out)
            assert np.array_equal(out, want), f"layer {i} differs from the NumPy route"
        kind = "depthwise" if layer.depthwise else "conv"
        name = f"{i:2d} {kind} {layer.kernel}x{layer.kernel}/{layer.stride} {size}² {x.shape[3]}->{out.shape[3]}"
        layers.append((name, lambda run=run, x=x, out=out: run(x, out)))
        x, size, quant_in = out, out_size, quant_out
    return layers


def q78_layers(row) -> list[tuple[str, callable]]:
    """(name, call) per kernel of the Q7.8 CNN; the chain's logits must equal the OpenVX graph's."""
    from openvx_nn.kernels.engine.correlation import Arithmetic, convolution_window, execute, prepare
    from openvx_nn.kernels.openvx import activation, pooling
    from openvx_nn.kernels.openvx.fully_connected import (
        execute_fully_connected,
        fully_connected,
        prepare_fully_connected,
    )
    net, image = row.net, row.inputs[0]

    def raw(a: np.ndarray) -> np.ndarray:
        return np.round(np.asarray(a, np.float64) * 2 ** v.Q).astype(np.int16)
    arithmetic = Arithmetic(True, True, v.Q, v.Q, v.Q, v.Q)
    x, size, layers = np.asfortranarray(raw(image).transpose(2, 1, 0)), net.size, []
    for w, b in net.convs:
        conv = np.zeros((size, size, w.shape[0]), np.int16, order="F")
        route = prepare(np.asfortranarray(raw(w).transpose(3, 2, 1, 0)), True, x.shape, conv.shape,
                        convolution_window(1, 1, 1, 1, 0, 0), arithmetic)
        relu, pooled = np.zeros_like(conv), np.zeros((size // 2, size // 2, w.shape[0]), np.int16, order="F")
        bias = raw(b)
        layers += [(f"conv 3x3 {size}² {w.shape[1]}->{w.shape[0]}",
                    lambda route=route, x=x, bias=bias, out=conv: execute(route, x, bias, out)),
                   (f"relu {size}²x{w.shape[0]}", activation.prepare(conv, relu, "relu", fpp_in=v.Q, fpp_out=v.Q)),
                   (f"max pool 2x2 {size}²x{w.shape[0]}",
                    lambda relu=relu, pooled=pooled: pooling.pooling(relu, pooled, True, 2, 2, 0, 0, 2, 2))]
        x, size = pooled, size // 2
    flat, logits = x.reshape(-1, 1, order="F"), np.zeros((net.fc[0].shape[0], 1), np.int16, order="F")
    fc_w = np.asfortranarray(raw(net.fc[0]).T)
    route = prepare_fully_connected(fc_w, True, 1, arithmetic)
    bias, a = raw(net.fc[1]), arithmetic
    layers.append((f"fully connected {flat.shape[0]}->{logits.shape[0]}",
                   (lambda: execute_fully_connected(route, flat, bias, logits)) if route is not None else
                   # a classifier the SIMD tiles would mostly pad runs on the dot products (as in the graph)
                   (lambda: fully_connected(flat, fc_w, bias, logits, a.saturate, a.nearest_even, fpp_x=a.fpp_x,
                                            fpp_w=a.fpp_w, fpp_b=a.fpp_b, fpp_out=a.fpp_out))))
    for _, call in layers:
        call()
    graph = v.VXGraph(net)
    try:
        assert np.array_equal(graph.run(image), logits[:, 0] / 2.0 ** v.Q), "kernel chain differs from the graph"
    finally:
        graph.release()
    return layers


def ort_nodes(row, threads: int, repeat: int) -> list[tuple[str, float]]:
    """ORT's median kernel time (seconds) per node of the row's whole model, in execution order."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    with tempfile.TemporaryDirectory(prefix="ort-profile-") as folder:
        options.profile_file_prefix = str(Path(folder) / "profile")
        session = ort.InferenceSession(row.onnx, options, providers=["CPUExecutionProvider"])
        feed = {"x": row.feed("ORT", row.inputs[0]) if hasattr(row, "quant") else row.inputs[0][None]}
        for _ in range(repeat):
            session.run(None, feed)
        with open(session.end_profiling()) as f:
            events = json.load(f)
    nodes: dict[str, list[float]] = {}
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            nodes.setdefault(event["name"][:-len("_kernel_time")], []).append(event["dur"] * 1e-6)
    return [(name, statistics.median(times)) for name, times in nodes.items()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="nnapi-uint8,vx-small-cnn")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--smoke", action="store_true", help="the rows' smoke sizes, a few calls, results checked")
    parser.add_argument("--cpu", action="store_true", help="CPU time of the calling thread instead of wall time")
    parser.add_argument("--check", action="store_true", help="check every uint8 layer against the NumPy route")
    parser.add_argument("--ort-threads", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        print("bench_quant8_layers: onnxruntime and onnx are not installed (pip install -e '.[bench]'); skipped")
        return 0
    repeat = 3 if args.smoke else args.repeat
    clock = time.thread_time if args.cpu else time.perf_counter
    for key in args.rows.split(","):
        row = ROWS[key](args.smoke, 1.0)
        layers = uint8_layers(row, args.check or args.smoke) if key == "nnapi-uint8" else q78_layers(row)
        whole = row.load_ours()
        session = m.ort_session(row.onnx, args.ort_threads)
        feed = {"x": row.feed("ORT", row.inputs[0]) if key == "nnapi-uint8" else row.inputs[0][None]}
        def ort_run(session=session, feed=feed):
            return session.run(None, feed)
        *ours, whole_ours, whole_ort = medians([c for _, c in layers] + [whole, ort_run], repeat, clock)
        print(f"{row.name}: kernel time per layer ({'CPU' if args.cpu else 'wall'}, median of {repeat} interleaved "
              f"calls)")
        for (name, _), seconds in zip(layers, ours):
            print(f"  ours {name:40s} {seconds * 1e6:8.1f} us")
        nodes = ort_nodes(row, args.ort_threads, repeat)
        for name, seconds in nodes:
            print(f"  ORT  {name:40s} {seconds * 1e6:8.1f} us")
        print(f"  sum of our kernels {sum(ours) * 1e3:.3f} ms, whole inference {whole_ours * 1e3:.3f} ms; "
              f"ORT: sum of nodes {sum(s for _, s in nodes) * 1e3:.3f} ms ({args.ort_threads} threads), whole "
              f"{whole_ort * 1e3:.3f} ms", flush=True)
        row.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
