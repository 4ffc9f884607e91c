"""The rows of ``bench_models.py``: each holds one network on both sides and knows how to load, run and compare.

A row's ``load_ours`` / ``load_ort`` go from the stored model (file, or NNAPI's arrays) to a ready runner and
return it (the benchmark times load + first call); ``compare`` runs both on sample inputs and returns a
line on the largest difference, raising ``AssertionError`` beyond the row's stated tolerance.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks import models as m

FLOAT_TOLERANCE = 1e-4
"""Float rows: largest |ours - ORT| on probabilities or logits of order 1 (sums in another order)."""
QUANT_TOLERANCE = 1
"""Quant8 row: largest |ours - ORT| in uint8 steps (NNAPI's fixed-point requantization vs ORT's float one)."""


class Row:
    """One network on both sides; subclasses set ``name``, ``macs`` and the four methods."""

    name = ""
    macs = 0

    def load_ours(self) -> Callable[[], object]:
        raise NotImplementedError

    def load_ort(self) -> Callable[[], object]:
        raise NotImplementedError

    def compare(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the loads kept (graphs, sessions)."""


def float_difference(ours: list[np.ndarray], theirs: list[np.ndarray], what: str) -> str:
    worst = max(float(np.max(np.abs(a.astype(np.float64) - b.reshape(a.shape)))) for a, b in zip(ours, theirs))
    line = f"max |ours - ORT| {worst:.1e} on {len(ours)} {what} (tolerance {FLOAT_TOLERANCE:g})"
    assert worst <= FLOAT_TOLERANCE, "outputs disagree: " + line
    return line


class NNAPIMobileNet(Row):
    """MobileNet v1 through ``openvx_nn.nnapi``: float32, or TENSOR_QUANT8_ASYMM with ``quant8``."""

    def __init__(self, smoke: bool, quant8: bool):
        width, size = (0.25, 32) if smoke else (0.25, 224)
        self.net = m.mobilenet_v1(width, size)
        self.samples = m.sample_inputs(self.net, 4 if smoke else 8)
        self.quant = m.quantize_mobilenet(self.net, self.samples[:4]) if quant8 else None
        self.name = f"NNAPI {self.net.name} {'uint8' if quant8 else 'float32'}"
        self.macs = self.net.macs()
        if self.quant is None:
            self.inputs = self.samples
            self.onnx = m.onnx_mobilenet_float(self.net)
        else:
            self.inputs = [self.quant.quantize_input(x) for x in self.samples]
            self.onnx = m.onnx_mobilenet_quant8(self.quant)
        self.dtype = self.inputs[0].dtype
        self.compilations: list = []

    def load_ours(self):
        from openvx_nn import nnapi
        model = m.nnapi_mobilenet_float(self.net) if self.quant is None else m.nnapi_mobilenet_quant8(self.quant)
        compilation = nnapi.Compilation(model)
        compilation.finish()
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

    def compare(self) -> str:
        ours_run, ort_run = self.load_ours(), self.load_ort()
        ours = [ours_run(x).copy() for x in self.inputs]
        theirs = [ort_run(m.nchw(x)) for x in self.inputs]
        if self.quant is None:
            return float_difference(ours, theirs, "images")
        steps = np.abs(np.concatenate([a.astype(int).ravel() - b.astype(int).ravel() for a, b in zip(ours, theirs)]))
        line = (f"max |ours - ORT| {steps.max()} LSB, {np.mean(steps == 0):.0%} equal, on {len(ours)} images "
                f"(tolerance {QUANT_TOLERANCE} LSB)")
        assert steps.max() <= QUANT_TOLERANCE, "outputs disagree: " + line
        return line

    def close(self) -> None:
        for compilation in self.compilations:
            compilation.release()
        self.compilations.clear()


ROWS: dict[str, Callable[[bool], Row | None]] = {
    "nnapi-float": lambda smoke: NNAPIMobileNet(smoke, quant8=False),
    "nnapi-uint8": lambda smoke: NNAPIMobileNet(smoke, quant8=True),
}
