"""CoreML recurrent kernels: simple recurrent, GRU and LSTM (one direction each; a
bidirectional LSTM is two LSTM nodes writing the two halves of one output), on the
recurrent engine (``kernels/frontend/recurrence``): a node binds one entry, which a
native plan calls as it is.

Tensors are read through their reversed views: the input is CoreML [Seq, Batch, I, 1, 1],
weights [gates, H, I] and [gates, H, H], biases [gates, H], peepholes [3, H], states
[1, Batch, H, 1, 1]. Every gate's pre-activation is clipped to [-50, 50] (``CLIP``).

``activations`` is a static FLOAT32 tensor of (function, alpha, beta) triples, the
function as its position in ``POINTWISE_FUNCTIONS``; ``flags`` a static INT32
tensor [sequence_output, reverse, coupled_input_forget], and for a GRU a fourth, reset_after: the reset gate
scales the output gate's recurrent product plus its bias (``recursion_bias``, [gates, H], PyTorch's GRU, which
clips nothing) instead of the state before it (CoreML's layer).
"""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import recurrence, recurrent_layer
from .common import F32, describe, float_input, output, same_output, scalar, tensor, values
from .elementwise import POINTWISE_FUNCTIONS

GATES = {"simple_recurrent": 1, "gru": 3, "lstm": 4}
ACTIVATION_COUNT = {"simple_recurrent": 1, "gru": 2, "lstm": 3}


