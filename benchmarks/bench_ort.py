"""Our integer engine against ONNX Runtime's int8 operators, timed in one process, interleaved, medians.

Rows: AlexNet conv1-conv3, a ResNet 56x56x64->64 3x3 layer, and fully connected 9216->4096 at
batch 1 and 32. Contenders per row:

- ours U8: the layer as a one-node OpenVX graph (``vxConvolutionLayer`` or ``vxFullyConnectedLayer``, built
  and verified once through libopenvx.so's C entry points), each timed call one ``vxProcessGraph``: it packs
  the input, runs the SIMD engine and requantizes exactly into the output tensor -- what a C application
  runs. Its output is checked once against the Python route's;
- ours U8 execute: that Python route (``correlation.execute``: per-call preparation, helpers woken from a
  queue), which a graph takes only for a node without a native entry;
- ours Q7.8 (int16): the graph with inputs over the whole int16 range and weights within +-1.0;
- ours S8: the same graph on ``VX_TYPE_INT8`` tensors (the engine's other 8-bit encoding: the input is
  offset by 128 instead of the weights, ``simd.py``), checked the same way;
- ORT int8: ``QLinearConv`` (u8 activations, s8 weights, u8 output) or ``MatMulInteger`` (u8 x s8
  to int32), and ``Conv`` in float32, with 2 intra-op threads and spinning off
  (``session.intra_op.allow_spinning = 0``); for the S8 rows its all-int8 forms (``QLinearConv`` of s8
  activations, weights and output; ``MatMulInteger`` s8 x s8);
- ours F32 (the exact fixed-order float route) with ``--f32``: slow, correct, not the point here.

GMAC/s per contender and the ratios ours U8 / ORT u8 and ours S8 / ORT s8 (above 1: ours faster). Other processes on
the machine slow every contender alike because the calls alternate; still, rerun when it is quiet.

``--cpu`` runs one thread a side and times each call by the calling thread's CPU time: what one core does
with each kernel, which a machine busy with other work disturbs least.

Usage: python benchmarks/bench_ort.py [--repeat N] [--smoke] [--f32] [--cpu]
Needs ``pip install -e ".[bench]"`` (onnxruntime, onnx); without them it says so and exits 0.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import openvx_nn  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openvx_nn.kernels.engine import isa
from openvx_nn.kernels.engine.correlation import Arithmetic, convolution_window, execute, prepare
from openvx_nn.kernels.openvx.fully_connected import execute_fully_connected, fully_connected, prepare_fully_connected

# (name, input width = height, channels in, channels out, kernel, pad, stride)
CONVS = [("conv1 227²×3→96 k11/4", 227, 3, 96, 11, 0, 4), ("conv2 27²×96→256 k5 p2", 27, 96, 256, 5, 2, 1),
         ("conv3 13²×256→384 k3 p1", 13, 256, 384, 3, 1, 1), ("ResNet 56²×64→64 k3 p1", 56, 64, 64, 3, 1, 1)]
FCS = [("FC 9216→4096 batch 1", 9216, 4096, 1), ("FC 9216→4096 batch 32", 9216, 4096, 32)]
SMOKE_CONVS = [("smoke conv 9²×8→16 k3 p1", 9, 8, 16, 3, 1, 1)]
SMOKE_FCS = [("smoke FC 64→32 batch 2", 64, 32, 2)]


def medians(functions, repeat: int, gap: float = 0.0, block: int = 5, turn: float = 0.02,
            clock=time.perf_counter) -> list[float]:
    """Median wall time of each function, turns alternating so load on the machine slows all alike.

    ``gap`` seconds of sleep before each timed call let the previous contender's spinning threads
    (ORT's pool spins after a run by default, as do our helpers between layers) give up the cores.
    ``block`` > 1: each turn is at least that many calls back to back and at least ``turn`` seconds of them,
    begun once the process is idle again (``settle``), so each side runs with its own threads warm and nobody
    else's still spinning -- as for a user of that library alone (a turn of a few calls of a 0.1 ms model would
    time a core just woken from idle); every call of every turn counts. ``clock``: what a call's time is
    (``time.thread_time``: the calling thread's CPU time, for contenders that run on it alone)."""
    for function in functions:
        function()
    times: list[list[float]] = [[] for _ in functions]
    for i in range(repeat):
        for k in (range(len(functions)) if i % 2 == 0 else reversed(range(len(functions)))):
            if block > 1:
                settle()
            calls, begun = 0, time.perf_counter()
            while calls < block or (block > 1 and time.perf_counter() - begun < turn):
                if gap:
                    time.sleep(gap)
                start = clock()
                functions[k]()
                times[k].append(clock() - start)
                calls += 1
    return [statistics.median(t) for t in times]


def settle(window: float = 0.005, limit: float = 1.0) -> None:
    """Wait until this process's threads use under a fifth of a core over ``window`` seconds (at most
    ``limit``): after a run, ONNX Runtime's pool threads spin for some 40 ms of CPU by default."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        before = time.process_time()
        time.sleep(window)
        if time.process_time() - before < window / 5:
            return


ORT_THREADS = 2
"""ONNX Runtime's intra-op threads (``--cpu``: 1, and the run is on the calling thread)."""
CLOCK = time.perf_counter
"""What a call's time is (``--cpu``: ``time.thread_time``)."""


def ort_session(graph_nodes, inputs, outputs, initializers):
    import onnxruntime as ort
    from onnx import helper
    model = helper.make_model(helper.make_graph(graph_nodes, "bench", inputs, outputs, initializers),
                              opset_imports=[helper.make_opsetid("", 13)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = ORT_THREADS
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def peak(calls: int = 20_000) -> float | None:
    """GMAC/s of one thread running the engine's 8-bit micro-kernel on cache-resident data (the tile the planner
    picks for a large layer, 9 taps of 16 steps), by its CPU time: the bound a layer's sums reach on one core."""
    from openvx_nn.kernels.engine import microkernel, tiles
    name = isa.selected()
    if name == "generic" or "u8s8" not in microkernel.KINDS[name]:
        return None
    lanes = microkernel.LANES[name]
    rows, vecs = tiles.choose_tile(lanes, 1 << 16, 4 * lanes)
    run, steps = cached_tile(microkernel.variant(name, "u8s8", rows, vecs), rows, vecs, lanes)
    run(10)
    times = []
    for _ in range(5):
        start = time.thread_time()
        run(calls)
        times.append(time.thread_time() - start)
    return calls * steps * 4 / statistics.median(times) / 1e9


def cached_tile(code: int, rows: int, vecs: int, lanes: int, n_taps: int = 9, inner: int = 16):
    """``(run, steps)``: ``run(n)`` calls the micro-kernel ``code`` (a ``rows`` x ``vecs`` tile of ``lanes``-lane
    vectors) ``n`` times over ``n_taps`` taps of ``inner`` 4-byte steps, every byte in the L1 cache; ``steps`` is
    the lane-steps of one call (times the elements a 4-byte step multiplies: its multiply-adds)."""
    import numba

    from openvx_nn.kernels.engine import microkernel
    stride = inner * 4 * lanes * vecs

    @numba.njit(nogil=True, cache=False)
    def loop(n, tile, addr, taps, w):
        for _ in range(n):
            microkernel.tile_kernel(code, tile.ctypes.data, addr.ctypes.data, taps.ctypes.data, n_taps, inner,
                                    w.ctypes.data, stride)
    a = np.zeros(rows * 64 + 16 * n_taps + 4 * inner, np.uint8)
    keep = (np.zeros(rows * lanes * vecs, np.int32), np.array([a.ctypes.data + 64 * r for r in range(rows)], np.int64),
            np.arange(n_taps, dtype=np.int64) * 16, np.ones(n_taps * stride, np.int8), a)
    return (lambda n: loop(n, *keep[:4])), n_taps * inner * rows * vecs * lanes


def ort_conv(c_in, c_out, k, pad, stride, size, w_s8, quantized: bool, signed: bool = False):
    """A one-node session: ``Conv`` in float32, or ``QLinearConv`` of u8 (``signed``: s8) activations and
    output with s8 weights."""
    from onnx import TensorProto, helper, numpy_helper
    out = (size + 2 * pad - k) // stride + 1
    attrs = {"kernel_shape": [k, k], "pads": [pad] * 4, "strides": [stride, stride]}
    if not quantized:
        nodes = [helper.make_node("Conv", ["x", "w"], ["y"], **attrs)]
        inits = [numpy_helper.from_array((w_s8.astype(np.float32) / 64), "w")]
        kind = TensorProto.FLOAT
    else:
        zero = np.int8(0) if signed else np.uint8(128)
        scalars = {"xs": np.float32(0.02), "xz": zero, "ws": np.float32(0.01), "wz": np.int8(0),
                   "ys": np.float32(0.5), "yz": zero}
        inits = [numpy_helper.from_array(w_s8, "w")] + [numpy_helper.from_array(np.array(v), n)
                                                        for n, v in scalars.items()]
        nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], **attrs)]
        kind = TensorProto.INT8 if signed else TensorProto.UINT8
    return ort_session(nodes, [helper.make_tensor_value_info("x", kind, [1, c_in, size, size])],
                       [helper.make_tensor_value_info("y", kind, [1, c_out, out, out])], inits)


