"""The standard OpenVX NN layers in float32 and float16 against ONNX Runtime's closest operator, one layer a row.

Each row is one verified graph of one node built through the Pythonic API (``openvx_nn.api``: the same C entry
points a C program calls), its ``process()`` timed, against the same layer as a one-node ONNX model in ONNX
Runtime (float32, NCHW -- the same bytes as OpenVX's [W, H, C, N] -- 2 intra-op threads). Calls alternate in
one process, in turns of back-to-back calls begun once the process is idle again (``bench_ort.medians``: no side
runs beside the other's spinning threads); medians are reported. The outputs are compared before timing: the
largest difference, relative to the output's largest magnitude, must stay below 1e-5.

The float16 table times each layer on ``VX_TYPE_FLOAT16`` tensors against our own float32 graph of the same
layer on the same values widened (the float16 target is a fraction of our float32 speed), and against ONNX
Runtime's float16 operator where its CPU provider has one ("-" where it has none). Our float16 output must be
our float32 output rounded once to binary16, bit for bit (the documented float16 semantics); ORT's float16
output is shown as its largest difference from ours in binary16 units in the last place.

Usage: python benchmarks/bench_standard_layers.py [--repeat N] [--smoke] [--tables float32,float16]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
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
        ("global avg pool 7x7 512ch", "global", 7, 512, 512, 7, 1, 0),
        ("relu 64ch 112x112", "relu", 112, 64, 64, 1, 1, 0),
        ("deconv 2x2/2 64->32 56x56", "deconv", 56, 64, 32, 2, 2, 0),
        ("deconv 4x4/2 pad 1 64->32 56x56", "deconv", 56, 64, 32, 4, 2, 1)]
SMOKE = [("smoke conv 3x3 8->16 9x9", "conv", 9, 8, 16, 3, 1, 1), ("smoke FC 64->32", "fc", 1, 64, 32, 1, 1, 0),
         ("smoke max pool 3x3/2 8ch 9x9", "max", 9, 8, 8, 3, 2, 0),
         ("smoke avg pool 3x3/2 8ch 9x9", "avg", 9, 8, 8, 3, 2, 0),
         ("smoke global avg pool 3x3 8ch", "global", 3, 8, 8, 3, 1, 0),
         ("smoke relu 8ch 9x9", "relu", 9, 8, 8, 1, 1, 0),
         ("smoke deconv 2x2/2 8->6 9x9", "deconv", 9, 8, 6, 2, 2, 0),
         ("smoke deconv 3x3/2 pad 1 8->6 9x9", "deconv", 9, 8, 6, 3, 2, 1)]


def _out_side(size: int, k: int, stride: int, pad: int, transposed: bool = False) -> int:
    if transposed:
        return (size - 1) * stride - 2 * pad + k
    return (size + 2 * pad - k) // stride + 1


class Row:
    """One layer: its data, our one-node graph (verified) and the one-node ONNX session (None: ORT has no such
    operator for ``dtype`` on its CPU provider). ``data``: the values of another row to reuse (in ``dtype``)."""

    def __init__(self, ctx: Context, rng, name, kind, size, c_in, c_out, k, stride, pad, dtype=np.float32,
                 data: dict | None = None):
        from onnx import TensorProto, helper, numpy_helper
        self.name = name
        elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
        value = helper.make_tensor_value_info

        def session(nodes, inputs, outputs, initializers):
            try:
                return ort_session(nodes, inputs, outputs, initializers)
            except Exception:  # noqa: BLE001 -- ORT refuses a type it has no CPU kernel for (NOT_IMPLEMENTED)
                return None

        def made(key, shape, scale=1.0):
            if data is None:
                return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype)
            return data[key].astype(dtype)
        if kind == "fc":
            x = made("x", (1, c_in))
            w = made("w", (c_out, c_in), 1 / np.sqrt(c_in))
            b = made("b", (c_out,))
            self.data = {"x": x, "w": w, "b": b}
            self.feed = {"x": x}
            self.session = session([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
                                   [value("x", elem, [1, c_in])], [value("y", elem, [1, c_out])],
                                   [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
            self.x = ctx.tensor(np.asfortranarray(x.T))                   # [IFM, 1]
            self.y = ctx.tensor(shape=(c_out, 1), dtype=dtype)
            self.graph = ctx.graph()
            self.graph.fully_connected(self.x, np.asfortranarray(w.T), b, out=self.y)
        else:
            out = _out_side(size, k, stride, pad, kind == "deconv")
            x = made("x", (1, c_in, size, size))
            self.data = {"x": x}
            self.feed = {"x": x}
            attrs = {"kernel_shape": [k, k], "pads": [pad] * 4, "strides": [stride, stride]}
            inputs = [value("x", elem, [1, c_in, size, size])]
            outputs = [value("y", elem, [1, c_out, out, out])]
            self.x = ctx.tensor(np.asfortranarray(x.T))                   # [W, H, C, N]
            self.y = ctx.tensor(shape=(out, out, c_out, 1), dtype=dtype)
            self.graph = ctx.graph()
            if kind == "conv":
                w = made("w", (c_out, c_in, k, k), 1 / np.sqrt(c_in * k * k))
                b = made("b", (c_out,))
                self.data.update(w=w, b=b)
                self.session = session([helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)], inputs,
                                       outputs, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
                self.graph.convolution(self.x, np.asfortranarray(w.T), b, out=self.y, padding=(pad, pad))
            elif kind == "deconv":  # ONNX's [C_in, C_out, kh, kw] scatters; OpenVX's [kx, ky, C_in, C_out] correlates
                w = made("w", (c_in, c_out, k, k), 1 / np.sqrt(c_in * k * k / (stride * stride)))
                b = made("b", (c_out,))
                self.data.update(w=w, b=b)
                self.session = session([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)], inputs,
                                       outputs, [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
                self.graph.deconvolution(self.x, np.asfortranarray(w[:, :, ::-1, ::-1].transpose(3, 2, 0, 1)), b,
                                         out=self.y, padding=(pad, pad), upscale=(stride, stride))
            elif kind == "relu":
                self.session = session([helper.make_node("Relu", ["x"], ["y"])], inputs, outputs, [])
                self.graph.activation(self.x, "relu", out=self.y)
            else:
                if kind == "global":  # ORT's own operator for a window of the whole plane
                    node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
                else:
                    op = "MaxPool" if kind == "max" else "AveragePool"
                    extra = {} if kind == "max" else {"count_include_pad": 1}
                    node = helper.make_node(op, ["x"], ["y"], **attrs, **extra)
                self.session = session([node], inputs, outputs, [])
                self.graph.pooling(self.x, self.y, kind="max" if kind == "max" else "avg", size=(k, k),
                                   padding=(pad, pad))
        self.graph.verify()

    def ours(self) -> None:
        self.graph.process()

    def theirs(self):
        return self.session.run(None, self.feed)[0]

    def output(self) -> np.ndarray:
        """Our output in ONNX's NCHW (or [batch, features]) order, after one run."""
        self.ours()
        return self.y.numpy().T

    def check(self) -> float:
        ref = self.theirs()
        got = self.output().reshape(ref.shape)
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(got.astype(np.float64) - ref).max()) / scale
        if not err <= 1e-5:
            raise AssertionError(f"{self.name}: outputs differ by {err:.2e} of the largest magnitude")
        return err


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance between two float16 arrays in units in the last place (ordered bit patterns)."""
    def ordered(v):
        bits = v.astype(np.float16).view(np.uint16).astype(np.int64)
        return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)
    return int(np.abs(ordered(a) - ordered(b)).max())


def float16_row(ctx: Context, rng, spec, repeat: int) -> str:
    """One float16 table row: ours F16 against ours F32 on the same values, and ORT's float16 operator."""
    half = Row(ctx, rng, *spec, dtype=np.float16)
    single = Row(ctx, rng, *spec, dtype=np.float32, data=half.data)
    single.session = None  # the float32 table times ORT float32
    want = single.output().astype(np.float16)
    got = half.output()
    if got.view(np.uint16).tobytes() != want.view(np.uint16).tobytes():
        raise AssertionError(f"{half.name}: the float16 output is not the float32 one rounded once")
    contenders = [half.ours, single.ours] + ([half.theirs] if half.session is not None else [])
    times = medians(contenders, repeat, block=5)
    ort = "- | - | -"
    if half.session is not None:
        ort = f"{times[2] * 1e3:.3f} | {times[2] / times[0]:.3f} | {_ulps(half.theirs().ravel(), got.ravel())}"
    half.graph.close()
    single.graph.close()
    return f"| {half.name} | {times[0] * 1e3:.3f} | {times[1] * 1e3:.3f} | {times[1] / times[0]:.3f} | {ort} |"


