"""Float32 channels-last depthwise layers of MobileNet v1, MobileNet v2 and EfficientNet-B0 against ONNX Runtime.

Every distinct depthwise shape of the three networks at 224² (pads ``(k - 1) / 2``, as their PyTorch modules
have; stride 1 and 2) as ``float_depthwise``'s bound call alone (ReLU6 fused; ``--bias-last`` adds the
``bias_last`` order the OpenVX layers use), against ONNX Runtime's ``Conv`` with ``group = C`` and a Clip. ORT
lays the one-node model out in its blocked NCHWc form and adds a reorder on each side, which a whole network
pays once: its column is the Conv node alone, from ORT's own profile (``enable_profiling``) of the timed runs;
``ORT call`` is the whole ``run`` for reference. The sides take turns (``bench_ort.medians``: 5+ calls and 20+
ms a turn), medians of wall time; outputs are compared within 1e-4 of their magnitude.

    python benchmarks/bench_depthwise.py [--threads 1] [--repeat 9] [--only NAME] [--min-channels C] [--smoke]

Default one thread a side (``OPENVX_NN_THREADS=1``, one intra-op thread): the kernels alone, which a loaded
machine disturbs least; ``--threads 2`` checks the split between two threads.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

if __name__ == "__main__":  # ``--threads`` must reach OPENVX_NN_THREADS before the kernels load
    _early = argparse.ArgumentParser(add_help=False)
    _early.add_argument("--threads", type=int, default=1)
    os.environ["OPENVX_NN_THREADS"] = str(max(1, _early.parse_known_args()[0].threads))

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_ort import medians
from openvx_nn.kernels.frontend import float_depthwise as fdepthwise

RELU6 = 3
# (networks, input side, channels, kernel, stride): each distinct depthwise layer of the three at 224².
SHAPES = [
    ("v1 v2 B0", 112, 32, 3, 1), ("v1", 112, 64, 3, 2), ("v1", 56, 128, 3, 1), ("v1", 56, 128, 3, 2),
    ("v1", 28, 256, 3, 1), ("v1", 28, 256, 3, 2), ("v1", 14, 512, 3, 1), ("v1", 14, 512, 3, 2),
    ("v1", 7, 1024, 3, 1),
    ("v2 B0", 112, 96, 3, 2), ("v2 B0", 56, 144, 3, 1), ("v2", 56, 144, 3, 2), ("v2", 28, 192, 3, 1),
    ("v2", 28, 192, 3, 2), ("v2", 14, 384, 3, 1), ("v2", 14, 576, 3, 1), ("v2", 14, 576, 3, 2),
    ("v2", 7, 960, 3, 1),
    ("B0", 56, 144, 5, 2), ("B0", 28, 240, 5, 1), ("B0", 28, 240, 3, 2), ("B0", 14, 480, 3, 1),
    ("B0", 14, 480, 5, 1), ("B0", 14, 672, 5, 1), ("B0", 14, 672, 5, 2), ("B0", 7, 1152, 5, 1),
    ("B0", 7, 1152, 3, 1),
]
SMOKE = [("smoke", 9, 40, 3, 1), ("smoke", 9, 24, 5, 2)]


def name_of(nets: str, size: int, c: int, k: int, stride: int) -> str:
    return f"{nets}: {size}²×{c} k{k}/{stride}"


def aligned(a: np.ndarray) -> np.ndarray:
    """``a`` copied to memory starting on a cache line, as a graph's arena places its tensors (``core.memory``)."""
    raw = np.empty(a.nbytes + 64, np.uint8)
    skip = -raw.ctypes.data % 64
    out = raw[skip:skip + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class Layer:
    """One shape: its data, our bound calls and the ONNX model."""

    def __init__(self, rng, size: int, c: int, k: int, stride: int):
        self.size, self.c, self.k, self.stride, self.pad = size, c, k, stride, (k - 1) // 2
        self.x = aligned(rng.standard_normal((1, size, size, c)).astype(np.float32))
        self.w = (rng.standard_normal((1, k, k, c)) * 0.3).astype(np.float32)
        self.b = rng.standard_normal(c).astype(np.float32)
        side = (size + 2 * self.pad - k) // stride + 1
        self.out_shape = (1, side, side, c)
        self.macs = side * side * c * k * k

    def ours(self, bias_last: bool):
        out = aligned(np.zeros(self.out_shape, np.float32))
        p = self.pad
        call = fdepthwise.bind_depthwise_conv2d(self.x, fdepthwise.pack_depthwise(self.w), self.b, out, (p, p, p, p),
                                                (self.stride, self.stride), 1, RELU6, bias_last=bias_last)

        def run():
            call()
            return out
        return run

    def ort(self, threads: int, profile_dir: str):
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
        c, p = self.c, self.pad
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[self.k] * 2, strides=[self.stride] * 2,
                                  pads=[p] * 4, group=c),
                 helper.make_node("Clip", ["y", "lo", "hi"], ["z"])]
        inits = [numpy_helper.from_array(np.ascontiguousarray(self.w[0].transpose(2, 0, 1)[:, None]), "w"),
                 numpy_helper.from_array(self.b, "b"), numpy_helper.from_array(np.array(0, np.float32), "lo"),
                 numpy_helper.from_array(np.array(6, np.float32), "hi")]
        side = self.out_shape[1]
        graph = helper.make_graph(nodes, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                              [1, c, self.size, self.size])],
                                  [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, c, side, side])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(profile_dir, "ort")
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        feeds = {"x": np.ascontiguousarray(self.x.transpose(0, 3, 1, 2))}
        return session, lambda: session.run(None, feeds)[0].transpose(0, 2, 3, 1)


