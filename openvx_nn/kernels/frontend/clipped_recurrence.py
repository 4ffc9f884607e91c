"""Recurrent layers (CoreML simple recurrent, GRU, LSTM) on float tensors.

Tensors arrive in OpenVX order and are read through their reversed views:
the input is CoreML [Seq, Batch, I, 1, 1], weights are [gates, H, I] and
[gates, H, H], biases [gates, H], peepholes [3, H], states [1, Batch, H, 1, 1].
Every pre-activation is clipped to [-50, 50]; arithmetic is float64.
``reverse`` processes the sequence last to first; a sequence output keeps the
input's time positions (the value at t is the state after reading x_t).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .pointwise import evaluate

CLIP = 50.0


def _sequence(x: np.ndarray) -> np.ndarray:
    cm = np.asarray(x, np.float64).T
    return cm.reshape(cm.shape[0], cm.shape[1], -1)          # [S, B, I]


def _state(state: np.ndarray | None, batch: int, hidden: int) -> np.ndarray:
    if state is None:
        return np.zeros((batch, hidden))
    return np.asarray(state, np.float64).T.reshape(batch, hidden)


def _gate(activation: tuple[str, float, float], value: np.ndarray) -> np.ndarray:
    name, alpha, beta = activation
    return evaluate(name, np.clip(value, -CLIP, CLIP), alpha, beta)


def _store(out: np.ndarray | None, values: np.ndarray) -> None:
    if out is not None:
        out.T[...] = values.reshape(out.T.shape)


def _run(x, y, steps, reverse, sequence_output, step):
    seq = _sequence(x)
    order = range(seq.shape[0] - 1, -1, -1) if reverse else range(seq.shape[0])
    outputs = np.zeros((seq.shape[0],) + steps.shape)
    h = steps
    for t in order:
        h = step(seq[t])
        outputs[t] = h
    _store(y, outputs if sequence_output else h[None])


def simple_recurrent(x, weights, recursion, bias, h0, y, h_out, activation: tuple[str, float, float],
                     sequence_output: bool, reverse: bool) -> None:
    """y_t = f(clip(W x_t + R y_{t-1} + b))."""
    w, r = np.asarray(weights, np.float64).T[0], np.asarray(recursion, np.float64).T[0]
    b = np.zeros(w.shape[0]) if bias is None else np.asarray(bias, np.float64).T.reshape(-1)
    batch = _sequence(x).shape[1]
    state = {"h": _state(h0, batch, w.shape[0])}

    def step(xt):
        state["h"] = _gate(activation, xt @ w.T + state["h"] @ r.T + b)
        return state["h"]

    _run(x, y, state["h"], reverse, sequence_output, step)
    _store(h_out, state["h"])


def gru(x, weights, recursion, bias, h0, y, h_out, activations: Sequence[tuple[str, float, float]],
        sequence_output: bool, reverse: bool) -> None:
    """Gates z (update), r (reset), o (output) in that order:
    z = f(Wz x + Rz y + bz), r = f(Wr x + Rr y + br), c = y * r, o = g(Wo x + Ro c + bo),
    y = (1 - z) * o + z * y."""
    w, r = np.asarray(weights, np.float64).T, np.asarray(recursion, np.float64).T
    hidden = w.shape[1]
    b = np.zeros((3, hidden)) if bias is None else np.asarray(bias, np.float64).T.reshape(3, hidden)
    batch = _sequence(x).shape[1]
    f, g = activations
    state = {"h": _state(h0, batch, hidden)}

    def step(xt):
        h = state["h"]
        z = _gate(f, xt @ w[0].T + h @ r[0].T + b[0])
        rr = _gate(f, xt @ w[1].T + h @ r[1].T + b[1])
        o = _gate(g, xt @ w[2].T + (h * rr) @ r[2].T + b[2])
        state["h"] = (1.0 - z) * o + z * h
        return state["h"]

    _run(x, y, state["h"], reverse, sequence_output, step)
    _store(h_out, state["h"])


def lstm(x, weights, recursion, bias, peephole, h0, c0, y, h_out, c_out,
         activations: Sequence[tuple[str, float, float]], sequence_output: bool, reverse: bool,
         coupled: bool, cell_clip: float) -> None:
    """Gates i, f, z (block input), o in that order; peepholes i, f, o:
    i = f(Wi x + Ri y + pi*c + bi), f = f(Wf x + Rf y + pf*c + bf), z = g(Wz x + Rz y + bz),
    c = c*f + i*z (clipped to +-cell_clip when > 0), o = f(Wo x + Ro y + po*c_new + bo),
    y = h(c) * o; coupled: i = 1 - f."""
    w, r = np.asarray(weights, np.float64).T, np.asarray(recursion, np.float64).T
    hidden = w.shape[1]
    b = np.zeros((4, hidden)) if bias is None else np.asarray(bias, np.float64).T.reshape(4, hidden)
    p = np.zeros((3, hidden)) if peephole is None else np.asarray(peephole, np.float64).T.reshape(3, hidden)
    batch = _sequence(x).shape[1]
    fa, ga, ha = activations
    state = {"h": _state(h0, batch, hidden), "c": _state(c0, batch, hidden)}

    def step(xt):
        h, c = state["h"], state["c"]
        fg = _gate(fa, xt @ w[1].T + h @ r[1].T + p[1] * c + b[1])
        ig = 1.0 - fg if coupled else _gate(fa, xt @ w[0].T + h @ r[0].T + p[0] * c + b[0])
        zg = _gate(ga, xt @ w[2].T + h @ r[2].T + b[2])
        c = c * fg + ig * zg
        if cell_clip > 0:
            c = np.clip(c, -cell_clip, cell_clip)
        og = _gate(fa, xt @ w[3].T + h @ r[3].T + p[2] * c + b[3])
        state["h"], state["c"] = evaluate(ha[0], c, ha[1], ha[2]) * og, c
        return state["h"]

    _run(x, y, state["h"], reverse, sequence_output, step)
    _store(h_out, state["h"])
    _store(c_out, state["c"])
