"""PyTorch's GRU, which coremltools writes as a ``loop`` of per-step layers, runs as one GRU node in its reset-after
form (``coreml.recurrent_loops``) and matches PyTorch; a loop that differs from that pattern in any layer runs as a
program of segments as before, checked against float64 loops of what the changed loop computes."""
from __future__ import annotations

import math

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import close

torch = pytest.importorskip("torch", reason="PyTorch converts the module")
ct = pytest.importorskip("coremltools")


class Tagger(torch.nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.gru = torch.nn.GRU(features, hidden, batch_first=True)

    def forward(self, x):
        return self.gru(x)[0]


class WithState(Tagger):
    def forward(self, x, h):
        return self.gru(x, h)[0]


def _spec(module, inputs: dict):
    program = torch.jit.trace(module, tuple(inputs.values()))
    types = [ct.TensorType(name=n, shape=tuple(t.shape)) for n, t in inputs.items()]
    return ct.convert(program, inputs=types, convert_to="neuralnetwork").get_spec()


def _loop(spec):
    return next(layer for layer in spec.neuralNetwork.layers if layer.WhichOneof("layer") == "loop")


def _run(spec, feeds):
    with cm.load(spec) as model:
        out = [model.predict(feeds)[spec.description.output[0].name] for _ in range(2)]  # the second reuses it
        kinds = {layer.type: layer.lowering for layer in model.layers}
        runs = None if model.flow is not None else model.graph.native_runs
    np.testing.assert_array_equal(out[0], out[1])
    return out[1], kinds, runs


def _weights(module):
    g = module.gru
    return [p.detach().numpy().astype(np.float64) for p in (g.weight_ih_l0, g.weight_hh_l0, g.bias_ih_l0,
                                                             g.bias_hh_l0)]


def reference(x, w_ih, w_hh, b_ih, b_hh, history=None, one=1.0, out_act=math.tanh):
    """The loop as written, one unit at a time: ``h = H[t]`` with ``H`` the history (row 0 the initial state;
    a scatter_add adds each new state into row t + 1), ``h' = (one - z) * n + z * h``."""
    steps, units = x.shape[0], w_hh.shape[1]
    hist = np.zeros((steps + 1, units)) if history is None else np.array(history, np.float64)
    sig = lambda v: 1.0 / (1.0 + math.exp(-v))
    for t in range(steps):
        h = hist[t].copy()
        new = np.zeros(units)
        for u in range(units):
            def lin(w, b, v, gate, u=u):
                return sum(w[gate * units + u, k] * v[k] for k in range(v.shape[0])) + b[gate * units + u]
            r = sig(lin(w_ih, b_ih, x[t], 0) + lin(w_hh, b_hh, h, 0))
            z = sig(lin(w_ih, b_ih, x[t], 1) + lin(w_hh, b_hh, h, 1))
            n = out_act(lin(w_ih, b_ih, x[t], 2) + r * lin(w_hh, b_hh, h, 2))
            new[u] = (one - z) * n + z * h[u]
        hist[t + 1] += new
    return hist[1:]


@pytest.mark.parametrize("batch,steps,features,hidden", [(1, 1, 1, 1), (1, 1, 5, 3), (1, 2, 3, 8), (1, 7, 12, 16),
                                                         (1, 13, 4, 33), (3, 5, 6, 7)])
def test_pytorch_gru_runs_as_one_node_from_c_and_matches_pytorch(batch, steps, features, hidden):
    torch.manual_seed(steps * 100 + hidden)
    module = Tagger(features, hidden).eval()
    x = torch.randn(batch, steps, features)
    spec = _spec(module, {"x": x})
    got, kinds, runs = _run(spec, {"x": x.numpy()})
    assert kinds.get("gruLoop", "").startswith("coreml.gru"), kinds
    assert "loop" not in kinds and runs and runs > 0, (kinds, runs)
    with torch.no_grad():
        want = module(x).numpy().astype(np.float64)
    close(got.reshape(want.shape), want)
    for b in range(batch):
        close(got.reshape(want.shape)[b], reference(x.numpy()[b].astype(np.float64), *_weights(module)))


def test_a_given_initial_state_keeps_the_loop_and_matches_pytorch():
    torch.manual_seed(5)
    module = WithState(3, 6).eval()
    x, h = torch.randn(1, 4, 3), torch.randn(1, 1, 6)
    spec = _spec(module, {"x": x, "h": h})
    got, _, _ = _run(spec, {"x": x.numpy(), "h": h.numpy()})
    with torch.no_grad():
        want = module(x, h).numpy().astype(np.float64)
    close(got.reshape(want.shape), want)


def _change_one(spec):
    body = _loop(spec).loop.bodyNetwork.layers
    one = next(layer for layer in body if layer.WhichOneof("layer") == "loadConstantND")
    one.loadConstantND.data.floatValue[0] = 0.5
    return {"one": 0.5}


def _change_tanh(spec):
    body = _loop(spec).loop.bodyNetwork.layers
    tanh = next(layer for layer in body if layer.WhichOneof("layer") == "activation"
                and layer.activation.WhichOneof("NonlinearityType") == "tanh")
    tanh.activation.sigmoid.SetInParent()
    return {"out_act": lambda v: 1.0 / (1.0 + math.exp(-v))}


def _change_history(spec):
    start = next(layer for layer in spec.neuralNetwork.layers if layer.WhichOneof("layer") == "loadConstantND"
                 and len(layer.loadConstantND.shape) == 3)
    shape = tuple(int(d) for d in start.loadConstantND.shape)
    values = np.zeros(shape)
    values[2, 0, :] = 0.75  # a row after the first that is not zero: the scatter adds the state to it
    start.loadConstantND.data.floatValue[:] = values.ravel().tolist()
    return {"history": values[:, 0, :]}


@pytest.mark.parametrize("change", [_change_one, _change_tanh, _change_history], ids=["one", "tanh", "history"])
def test_a_loop_that_is_not_the_pattern_runs_as_before(change):
    torch.manual_seed(9)
    module = Tagger(3, 5).eval()
    x = torch.randn(1, 6, 3)
    spec = _spec(module, {"x": x})
    options = change(spec)
    got, kinds, _ = _run(spec, {"x": x.numpy()})
    assert "gruLoop" not in kinds and "loop" in kinds, kinds
    want = reference(x.numpy()[0].astype(np.float64), *_weights(module), **options)
    close(got.reshape(want.shape), want)
