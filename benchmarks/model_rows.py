"""The rows of ``bench_models.py``: each holds one network on every side and knows how to load, run and compare.

A row's ``load_ours`` and the loads of ``others()`` (ORT, LiteRT) go from the stored model (file, or NNAPI's
arrays) to a ready runner and return it (the benchmark times load + first call); a runner called with no
argument runs the row's first sample, with one runs that input (in the side's own layout, see ``feed``) and
returns the output.  ``compare`` runs every runner on every sample and returns a line on the largest
differences from ours, raising ``AssertionError`` beyond the row's stated tolerance.

Run as a script (``model_rows.py ROW [--smoke] [--coreml-width W]``) it is the new process of the load
figures: it builds the row's files, then times importing the row's front end and the load to the first
result, and prints them as JSON.  It imports nothing of ``openvx_nn`` before that.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``benchmarks`` (and an uninstalled checkout) importable
    sys.path.insert(0, str(ROOT))

from benchmarks import coreml_models as c
from benchmarks import models as m
from benchmarks import quant_models as q
from benchmarks import tflite_models as t
from benchmarks import vx_models as v

FLOAT_TOLERANCE = 1e-4
"""Float rows: largest |ours - theirs| over max(1, largest |theirs|) (float32 sums in another order; a deep
network's logits reach tens)."""
QUANT_TOLERANCE = 1
"""Quant8 row: largest |ours - ORT| in uint8 steps (NNAPI's fixed-point requantization vs ORT's float one)."""
Q78_TOLERANCE = 0.02
"""Q7.8 row: the same measure against ORT float: every layer of ours rounds to 1/256, ORT's does not."""


class Row:
    """One network on every side; subclasses set ``name``, ``macs``, ``inputs``, ``front_end`` and the loads."""

    name = ""
    macs = 0
    inputs: tuple[np.ndarray, ...] | list[np.ndarray] = ()
    """Sample inputs in our side's layout; ``feed`` gives another side's."""
    front_end = ""
    """The module a user imports for this row (timed apart from the load in a new process)."""
    tolerance = FLOAT_TOLERANCE
    phases: dict[str, float]
    """Seconds of the named steps of the last ``load_ours`` (the first run is the rest of the load)."""

    def load_ours(self) -> Callable:
        raise NotImplementedError

    def _phase(self, name: str, start: float) -> float:
        """Record the step ``name`` as ending now; returns now, the next step's start."""
        now = time.perf_counter()
        self.phases[name] = now - start
        return now

    def load_ort(self) -> Callable:
        raise NotImplementedError

    def others(self) -> dict[str, Callable[[], Callable]]:
        """The baselines' loads by name: ORT, and LiteRT where the row has a .tflite form and it is installed."""
        return {"ORT": self.load_ort}

    def feed(self, side: str, x: np.ndarray) -> np.ndarray:
        """``x`` as ``side`` takes it."""
        return x

    def difference(self, ours: list[np.ndarray], theirs: list[np.ndarray]) -> str:
        """A line on the largest difference; ``AssertionError`` beyond the tolerance."""
        theirs = [np.asarray(b, np.float64).reshape(a.shape) for a, b in zip(ours, theirs)]
        worst = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs))
        relative = worst / max(1.0, max(float(np.max(np.abs(b))) for b in theirs))
        line = f"{worst:.0e} (relative {relative:.0e} ≤ {self.tolerance:g})"
        assert relative <= self.tolerance, f"{self.name}: outputs disagree: " + line
        return line

    def compare(self, ours: Callable, others: dict[str, Callable]) -> str:
        """Every side on every sample input against ours."""
        mine = [np.array(ours(x)) for x in self.inputs]
        lines = [f"{side} " + self.difference(mine, [np.array(run(self.feed(side, x))) for x in self.inputs])
                 for side, run in others.items()]
        return f"max diff on {len(self.inputs)} inputs: " + "; ".join(lines)

    def close(self) -> None:
        """Release what the loads kept (graphs, sessions)."""