def conv_node_times(session) -> list[float]:
    """Seconds of each run of the session's convolution node (not its reorders), from ORT's profile."""
    times = []
    for event in json.loads(Path(session.end_profiling()).read_text()):
        args = event.get("args", {})
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time") and \
                "Conv" in args.get("op_name", ""):
            times.append(event["dur"] * 1e-6)
    return times


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=9, help="turns per contender")
    parser.add_argument("--only", default="", help="rows whose name contains this")
    parser.add_argument("--min-channels", type=int, default=0)
    parser.add_argument("--bias-last", action="store_true", help="also time the bias_last order")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, a few calls (CI)")
    args = parser.parse_args(argv)
    import onnxruntime
    print(f"onnxruntime {onnxruntime.__version__}; {args.threads} thread(s) a side; lanes "
          f"{fdepthwise._lanes(None)}; load {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(7)
    repeat = 2 if args.smoke else args.repeat
    last = " | ours bias_last ms | ORT ÷ bias_last" if args.bias_last else ""
    print(f"| layer | MMAC | ours ms | ORT Conv ms | ORT ÷ ours{last} | ORT call ms |")
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if args.bias_last else "") + "---:|")
    ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-depthwise-") as directory:
        for nets, size, c, k, stride in SMOKE if args.smoke else SHAPES:
            name = name_of(nets, size, c, k, stride)
            if args.only not in name or c < args.min_channels:
                continue
            layer = Layer(rng, size, c, k, stride)
            contenders = [layer.ours(False)] + ([layer.ours(True)] if args.bias_last else [])
            session, ort_run = layer.ort(args.threads, directory)
            want = ort_run()
            for run in contenders:
                err = float(np.abs(run() - want).max())
                if err > 1e-4 * max(1.0, float(np.abs(want).max())):
                    print(f"{name}: ours and ORT differ by {err}")
                    return 1
            times = medians(contenders + [ort_run], repeat)
            node = statistics.median(conv_node_times(session))
            ratios.append(node / times[0])
            cells = f" | {times[1] * 1e3:.4f} | {node / times[1]:.2f}" if args.bias_last else ""
            print(f"| {name} | {layer.macs / 1e6:.2f} | {times[0] * 1e3:.4f} | {node * 1e3:.4f} | "
                  f"{node / times[0]:.2f}{cells} | {times[-1] * 1e3:.4f} |", flush=True)
    if ratios:
        print(f"geometric mean ORT Conv ÷ ours: {float(np.exp(np.mean(np.log(ratios)))):.2f}; "
              f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
