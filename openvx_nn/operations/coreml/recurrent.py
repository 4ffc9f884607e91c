"""CoreML recurrent kernels: simple recurrent, GRU and LSTM (one direction each; a
bidirectional LSTM is two LSTM nodes writing the two halves of one output).

``activations`` is a static FLOAT32 tensor of (function, alpha, beta) triples, the
function as its position in ``POINTWISE_FUNCTIONS``; ``flags`` a static INT32
tensor [sequence_output, reverse, coupled_input_forget].
"""
from __future__ import annotations

from ...core.enums import Status
from ...core.validation import Validation
from ...kernels.frontend import clipped_recurrence as k
from .common import F32, describe, float_input, output, same_output, scalar, tensor, values
from .elementwise import POINTWISE_FUNCTIONS

GATES = {"simple_recurrent": 1, "gru": 3, "lstm": 4}
ACTIVATION_COUNT = {"simple_recurrent": 1, "gru": 2, "lstm": 3}


def _activations(v: Validation, index: int, count: int) -> list[tuple[str, float, float]]:
    raw = values(v, index, F32)
    v.require(len(raw) == 3 * count and all(0 <= int(c) < len(POINTWISE_FUNCTIONS) for c in raw[::3]), index,
              Status.VX_ERROR_INVALID_VALUE, f"expected {count} (function, alpha, beta) triples, got {raw}")
    return [(POINTWISE_FUNCTIONS[int(raw[i])], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]


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
        for name, want in (("bias", (hidden, gates)), ("peephole", (hidden, 3))):
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
        v.require(len(flags) == 3, layout["flags"], Status.VX_ERROR_INVALID_VALUE,
                  f"flags must be [sequence_output, reverse, coupled], got {flags}")
        v.state["flags"] = [bool(f) for f in flags]
        steps = x.dims[4] if flags[0] else 1
        same_output(v, layout["y"], (1, 1, hidden, x.dims[3], steps))
        for name in ("h_out", "c_out"):
            if name in layout and v.present(layout[name]):
                same_output(v, layout[name], state_dims)

    return validate


def _a(p, i):
    return None if p[i] is None else p[i].array


_RNN = {"bias": 3, "h0": 4, "activations": 5, "flags": 6, "y": 7, "h_out": 8}
_RNN_PARAMS = (tensor("input"), tensor("weights", static=True), tensor("recursion", static=True),
               tensor("bias", optional=True, static=True), tensor("h0", optional=True),
               tensor("activations", static=True), tensor("flags", static=True), output(), output("h_out", True))


def _run_simple(p, state) -> None:
    seq, rev, _ = state["flags"]
    k.simple_recurrent(p[0].array, p[1].array, p[2].array, _a(p, 3), _a(p, 4), p[7].array, _a(p, 8),
                       state["activations"][0], seq, rev)


def _run_gru(p, state) -> None:
    seq, rev, _ = state["flags"]
    k.gru(p[0].array, p[1].array, p[2].array, _a(p, 3), _a(p, 4), p[7].array, _a(p, 8), state["activations"], seq, rev)


describe(50, "simple_recurrent", _RNN_PARAMS, _validator("simple_recurrent", _RNN), _run_simple)
describe(51, "gru", _RNN_PARAMS, _validator("gru", _RNN), _run_gru)

_LSTM = {"bias": 3, "peephole": 4, "h0": 5, "c0": 6, "activations": 7, "flags": 8, "y": 10, "h_out": 11, "c_out": 12}


def _run_lstm(p, state) -> None:
    seq, rev, coupled = state["flags"]
    k.lstm(p[0].array, p[1].array, p[2].array, _a(p, 3), _a(p, 4), _a(p, 5), _a(p, 6), p[10].array, _a(p, 11),
           _a(p, 12), state["activations"], seq, rev, coupled, p[9].value)


describe(52, "lstm", (tensor("input"), tensor("weights", static=True), tensor("recursion", static=True),
                      tensor("bias", optional=True, static=True), tensor("peephole", optional=True, static=True),
                      tensor("h0", optional=True), tensor("c0", optional=True), tensor("activations", static=True),
                      tensor("flags", static=True), scalar("cell_clip", F32), output(), output("h_out", True),
                      output("c_out", True)), _validator("lstm", _LSTM), _run_lstm)