WARM_UP = 3.0
"""Seconds both sides run the first row untimed before any table: a process's first second or two ran both sides
slower on the 2-core VM (the first row's 3x3 64->64 layer 2.6 ms ours and 2.1 ORT's for its first turns, 0.7-0.9
and 1.1-1.2 afterwards in the same process), which the turns' median did not shed."""


def warm_up(ctx: Context, spec: tuple, seconds: float = WARM_UP) -> None:
    """Both sides of the row ``spec`` back to back for ``seconds`` (its own values: the tables' stay as they were)."""
    row = Row(ctx, np.random.default_rng(1), *spec)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        row.ours()
        row.theirs()
    row.graph.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="turns per contender (default 15)")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, two turns: does it run")
    parser.add_argument("--tables", default="float32,float16", help="which tables (default both)")
    args = parser.parse_args(argv)
    tables = set(args.tables.split(","))
    if not tables <= {"float32", "float16"}:
        parser.error(f"--tables takes float32 and float16, got {args.tables}")
    rows, repeat = (SMOKE, 2) if args.smoke else (ROWS, args.repeat)
    rng = np.random.default_rng(0)
    with open("/proc/cpuinfo") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?")
    print(f"# {cpu}, {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f} at start; "
          f"OPENVX_NN_NATIVE={os.environ.get('OPENVX_NN_NATIVE', '(default)')}")
    with Context() as ctx:
        if not args.smoke:
            warm_up(ctx, rows[0])
        if "float32" in tables:
            print("| float32 layer | ours ms | ORT ms | ORT ÷ ours | max rel. diff |\n|---|---:|---:|---:|---:|")
            for spec in rows:
                row = Row(ctx, rng, *spec)
                err = row.check()
                ours, theirs = medians([row.ours, row.theirs], repeat, block=5)
                print(f"| {row.name} | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {theirs / ours:.3f} | {err:.1e} |",
                      flush=True)
                row.graph.close()
            print(f"# load {os.getloadavg()[0]:.2f}")
        if "float16" in tables:
            print("| float16 layer | ours F16 ms | ours F32 ms | F32 ÷ F16 | ORT F16 ms | ORT F16 ÷ ours F16 "
                  "| ORT diff (ulp) |\n|---|---:|---:|---:|---:|---:|---:|")
            for spec in rows:
                print(float16_row(ctx, rng, spec, repeat), flush=True)
    print(f"# load {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
