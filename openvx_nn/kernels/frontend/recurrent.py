"""One time step of the recurrent layers (LSTM, basic RNN, SVDF) in float64
on float32 tensors.  States arrive as arrays and the new states are written
to the output arrays given; a step reads every input before it writes."""
from __future__ import annotations

import numpy as np

ACTIVATIONS = {
    0: lambda v: v,
    1: lambda v: np.maximum(v, 0.0),
    2: lambda v: np.clip(v, -1.0, 1.0),
    3: lambda v: np.clip(v, 0.0, 6.0),
    4: np.tanh,
    6: lambda v: 1.0 / (1.0 + np.exp(-v)),
}
"""Activation codes of the recurrent layers (TensorFlow Lite's ActivationFunctionType)."""


def _f64(a):
    return None if a is None else np.asarray(a, np.float64)


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm_step(x, w_in, w_rec, w_cell, bias, w_proj, b_proj, h_prev, c_prev, activation: int, cell_clip: float,
              proj_clip: float, scratch, h_out, c_out, output) -> None:
    """``w_in``/``w_rec``/``bias`` map gate name ('i', 'f', 'c', 'o') to arrays (``'i'`` absent with CIFG);
    ``w_cell`` maps 'i', 'f', 'o' to peephole vectors (or is empty).  Gates, in the scratch order
    input, cell, forget, output (input left out with CIFG), are stored after their activation."""
    act = ACTIVATIONS[activation]
    x, h_prev, c_prev = _f64(x), _f64(h_prev), _f64(c_prev)

    def pre(g, cell=None):
        v = x @ _f64(w_in[g]).T + h_prev @ _f64(w_rec[g]).T + _f64(bias[g])
        if g in w_cell and cell is not None:
            v = v + _f64(w_cell[g]) * cell
        return v

    forget = _sigmoid(pre("f", c_prev))
    cifg = "i" not in w_in
    inp = 1.0 - forget if cifg else _sigmoid(pre("i", c_prev))
    cell_gate = act(pre("c"))
    c = forget * c_prev + inp * cell_gate
    if cell_clip > 0:
        c = np.clip(c, -cell_clip, cell_clip)
    out_gate = _sigmoid(pre("o", c))
    h = out_gate * act(c)
    if w_proj is not None:
        h = h @ _f64(w_proj).T + (0.0 if b_proj is None else _f64(b_proj))
        if proj_clip > 0:
            h = np.clip(h, -proj_clip, proj_clip)
    gates = ([] if cifg else [inp]) + [cell_gate, forget, out_gate]
    scratch.reshape(-1)[...] = np.concatenate([g.reshape(-1) for g in gates]).astype(scratch.dtype)
    c_out[...] = c.astype(c_out.dtype)
    h_out[...] = h.astype(h_out.dtype)
    output[...] = h.astype(output.dtype)


def rnn_step(x, w, w_rec, bias, h_prev, activation: int, h_out, output) -> None:
    """``h = act(x @ w.T + h_prev @ w_rec.T + bias)``."""
    h = ACTIVATIONS[activation](_f64(x) @ _f64(w).T + _f64(h_prev) @ _f64(w_rec).T + _f64(bias))
    if h_out is not None:
        h_out[...] = h.astype(h_out.dtype)
    output[...] = h.astype(output.dtype)


def svdf_step(x, w_feature, w_time, bias, state_prev, rank: int, activation: int, state_out, output) -> None:
    """Stage 1: ``w_feature @ x`` pushed as the newest of ``memory_size`` entries per filter
    (``state_prev`` holds the older ones, oldest first, ``(memory_size - 1)`` per filter, or
    ``memory_size`` with a trailing unused slot); stage 2: per filter, the dot product of the
    memory with ``w_time``, summed over the ``rank`` filters of each unit, plus ``bias``."""
    batch = x.shape[0]
    n_filters, memory = w_time.shape
    slots = state_prev.shape[1] // n_filters
    old = _f64(state_prev).reshape(batch, n_filters, slots)[:, :, :memory - 1]
    newest = _f64(x) @ _f64(w_feature).T
    mem = np.concatenate([old, newest[:, :, None]], axis=2)
    per_filter = (mem * _f64(w_time)[None]).sum(axis=2)
    units = per_filter.reshape(batch, n_filters // rank, rank).sum(axis=2)
    if bias is not None:
        units = units + _f64(bias)
    kept = np.zeros((batch, n_filters, slots))
    kept[:, :, :memory - 1] = mem[:, :, 1:]
    state_out[...] = kept.reshape(state_out.shape).astype(state_out.dtype)
    output[...] = ACTIVATIONS[activation](units).astype(output.dtype)
