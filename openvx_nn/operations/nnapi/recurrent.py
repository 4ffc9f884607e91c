"""NNAPI LSTM, RNN and SVDF as OpenVX kernels (float32).

The previous state is the optional state input when given; without one the
kernel continues from what its own state output holds (the prepared model's
tensors keep their contents between executions, zero at first), so a model
in the form without state inputs carries its state from one execution to
the next."""
from __future__ import annotations

import math

from ...core.enums import Status
from ...kernels.frontend import recurrent
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


def _run_lstm(args: Args) -> None:
    """One LSTM step (optional CIFG, peepholes, projection, clipping); gates go to the scratch buffer."""
    pick = {g: args.get(f"input_to_{g}") for g in GATES}
    w_in = {g: w for g, w in pick.items() if w is not None}
    w_rec = {g: args.get(f"recurrent_to_{g}") for g in w_in}
    bias = {g: args.get(f"bias_{g}") for g in w_in}
    w_cell = {g: args.get(f"cell_to_{g}") for g in "ifo" if args.get(f"cell_to_{g}") is not None}
    h_prev = args.get("output_state_in")
    c_prev = args.get("cell_state_in")
    h_prev = args["output_state_out"].copy() if h_prev is None else h_prev
    c_prev = args["cell_state_out"].copy() if c_prev is None else c_prev
    recurrent.lstm_step(args["input"], w_in, w_rec, w_cell, bias, args.get("projection_weights"),
                        args.get("projection_bias"), h_prev, c_prev, args["activation"], args["cell_clip"],
                        args["proj_clip"], args["scratch"], args["output_state_out"], args["cell_state_out"],
                        args["output"])


nnapi_kernel(NNAPIKernel("lstm", 16, LSTM_INPUTS, ("scratch", "output_state_out", "cell_state_out", "output"),
                         _infer_lstm, _run_lstm, ints=("activation",), floats=("cell_clip", "proj_clip")))


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


def _run_rnn(args: Args) -> None:
    """h = act(input * weights' + h_prev * recurrent_weights' + bias)."""
    h_prev = args.get("hidden_state_in")
    h_prev = (args["hidden_state_out"] if args.get("hidden_state_out") is not None else args["output"]).copy() \
        if h_prev is None else h_prev
    recurrent.rnn_step(args["input"], args["weights"], args["recurrent_weights"], args["bias"], h_prev,
                       args["activation"], args.get("hidden_state_out"), args["output"])


nnapi_kernel(NNAPIKernel("rnn", 24, ("input", "weights", "recurrent_weights", "bias", "hidden_state_in?"),
                         ("hidden_state_out?", "output"), _infer_rnn, _run_rnn, ints=("activation",)))


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