class NNAPIMobileNet(Row):
    """MobileNet v1 through ``openvx_nn.nnapi``: float32, or TENSOR_QUANT8_ASYMM with ``quant8``."""

    def __init__(self, smoke: bool, quant8: bool):
        width, size = (0.25, 32) if smoke else (0.25, 224)
        self.net = m.mobilenet_v1(width, size)
        self.samples = m.sample_inputs(self.net, 4 if smoke else 8)
        self.quant = q.quantize_mobilenet(self.net, self.samples[:4]) if quant8 else None
        self.name = f"NNAPI {self.net.name} {'uint8' if quant8 else 'float32'}"
        self.macs = self.net.macs()
        if self.quant is None:
            self.inputs = self.samples
            self.onnx = m.onnx_mobilenet_float(self.net)
        else:
            self.inputs = [self.quant.quantize_input(x) for x in self.samples]
            self.onnx = q.onnx_mobilenet_quant8(self.quant)
        self.dtype = self.inputs[0].dtype
        self.front_end = "openvx_nn.nnapi"
        self.compilations: list = []

    def load_ours(self):
        from openvx_nn import nnapi
        self.phases, start = {}, time.perf_counter()
        model = m.nnapi_mobilenet_float(self.net) if self.quant is None else q.nnapi_mobilenet_quant8(self.quant)
        start = self._phase("Model", start)
        compilation = nnapi.Compilation(model)
        compilation.finish()
        self._phase("Compilation.finish", start)
        self.compilations.append(compilation)
        out = np.zeros(self.net.output_shape, self.dtype)

        def run(x: np.ndarray = self.inputs[0]) -> np.ndarray:
            execution = nnapi.Execution(compilation)
            execution.set_input(0, x)
            execution.set_output(0, out)
            execution.compute()
            return out
        return run

    def load_ort(self):
        session = m.ort_session(self.onnx)
        x = m.nchw(self.inputs[0])
        return lambda x=x: session.run(None, {"x": x})[0]

    def load_litert(self):
        interpreter = t.litert_interpreter(t.tflite_mobilenet(self.net, self.quant))
        first, last = interpreter.get_input_details()[0]["index"], interpreter.get_output_details()[0]["index"]

        def run(x: np.ndarray = self.inputs[0]) -> np.ndarray:
            interpreter.set_tensor(first, x)
            interpreter.invoke()
            return interpreter.get_tensor(last)
        return run

    def others(self) -> dict[str, Callable[[], Callable]]:
        sides = super().others()
        if importlib.util.find_spec("ai_edge_litert") is not None:
            sides["LiteRT"] = self.load_litert
        return sides

    def feed(self, side: str, x: np.ndarray) -> np.ndarray:
        return m.nchw(x) if side == "ORT" else x

    def difference(self, ours: list[np.ndarray], theirs: list[np.ndarray]) -> str:
        if self.quant is None:
            return super().difference(ours, theirs)
        steps = np.abs(np.concatenate([a.astype(int).ravel() - b.astype(int).ravel() for a, b in zip(ours, theirs)]))
        line = f"{steps.max()} LSB ≤ {QUANT_TOLERANCE}, {np.mean(steps == 0):.0%} equal"
        assert steps.max() <= QUANT_TOLERANCE, f"{self.name}: outputs disagree: " + line
        return line

    def close(self) -> None:
        for compilation in self.compilations:
            compilation.release()
        self.compilations.clear()


