"""Simple recurrent, GRU, uni- and bidirectional LSTM against the seed's equations,
including initial states, state outputs, reverse input and an LSTM sequence model."""
from __future__ import annotations

import numpy as np
import pytest

from . import references as ref
from .harness import builder, close, load, run, weights

I, H, SEQ = 3, 4, 5
ACT = {"SIGMOID": ref.sigmoid, "TANH": np.tanh, "SIGMOID_HARD": lambda v: np.minimum(np.maximum(0.2 * v + 0.5, 0), 1),
       "LINEAR": lambda v: v, "RELU": lambda v: np.maximum(v, 0)}


def _mats(rng, n, rows, cols):
    return [rng.standard_normal((rows, cols)).astype(np.float32) * 0.5 for _ in range(n)]


@pytest.mark.parametrize("output_all,reverse", [(True, False), (False, True)])
def test_simple_recurrent(tmp_path, rng, output_all, reverse):
    x = rng.standard_normal((SEQ, I)).astype(np.float32)
    h0 = rng.standard_normal(H).astype(np.float32)
    (wx,), (wh,) = _mats(rng, 1, H, I), _mats(rng, 1, H, H)
    b = rng.standard_normal(H).astype(np.float32)
    out, spec = run(tmp_path, {"x": x, "h0": h0}, ["y", "h"],
                    lambda bb: bb.add_simple_rnn("rnn", wh, wx, b, H, I, "TANH", ["x", "h0"], ["y", "h"],
                                                 output_all, reverse),
                    shapes={"x": (I,), "h0": (H,)}, output_shapes={"y": (H,), "h": (H,)})
    p = spec.neuralNetwork.layers[0].simpleRecurrent
    W, R, bias = weights(p.weightMatrix, (H, I)), weights(p.recursionMatrix, (H, H)), weights(p.biasVector, (H,))
    h = h0.astype(np.float64)
    ys = np.zeros((SEQ, H))
    for t in (range(SEQ - 1, -1, -1) if reverse else range(SEQ)):
        h = np.tanh(ref.clip50(W @ x[t] + R @ h + bias))
        ys[t] = h
    close(out["y"], ys if output_all else h)
    close(out["h"], h)


def test_gru(tmp_path, rng):
    x = rng.standard_normal((SEQ, I)).astype(np.float32)
    wx, wh = _mats(rng, 3, H, I), _mats(rng, 3, H, H)
    b = [rng.standard_normal(H).astype(np.float32) for _ in range(3)]
    out, spec = run(tmp_path, {"x": x}, ["y"], lambda bb: bb.add_gru("gru", wh, wx, b, H, I, ["x"], ["y"],
                                                                    output_all=True),
                    shapes={"x": (I,)}, output_shapes={"y": (H,)})
    p = spec.neuralNetwork.layers[0].gru
    Wz, Wr, Wo = (weights(getattr(p, f"{g}GateWeightMatrix"), (H, I)) for g in ("update", "reset", "output"))
    Rz, Rr, Ro = (weights(getattr(p, f"{g}GateRecursionMatrix"), (H, H)) for g in ("update", "reset", "output"))
    bz, br, bo = (weights(getattr(p, f"{g}GateBiasVector"), (H,)) for g in ("update", "reset", "output"))
    f, g = ACT["SIGMOID_HARD"], np.tanh  # the builder's defaults (hard sigmoid 0.2 x + 0.5)
    y = np.zeros(H)
    ys = []
    for t in range(SEQ):
        z = f(ref.clip50(Wz @ x[t] + Rz @ y + bz))
        r = f(ref.clip50(Wr @ x[t] + Rr @ y + br))
        c = y * r
        o = g(ref.clip50(Wo @ x[t] + Ro @ c + bo))
        y = (1 - z) * o + z * y
        ys.append(y)
    close(out["y"], np.stack(ys))