def ort_matmul(n_in, n_out, batch, w_s8, signed: bool = False):
    """``MatMulInteger`` of u8 (``signed``: s8) rows by s8 weights, to int32."""
    from onnx import TensorProto, helper, numpy_helper
    zero = np.int8(0) if signed else np.uint8(128)
    inits = [numpy_helper.from_array(w_s8, "b"), numpy_helper.from_array(np.array(zero), "az"),
             numpy_helper.from_array(np.array(np.int8(0)), "bz")]
    kind = TensorProto.INT8 if signed else TensorProto.UINT8
    return ort_session([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                       [helper.make_tensor_value_info("a", kind, [batch, n_in])],
                       [helper.make_tensor_value_info("y", TensorProto.INT32, [batch, n_out])], inits)


def our_conv(x, w, bias, out, pad, stride, fpp: int):
    arithmetic = Arithmetic(True, True, fpp, fpp, fpp, fpp)
    route = prepare(w, True, x.shape, out.shape, convolution_window(pad, pad, stride, stride, 0, 0), arithmetic)
    return lambda: execute(route, x, bias, out)


class LayerGraph:
    """One layer as a verified one-node OpenVX graph, through the C entry points (``openvx_nn.vx``). Arrays are
    in OpenVX's dims order (dim 0 fastest: Fortran-ordered NumPy), U8, S8 or Q7.8 (int16, fixed point 8)."""

    def __init__(self, make_node, x: np.ndarray, params: list, out: np.ndarray, fpp: int):
        from openvx_nn import vx
        self.vx, self.ffi, self.fpp = vx, vx.ffi, fpp
        self.context = vx.vxCreateContext()
        self.graph = vx.vxCreateGraph(self.context)
        self.tensors = [self._tensor(a) for a in (x, *params, out)]
        self.out = out
        node = make_node(vx, self.graph, *self.tensors)
        if vx.vxGetStatus(self.ffi.cast("vx_reference", node)) != vx.VX_SUCCESS:
            raise RuntimeError("the layer node could not be made")
        self.node = node
        if vx.vxVerifyGraph(self.graph) != vx.VX_SUCCESS:
            raise RuntimeError("vxVerifyGraph failed")

    def _tensor(self, values: np.ndarray):
        vx, ffi = self.vx, self.ffi
        data_type = {np.dtype(np.uint8): vx.VX_TYPE_UINT8, np.dtype(np.int8): vx.VX_TYPE_INT8}.get(
            values.dtype, vx.VX_TYPE_INT16)
        dims = ffi.new("vx_size[]", list(values.shape))
        tensor = vx.vxCreateTensor(self.context, values.ndim, dims, data_type, self.fpp)
        self._copy(tensor, values, vx.VX_WRITE_ONLY)
        return tensor

    def _copy(self, tensor, array: np.ndarray, usage: int) -> None:
        assert array.flags.f_contiguous
        vx, ffi, n = self.vx, self.ffi, array.ndim
        strides = np.cumprod((array.itemsize,) + array.shape[:-1])  # Fortran-ordered (NumPy's own may be any
        # for an axis of length 1)
        status = vx.vxCopyTensorPatch(tensor, n, ffi.new("vx_size[]", n), ffi.new("vx_size[]", list(array.shape)),
                                      ffi.new("vx_size[]", [int(v) for v in strides]),
                                      ffi.cast("void *", array.ctypes.data), usage, vx.VX_MEMORY_TYPE_HOST)
        if status != vx.VX_SUCCESS:
            raise RuntimeError(f"vxCopyTensorPatch failed with status {status}")

    def __call__(self) -> None:
        if self.vx.vxProcessGraph(self.graph) != self.vx.VX_SUCCESS:
            raise RuntimeError("vxProcessGraph failed")

    def result(self) -> np.ndarray:
        out = np.zeros_like(self.out, order="F")
        self._copy(self.tensors[-1], out, self.vx.VX_READ_ONLY)
        return out

    def checked_against(self, route, out: np.ndarray) -> LayerGraph:
        """This graph, once its output equals ``out`` as ``route()`` (the Python route) writes it."""
        self()
        route()
        if not np.array_equal(self.result(), out):
            raise RuntimeError("the graph and the Python route disagree")
        return self


def graph_conv(x, w, bias, out, pad, stride, fpp: int) -> LayerGraph:
    def node(vx, graph, tx, tw, tb, to):
        params = vx.ffi.new("vx_nn_convolution_params_t *")
        params.padding_x = params.padding_y = pad
        params.overflow_policy = vx.VX_CONVERT_POLICY_SATURATE
        params.rounding_policy = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
        params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
        return vx.vxConvolutionLayer(graph, tx, tw, tb, params, vx.ffi.sizeof("vx_nn_convolution_params_t"), to)
    return LayerGraph(node, x, [w, bias], out, fpp)


def graph_fc(x, w, out, fpp: int) -> LayerGraph:
    def node(vx, graph, tx, tw, to):
        return vx.vxFullyConnectedLayer(graph, tx, tw, vx.ffi.NULL, vx.VX_CONVERT_POLICY_SATURATE,
                                        vx.VX_ROUND_POLICY_TO_NEAREST_EVEN, to)
    return LayerGraph(node, x, [w], out, fpp)


def conv_row(rng, name, size, c_in, c_out, k, pad, stride, repeat, f32) -> list:
    out_size = (size + 2 * pad - k) // stride + 1
    macs = out_size * out_size * c_out * k * k * c_in
    shape_out = (out_size, out_size, c_out)
    x8 = np.asfortranarray(rng.integers(0, 256, (size, size, c_in)).astype(np.uint8))
    w8 = np.asfortranarray(rng.integers(0, 256, (k, k, c_in, c_out)).astype(np.uint8))
    xs8 = np.asfortranarray(rng.integers(-128, 128, (size, size, c_in)).astype(np.int8))
    ws8 = np.asfortranarray(rng.integers(-128, 128, (k, k, c_in, c_out)).astype(np.int8))
    x16 = np.asfortranarray(rng.integers(-32768, 32768, (size, size, c_in)).astype(np.int16))
    w16 = np.asfortranarray(rng.integers(-256, 257, (k, k, c_in, c_out)).astype(np.int16))
    w_s8 = rng.integers(-128, 128, (c_out, c_in, k, k)).astype(np.int8)
    b8, b16 = rng.integers(0, 256, c_out).astype(np.uint8), rng.integers(-256, 256, c_out).astype(np.int16)
    bs8 = rng.integers(-128, 128, c_out).astype(np.int8)
    out8, out16 = np.zeros(shape_out, np.uint8, order="F"), np.zeros(shape_out, np.int16, order="F")
    outs8 = np.zeros(shape_out, np.int8, order="F")
    route8, route16 = our_conv(x8, w8, b8, out8, pad, stride, 0), our_conv(x16, w16, b16, out16, pad, stride, 8)
    routes8 = our_conv(xs8, ws8, bs8, outs8, pad, stride, 0)
    contenders = {
        "ours U8": graph_conv(x8, w8, b8, out8, pad, stride, 0).checked_against(route8, out8),
        "ours U8 execute": route8,
        "ours S8": graph_conv(xs8, ws8, bs8, outs8, pad, stride, 0).checked_against(routes8, outs8),
        "ours Q7.8": graph_conv(x16, w16, b16, out16, pad, stride, 8).checked_against(route16, out16)}
    slow = {}  # ORT's all-int8 QLinearConv: a reference loop on x86, some 100 times slower
    try:
        q = ort_conv(c_in, c_out, k, pad, stride, size, w_s8, True)
        qs = ort_conv(c_in, c_out, k, pad, stride, size, w_s8, True, signed=True)
        f = ort_conv(c_in, c_out, k, pad, stride, size, w_s8, False)
        xq = rng.integers(0, 256, (1, c_in, size, size)).astype(np.uint8)
        xqs = rng.integers(-128, 128, (1, c_in, size, size)).astype(np.int8)
        xf = rng.standard_normal((1, c_in, size, size)).astype(np.float32)
        contenders["ORT QLinearConv"] = lambda: q.run(None, {"x": xq})
        slow["ORT QLinearConv s8"] = lambda: qs.run(None, {"x": xqs})
        contenders["ORT Conv f32"] = lambda: f.run(None, {"x": xf})
    except ImportError:
        pass
    if f32:
        xf32 = np.asfortranarray(rng.standard_normal((size, size, c_in)).astype(np.float32))
        wf32 = np.asfortranarray(rng.standard_normal((k, k, c_in, c_out)).astype(np.float32))
        contenders["ours F32"] = our_conv(xf32, wf32, np.zeros(c_out, np.float32),
                                          np.zeros(shape_out, np.float32, order="F"), pad, stride, 0)
    return report(name, macs, contenders, slow, repeat, [("ours U8", "ORT QLinearConv"), ("ours S8", "ORT QLinearConv s8"), ("ours S8", "ORT QLinearConv")])


def fc_call(x, w, out, arithmetic: Arithmetic):
    """The engine's own call for a fully connected layer: the prepared SIMD route, or (a small classifier the
    tiles would mostly pad: ``prepare_fully_connected`` gives None) the dot products ``fully_connected`` runs."""
    route = prepare_fully_connected(w, False, x.shape[1], arithmetic)
    if route is not None:
        return lambda: execute_fully_connected(route, x, None, out)
    a = arithmetic
    return lambda: fully_connected(x, w, None, out, a.saturate, a.nearest_even, fpp_x=a.fpp_x, fpp_w=a.fpp_w,
                                   fpp_b=a.fpp_b, fpp_out=a.fpp_out)


def fc_row(rng, name, n_in, n_out, batch, repeat) -> list:
    x = np.asfortranarray(rng.integers(0, 256, (n_in, batch)).astype(np.uint8))
    w = np.asfortranarray(rng.integers(0, 256, (n_in, n_out)).astype(np.uint8))
    out = np.zeros((n_out, batch), np.uint8, order="F")
    xs = np.asfortranarray(rng.integers(-128, 128, (n_in, batch)).astype(np.int8))
    ws = np.asfortranarray(rng.integers(-128, 128, (n_in, n_out)).astype(np.int8))
    outs = np.zeros((n_out, batch), np.int8, order="F")
    x16 = np.asfortranarray(rng.integers(-32768, 32768, (n_in, batch)).astype(np.int16))
    w16 = np.asfortranarray(rng.integers(-256, 257, (n_in, n_out)).astype(np.int16))
    out16 = np.zeros((n_out, batch), np.int16, order="F")
    route8 = fc_call(x, w, out, Arithmetic(True, True))
    contenders = {"ours U8": graph_fc(x, w, out, 0).checked_against(route8, out),
                  "ours U8 execute": route8,
                  "ours S8": graph_fc(xs, ws, outs, 0).checked_against(
                      fc_call(xs, ws, outs, Arithmetic(True, True)), outs),
                  "ours Q7.8": graph_fc(x16, w16, out16, 8).checked_against(
                      fc_call(x16, w16, out16, Arithmetic(True, True, 8, 8, 8, 8)), out16)}
    slow = {}  # ORT's s8 x s8 MatMulInteger: a reference loop on x86, some 300 times slower
    try:
        session = ort_matmul(n_in, n_out, batch, rng.integers(-128, 128, (n_in, n_out)).astype(np.int8))
        signed = ort_matmul(n_in, n_out, batch, rng.integers(-128, 128, (n_in, n_out)).astype(np.int8), True)
        a, a_s = np.ascontiguousarray(x.T), np.ascontiguousarray(xs.T)
        contenders["ORT MatMulInteger"] = lambda: session.run(None, {"a": a})
        slow["ORT MatMulInteger s8"] = lambda: signed.run(None, {"a": a_s})
    except ImportError:
        pass
    return report(name, n_in * n_out * batch, contenders, slow, repeat,
                  [("ours U8", "ORT MatMulInteger"), ("ours S8", "ORT MatMulInteger s8"),
                   ("ours S8", "ORT MatMulInteger")])


def report(name: str, macs: int, contenders: dict, slow: dict, repeat: int, pairs: list[tuple[str, str]]) -> list:
    """Times every contender in turns (``slow`` ones apart: a median of a few single calls); prints a row with the
    ratio (peer's time / ours) of each (ours, peer) pair: S8 against ORT's all-int8 operator and against its
    u8-activation one, ORT's fast int8 path on x86."""
    times = dict(zip(contenders, medians(list(contenders.values()), repeat, clock=CLOCK)))
    if slow:
        times.update(zip(slow, medians(list(slow.values()), min(repeat, 3), block=1, clock=CLOCK)))
    cells = [f"{n} {t * 1e3:.3f} ms {macs / t / 1e9:.0f} GMAC/s" for n, t in times.items()]
    ratios = {(ours, peer): times[peer] / times[ours] if peer in times else float("nan") for ours, peer in pairs}
    print(f"{name}: " + "; ".join(cells) + "".join(f"; {ours} / {peer}: {ratio:.2f}"
                                                   for (ours, peer), ratio in ratios.items()), flush=True)
    return [name, times, ratios]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, a few calls (CI)")
    parser.add_argument("--f32", action="store_true", help="also time our exact float32 route (slow)")
    parser.add_argument("--cpu", action="store_true",
                        help="one thread a side (OPENVX_NN_THREADS=1, one ORT intra-op thread), each call timed by "
                             "the calling thread's CPU time: what one core does, whatever else the machine runs")
    args = parser.parse_args(argv)
    global ORT_THREADS, CLOCK
    if args.cpu:
        if os.environ.get("OPENVX_NN_THREADS") != "1":  # read at import: run again with it set
            os.execve(sys.executable, [sys.executable, __file__, *argv], {**os.environ, "OPENVX_NN_THREADS": "1"})
        ORT_THREADS, CLOCK = 1, time.thread_time
    try:
        import onnx  # noqa: F401
        import onnxruntime
    except ImportError:
        print("onnxruntime and onnx are not installed (pip install -e '.[bench]'): ours only")
    else:
        print(f"onnxruntime {onnxruntime.__version__}, {ORT_THREADS} intra-op threads, spinning off")
    print(f"integer engine: {isa.selected()}, {isa.threads()} threads; "
          f"{'CPU time of the calling thread' if args.cpu else 'wall time'}")
    rate = peak(500 if args.smoke else 20_000)
    if rate is not None:
        print(f"the 8-bit micro-kernel on cache-resident data, one thread: {rate:.0f} GMAC/s (a layer's bound on one "
              f"core; {isa.threads()} threads: {rate * isa.threads():.0f})")
    rng = np.random.default_rng(2024)
    repeat = 3 if args.smoke else args.repeat
    for row in SMOKE_CONVS if args.smoke else CONVS:
        conv_row(rng, *row, repeat, args.f32)
    for row in SMOKE_FCS if args.smoke else FCS:
        fc_row(rng, *row, repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