class CoreMLNetwork(Row):
    """A ``coreml_models`` network written to a ``.mlmodel`` file and loaded with ``openvx_nn.coreml.load``."""

    def __init__(self, net, samples: int):
        from coremltools.models.utils import save_spec
        self.net, self.name, self.macs = net, net.name, net.macs
        self.inputs = c.sample_images(net, samples)
        self.directory = tempfile.TemporaryDirectory(prefix="bench-models-")
        self.path = Path(self.directory.name) / "model.mlmodel"
        save_spec(c.coreml_spec(net), str(self.path))
        self.onnx = c.onnx_model(net)
        self.front_end = "openvx_nn.coreml"
        self.models: list = []

    def load_ours(self):
        import openvx_nn.coreml as cm
        self.phases, start = {}, time.perf_counter()
        model = cm.load(self.path)
        self._phase("load", start)
        self.models.append(model)
        name, output = self.net.input, self.net.output
        return lambda x=self.inputs[0]: model.predict({name: x})[output]

    def load_ort(self):
        session = m.ort_session(self.onnx)
        return lambda x=self.inputs[0]: session.run(None, {self.net.input: x[None]})[0]

    def close(self) -> None:
        for model in self.models:
            model.close()
        self.models.clear()
        self.directory.cleanup()


def coreml_row(smoke: bool, resnet: bool, width: float) -> Row | None:
    """A CoreML row (``width``: MobileNet v2's); None when coremltools is missing (it writes and parses
    .mlmodel files)."""
    try:
        import coremltools  # noqa: F401
    except ImportError:
        return None
    if resnet:
        net = c.resnet18(0.125, 32, 10) if smoke else c.resnet18(1.0, 224)
    else:  # smoke: the first three stages only, as today a depthwise layer becomes a node per channel
        net = c.mobilenet_v2(0.25, 32, 10, stages=3) if smoke else c.mobilenet_v2(width, 224)
    return CoreMLNetwork(net, 2 if smoke else 4)


class ConvertedNetwork(Row):
    """A ``torch_models`` module as a user brings it: converted by coremltools to a NeuralNetwork ``.mlmodel``
    (loaded with ``openvx_nn.coreml.load``), exported by ``torch.onnx.export`` for ORT, and run by PyTorch
    itself (2 threads, inference mode), at the sizes of ``torch_models.SIZES``."""

    def __init__(self, key: str, smoke: bool):
        import torch

        from benchmarks import torch_models as tm
        size = tm.SIZES[key]
        options, shape = (size.smoke_options, size.smoke_shape) if smoke else (size.options, size.shape)
        self.net = tm.build(key, **options)
        example = tm.example_shape(shape)
        self.first, self.last = tm.names(shape)
        title = tm.NETWORKS[key][0] + (f" {options['width']:g}" if smoke and options.get('width', 1.0) != 1.0 else "")
        self.name = f"converted {title} " + (f"{shape}²" if isinstance(shape, int) else "×".join(map(str, example[1:])))
        self.macs = tm.macs(self.net, shape)
        rng = np.random.default_rng(1)
        self.inputs = [rng.standard_normal(example).astype(np.float32) for _ in range(2 if smoke else 4)]
        self.directory = tempfile.TemporaryDirectory(prefix="bench-models-")
        self.path = Path(self.directory.name) / "model.mlmodel"
        onnx = Path(self.directory.name) / "model.onnx"
        tm.coreml_file(self.net, shape, str(self.path))
        tm.onnx_file(self.net, shape, str(onnx))
        self.onnx = onnx.read_bytes()
        self.front_end = "openvx_nn.coreml"
        self.models: list = []
        self.torch = torch

    def load_ours(self):
        import openvx_nn.coreml as cm
        self.phases, start = {}, time.perf_counter()
        model = cm.load(self.path)
        self._phase("load", start)
        self.models.append(model)
        return lambda x=self.inputs[0]: model.predict({self.first: x})[self.last]

    def load_ort(self):
        session = m.ort_session(self.onnx)
        return lambda x=self.inputs[0]: session.run(None, {self.first: x})[0]

    def load_torch(self):
        torch = self.torch
        torch.set_num_threads(m.THREADS)

        def run(x: np.ndarray = self.inputs[0]) -> np.ndarray:
            with torch.inference_mode():
                return self.net(torch.from_numpy(x)).numpy()
        return run

    def others(self) -> dict[str, Callable[[], Callable]]:
        return {"ORT": self.load_ort, "PyTorch": self.load_torch}

    def close(self) -> None:
        for model in self.models:
            model.close()
        self.models.clear()
        self.directory.cleanup()


