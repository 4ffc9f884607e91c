"""Whole networks built from C with the standard NN layers (``bench_c_networks.c``) against ONNX Runtime.

The driver compiles ``bench_c_networks.c`` against the package's headers and ``libopenvx.so``, draws the weights
of a ResNet-18 and a MobileNet v1 from a seeded generator, writes them to a file for the C program (which builds
the network with ``vxConvolutionLayer`` and friends, virtual tensors between layers) and builds the same network
with the same weights as an ONNX model for ONNX Runtime (2 intra-op threads, its defaults otherwise):

- F32: ``Conv`` (bias), ``Relu``, ``MaxPool``, ``Add``, ``GlobalAveragePool``, ``Gemm``, ``Softmax``; MobileNet's
  depthwise layers as ``Conv`` with ``group`` = maps (ours: one single-map convolution per map, see the C file);
- U8: OpenVX's U8 with fixed point position 0 is plain integers (the layers sum exact products and saturate to
  0..255), which is ``QLinearConv`` / ``QLinearMatMul`` / ``QLinearAdd`` / ``QLinearGlobalAveragePool`` with every
  scale 1 and zero point 0 and uint8 weights; ``MaxPool`` on uint8; the softmax dequantized, ``Softmax``,
  quantized with scale 1. ReLU is the identity on unsigned values, and ORT's graph leaves it out (as a quantizer
  folds it into the convolution's output range); ours runs the activation nodes the C program builds.
  The weights are 0 or 1: one 1 per output map at a random tap (two in the classifier; a quarter of the maps of
  each residual block's second convolution), so that the maps keep their range through the network instead of
  saturating; no biases; the input 0..31.

Outputs agree when: F32 logits within 1e-4 of the largest logit's magnitude and probabilities within 1e-5
(ours sums in float32 in the order ``float_layers`` documents; ORT in its own); U8 logits bit-exact (both sides
compute the same exact integers) and probabilities (0 or 1 at scale 1) within one step.

Timing: the C program runs in its own process and serves ``run N`` on stdin (N back-to-back ``vxProcessGraph``
calls, each timed in C); ORT runs in this process. Turns alternate, each turn N calls and at least 20 ms, begun
after a 0.1 s idle gap so neither side's spinning threads run beside the other; medians of every call.
``--cpu-time`` runs both sides on one thread (``OPENVX_NN_THREADS=1``, one intra-op thread) and times each call
by its thread's CPU time, which other work on the machine disturbs least. ``--profile`` loads the C code into
this process as a library, builds the same network there and calls each node's native entry alone: where a
``vxProcessGraph`` spends its time (with ``--cpu-time``: on one thread, each call timed by its CPU time).
``--ort-profile`` prints ORT's own kernel time per node (``enable_profiling``) summed by operator and output
shape, the same layers' side of that split.

    python benchmarks/bench_c_networks.py                      # both networks, F32 and U8, 224x224
    python benchmarks/bench_c_networks.py --profile            # and where our time goes, node by node
    python benchmarks/bench_c_networks.py --cpu-time           # one thread a side, CPU time (a busy machine)
    python benchmarks/bench_c_networks.py --profile --ort-profile --cpu-time  # both sides' time by layer
    python benchmarks/bench_c_networks.py --smoke              # 64x64, maps / 16, two turns (CI)
"""
from __future__ import annotations

import argparse
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.models import ort_session, serialize

CLASSES = 1000
SOURCE = Path(__file__).with_suffix(".c")