def _lstm_weights(p, hidden, inputs):
    W = np.stack([weights(getattr(p, f"{g}WeightMatrix"), (hidden, inputs))
                  for g in ("inputGate", "forgetGate", "blockInput", "outputGate")])
    R = np.stack([weights(getattr(p, f"{g}RecursionMatrix"), (hidden, hidden))
                  for g in ("inputGate", "forgetGate", "blockInput", "outputGate")])
    b = np.stack([weights(getattr(p, f"{g}BiasVector"), (hidden,))
                  for g in ("inputGate", "forgetGate", "blockInput", "outputGate")])
    peep = np.stack([weights(getattr(p, f"{g}PeepholeVector"), (hidden,)) if len(getattr(p, f"{g}PeepholeVector")
                                                                                .floatValue) else np.zeros(hidden)
                     for g in ("inputGate", "forgetGate", "outputGate")])
    return W, R, b, peep


@pytest.mark.parametrize("variant", ["plain", "peephole-forgetbias-states", "coupled-reverse"])
def test_unidirectional_lstm(tmp_path, rng, variant):
    x = rng.standard_normal((SEQ, I)).astype(np.float32)
    wx, wh = _mats(rng, 4, H, I), _mats(rng, 4, H, H)
    b = [rng.standard_normal(H).astype(np.float32) for _ in range(4)]
    peep = [rng.standard_normal(H).astype(np.float32) for _ in range(3)] if "peephole" in variant else None
    states = "states" in variant
    feeds = {"x": x}
    names_in, names_out = ["x"], ["y"]
    if states:
        feeds.update(h0=rng.standard_normal(H).astype(np.float32), c0=rng.standard_normal(H).astype(np.float32))
        names_in += ["h0", "c0"]
        names_out += ["h", "c"]
    out, spec = run(tmp_path, feeds, names_out, lambda bb: bb.add_unilstm(
        "lstm", wh, wx, b, H, I, names_in, names_out, peep=peep, output_all=True,
        forget_bias="forgetbias" in variant, coupled_input_forget_gate="coupled" in variant,
        cell_clip_threshold=5.0, reverse_input="reverse" in variant),
        shapes={"x": (I,), "h0": (H,), "c0": (H,)} if states else {"x": (I,)}, output_shapes={n: (H,) for n in names_out})
    layer = spec.neuralNetwork.layers[0].uniDirectionalLSTM
    W, R, bias, pp = _lstm_weights(layer.weightParams, H, I)
    if layer.params.forgetBias:
        bias[1] += 1.0
    ys, h, c = ref.lstm(x.astype(np.float64), W, R, bias, pp, (ref.sigmoid, np.tanh, np.tanh),
                        feeds.get("h0"), feeds.get("c0"), reverse="reverse" in variant,
                        coupled="coupled" in variant, clip=5.0)
    close(out["y"], ys)
    if states:
        close(out["h"], h)
        close(out["c"], c)


def test_bidirectional_lstm_concatenates_forward_and_backward(tmp_path, rng):
    x = rng.standard_normal((SEQ, I)).astype(np.float32)
    sets = [(_mats(rng, 4, H, H), _mats(rng, 4, H, I), [rng.standard_normal(H).astype(np.float32) for _ in range(4)])
            for _ in range(2)]
    (whf, wxf, bf), (whb, wxb, bb_) = sets
    out, spec = run(tmp_path, {"x": x}, ["y"], lambda b: b.add_bidirlstm(
        "bi", whf, wxf, bf, whb, wxb, bb_, H, I, ["x"], ["y"], output_all=True),
        shapes={"x": (I,)}, output_shapes={"y": (2 * H,)})
    layer = spec.neuralNetwork.layers[0].biDirectionalLSTM
    acts = (ref.sigmoid, np.tanh, np.tanh)
    fwd, _, _ = ref.lstm(x.astype(np.float64), *_lstm_weights(layer.weightParams[0], H, I), acts)
    bwd, _, _ = ref.lstm(x.astype(np.float64), *_lstm_weights(layer.weightParams[1], H, I), acts, reverse=True)
    close(out["y"], np.concatenate([fwd, bwd], axis=1))