def _activations(v: Validation, index: int, count: int) -> list[tuple[str, float, float]]:
    raw = values(v, index, F32)
    v.require(len(raw) == 3 * count and all(0 <= int(c) < len(POINTWISE_FUNCTIONS) for c in raw[::3]), index,
              Status.VX_ERROR_INVALID_VALUE, f"expected {count} (function, alpha, beta) triples, got {raw}")
    chosen = [(POINTWISE_FUNCTIONS[int(raw[i])], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]
    unknown = [name for name, _, _ in chosen if name not in recurrence.ACTIVATIONS]
    v.require(not unknown, index, Status.VX_ERROR_INVALID_VALUE,
              f"{unknown} are not recurrent gate activations (those are {list(recurrence.ACTIVATIONS)})")
    return chosen


def _validator(layer: str, layout: dict[str, int]):
    """Checks shared by the three layers; ``layout`` gives each parameter's index."""
    gates = GATES[layer]

    def validate(v: Validation) -> None:
        x = float_input(v, 0)
        w, r = float_input(v, 1), float_input(v, 2)
        v.require(x.rank == 5 and x.dims[:2] == (1, 1), 0, Status.VX_ERROR_INVALID_DIMENSION,
                  f"input must be [1, 1, I, Batch, Seq], got {list(x.dims)}")
        v.require(w.rank == 3 and w.dims[2] == gates and w.dims[0] == x.dims[2], 1,
                  Status.VX_ERROR_INVALID_DIMENSION,
                  f"weights must be [I={x.dims[2]}, H, {gates}], got {list(w.dims)}")
        hidden = w.dims[1]
        v.require(r.dims == (hidden, hidden, gates), 2, Status.VX_ERROR_INVALID_DIMENSION,
                  f"recursion must be [{hidden}, {hidden}, {gates}], got {list(r.dims)}")
        for name, want in (("bias", (hidden, gates)), ("recursion_bias", (hidden, gates)), ("peephole", (hidden, 3))):
            meta = float_input(v, layout[name]) if name in layout else None
            if meta is not None:
                v.require(meta.dims == want, layout[name], Status.VX_ERROR_INVALID_DIMENSION,
                          f"{name} must be {list(want)}, got {list(meta.dims)}")
        state_dims = (1, 1, hidden, x.dims[3], 1)
        for name in ("h0", "c0"):
            meta = float_input(v, layout[name]) if name in layout else None
            if meta is not None:
                v.require(meta.dims == state_dims, layout[name], Status.VX_ERROR_INVALID_DIMENSION,
                          f"{name} must be {list(state_dims)}, got {list(meta.dims)}")
        v.state["activations"] = _activations(v, layout["activations"], ACTIVATION_COUNT[layer])
        flags = values(v, layout["flags"])
        v.require(len(flags) == 3 or (layer == "gru" and len(flags) == 4), layout["flags"],
                  Status.VX_ERROR_INVALID_VALUE, f"flags must be [sequence_output, reverse, coupled]"
                  f"{', reset_after' if layer == 'gru' else ''}, got {flags}")
        v.state["flags"] = [bool(f) for f in flags]
        steps = x.dims[4] if flags[0] else 1
        same_output(v, layout["y"], (1, 1, hidden, x.dims[3], steps))
        for name in ("h_out", "c_out"):
            if name in layout and v.present(layout[name]):
                same_output(v, layout[name], state_dims)

    return validate


CLIP = 50.0


def _a(p, i):
    return None if p[i] is None else p[i].array


def _rows(a):
    """A CoreML [Seq or 1, Batch, C, 1, 1] tensor (OpenVX order reversed) as its [Seq, Batch, C] view."""
    return a.T[:, :, :, 0, 0]


def _state(p, i):
    return None if p[i] is None else _rows(p[i].array)[0]


def _cell(p, state, kind: str) -> recurrent_layer.Cell:
    w, r = p[1].array.T, p[2].array.T
    gates, hidden = w.shape[0], w.shape[1]
    bias = None if p[3] is None else p[3].array.T.reshape(gates * hidden)
    acts = state["activations"]
    if kind != "lstm":
        after = kind == "gru" and len(state["flags"]) > 3 and state["flags"][3]
        rec_bias = None if len(p) <= 9 or p[9] is None else p[9].array.T.reshape(gates * hidden)
        return recurrent_layer.Cell(kind, w.reshape(gates * hidden, -1), r.reshape(gates * hidden, hidden), bias,
                                    acts, pre_clip=0.0 if after else CLIP, recurrent_bias=rec_bias,
                                    reset_after=after)
    coupled = state["flags"][2]
    skip = hidden if coupled else 0  # coupled input and forget gates: the input gate's weights are not read
    return recurrent_layer.Cell(
        kind, w.reshape(gates * hidden, -1)[skip:], r.reshape(gates * hidden, hidden)[skip:],
        None if bias is None else bias[skip:], acts, cifg=coupled,
        peephole=None if p[4] is None else p[4].array.T.reshape(3, hidden), cell_clip=float(p[9].value),
        pre_clip=CLIP)


def _bind(kind: str, y: int, states: tuple[int, ...], p, state) -> tuple:
    """(the node's entry, the per-run copy of an input that is not contiguous, or None)."""
    x = _rows(p[0].array)
    staged = None
    if not (x.flags.c_contiguous and x.dtype.name == "float32"):
        staged = np.empty(x.shape, np.float32)
    h0, c0, h_out, c_out = (_state(p, i) if i is not None else None for i in states)
    entry = recurrent_layer.bind(_cell(p, state, kind), x if staged is None else staged, _rows(p[y].array), h0, c0,
                                 h_out, c_out, reverse=state["flags"][1])
    return entry, (None if staged is None else (x, staged))


def _prepare(kind: str, y: int, states: tuple[int, ...]):
    def prepare(p, state):
        entry, copy = _bind(kind, y, states, p, state)
        run = recurrent_layer.runner(entry)
        if copy is None:
            return run

        def staged_run() -> None:
            copy[1][...] = copy[0]
            run()
        return staged_run
    return prepare


def _native(kind: str, y: int, states: tuple[int, ...]):
    def native(p, state):
        entry, copy = _bind(kind, y, states, p, state)
        return entry if copy is None else None
    return native


def _execute(prepare):
    return lambda p, state: prepare(p, state)()


_RNN = {"bias": 3, "h0": 4, "activations": 5, "flags": 6, "y": 7, "h_out": 8}
_RNN_PARAMS = (tensor("input"), tensor("weights", static=True), tensor("recursion", static=True),
               tensor("bias", optional=True, static=True), tensor("h0", optional=True),
               tensor("activations", static=True), tensor("flags", static=True), output(), output("h_out", True))
_RNN_STATES = (4, None, 8, None)

_prep = _prepare("rnn", 7, _RNN_STATES)
describe(50, "simple_recurrent", _RNN_PARAMS, _validator("simple_recurrent", _RNN), _execute(_prep), _prep,
         _native("rnn", 7, _RNN_STATES))
_prep_gru = _prepare("gru", 7, _RNN_STATES)
describe(51, "gru", (*_RNN_PARAMS, tensor("recursion_bias", optional=True, static=True)),
         _validator("gru", {**_RNN, "recursion_bias": 9}), _execute(_prep_gru), _prep_gru,
         _native("gru", 7, _RNN_STATES))

_LSTM = {"bias": 3, "peephole": 4, "h0": 5, "c0": 6, "activations": 7, "flags": 8, "y": 10, "h_out": 11, "c_out": 12}
_LSTM_STATES = (5, 6, 11, 12)
_prep_lstm = _prepare("lstm", 10, _LSTM_STATES)

describe(52, "lstm", (tensor("input"), tensor("weights", static=True), tensor("recursion", static=True),
                      tensor("bias", optional=True, static=True), tensor("peephole", optional=True, static=True),
                      tensor("h0", optional=True), tensor("c0", optional=True), tensor("activations", static=True),
                      tensor("flags", static=True), scalar("cell_clip", F32), output(), output("h_out", True),
                      output("c_out", True)), _validator("lstm", _LSTM), _execute(_prep_lstm), _prep_lstm,
         _native("lstm", 10, _LSTM_STATES))
