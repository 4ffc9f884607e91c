"""PyTorch modules with data-dependent control flow (an ``if`` on a tensor, a ``while`` on a tensor, a ``for`` over
an input count, all scripted) and recurrent layers (a GRU, traced, which coremltools writes as a ``loop``
whose body gathers a time step and scatters the state), converted by coremltools to NeuralNetworks, run by
``openvx_nn.coreml`` and compared with PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import close

torch = pytest.importorskip("torch", reason="PyTorch converts the module")
ct = pytest.importorskip("coremltools")


class IfSum(torch.nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            return x * 2
        return x - 1


class WhileSmall(torch.nn.Module):
    def forward(self, x):
        i = 0
        y = x
        while bool(y.abs().sum() < 100.0) and i < 50:
            y = y * 2.0
            i += 1
        return y


class ForCount(torch.nn.Module):
    def forward(self, x, n):
        y = x
        for _ in range(int(n)):
            y = y * 0.5 + x
        return y


def _convert(module, inputs: dict, script: bool):
    """The module as a NeuralNetwork spec (``inputs``: example tensors by name, in forward's order)."""
    examples = tuple(inputs.values())
    program = torch.jit.script(module) if script else torch.jit.trace(module, examples)
    types = [ct.TensorType(name=n, shape=tuple(t.shape)) for n, t in inputs.items()]
    return ct.convert(program, inputs=types, convert_to="neuralnetwork").get_spec()


def _kinds(network) -> set[str]:
    kinds = set()
    for layer in network.layers:
        kind = layer.WhichOneof("layer")
        kinds.add(kind)
        if kind == "loop":
            kinds |= _kinds(layer.loop.conditionNetwork) | _kinds(layer.loop.bodyNetwork)
        elif kind == "branch":
            kinds |= _kinds(layer.branch.ifBranch) | _kinds(layer.branch.elseBranch)
    return kinds


def _compare(spec, module, inputs: dict, feeds: dict | None = None) -> None:
    model = cm.load(spec)
    try:
        for _ in range(2):  # a second run reuses the segments' graphs
            out = model.predict(feeds or {n: t.numpy() for n, t in inputs.items()})
    finally:
        model.close()
    want = module(*inputs.values())
    want = want if isinstance(want, tuple) else (want,)
    for feature, expected in zip(spec.description.output, want):
        close(out[feature.name].reshape(expected.shape), expected.detach().numpy().astype(np.float64))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_scripted_if_matches_pytorch(sign):
    x = torch.tensor([0.5, -0.2, 0.3]) * sign
    spec = _convert(IfSum(), {"x": x}, script=True)
    assert "branch" in _kinds(spec.neuralNetwork)
    _compare(spec, IfSum(), {"x": x})


@pytest.mark.parametrize("scale", [1.0, 0.01, 1e-9, 500.0])
def test_scripted_while_matches_pytorch(scale):
    x = torch.tensor([0.5, -0.2, 0.3]) * scale
    spec = _convert(WhileSmall(), {"x": x}, script=True)
    assert "loop" in _kinds(spec.neuralNetwork)
    _compare(spec, WhileSmall(), {"x": x})


@pytest.mark.parametrize("count", [0, 1, 4])
def test_scripted_for_over_an_input_count_matches_pytorch(count):
    g = torch.Generator().manual_seed(count)
    x, n = torch.randn(5, generator=g), torch.tensor([float(count)])
    spec = _convert(ForCount(), {"x": x, "n": n}, script=True)
    assert "loop" in _kinds(spec.neuralNetwork)
    _compare(spec, ForCount(), {"x": x, "n": n})


class Recurrent(torch.nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(4, 5, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


@pytest.mark.parametrize("kind", ["GRU"])  # coremltools writes an LSTM as a uniDirectionalLSTM layer, no loop
def test_traced_recurrent_loop_matches_pytorch(kind):
    torch.manual_seed(1)
    module = Recurrent(kind).eval()
    x = torch.randn(1, 6, 4)
    spec = _convert(module, {"x": x}, script=False)
    kinds = _kinds(spec.neuralNetwork)
    assert "loop" in kinds and {"gather", "scatter"} <= kinds
    _compare(spec, module, {"x": x})
