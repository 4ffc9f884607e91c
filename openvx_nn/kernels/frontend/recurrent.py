"""One time step of the recurrent layers (LSTM, basic RNN, SVDF) in float64
on float32 tensors.  States arrive as arrays and the new states are written
to the output arrays given; a step reads every input before it writes."""
from __future__ import annotations

import numpy as np

from . import sequence_recurrence

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


def _stacked(parts: dict, names: str, shape: tuple[int, ...]) -> np.ndarray:
    """The gates' arrays of ``names`` in that order, float64; zeros for a gate ``parts`` lacks; a matrix
    ``[U, K]`` transposed to ``[K, U]`` (``sequence_recurrence``'s layout)."""
    stacked = np.stack([np.zeros(shape) if parts.get(g) is None else _f64(parts[g]).reshape(shape) for g in names])
    return np.ascontiguousarray(stacked.transpose(0, 2, 1)) if len(shape) == 2 else stacked


def lstm_step(x, w_in, w_rec, w_cell, bias, w_proj, b_proj, h_prev, c_prev, activation: int, cell_clip: float,
              proj_clip: float, scratch, h_out, c_out, output) -> None:
    """``w_in``/``w_rec``/``bias`` map gate name ('i', 'f', 'c', 'o') to arrays (``'i'`` absent with CIFG);
    ``w_cell`` maps 'i', 'f', 'o' to peephole vectors (or is empty).  Gates, in the scratch order
    input, cell, forget, output (input left out with CIFG), are stored after their activation.
    One step of ``sequence_recurrence.lstm_sequence``: the sequence LSTMs' cell."""
    x = _f64(x)
    batch, size = x.shape
    units = _f64(w_in["f"]).shape[0]
    out_size = units if w_proj is None else _f64(w_proj).shape[0]
    cifg = "i" not in w_in
    h = np.array(_f64(h_prev).reshape(batch, out_size))
    c = np.array(_f64(c_prev).reshape(batch, units))
    out = np.zeros((1, batch, out_size))
    gates = np.zeros((4, batch, units))
    proj = np.zeros((units, out_size)) if w_proj is None else np.ascontiguousarray(_f64(w_proj).T)
    proj_bias = np.zeros(out_size) if b_proj is None else np.ascontiguousarray(_f64(b_proj))
    sequence_recurrence.lstm_sequence(
        np.ascontiguousarray(x[None]), np.zeros((1, batch, 0)), _stacked(w_in, "ifco", (units, size)),
        np.zeros((4, 0, units)), _stacked(w_rec, "ifco", (units, out_size)), _stacked(w_cell, "ifo", (units,)),
        _stacked(bias, "ifco", (units,)), np.zeros((4, units)), proj, proj_bias, h, c, out, 0, cifg,
        bool(w_cell), False, w_proj is not None, int(activation), float(cell_clip), float(proj_clip), False, gates)
    order = ([] if cifg else [0]) + [2, 1, 3]
    scratch.reshape(-1)[...] = np.concatenate([gates[g].reshape(-1) for g in order]).astype(scratch.dtype)
    c_out[...] = c.astype(c_out.dtype)
    h_out[...] = h.astype(h_out.dtype)
    output[...] = h.astype(output.dtype)


def rnn_step(x, w, w_rec, bias, h_prev, activation: int, h_out, output) -> None:
    """``h = act(x @ w.T + h_prev @ w_rec.T + bias)``: one step of ``sequence_recurrence.rnn_sequence``."""
    x = _f64(x)
    batch = x.shape[0]
    w = np.ascontiguousarray(_f64(w).T)
    units = w.shape[1]
    h = np.array(_f64(h_prev).reshape(batch, units))
    out = np.zeros((1, batch, units))
    sequence_recurrence.rnn_sequence(np.ascontiguousarray(x[None]), np.zeros((1, batch, 0)), w,
                                     np.zeros((0, units)), np.ascontiguousarray(_f64(w_rec).T),
                                     np.ascontiguousarray(_f64(bias)), h, out, 0, int(activation), False)
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