def converted_row(key: str, smoke: bool) -> Row | None:
    """A converted row; None when torch or coremltools is missing (they make the files)."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("coremltools") is None:
        return None
    return ConvertedNetwork(key, smoke)


class VXSmallCNN(Row):
    """``vx_models.small_cnn`` built with the OpenVX C API in Q7.8, against the same weights in ORT float."""

    def __init__(self, smoke: bool):
        self.net = v.small_cnn(16 if smoke else 32)
        self.name, self.macs = self.net.name, self.net.macs()
        self.inputs = v.sample_images(self.net, 2 if smoke else 4)
        self.onnx = v.onnx_small_cnn(self.net)
        self.front_end = "openvx_nn.vx"
        self.tolerance = Q78_TOLERANCE
        self.graphs: list = []

    def load_ours(self):
        self.phases, start = {}, time.perf_counter()
        graph = v.VXGraph(self.net)
        self._phase("build and verify", start)
        self.graphs.append(graph)
        return lambda x=self.inputs[0]: graph.run(x)

    def load_ort(self):
        session = m.ort_session(self.onnx)
        return lambda x=self.inputs[0]: session.run(None, {"x": x[None]})[0]

    def close(self) -> None:
        for graph in self.graphs:
            graph.release()
        self.graphs.clear()


ROWS: dict[str, Callable[..., Row | None]] = {
    "nnapi-float": lambda smoke, width: NNAPIMobileNet(smoke, quant8=False),
    "nnapi-uint8": lambda smoke, width: NNAPIMobileNet(smoke, quant8=True),
    "coreml-mobilenet-v2": lambda smoke, width: coreml_row(smoke, False, width),
    "coreml-resnet18": lambda smoke, width: coreml_row(smoke, True, width),
    "vx-small-cnn": lambda smoke, width: VXSmallCNN(smoke),
    "converted-mobilenet-v2": lambda smoke, width: converted_row("mobilenet_v2", smoke),
    "converted-resnet18": lambda smoke, width: converted_row("resnet18", smoke),
    "converted-mobilenet-v3-small": lambda smoke, width: converted_row("mobilenet_v3_small", smoke),
    "converted-efficientnet-b0": lambda smoke, width: converted_row("efficientnet_b0", smoke),
    "converted-resnet50": lambda smoke, width: converted_row("resnet50", smoke),
    "converted-densenet121": lambda smoke, width: converted_row("densenet121", smoke),
    "converted-unet": lambda smoke, width: converted_row("unet", smoke),
    "converted-deeplab-head": lambda smoke, width: converted_row("deeplab_head", smoke),
    "converted-transformer-encoder": lambda smoke, width: converted_row("transformer_encoder", smoke),
    "converted-lstm-tagger": lambda smoke, width: converted_row("lstm_tagger", smoke),
    "converted-gru-tagger": lambda smoke, width: converted_row("gru_tagger", smoke),
}
"""Row factories: ``(smoke, mobilenet_v2_width)`` -> a row (None: its front end's parser is not installed; a
string: why the row is skipped)."""
ROWS.update(importlib.import_module("benchmarks.tflite_rows").rows(Row))  # MediaPipe's .tflite models


def timed_load(load: Callable[[], Callable]) -> tuple[float, Callable]:
    """Seconds from nothing to the first result, and the runner ``load`` returned."""
    start = time.perf_counter()
    run = load()
    run()
    return time.perf_counter() - start, run


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="time one row's load in this (new) process")
    parser.add_argument("row", choices=list(ROWS))
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--coreml-width", type=float, default=1.0, help="the CoreML MobileNet v2's width")
    args = parser.parse_args(argv)
    row = ROWS[args.row](args.smoke, args.coreml_width)
    if row is None or isinstance(row, str):
        parser.error(f"{args.row}: {row or 'its front end parser is not installed'}")
    start = time.perf_counter()
    importlib.import_module(row.front_end)
    imported = time.perf_counter() - start
    seconds, _ = timed_load(row.load_ours)
    print(json.dumps({"import": imported, "load": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