def test_lstm_sequence_model(tmp_path, rng):
    """Two stacked LSTMs and a dense read-out on the last step: the usual sequence classifier."""
    x = rng.standard_normal((6, I)).astype(np.float32)
    l1 = (_mats(rng, 4, H, H), _mats(rng, 4, H, I), [rng.standard_normal(H).astype(np.float32) for _ in range(4)])
    l2 = (_mats(rng, 4, H, H), _mats(rng, 4, H, H), [rng.standard_normal(H).astype(np.float32) for _ in range(4)])
    dense_w = rng.standard_normal((2, H)).astype(np.float32)

    def add(b):
        b.add_unilstm("l1", *l1, H, I, ["x"], ["s1"], output_all=True)
        b.add_unilstm("l2", *l2, H, H, ["s1"], ["s2"], output_all=False)
        b.add_inner_product("fc", dense_w, None, H, 2, False, "s2", "logits")
        b.add_softmax("sm", "logits", "y")

    out, spec = run(tmp_path, {"x": x}, ["y"], add, shapes={"x": (I,)}, output_shapes={"y": (2,)})
    layers = spec.neuralNetwork.layers
    acts = (ref.sigmoid, np.tanh, np.tanh)
    s1, _, _ = ref.lstm(x.astype(np.float64), *_lstm_weights(layers[0].uniDirectionalLSTM.weightParams, H, I), acts)
    _, h, _ = ref.lstm(s1, *_lstm_weights(layers[1].uniDirectionalLSTM.weightParams, H, H), acts)
    close(out["y"], ref.softmax(weights(layers[2].innerProduct.weights, (2, H)) @ h, 0))


@pytest.mark.parametrize("layer", ["bidirectional", "gru", "simple"])
def test_recurrent_layers_run_from_c(tmp_path, rng, layer):
    """A graph of recurrent layers runs its native plan (every node has a native entry: the engine's) and gives
    the seed's numbers, run after run."""
    x = rng.standard_normal((SEQ, I)).astype(np.float32)
    b = builder({"x": (I,)}, ["y"], output_shapes={"y": (2 * H if layer == "bidirectional" else H,)})
    if layer == "bidirectional":
        sets = [(_mats(rng, 4, H, H), _mats(rng, 4, H, I), [rng.standard_normal(H).astype(np.float32)
                                                            for _ in range(4)]) for _ in range(2)]
        b.add_bidirlstm("bi", *sets[0], *sets[1], H, I, ["x"], ["y"], output_all=True)
    elif layer == "gru":
        b.add_gru("gru", _mats(rng, 3, H, H), _mats(rng, 3, H, I), [rng.standard_normal(H).astype(np.float32)
                                                                     for _ in range(3)], H, I, ["x"], ["y"],
                  output_all=True)
    else:
        b.add_simple_rnn("rnn", _mats(rng, 1, H, H)[0], _mats(rng, 1, H, I)[0], rng.standard_normal(H)
                         .astype(np.float32), H, I, "TANH", ["x"], ["y"], True, False)
    model = load(tmp_path, b)
    try:
        outs = [model.predict({"x": x})["y"].copy() for _ in range(3)]
        runs = sum(g.graph.native_runs for g in model._graphs.values())  # the graph of this sequence length
    finally:
        model.close()
    spec = b.spec.neuralNetwork.layers[0]
    xs = x.astype(np.float64)
    if layer == "bidirectional":
        p = spec.biDirectionalLSTM
        acts = (ref.sigmoid, np.tanh, np.tanh)
        want = np.concatenate([ref.lstm(xs, *_lstm_weights(p.weightParams[0], H, I), acts)[0],
                               ref.lstm(xs, *_lstm_weights(p.weightParams[1], H, I), acts, reverse=True)[0]], axis=1)
    elif layer == "gru":
        p = spec.gru
        w = [weights(getattr(p, f"{g}GateWeightMatrix"), (H, I)) for g in ("update", "reset", "output")]
        r = [weights(getattr(p, f"{g}GateRecursionMatrix"), (H, H)) for g in ("update", "reset", "output")]
        bias = [weights(getattr(p, f"{g}GateBiasVector"), (H,)) for g in ("update", "reset", "output")]
        f, y, rows = ACT["SIGMOID_HARD"], np.zeros(H), []
        for t in range(SEQ):
            z = f(ref.clip50(w[0] @ xs[t] + r[0] @ y + bias[0]))
            rr = f(ref.clip50(w[1] @ xs[t] + r[1] @ y + bias[1]))
            o = np.tanh(ref.clip50(w[2] @ xs[t] + r[2] @ (y * rr) + bias[2]))
            y = (1 - z) * o + z * y
            rows.append(y)
        want = np.stack(rows)
    else:
        p = spec.simpleRecurrent
        w, r, bias = weights(p.weightMatrix, (H, I)), weights(p.recursionMatrix, (H, H)), weights(p.biasVector, (H,))
        y, rows = np.zeros(H), []
        for t in range(SEQ):
            y = np.tanh(ref.clip50(w @ xs[t] + r @ y + bias))
            rows.append(y)
        want = np.stack(rows)
    for out in outs:
        close(out, want)
    assert runs > 0, "the graph did not run from C"