class Network:
    """One network's weights (in the order the C program reads them) and its ONNX graph, built together."""

    def __init__(self, fmt: str, size: int, seed: int):
        from onnx import numpy_helper
        self.fmt, self.size, self.rng = fmt, size, np.random.default_rng(seed)
        self.blobs: list[bytes] = []
        self.nodes, self.inits, self.count = [], [], 0
        self.ones = [numpy_helper.from_array(np.array(1, np.float32), "one"),
                     numpy_helper.from_array(np.array(0, np.uint8), "zero")]

    def _name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def _constant(self, array: np.ndarray, prefix: str) -> str:
        from onnx import numpy_helper
        name = self._name(prefix)
        self.inits.append(numpy_helper.from_array(array, name))
        self.blobs.append(array.tobytes())
        return name

    def _node(self, op: str, inputs: list[str], domain: str = "", **attrs) -> str:
        from onnx import helper
        out = self._name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], domain=domain or None, **attrs))
        return out

    def _quant(self, name: str) -> list[str]:
        return [name, "one", "zero"]

    def weights(self, shape: tuple[int, ...], taps: int, ones: int = 1, live: float = 1.0) -> np.ndarray:
        """F32: He-scaled normal values. U8: ``ones`` weights of 1 at random taps of each output map, the rest 0
        (a map of zeros with probability 1 - ``live``), so that values neither die out nor saturate on the way."""
        if self.fmt == "f32":
            return (self.rng.standard_normal(shape) * math.sqrt(2.0 / taps)).astype(np.float32)
        w = np.zeros((shape[0], taps), np.uint8)
        for _ in range(ones):
            w[np.arange(shape[0]), self.rng.integers(0, taps, shape[0])] += 1
        w[self.rng.random(shape[0]) >= live] = 0
        return w.reshape(shape)

    def conv(self, x: str, c_in: int, maps: int, k: int, stride: int, pad: int, relu: bool,
             depthwise: bool = False, live: float = 1.0) -> str:
        per_group = 1 if depthwise else c_in
        w = self._constant(self.weights((maps, per_group, k, k), per_group * k * k, live=live), "w")
        attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4,
                 "group": maps if depthwise else 1}
        if self.fmt == "f32":
            b = self._constant((self.rng.standard_normal(maps) * 0.05).astype(np.float32), "b")
            y = self._node("Conv", [x, w, b], **attrs)
            return self._node("Relu", [y]) if relu else y
        return self._node("QLinearConv", self._quant(x) + self._quant(w)[:1] + ["one", "zero", "one", "zero"],
                          **attrs)

    def add(self, a: str, b: str) -> str:
        if self.fmt == "f32":
            return self._node("Add", [a, b])
        return self._node("QLinearAdd", self._quant(a) + self._quant(b) + ["one", "zero"], domain="com.microsoft")

    def relu(self, x: str) -> str:
        return self._node("Relu", [x]) if self.fmt == "f32" else x

    def max_pool(self, x: str) -> str:
        return self._node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)

    def classifier(self, x: str, maps: int) -> tuple[str, str]:
        from onnx import numpy_helper
        w = self.weights((CLASSES, maps), maps, ones=2)
        if self.fmt == "f32":
            pooled = self._node("Flatten", [self._node("GlobalAveragePool", [x])])
            wn = self._constant(w, "w")
            b = self._constant((self.rng.standard_normal(CLASSES) * 0.05).astype(np.float32), "b")
            logits = self._node("Gemm", [pooled, wn, b], transB=1)
            return logits, self._node("Softmax", [logits], axis=-1)
        pooled = self._node("QLinearGlobalAveragePool", self._quant(x) + ["one", "zero"], domain="com.microsoft",
                            channels_last=0)
        self.inits.append(numpy_helper.from_array(np.array([1, maps], np.int64), "flat"))
        self.blobs.append(w.tobytes())
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), "fcw"))
        flat = self._node("Reshape", [pooled, "flat"])
        logits = self._node("QLinearMatMul", self._quant(flat) + self._quant("fcw") + ["one", "zero"])
        real = self._node("DequantizeLinear", self._quant(logits))
        return logits, self._node("QuantizeLinear", [self._node("Softmax", [real], axis=-1), "one", "zero"])

    def model(self, name: str, logits: str, probabilities: str) -> bytes:
        from onnx import TensorProto, helper
        kind = TensorProto.FLOAT if self.fmt == "f32" else TensorProto.UINT8
        self.nodes += [helper.make_node("Identity", [logits], ["logits"]),
                       helper.make_node("Identity", [probabilities], ["probabilities"])]
        return serialize(self.nodes, [helper.make_tensor_value_info("x", kind, [1, 3, self.size, self.size])],
                         [helper.make_tensor_value_info("logits", kind, [1, CLASSES]),
                          helper.make_tensor_value_info("probabilities", kind, [1, CLASSES])],
                         self.inits + (self.ones if self.fmt == "u8" else []), name, opsets=(("", 13), ("com.microsoft", 1)))


