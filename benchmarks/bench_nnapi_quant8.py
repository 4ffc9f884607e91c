"""A quantized (uint8) MobileNet v1 through ``openvx_nn.nnapi`` against ONNX Runtime's QLinearConv model
with the same weights and quantization, in one process, interleaved, medians; and its layers one by one.

The network is MobileNet v1 (224x224x3, width 1.0): a 3x3/2 convolution, 13 depthwise 3x3 +
pointwise 1x1 pairs, all with a fused ReLU6, a 7x7 average pool and a 1024 -> 1001 fully connected
layer, with TensorFlow's SAME paddings (asymmetric where the stride is 2). Weights, biases and
quantization parameters are random but shaped like a real model's (uint8 weights with a zero point
near 128; output scales that keep activations spread over the uint8 range). ORT runs the same numbers
as QLinearConv nodes (NCHW, group convolutions for the depthwise layers),
``com.microsoft.QLinearGlobalAveragePool`` and a 1x1 QLinearConv for the last layer, with 2 intra-op
threads and spinning off, like ``bench_ort.py``.

Outputs are compared: NNAPI's requantization (a 31-bit fixed-point multiplier, rounded half away
from zero) and ORT's (a float multiplier, rounded half to even) may differ by one on ties, and such
differences travel through the layers; the table reports how many final values agree within 1.

``--cpu-time`` compares the work instead of the wall time, for a machine busy with other jobs: ORT on
one thread, each call timed by the calling thread's CPU time (run it with ``OPENVX_NN_THREADS=1`` so
that ours runs on the calling thread too).

Usage: python benchmarks/bench_nnapi_quant8.py [--repeat N] [--smoke] [--cpu-time]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx); without them it says so and exits 0.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    import openvx_nn  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn import nnapi
from openvx_nn.kernels.engine import isa

# (stride of the depthwise layer, output channels of the pointwise layer) per block
BLOCKS = [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 + [(2, 1024), (1, 1024)]
SMOKE_BLOCKS = [(1, 16), (2, 32)]
RELU6 = 3


@dataclass
class Layer:
    """One convolution: NNAPI filter layout ([K, kh, kw, C], or [1, kh, kw, C] when depthwise)."""

    kind: str  # "conv", "depthwise" or "fc"
    filt: np.ndarray
    bias: np.ndarray
    stride: int
    quant_w: tuple[float, int]
    quant_out: tuple[float, int]


def same_pads(size: int, k: int, stride: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


def mobilenet(rng: np.random.Generator, size: int, blocks, classes: int):
    """The layers, with the input's quantization. ReLU6 outputs have TFLite's (6/255, 0), so the fused
    activation's upper clamp is the uint8 range's (ORT's QLinearConv has no activation); each weight
    scale puts the sums' spread (about ``40 * 74 * sqrt(taps)`` in offsets) at ~40 output steps."""
    quant_in = (1 / 128, 128)
    layers, s_in = [], quant_in[0]

    def add(kind, filt, stride, taps):
        nonlocal s_in
        zw = int(rng.integers(110, 146))
        s_out, z_out = (6 / 255, 0) if kind != "fc" else (0.05, 100)
        s_w = s_out / s_in / (74 * np.sqrt(taps)) * float(rng.uniform(0.8, 1.25))
        k = filt.shape[0] if kind != "depthwise" else filt.shape[3]
        bias = rng.integers(-(1 << 12), 1 << 12, k).astype(np.int32)
        layers.append(Layer(kind, filt, bias, stride, (float(s_w), zw), (s_out, z_out)))
        s_in = s_out

    add("conv", rng.integers(0, 256, (32, 3, 3, 3), dtype=np.uint8), 2, 27)
    channels = 32
    for stride, out in blocks:
        add("depthwise", rng.integers(0, 256, (1, 3, 3, channels), dtype=np.uint8), stride, 9)
        add("conv", rng.integers(0, 256, (out, 1, 1, channels), dtype=np.uint8), 1, channels)
        channels = out
    add("fc", rng.integers(0, 256, (classes, channels), dtype=np.uint8), 1, channels)
    return quant_in, layers


def nnapi_model(size: int, quant_in, layers) -> nnapi.Model:
    T, OP = nnapi.OperandType, nnapi.OperationType
    m = nnapi.Model()

    def const_int(v):
        k = m.add_operand(T.INT32)
        m.set_operand_value(k, v)
        return k

    x = m.add_operand(T.TENSOR_QUANT8_ASYMM, dimensions=[1, size, size, 3], scale=quant_in[0],
                      zero_point=quant_in[1])
    first, current, q, hw = x, x, quant_in, size
    for layer in layers:
        if layer.kind == "fc":
            pooled = m.add_operand(T.TENSOR_QUANT8_ASYMM, dimensions=[1, 1, 1, layer.filt.shape[1]], scale=q[0],
                                   zero_point=q[1])
            m.add_operation(OP.AVERAGE_POOL_2D, [current] + [const_int(v) for v in (0, 0, 0, 0, 1, 1, hw, hw, 0)],
                            [pooled])
            current = pooled
        filt = m.add_operand(T.TENSOR_QUANT8_ASYMM, dimensions=list(layer.filt.shape), scale=layer.quant_w[0],
                             zero_point=layer.quant_w[1])
        m.set_operand_value(filt, layer.filt)
        bias = m.add_operand(T.TENSOR_INT32, dimensions=list(layer.bias.shape), scale=q[0] * layer.quant_w[0])
        m.set_operand_value(bias, layer.bias)
        if layer.kind == "fc":
            dims, op, ints = [1, layer.filt.shape[0]], OP.FULLY_CONNECTED, [0]
        else:
            k = layer.filt.shape[1]
            low, high = same_pads(hw, k, layer.stride)
            hw = -(-hw // layer.stride)
            depth = layer.filt.shape[3] if layer.kind == "depthwise" else layer.filt.shape[0]
            dims = [1, hw, hw, depth]
            ints = [low, high, low, high, layer.stride, layer.stride] + ([1] if layer.kind == "depthwise" else [])
            ints.append(RELU6)
            op = OP.DEPTHWISE_CONV_2D if layer.kind == "depthwise" else OP.CONV_2D
        out = m.add_operand(T.TENSOR_QUANT8_ASYMM, dimensions=dims, scale=layer.quant_out[0],
                            zero_point=layer.quant_out[1])
        m.add_operation(op, [current, filt, bias] + [const_int(v) for v in ints], [out])
        current, q = out, layer.quant_out
    m.identify_inputs_and_outputs([first], [current])
    m.finish()
    return m


def ort_model(size: int, quant_in, layers):
    """The same network as an ONNX model (NCHW): QLinearConv nodes, QLinearGlobalAveragePool."""
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    q = quant_in
    current, hw = "x", size
    for i, layer in enumerate(layers):
        s_in, z_in = const(f"s{i}", np.float32(q[0])), const(f"z{i}", np.uint8(q[1]))
        if layer.kind == "fc":
            nodes.append(helper.make_node("QLinearGlobalAveragePool", [current, s_in, z_in, s_in, z_in], ["pool"],
                                          domain="com.microsoft", channels_last=0))
            current, hw = "pool", 1
            w = layer.filt[:, :, None, None]
            attrs = {"kernel_shape": [1, 1]}
        elif layer.kind == "depthwise":
            w = layer.filt[0].transpose(2, 0, 1)[:, None]  # [C, 1, kh, kw]
            low, high = same_pads(hw, 3, layer.stride)
            attrs = {"kernel_shape": [3, 3], "pads": [low, low, high, high], "strides": [layer.stride] * 2,
                     "group": w.shape[0]}
        else:
            w = layer.filt.transpose(0, 3, 1, 2)  # [K, C, kh, kw]
            k = w.shape[2]
            low, high = same_pads(hw, k, layer.stride)
            attrs = {"kernel_shape": [k, k], "pads": [low, low, high, high], "strides": [layer.stride] * 2}
        if layer.kind != "fc":
            hw = -(-hw // layer.stride)
        names = [current, s_in, z_in, const(f"w{i}", np.ascontiguousarray(w)),
                 const(f"ws{i}", np.float32(layer.quant_w[0])), const(f"wz{i}", np.uint8(layer.quant_w[1])),
                 const(f"ys{i}", np.float32(layer.quant_out[0])), const(f"yz{i}", np.uint8(layer.quant_out[1])),
                 const(f"b{i}", layer.bias)]
        nodes.append(helper.make_node("QLinearConv", names, [f"y{i}"], **attrs))
        current, q = f"y{i}", layer.quant_out
    classes = layers[-1].filt.shape[0]
    graph = helper.make_graph(nodes, "mobilenet_v1_quant8",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, size, size])],
                              [helper.make_tensor_value_info(current, TensorProto.UINT8, [1, classes, 1, 1])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])