@pytest.mark.parametrize("seq,hidden,inputs", [(1, 3, 2), (7, 5, 4), (30, 16, 9)])
def test_bidirectional_lstm_directions_run_as_one_call(tmp_path, rng, monkeypatch, seq, hidden, inputs):
    """The plan runs the two directions as one call (``core/side_by_side``: at once where a helper is in the gang),
    with the seed's numbers and the bytes of the directions run one after the other (the plan's rewrites off)."""
    from openvx_nn.core import rewrites
    from openvx_nn.core import side_by_side as pairing
    from openvx_nn.core.enums import Status
    from openvx_nn.kernels.engine import side_by_side
    from openvx_nn.kernels.support import native

    x = rng.standard_normal((seq, inputs)).astype(np.float32)
    sets = [(_mats(rng, 4, hidden, hidden), _mats(rng, 4, hidden, inputs),
             [rng.standard_normal(hidden).astype(np.float32) for _ in range(4)]) for _ in range(2)]

    def predict(name):
        b = builder({"x": (inputs,)}, ["y"], output_shapes={"y": (2 * hidden,)})
        b.add_bidirlstm("bi", *sets[0], *sets[1], hidden, inputs, ["x"], ["y"], output_all=True)
        model = load(tmp_path, b, name)
        try:
            outs = [model.predict({"x": x})["y"].copy() for _ in range(3)]
            calls = [c for g in model._graphs.values() for c in g.graph.plan.calls]
            if name == "paired":  # a failure of the one native call names both directions' nodes
                graph = next(g.graph for g in model._graphs.values() if calls[0] in g.graph.plan.calls)
                pair = next(c for c in graph.plan.calls if c.node.description.name.endswith(".lstm"))
                beside = pairing.partner(pair)
                assert beside is not None and beside is not pair.node
                logged = []
                monkeypatch.setattr(graph.context, "log", lambda ref, status, text: logged.append(text))
                graph.native_failed(pair.node, Status.VX_FAILURE)
                assert len(logged) == 1 and pair.node.describe() in logged[0]
                assert f"run side by side with {beside.describe()}" in logged[0]
        finally:
            model.close()
        return outs, calls, b.spec.neuralNetwork.layers[0].biDirectionalLSTM

    outs, calls, p = predict("paired")
    lstm = [c for c in calls if c.node.description.name.endswith(".lstm")]
    assert len(lstm) == 2 and sum(isinstance(k, native.Entry) and side_by_side.beside(k)
                                   for k in lstm[0].native.keep) == 2
    assert lstm[1].native is rewrites.no_entry()
    acts = (ref.sigmoid, np.tanh, np.tanh)
    xs = x.astype(np.float64)
    want = np.concatenate([ref.lstm(xs, *_lstm_weights(p.weightParams[0], hidden, inputs), acts)[0],
                           ref.lstm(xs, *_lstm_weights(p.weightParams[1], hidden, inputs), acts, reverse=True)[0]],
                          axis=1)
    monkeypatch.setattr(rewrites, "ENABLED", False)
    apart, calls, _ = predict("apart")
    assert not any(c.native is rewrites.no_entry() for c in calls)
    for out in outs:
        close(out.reshape(want.shape), want)
        np.testing.assert_array_equal(out.view(np.uint32), apart[0].view(np.uint32))
