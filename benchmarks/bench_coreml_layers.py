"""The CoreML front end's convolution kernel against ONNX Runtime's float Conv, layer by layer:
one process, calls interleaved, medians.

Rows: MobileNet v2's layer shapes at 224² (the first 3x3/2 convolution, depthwise 3x3 at stride 1
and 2 with ``nGroups = channels``, 1x1 expansion and projection, the 1x1 to 1,280), a grouped 3x3
(4 groups) and a depthwise layer with a channel multiplier of 2. Ours: the kernel's runner as the
graph binds it (``grouped_convolution.prepare``: weights packed once, the folded ReLU6 clip of the
converted model); ORT: ``Conv`` with the ``group`` attribute followed by ``Clip(0, 6)``, 2 intra-op
threads, spinning off. Per row: GMAC/s of each, ORT time / ours (above 1: ours faster) and the
largest difference of the outputs (float32 sums in both; checked against 1e-3 relative).

Other processes on the machine slow both alike because the calls alternate; rerun when it is quiet.

Usage: python benchmarks/bench_coreml_layers.py [--repeat N] [--smoke]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx); without them it times ours only.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: ``benchmarks`` importable
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_ort import medians, ort_session
from openvx_nn.kernels.frontend.grouped_convolution import Geometry, prepare

# (name, size, channels in, channels out, kernel, stride, groups)
LAYERS = [("conv 3x3/2 3→32", 224, 3, 32, 3, 2, 1), ("depthwise 3x3 32@112²", 112, 32, 32, 3, 1, 32),
          ("1x1 16→96 @112²", 112, 16, 96, 1, 1, 1), ("depthwise 3x3/2 96@112²", 112, 96, 96, 3, 2, 96),
          ("depthwise 3x3 144@56²", 56, 144, 144, 3, 1, 144), ("1x1 144→24 @56²", 56, 144, 24, 1, 1, 1),
          ("depthwise 3x3 576@14²", 14, 576, 576, 3, 1, 576), ("1x1 96→576 @14²", 14, 96, 576, 1, 1, 1),
          ("depthwise 3x3 960@7²", 7, 960, 960, 3, 1, 960), ("1x1 320→1280 @7²", 7, 320, 1280, 1, 1, 1),
          ("grouped 3x3 64→64, 4 groups @28²", 28, 64, 64, 3, 1, 4),
          ("depthwise x2 3x3 32→64 @56²", 56, 32, 64, 3, 1, 32)]
SMOKE = [("smoke depthwise 3x3/2 8@9²", 9, 8, 8, 3, 2, 8), ("smoke grouped 3x3 8→12, 2 groups @7²", 7, 8, 12, 3, 1, 2)]


def ort_conv(c_in, c_out, k, stride, groups, size, w, b):
    from onnx import TensorProto, helper, numpy_helper
    pad = (k - 1) // 2
    out = (size + 2 * pad - k) // stride + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], pads=[pad] * 4,
                              strides=[stride, stride], group=groups),
             helper.make_node("Clip", ["c", "lo", "hi"], ["y"])]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"), numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    return ort_session(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, size, size])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, out, out])], inits)


def row(name, size, c_in, c_out, k, stride, groups, repeat, rng) -> str:
    pad = (k - 1) // 2
    out_size = (size + 2 * pad - k) // stride + 1
    x = rng.standard_normal((1, c_in, size, size)).astype(np.float32)
    w = (rng.standard_normal((c_out, c_in // groups, k, k)) / np.sqrt(k * k * c_in / groups)).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    out = np.zeros((out_size, out_size, c_out, 1), np.float32, order="F")  # OpenVX order, as a tensor holds it
    ours = prepare(x.T, w.T, b, out, Geometry(groups, (stride, stride), (1, 1), (pad, pad)), (0.0, 6.0))
    functions = [ours]
    try:
        session = ort_conv(c_in, c_out, k, stride, groups, size, w, b)
    except ImportError:
        session = None
    if session is not None:
        functions.append(lambda: session.run(None, {"x": x}))
    times = medians(functions, repeat)
    macs = c_out * out_size * out_size * k * k * c_in // groups
    line = f"{name:36s} ours {macs / times[0] / 1e9:6.2f} GMAC/s"
    if session is None:
        return line + "  (onnxruntime not installed)"
    theirs = session.run(None, {"x": x})[0][0]
    ours()
    mine = out.T[0]
    worst = float(np.max(np.abs(mine - theirs)))
    scale = float(np.max(np.abs(theirs))) or 1.0
    assert worst <= 1e-3 * scale, f"{name}: outputs differ by {worst} (largest output {scale})"
    return (line + f"  ORT {macs / times[1] / 1e9:6.2f} GMAC/s  ORT/ours {times[1] / times[0]:5.2f}"
            f"  max diff {worst:.1e}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--smoke", action="store_true", help="two tiny layers, a few calls (CI)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    layers, repeat = (SMOKE, 3) if args.smoke else (LAYERS, args.repeat)
    print(f"CoreML convolution kernel vs ORT Conv (+Clip), float32, medians of {repeat} interleaved calls")
    for layer in layers:
        print(row(*layer, repeat, rng), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