def ort_session(model, threads: int = 2):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def medians(functions, repeat: int, clock=time.perf_counter) -> list[float]:
    """Median time of each function, calls alternating so load on the machine slows all alike."""
    for function in functions:
        function()
    times: list[list[float]] = [[] for _ in functions]
    for i in range(repeat):
        for k in (range(len(functions)) if i % 2 == 0 else reversed(range(len(functions)))):
            start = clock()
            functions[k]()
            times[k].append(clock() - start)
    return [statistics.median(t) for t in times]


def nnapi_runner(model: nnapi.Model, x: np.ndarray, out: np.ndarray):
    compilation = nnapi.Compilation(model)
    compilation.finish()

    def run():
        e = nnapi.Execution(compilation)
        e.set_input(0, x)
        e.set_output(0, out)
        e.compute()
    return run, compilation


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="a 32x32 two-block network, a few calls")
    parser.add_argument("--cpu-time", action="store_true", help="ORT on one thread, calls timed in CPU time")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        print("bench_nnapi_quant8: onnxruntime and onnx are not installed (pip install -e '.[bench]'); skipped")
        return 0
    size, blocks, classes = (32, SMOKE_BLOCKS, 10) if args.smoke else (224, BLOCKS, 1001)
    repeat = 3 if args.smoke else args.repeat
    rng = np.random.default_rng(19)
    quant_in, layers = mobilenet(rng, size, blocks, classes)
    x = rng.integers(0, 256, (1, size, size, 3), dtype=np.uint8)
    ours_out = np.zeros((1, classes), np.uint8)
    run, compilation = nnapi_runner(nnapi_model(size, quant_in, layers), x, ours_out)
    threads = 1 if args.cpu_time else 2
    session = ort_session(ort_model(size, quant_in, layers), threads)
    x_nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    ort_out = []
    ort_call = lambda: ort_out.append(session.run(None, {"x": x_nchw})[0])
    ours, theirs = medians([run, ort_call], repeat, time.thread_time if args.cpu_time else time.perf_counter)
    diff = np.abs(ours_out.astype(np.int64).ravel() - ort_out[-1].astype(np.int64).ravel())
    clock = "CPU time of the calling thread" if args.cpu_time else "wall time"
    print(f"quant8 MobileNet v1 {size}x{size} ({len(layers)} weighted layers), median {clock} of {repeat} "
          f"interleaved calls")
    print(f"  openvx_nn.nnapi   {ours * 1e3:8.2f} ms   (engine threads: {isa.threads()})")
    print(f"  ORT QLinearConv   {theirs * 1e3:8.2f} ms   ({threads} intra-op thread{'s' if threads > 1 else ''})")
    print(f"  ORT time / our time: {theirs / ours:.2f}")
    print(f"  outputs: {np.mean(diff <= 1) * 100:.1f}% within 1 of ORT's (max difference {diff.max()})")
    compilation.release()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
