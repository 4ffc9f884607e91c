"""The standard OpenVX NN layers in float32 against ONNX Runtime's closest operator, one layer a row.

Each row is one verified graph of one node built through the Pythonic API (``openvx_nn.api``: the same C entry
points a C program calls), its ``process()`` timed, against the same layer as a one-node ONNX model in ONNX
Runtime (float32, NCHW -- the same bytes as OpenVX's [W, H, C, N] -- 2 intra-op threads). Calls alternate in
one process, in turns of back-to-back calls begun once the process is idle again (``bench_ort.medians``: no side
runs beside the other's spinning threads); medians are reported. The outputs are compared before timing: the
largest difference, relative to the output's largest magnitude, must stay below 1e-5.

Usage: python benchmarks/bench_standard_layers.py [--repeat N] [--smoke]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
try:
    import openvx_nn  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from benchmarks.bench_ort import medians, ort_session
from openvx_nn.api import Context

# (name, kind, input side, channels in, channels out, kernel, stride, pad)
ROWS = [("conv 3x3 64->64 56x56", "conv", 56, 64, 64, 3, 1, 1),
        ("conv 3x3 256->256 14x14", "conv", 14, 256, 256, 3, 1, 1),
        ("conv 1x1 96->24 56x56", "conv", 56, 96, 24, 1, 1, 0),
        ("conv 11x11/4 3->96 227x227", "conv", 227, 3, 96, 11, 4, 0),
        ("FC 1280->1000", "fc", 1, 1280, 1000, 1, 1, 0),
        ("max pool 3x3/2 64ch 112x112", "max", 112, 64, 64, 3, 2, 0),
        ("avg pool 3x3/2 64ch 112x112", "avg", 112, 64, 64, 3, 2, 0),
        ("max pool 2x2/2 64ch 112x112", "max", 112, 64, 64, 2, 2, 0),
        ("avg pool 3x3/1 pad 1 256ch 35x35", "avg", 35, 256, 256, 3, 1, 1),
        ("global avg pool 7x7 512ch", "global", 7, 512, 512, 7, 1, 0)]
SMOKE = [("smoke conv 3x3 8->16 9x9", "conv", 9, 8, 16, 3, 1, 1), ("smoke FC 64->32", "fc", 1, 64, 32, 1, 1, 0),
         ("smoke max pool 3x3/2 8ch 9x9", "max", 9, 8, 8, 3, 2, 0),
         ("smoke avg pool 3x3/2 8ch 9x9", "avg", 9, 8, 8, 3, 2, 0),
         ("smoke global avg pool 3x3 8ch", "global", 3, 8, 8, 3, 1, 0)]


def _out_side(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


class Row:
    """One layer: its data, our one-node graph (verified) and the one-node ONNX session."""

    def __init__(self, ctx: Context, rng, name, kind, size, c_in, c_out, k, stride, pad):
        from onnx import TensorProto, helper, numpy_helper
        self.name = name
        value = helper.make_tensor_value_info
        if kind == "fc":
            x = rng.standard_normal((1, c_in)).astype(np.float32)
            w = (rng.standard_normal((c_out, c_in)) / np.sqrt(c_in)).astype(np.float32)
            b = rng.standard_normal(c_out).astype(np.float32)
            self.feed = {"x": x}
            self.session = ort_session([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
                                       [value("x", TensorProto.FLOAT, [1, c_in])],
                                       [value("y", TensorProto.FLOAT, [1, c_out])],
                                       [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
            self.x = ctx.tensor(np.asfortranarray(x.T))                   # [IFM, 1]
            self.y = ctx.tensor(shape=(c_out, 1), dtype=np.float32)
            self.graph = ctx.graph()
            self.graph.fully_connected(self.x, np.asfortranarray(w.T), b, out=self.y)
        else:
            out = _out_side(size, k, stride, pad)
            x = rng.standard_normal((1, c_in, size, size)).astype(np.float32)
            self.feed = {"x": x}
            attrs = {"kernel_shape": [k, k], "pads": [pad] * 4, "strides": [stride, stride]}
            inputs = [value("x", TensorProto.FLOAT, [1, c_in, size, size])]
            outputs = [value("y", TensorProto.FLOAT, [1, c_out, out, out])]
            self.x = ctx.tensor(np.asfortranarray(x.T))                   # [W, H, C, N]
            self.y = ctx.tensor(shape=(out, out, c_out, 1), dtype=np.float32)
            self.graph = ctx.graph()
            if kind == "conv":
                w = (rng.standard_normal((c_out, c_in, k, k)) / np.sqrt(c_in * k * k)).astype(np.float32)
                b = rng.standard_normal(c_out).astype(np.float32)
                self.session = ort_session([helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)], inputs,
                                           outputs, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
                self.graph.convolution(self.x, np.asfortranarray(w.T), b, out=self.y, padding=(pad, pad))
            else:
                if kind == "global":  # ORT's own operator for a window of the whole plane
                    node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
                else:
                    op = "MaxPool" if kind == "max" else "AveragePool"
                    extra = {} if kind == "max" else {"count_include_pad": 1}
                    node = helper.make_node(op, ["x"], ["y"], **attrs, **extra)
                self.session = ort_session([node], inputs, outputs, [])
                self.graph.pooling(self.x, self.y, kind="max" if kind == "max" else "avg", size=(k, k),
                                   padding=(pad, pad))
        self.graph.verify()

    def ours(self) -> None:
        self.graph.process()

    def theirs(self):
        return self.session.run(None, self.feed)[0]

    def check(self) -> float:
        self.ours()
        ref = self.theirs()
        got = self.y.numpy().T.reshape(ref.shape)
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(got.astype(np.float64) - ref).max()) / scale
        if not err <= 1e-5:
            raise AssertionError(f"{self.name}: outputs differ by {err:.2e} of the largest magnitude")
        return err


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="turns per contender (default 15)")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, two turns: does it run")
    args = parser.parse_args(argv)
    rows, repeat = (SMOKE, 2) if args.smoke else (ROWS, args.repeat)
    rng = np.random.default_rng(0)
    with open("/proc/cpuinfo") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?")
    print(f"# {cpu}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f} at start; "
          f"OPENVX_NN_NATIVE={os.environ.get('OPENVX_NN_NATIVE', '(default)')}")
    print("| float32 layer | ours ms | ORT ms | ORT ÷ ours | max rel. diff |\n|---|---:|---:|---:|---:|")
    with Context() as ctx:
        for spec in rows:
            row = Row(ctx, rng, *spec)
            err = row.check()
            ours, theirs = medians([row.ours, row.theirs], repeat, block=5)
            print(f"| {row.name} | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {theirs / ours:.3f} | {err:.1e} |",
                  flush=True)
            row.graph.close()
    print(f"# load {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