def resnet18(net: Network, divisor: int) -> tuple[str, str]:
    """bench_c_networks.c's resnet18, layer for layer in the same order."""
    x = net.max_pool(net.conv("x", 3, 64 // divisor, 7, 2, 3, True))
    c = 64 // divisor
    for stage, maps in enumerate((64, 128, 256, 512)):
        maps //= divisor
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            a = net.conv(x, c, maps, 3, stride, 1, True)
            b = net.conv(a, maps, maps, 3, 1, 1, False, live=0.25)  # U8: the sum grows 1.25x a block
            shortcut = net.conv(x, c, maps, 1, stride, 0, False) if stride != 1 or maps != c else x
            x, c = net.relu(net.add(b, shortcut)), maps
    return net.classifier(x, c)


def mobilenet_v1(net: Network, divisor: int) -> tuple[str, str]:
    """bench_c_networks.c's mobilenet_v1, layer for layer in the same order."""
    maps = (64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024)
    strides = (1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1)
    c = 32 // divisor
    x = net.conv("x", 3, c, 3, 2, 1, True)
    for m, s in zip(maps, strides):
        x = net.conv(x, c, c, 3, s, 1, True, depthwise=True)
        x, c = net.conv(x, c, m // divisor, 1, 1, 0, True), m // divisor
    return net.classifier(x, c)


NETWORKS = {"resnet18": resnet18, "mobilenet_v1": mobilenet_v1}


def compile_program(directory: Path, library: bool = False) -> Path:
    """bench_c_networks.c built against this checkout's headers and libopenvx.so: the program, or (``library``)
    a shared library of it whose ``bench_main`` is its main, for :func:`native_profile`."""
    flags = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"], check=True,
                           capture_output=True, text=True, cwd=ROOT).stdout
    program = directory / ("bench_c_networks.so" if library else "bench_c_networks")
    extra = ["-shared", "-fPIC", "-Dmain=bench_main"] if library else []
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Werror", *extra, str(SOURCE), "-o", str(program),
                    *shlex.split(flags)], check=True, cwd=ROOT)
    return program


def native_profile(library: Path, args: list[str], calls: int = 20, cpu: bool = False,
                   rounds: int = 0) -> list[tuple[str, float]]:
    """(node, median ms) of every node of the network the C code builds in this process (``args`` its command
    line, RUNS -1), each node's native entry called alone ``calls`` times: where a ``vxProcessGraph`` of the
    native plan spends its time (a node reads what the previous run left; the caches are warm). Nodes whose work
    another node's call does (fused, merged) are left out; ``cpu``: each call timed by the thread's CPU time.

    ``rounds`` > 0 measures each node inside the whole graph too, taking turns with the calls alone: rounds of
    the plan's calls in order, each call timed once per round (its input and weights as the nodes before it
    left the caches), and whole ``vxProcessGraph`` calls, timed likewise. The labels then carry three figures,
    ``alone / in order`` per node and a last row ``vxProcessGraph`` with the whole graph's median: where a layer
    loses time inside the network that it does not lose alone."""
    from cffi import FFI

    from openvx_nn import vx
    from openvx_nn.core import reference, rewrites
    from openvx_nn.kernels.support import native
    ffi = FFI()
    ffi.cdef("int bench_main(int argc, char **argv); void *bench_graph(void); int vxProcessGraph(void *graph);")
    lib = ffi.dlopen(str(library))
    argv = [ffi.new("char[]", a.encode()) for a in ["bench_c_networks", *args[:-1], "-1"]]
    if lib.bench_main(len(argv), ffi.new("char *[]", argv)) != 0:
        raise RuntimeError("bench_c_networks failed to build the network in this process")
    handle = lib.bench_graph()
    graph = reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)
    if graph.plan.native is None:
        raise RuntimeError("the network has no native plan: some node runs from Python")
    clock = time.thread_time if cpu else time.perf_counter
    timed = [call for call in graph.plan.calls if call.native is not rewrites.no_entry()]  # the rest: fused

    def alone() -> list[float]:
        medians = []
        for call in timed:
            times = []
            for _ in range(calls):
                start = clock()
                native.run(call.native)
                times.append((clock() - start) * 1e3)
            medians.append(statistics.median(times))
        return medians

    def in_order(out: list[list[float]]) -> None:
        for k, call in enumerate(timed):
            start = clock()
            native.run(call.native)
            out[k].append((clock() - start) * 1e3)

    def whole(out: list[float]) -> None:
        start = clock()
        if lib.vxProcessGraph(handle) != 0:
            raise RuntimeError("vxProcessGraph failed in the profile's process")
        out.append((clock() - start) * 1e3)

    if rounds <= 0:
        medians = alone()
    else:
        alone_runs, ordered, graphs = [], [[] for _ in timed], []
        for _ in range(rounds):
            alone_runs.append(alone())
            for _ in range(calls):
                in_order(ordered)
                whole(graphs)
        medians = [statistics.median(r[k] for r in alone_runs) for k in range(len(timed))]
    found = []
    for k, call in enumerate(timed):
        dims = "x".join(str(d) for d in call.node.params[-1].dims)
        label = f"{call.node.description.name.rsplit('.', 1)[-1]} -> {dims}"
        found.append((label, medians[k]) if rounds <= 0 else (label, medians[k], statistics.median(ordered[k])))
    if rounds > 0:
        found.append(("vxProcessGraph", statistics.median(graphs), statistics.median(graphs)))
    return found


