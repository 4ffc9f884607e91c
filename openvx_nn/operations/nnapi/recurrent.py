"""NNAPI LSTM, RNN and SVDF as OpenVX kernels (float32).

The previous state is the optional state input when given; without one the
kernel continues from what its own state output holds (the prepared model's
tensors keep their contents between executions, zero at first), so a model
in the form without state inputs carries its state from one execution to
the next."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import recurrent
from . import recurrent_cells as cells
from .common import F32, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

ACTIVATIONS = tuple(recurrent.ACTIVATIONS)


def _shape(args: Args, name: str, want: tuple[int, ...]) -> None:
    t = args.get(name)
    if t is None:
        return
    dtype_in(args, name, (F32,))
    require(tuple(t.shape) == want, name, f"{name} has shape {list(t.shape)}, expected {list(want)}")


def _activation(args: Args, allowed=ACTIVATIONS) -> None:
    act = args["activation"]
    require(act in allowed, "activation", f"activation {act} is not one of {list(allowed)}",
            Status.VX_ERROR_INVALID_VALUE)


GATES = "ifco"
LSTM_INPUTS = (("input",) + tuple(f"input_to_{g}" + ("?" if g == "i" else "") for g in GATES)
               + tuple(f"recurrent_to_{g}" + ("?" if g == "i" else "") for g in GATES)
               + tuple(f"cell_to_{g}?" for g in "ifo") + tuple(f"bias_{g}" + ("?" if g == "i" else "") for g in GATES)
               + ("projection_weights?", "projection_bias?", "output_state_in?", "cell_state_in?"))
STATES = ("output_state_in", "cell_state_in")


def _infer_lstm(args: Args):
    batch, size = rank_in(args, "input", (2,))
    dtype_in(args, "input", (F32,))
    units, size2 = rank_in(args, "input_to_f", (2,))
    require(size2 == size, "input_to_f", f"input_to_forget_weights have {size2} columns, the input {size}")
    proj = args.get("projection_weights")
    out_size = units if proj is None else next(iter(proj.shape))
    cifg = args.get("input_to_i") is None
    for g in GATES:
        if g == "i" and cifg:
            require(args.get("recurrent_to_i") is None and args.get("cell_to_i") is None, "recurrent_to_i",
                    "with CIFG (no input_to_input_weights) there are no other input gate weights")
            continue
        _shape(args, f"input_to_{g}", (units, size))
        _shape(args, f"recurrent_to_{g}", (units, out_size))
        _shape(args, f"bias_{g}", (units,))
        require(args.get(f"recurrent_to_{g}") is not None and args.get(f"bias_{g}") is not None,
                f"recurrent_to_{g}", f"gate {g} needs its recurrent weights and bias")
    peepholes = [args.get(f"cell_to_{g}") is not None for g in ("f", "o")]
    require(all(peepholes) or not any(peepholes), "cell_to_f", "peephole weights are all given or all absent")
    for g in "ifo":
        _shape(args, f"cell_to_{g}", (units,))
    if proj is not None:
        _shape(args, "projection_weights", (out_size, units))
        _shape(args, "projection_bias", (out_size,))
    _shape(args, "output_state_in", (batch, out_size))
    _shape(args, "cell_state_in", (batch, units))
    _activation(args)
    for clip in ("cell_clip", "proj_clip"):
        require(math.isfinite(args[clip]) and args[clip] >= 0, clip, f"{clip} {args[clip]} must be >= 0",
                Status.VX_ERROR_INVALID_VALUE)
    gates = 3 if cifg else 4
    scratch = args.get("scratch")
    scratch_shape = tuple(scratch.shape) if scratch is not None and math.prod(scratch.shape) == \
        batch * units * gates else (batch, units * gates)
    return {"scratch": (scratch_shape, F32), "output_state_out": ((batch, out_size), F32),
            "cell_state_out": ((batch, units), F32), "output": ((batch, out_size), F32)}


_SCRATCH_ORDER = (0, 2, 1, 3)
"""The scratch buffer's gates (input, cell, forget, output; no input gate with CIFG) in the engine's order."""


def _prepare_lstm(args: Args) -> Callable[[], None]:
    """One LSTM step (optional CIFG, peepholes, projection, clipping); gates go to the scratch buffer."""
    x, out = args["input"], args["output"]
    h_out, c_out = args["output_state_out"], args["cell_state_out"]
    h0 = args.get("output_state_in")
    c0 = args.get("cell_state_in")
    cifg = args.get("input_to_i") is None
    gates = np.zeros((4,) + c_out.shape, np.float32)
    order = _SCRATCH_ORDER[1:] if cifg else _SCRATCH_ORDER
    scratch = args["scratch"].reshape((len(order),) + c_out.shape)  # gate by gate, each [batch, units]

    def make() -> cells.Plan:
        plan = cells.Plan()
        cells.direction(plan, cells.lstm_cell(args, "", False), plan.read(x[None], contiguous=True), True,
                        plan.write(out[None]), h_out if h0 is None else h0, c_out if c0 is None else c0,
                        h_out=h_out, c_out=c_out, gates=gates)
        plan.after += [(gates[g], scratch[k]) for k, g in enumerate(order)]
        return plan
    return cells.guarded(args, [n for n in LSTM_INPUTS if n.rstrip("?") not in STATES], make)


def _run_lstm(args: Args) -> None:
    _prepare_lstm(args)()


nnapi_kernel(NNAPIKernel("lstm", 16, LSTM_INPUTS, ("scratch", "output_state_out", "cell_state_out", "output"),
                         _infer_lstm, _run_lstm, ints=("activation",), floats=("cell_clip", "proj_clip"),
                         prepare=_prepare_lstm))


def _infer_rnn(args: Args):
    batch, size = rank_in(args, "input", (2,))
    dtype_in(args, "input", (F32,))
    units, size2 = rank_in(args, "weights", (2,))
    require(size2 == size, "weights", f"weights have {size2} columns, the input {size}")
    _shape(args, "weights", (units, size))
    _shape(args, "recurrent_weights", (units, units))
    _shape(args, "bias", (units,))
    _shape(args, "hidden_state_in", (batch, units))
    _activation(args, (0, 1, 2, 3))
    return {"hidden_state_out": ((batch, units), F32), "output": ((batch, units), F32)}


def _prepare_rnn(args: Args) -> Callable[[], None]:
    """h = act(input * weights' + h_prev * recurrent_weights' + bias)."""
    h_out, out = args.get("hidden_state_out"), args["output"]
    h0 = args.get("hidden_state_in")

    def make() -> cells.Plan:
        plan = cells.Plan()
        cells.direction(plan, cells.rnn_cell(args, "", False), plan.read(args["input"][None], contiguous=True),
                        True, plan.write(out[None]), (out if h_out is None else h_out) if h0 is None else h0,
                        h_out=h_out)
        return plan
    return cells.guarded(args, ["weights", "recurrent_weights", "bias"], make)


def _run_rnn(args: Args) -> None:
    _prepare_rnn(args)()


nnapi_kernel(NNAPIKernel("rnn", 24, ("input", "weights", "recurrent_weights", "bias", "hidden_state_in?"),
                         ("hidden_state_out?", "output"), _infer_rnn, _run_rnn, ints=("activation",),
                         prepare=_prepare_rnn))


def _infer_svdf(args: Args):
    batch, size = rank_in(args, "input", (2,))
    dtype_in(args, "input", (F32,))
    filters, size2 = rank_in(args, "weights_feature", (2,))
    require(size2 == size, "weights_feature", f"weights_feature have {size2} columns, the input {size}")
    filters2, memory = rank_in(args, "weights_time", (2,))
    rank = args["rank"]
    require(rank >= 1 and filters % rank == 0 and filters2 == filters and memory >= 1, "weights_time",
            f"weights_feature rows {filters} and weights_time {[filters2, memory]} do not fit rank {rank}")
    units = filters // rank
    _shape(args, "weights_feature", (filters, size))
    _shape(args, "weights_time", (filters, memory))
    _shape(args, "bias", (units,))
    _activation(args, (0, 1, 2, 3))
    state = args.get("state_in") or args.get("state_out")
    slots = (memory - 1) if state is None else tuple(state.shape)[1] // max(filters, 1)
    require(slots in (memory - 1, memory) and (state is None or tuple(state.shape) == (batch, slots * filters)),
            "state_in", f"state has shape {list(state.shape) if state is not None else None}, expected "
            f"[{batch}, {(memory - 1) * filters}] (or [{batch}, {memory * filters}])")
    return {"state_out": ((batch, slots * filters), F32), "output": ((batch, units), F32)}


def _run_svdf(args: Args) -> None:
    """Stage 1 (features) pushed into the memory, stage 2 (time) reduced over the rank, plus bias."""
    state = args.get("state_in")
    state = args["state_out"].copy() if state is None else state
    recurrent.svdf_step(args["input"], args["weights_feature"], args["weights_time"], args.get("bias"), state,
                        args["rank"], args["activation"], args["state_out"], args["output"])


nnapi_kernel(NNAPIKernel("svdf", 27, ("input", "weights_feature", "weights_time", "bias?", "state_in?"),
                         ("state_out", "output"), _infer_svdf, _run_svdf, ints=("rank", "activation")))
