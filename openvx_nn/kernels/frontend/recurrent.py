"""One time step of NNAPI's SVDF in float64 on float32 tensors (the LSTM and RNN cells run on the recurrent
engine, ``recurrence``).  States arrive as arrays and the new states are written to the output arrays given;
a step reads every input before it writes."""
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