def _with_checkout(threads: int | None) -> dict[str, str]:
    """The environment with this checkout first on the Python path (the library's embedded interpreter imports
    ``openvx_nn`` from there, not from another install in the same environment) and ``threads`` threads."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    if threads is not None:
        env["OPENVX_NN_THREADS"] = str(threads)
    return env


class COpenVX:
    """The C program serving runs of one network on stdin."""

    def __init__(self, program: Path, network: str, fmt: str, size: int, divisor: int, files: dict[str, Path],
                 threads: int | None = None):
        self.process = subprocess.Popen(
            [str(program), network, fmt, str(size), str(divisor), str(files["weights"]), str(files["input"]),
             str(files["output"]), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
            env=_with_checkout(threads))
        first = self.process.stdout.readline().split()
        if not first or first[0] != "nodes":
            self.close()
            raise RuntimeError(f"bench_c_networks {network} {fmt} failed to build or run (exit "
                               f"{self.process.returncode})")
        self.nodes, self.first_run_s = int(first[1]), float(first[3])

    def command(self, line: str) -> list[str]:
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            reply = self.process.stdout.readline()
            if not reply or reply.startswith("error"):
                raise RuntimeError(f"bench_c_networks: {line!r} failed: {''.join(lines)}{reply}")
            if reply.strip() == "ok":
                return lines
            lines.append(reply)

    def run(self, calls: int, cpu: bool = False) -> list[float]:
        """Milliseconds of each of ``calls`` back-to-back runs, timed in C (``cpu``: the thread's CPU time)."""
        return [float(t) for t in self.command(f"{'cpu' if cpu else 'run'} {calls}")[0].split()[1:]]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
            self.process.wait(timeout=60)


def agreement(fmt: str, ours: tuple[np.ndarray, np.ndarray], theirs: tuple[np.ndarray, np.ndarray]) -> str:
    """Checks the outputs agree (module doc) and says by how much."""
    (logits, probs), (ref_logits, ref_probs) = ours, theirs
    if fmt == "f32":
        rel = float(np.abs(logits.astype(np.float64) - ref_logits).max() / max(np.abs(ref_logits).max(), 1e-30))
        dp = float(np.abs(probs.astype(np.float64) - ref_probs).max())
        if not (rel <= 1e-4 and dp <= 1e-5):
            raise AssertionError(f"F32 outputs differ: logits by {rel:.1e} of the largest, probabilities by {dp:.1e}")
        return f"logits {rel:.1e} rel., probabilities {dp:.1e}"
    if not np.array_equal(logits, ref_logits):
        raise AssertionError(f"U8 logits differ at {int(np.count_nonzero(logits != ref_logits))} of {CLASSES}")
    steps = int(np.abs(probs.astype(np.int16) - ref_probs).max())
    if steps > 1:
        raise AssertionError(f"U8 probabilities differ by {steps} steps")
    spread = f"logits {int(logits.min())}..{int(logits.max())}, {len(np.unique(logits))} values"
    return f"logits equal ({spread}), probabilities within {steps} step"


def ort_profile(model: bytes, feed: dict, threads: int, runs: int = 40) -> list[tuple[str, float]]:
    """(operator -> output shape, median ms) of every node ORT runs, from its own profile (``enable_profiling``)
    of ``runs`` runs after five unprofiled ones: ORT's side of :func:`native_profile`."""
    import json

    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        options.profile_file_prefix = str(Path(tmp) / "ort")
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        for _ in range(5 + runs):
            session.run(None, feed)
        events = json.loads(Path(session.end_profiling()).read_text())
    nodes: dict[str, list] = {}
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            nodes.setdefault(event["name"], []).append(event)
    found = []
    for runs_of_node in nodes.values():
        args = runs_of_node[0]["args"]
        shape = "x".join(str(d) for out in args.get("output_type_shape", []) for dims in out.values() for d in dims)
        found.append((f"{args.get('op_name', '?')} -> {shape}",
                      statistics.median(e["dur"] for e in runs_of_node[-runs:]) / 1e3))
    return found


def turns(ours: COpenVX, session, feed, repeat: int, calls: int, gap: float, cpu: bool) -> tuple[float, float]:
    """Median ms of ours and ORT over ``repeat`` turns each (alternating which goes first), ``calls`` a turn;
    ``cpu``: each call timed by its thread's CPU time (both sides on one thread)."""
    mine, theirs = [], []
    clock = time.thread_time if cpu else time.perf_counter

    def ort_turn() -> None:
        for _ in range(calls):
            start = clock()
            session.run(None, feed)
            theirs.append((clock() - start) * 1e3)
    for i in range(repeat):
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            time.sleep(gap)
            if side == 0:
                mine.extend(ours.run(calls, cpu))
            else:
                ort_turn()
    return statistics.median(mine), statistics.median(theirs)


WARM_UP = 3.0
"""Seconds both sides run untimed before the turns: a process's first seconds run slower on the 2-core VMs."""


def measure(program: Path, network: str, fmt: str, size: int, divisor: int, repeat: int, profile: Path | None,
            directory: Path, cpu: bool, ort_nodes: bool = False, rounds: int = 0, warm: float = WARM_UP) -> dict:
    net = Network(fmt, size, seed=list(NETWORKS).index(network))
    logits, probs = NETWORKS[network](net, divisor)
    model = net.model(network, logits, probs)
    dtype = np.float32 if fmt == "f32" else np.uint8
    rng = np.random.default_rng(7)
    x = (rng.random((1, 3, size, size)).astype(np.float32) if fmt == "f32"
         else rng.integers(0, 32, (1, 3, size, size)).astype(np.uint8))
    files = {k: directory / f"{network}_{fmt}.{k}" for k in ("weights", "input", "output")}
    files["weights"].write_bytes(b"".join(net.blobs))
    files["input"].write_bytes(x.tobytes())                          # NCHW: the bytes of OpenVX's [W, H, C]
    session = ort_session(model, threads=1 if cpu else 2)
    feed = {"x": x}
    ours = COpenVX(program, network, fmt, size, divisor, files, threads=1 if cpu else None)
    try:
        out = np.frombuffer(files["output"].read_bytes(), dtype).reshape(2, CLASSES)
        ref = [a.reshape(CLASSES) for a in session.run(None, feed)]
        agree = agreement(fmt, (out[0], out[1]), (ref[0], ref[1]))
        one = statistics.median(ours.run(3))
        calls = max(3, math.ceil(20.0 / one))
        deadline = time.perf_counter() + warm  # both sides untimed first (bench_models.WARM_UP)
        while time.perf_counter() < deadline:
            ours.run(calls)
            for _ in range(calls):
                session.run(None, feed)
        mine, theirs = turns(ours, session, feed, repeat, calls, 0.1, cpu)
    finally:
        ours.close()
    nodes = native_profile(profile, [network, fmt, str(size), str(divisor), *(str(files[k]) for k in (
        "weights", "input", "output")), "0"], cpu=cpu, rounds=rounds) if profile else []
    theirs_nodes = ort_profile(model, feed, 1 if cpu else 2) if ort_nodes else []
    return {"network": network, "format": fmt, "ours": mine, "ort": theirs, "agree": agree, "nodes": ours.nodes,
            "first_run_s": ours.first_run_s, "profile": nodes, "ort_profile": theirs_nodes}


def print_profile(nodes: list[tuple], top: int = 12, whose: str = "native entries") -> None:
    """Per-node times summed by kernel (operator) and output shape, the largest first."""
    if nodes and len(nodes[0]) == 3:
        print_in_graph(nodes, top)
        return
    totals: dict[str, list[float]] = {}
    for label, ms in nodes:
        totals.setdefault(label, []).append(ms)
    whole = sum(sum(v) for v in totals.values())
    print(f"#   {whose} one by one: {whole:.2f} ms in all")
    for label, times in sorted(totals.items(), key=lambda kv: -sum(kv[1]))[:top]:
        print(f"#   {sum(times):8.3f} ms {100 * sum(times) / whole:5.1f} %  {len(times):5d} x {label}")


def print_in_graph(nodes: list[tuple[str, float, float]], top: int) -> None:
    """:func:`native_profile`'s ``rounds`` figures: each kind's calls alone and in the graph's order, summed."""
    *calls, (_, graph, _) = nodes
    totals: dict[str, list[float]] = {}
    for label, alone, ordered in calls:
        row = totals.setdefault(label, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += alone
        row[2] += ordered
    alone_sum, ordered_sum = sum(r[1] for r in totals.values()), sum(r[2] for r in totals.values())
    print(f"#   native entries alone {alone_sum:.2f} ms, in the graph's order {ordered_sum:.2f} ms, "
          f"vxProcessGraph {graph:.2f} ms (medians, same process, in turns)")
    for label, (count, alone, ordered) in sorted(totals.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"#   {alone:8.3f} -> {ordered:8.3f} ms ({ordered / alone:5.2f}x)  {count:5d} x {label}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", default="resnet18,mobilenet_v1")
    parser.add_argument("--formats", default="f32,u8")
    parser.add_argument("--repeat", type=int, default=10, help="turns per side (default 10)")
    parser.add_argument("--profile", action="store_true", help="print our time per node kind")
    parser.add_argument("--in-graph", type=int, default=0, metavar="ROUNDS",
                        help="with --profile: time each node inside the whole graph's order too, ROUNDS turns")
    parser.add_argument("--ort-profile", action="store_true",
                        help="print ORT's kernel time per node kind, from its own profile")
    parser.add_argument("--cpu-time", action="store_true",
                        help="one thread a side, each call timed by its thread's CPU time (a busy machine)")
    parser.add_argument("--smoke", action="store_true", help="64x64 input, maps / 16, two turns (CI)")
    args = parser.parse_args(argv)
    networks, formats = args.networks.split(","), args.formats.lower().split(",")
    for name, given, known in (("--networks", networks, tuple(NETWORKS)), ("--formats", formats, ("f32", "u8"))):
        if unknown := [g for g in given if g not in known]:
            parser.error(f"{name}: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    size, divisor, repeat = (64, 16, 2) if args.smoke else (224, 1, args.repeat)
    if args.cpu_time and args.profile:
        os.environ["OPENVX_NN_THREADS"] = "1"  # the profile's network is built in this process: one thread too
    with open("/proc/cpuinfo") as info:
        cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?")
    import onnxruntime
    print(f"# {cpu}, {os.cpu_count()} cores; onnxruntime {onnxruntime.__version__}; load "
          f"{os.getloadavg()[0]:.2f} at start; input {size}x{size}x3, maps / {divisor}; "
          + ("one thread a side, CPU time" if args.cpu_time else "2 threads a side, wall time"))
    print("| network | format | nodes | ours ms | ORT ms | ORT ÷ ours | outputs | build + first run |\n"
          "|---|---|---:|---:|---:|---:|---|---:|", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        program = compile_program(Path(tmp))
        library = compile_program(Path(tmp), library=True) if args.profile else None
        for network in networks:
            for fmt in formats:
                r = measure(program, network, fmt, size, divisor, repeat, library, Path(tmp), args.cpu_time,
                            args.ort_profile, args.in_graph, 0.0 if args.smoke else WARM_UP)
                print(f"| {network} | {fmt.upper()} | {r['nodes']} | {r['ours']:.3f} | {r['ort']:.3f} | "
                      f"{r['ort'] / r['ours']:.3f} | {r['agree']} | {r['first_run_s']:.2f} s |", flush=True)
                if args.profile:
                    print_profile(r["profile"])
                if args.ort_profile:
                    print_profile(r["ort_profile"], whose="ORT's nodes")
    print(f"# load {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
