"""NNAPI float32 layers of MobileNet v1 0.25's shapes against ONNX Runtime's single operators.

Each row is one layer as a one-operation NNAPI model run the way an application runs it
(``Execution``: set input, set output, compute; the node's kernel bound once at compilation), the
same layer's kernel called alone (no graph: what the node costs beyond the arithmetic shows as the
difference), and the same layer as a one-node ONNX model in ONNX Runtime float (NCHW, its native
layout; ORT defaults, 2 intra-op threads). Calls alternate in one process and medians are reported,
so other load slows every contender alike; rerun when the machine is quiet. Outputs are compared
(the largest difference must stay within 1e-4 of ORT's, relative to the output's magnitude).
The whole-model comparison is ``bench_models.py``.

Usage: python benchmarks/bench_nnapi_layers.py [--repeat N] [--smoke]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx); without them it times ours only.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
try:
    import openvx_nn  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # ``benchmarks`` importable; an installed openvx_nn still wins

from benchmarks.bench_ort import medians
from openvx_nn import nnapi
from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.frontend import float_depthwise as fdepthwise
from openvx_nn.kernels.frontend import float_elementwise as felementwise
from openvx_nn.kernels.frontend import float_pooling as fpooling

F32T, I32 = nnapi.OperandType.TENSOR_FLOAT32, nnapi.OperandType.INT32
RELU6 = 3
# (kind, input side, channels in, channels out, kernel, stride): MobileNet v1 0.25 at 224².
ROWS = [("conv", 224, 3, 8, 3, 2), ("pointwise", 112, 8, 16, 1, 1), ("pointwise", 56, 32, 32, 1, 1),
        ("pointwise", 28, 64, 64, 1, 1), ("pointwise", 14, 128, 128, 1, 1), ("pointwise", 7, 256, 256, 1, 1),
        ("depthwise", 112, 8, 8, 3, 1), ("depthwise", 112, 16, 16, 3, 2), ("depthwise", 56, 32, 32, 3, 1),
        ("depthwise", 14, 128, 128, 3, 1), ("average pool", 7, 256, 256, 7, 1), ("add", 56, 32, 32, 1, 1)]
SMOKE = [("conv", 9, 3, 8, 3, 2), ("pointwise", 6, 8, 16, 1, 1), ("depthwise", 6, 8, 8, 3, 1),
         ("average pool", 4, 8, 8, 4, 1), ("add", 4, 8, 8, 1, 1)]


def same_pads(size: int, k: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


class Layer:
    """One row: its data, the NNAPI one-operation model, our kernel alone, and the ONNX model."""

    def __init__(self, rng, kind: str, size: int, c_in: int, c_out: int, k: int, stride: int):
        self.kind, self.size, self.k, self.stride = kind, size, k, stride
        self.x = rng.standard_normal((1, size, size, c_in)).astype(np.float32)
        self.other = rng.standard_normal((1, size, size, c_in)).astype(np.float32)
        depthwise = kind == "depthwise"
        self.w = (rng.standard_normal((1, k, k, c_out)) if depthwise else
                  rng.standard_normal((c_out, k, k, c_in)) / np.sqrt(k * k * c_in)).astype(np.float32)
        self.b = rng.standard_normal(c_out).astype(np.float32)
        out = 1 if kind == "average pool" else -(-size // stride)
        self.out_shape = (1, out, out, c_out)
        self.pads = same_pads(size, k, stride) if kind != "average pool" else (0, 0)
        per_output = 1 if kind == "add" else k * k * (1 if depthwise or kind == "average pool" else c_in)
        self.macs = int(np.prod(self.out_shape)) * per_output  # additions, for the pool and ADD

    def nnapi_model(self) -> nnapi.Model:
        m = nnapi.Model()

        def operand(kind, dims=(), value=None):
            index = m.add_operand(kind, dimensions=list(dims))
            if value is not None:
                m.set_operand_value(index, value)
            return index

        def ints(*values):
            return [operand(I32, value=np.int32(v)) for v in values]
        x, out = operand(F32T, self.x.shape), operand(F32T, self.out_shape)
        inputs = [x]
        T = nnapi.OperationType
        if self.kind == "add":
            y = operand(F32T, self.x.shape)
            inputs.append(y)
            m.add_operation(T.ADD, [x, y] + ints(RELU6), [out])
        elif self.kind == "average pool":
            m.add_operation(T.AVERAGE_POOL_2D, [x] + ints(nnapi.PaddingScheme.VALID, 1, 1, self.k, self.k, 0), [out])
        else:
            w, b = operand(F32T, self.w.shape, self.w), operand(F32T, self.b.shape, self.b)
            multiplier = [1] if self.kind == "depthwise" else []
            op = T.DEPTHWISE_CONV_2D if self.kind == "depthwise" else T.CONV_2D
            m.add_operation(op, [x, w, b] + ints(nnapi.PaddingScheme.SAME, self.stride, self.stride, *multiplier,
                                                 RELU6), [out])
        m.identify_inputs_and_outputs(inputs, [out])
        m.finish()
        return m

    def ours(self):
        compilation = nnapi.Compilation(self.nnapi_model())
        compilation.finish()
        result = np.empty(self.out_shape, np.float32)
        feeds = [self.x, self.other] if self.kind == "add" else [self.x]

        def run():
            execution = nnapi.Execution(compilation)
            for k, value in enumerate(feeds):
                execution.set_input(k, value)
            execution.set_output(0, result)
            execution.compute()
            return result
        return run, compilation

    def kernel(self):
        result = np.empty(self.out_shape, np.float32)
        top, bottom = self.pads
        pads, strides = (top, bottom, top, bottom), (self.stride, self.stride)
        if self.kind == "add":
            return lambda: felementwise.binary(felementwise.ADD, self.x, self.other, result, RELU6)
        if self.kind == "average pool":
            return lambda: fpooling.pool2d(self.x, result, fpooling.AVERAGE, (0, 0, 0, 0), (1, 1), (self.k, self.k),
                                           0)
        if self.kind == "depthwise":
            packed = fdepthwise.pack_depthwise(self.w)
            return lambda: fdepthwise.depthwise_conv2d(self.x, packed, self.b, result, pads, strides, 1, RELU6)
        packed = fconv.pack_conv(self.w)
        return lambda: fconv.conv2d(self.x, packed, self.b, result, pads, strides, RELU6)

    def ort(self):
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
        nchw = [1, self.x.shape[3], self.size, self.size]
        out_nchw = [1, self.out_shape[3], self.out_shape[1], self.out_shape[2]]
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, nchw)]
        inits = []
        if self.kind == "add":
            inputs.append(helper.make_tensor_value_info("y", TensorProto.FLOAT, nchw))
            nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Clip", ["s", "lo", "hi"], ["z"])]
            inits = [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                     numpy_helper.from_array(np.array(6, np.float32), "hi")]
        elif self.kind == "average pool":
            nodes = [helper.make_node("GlobalAveragePool", ["x"], ["z"])]
        else:
            depthwise = self.kind == "depthwise"
            w = self.w[0].transpose(2, 0, 1)[:, None] if depthwise else self.w.transpose(0, 3, 1, 2)
            top, bottom = self.pads
            nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[self.k] * 2,
                                      strides=[self.stride] * 2, pads=[top, top, bottom, bottom],
                                      group=self.x.shape[3] if depthwise else 1),
                     helper.make_node("Clip", ["c", "lo", "hi"], ["z"])]
            inits = [numpy_helper.from_array(np.ascontiguousarray(w), "w"), numpy_helper.from_array(self.b, "b"),
                     numpy_helper.from_array(np.array(0, np.float32), "lo"),
                     numpy_helper.from_array(np.array(6, np.float32), "hi")]
        model = helper.make_model(helper.make_graph(nodes, "layer", inputs, [helper.make_tensor_value_info(
            "z", TensorProto.FLOAT, out_nchw)], inits), opset_imports=[helper.make_opsetid("", 13)])
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        feeds = {"x": np.ascontiguousarray(self.x.transpose(0, 3, 1, 2))}
        if self.kind == "add":
            feeds["y"] = np.ascontiguousarray(self.other.transpose(0, 3, 1, 2))
        return lambda: session.run(None, feeds)[0].transpose(0, 2, 3, 1)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, a few calls (CI)")
    args = parser.parse_args(argv)
    try:
        import onnx  # noqa: F401
        import onnxruntime
        have_ort = True
        print(f"onnxruntime {onnxruntime.__version__}, defaults, 2 intra-op threads")
    except ImportError:
        have_ort = False
        print("onnxruntime and onnx are not installed (pip install -e '.[bench]'): ours only")
    rng = np.random.default_rng(19)
    repeat = 3 if args.smoke else args.repeat
    print("| layer | MMAC | ours (NNAPI) ms | kernel alone ms | ORT ms | ORT / ours | max difference |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for kind, size, c_in, c_out, k, stride in SMOKE if args.smoke else ROWS:
        layer = Layer(rng, kind, size, c_in, c_out, k, stride)
        ours, compilation = layer.ours()
        contenders = [ours, layer.kernel()] + ([layer.ort()] if have_ort else [])
        times = medians(contenders, repeat)
        difference = "—"
        if have_ort:
            got, want = ours().copy(), contenders[2]()
            err = float(np.abs(got - want).max())
            if err > 1e-4 * max(1.0, float(np.abs(want).max())):
                print(f"{kind} {size}²: ours and ORT differ by {err}")
                return 1
            difference = f"{err:.1e}"
        ort_cells = f"{times[2] * 1e3:.3f} | {times[2] / times[0]:.2f}" if have_ort else "— | —"
        name = f"{kind} {size}²×{c_in}→{c_out}" + (f" k{k}/{stride}" if kind not in ("add", "pointwise") else "")
        print(f"| {name} | {layer.macs / 1e6:.2f} | {times[0] * 1e3:.3f} | {times[1] * 1e3:.3f} | {ort_cells} | "
              f"{difference} |", flush=True)
        compilation.release()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
