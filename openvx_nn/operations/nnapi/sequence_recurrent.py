"""NNAPI 1.2's recurrent operations as OpenVX kernels: the sequence RNNs and LSTMs (float32 and float16) and
QUANTIZED_16BIT_LSTM (``kernels/frontend/quant16_lstm``).

UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, UNIDIRECTIONAL_SEQUENCE_LSTM and
BIDIRECTIONAL_SEQUENCE_LSTM: each direction is one entry of the recurrent engine (``kernels/frontend/recurrence``,
bound by ``recurrent_cells``): the input products of the whole sequence in one product, a step's recurrent
products in one, in float32; float16 tensors are widened to float32 and the outputs rounded once to float16.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import quant16_lstm
from . import recurrent_cells as cells
from .common import F32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

F16 = np.dtype(np.float16)
FLOATS = (F16, F32)
LSTM_ACTIVATIONS = (0, 1, 3, 4, 6)
RNN_ACTIVATIONS = (0, 1, 2, 3)
GATES = "ifco"
LSTM_WEIGHTS = (tuple(f"input_to_{g}" for g in GATES) + tuple(f"recurrent_to_{g}" for g in GATES)
                + tuple(f"cell_to_{g}" for g in "ifo") + tuple(f"bias_{g}" for g in GATES)
                + ("projection_weights", "projection_bias"))
"""An LSTM cell's weights in NNAPI's input order (inputs 1 to 17 of the sequence LSTMs)."""
OPTIONAL = {"input_to_i", "recurrent_to_i", "cell_to_i", "cell_to_f", "cell_to_o", "bias_i", "projection_weights",
            "projection_bias"}


def _opt(name: str, optional: bool) -> str:
    return name + "?" if optional else name


def _shape(args: Args, name: str, want: tuple[int, ...], dtype: np.dtype) -> None:
    t = args.get(name)
    if t is None:
        return
    require(np.dtype(t.dtype) == dtype, name, f"{name} has element type {np.dtype(t.dtype)}, the input {dtype}",
            Status.VX_ERROR_INVALID_TYPE)
    require(tuple(t.shape) == want, name, f"{name} has shape {list(t.shape)}, expected {list(want)}")


def _sequence(args: Args, name: str = "input") -> tuple[int, int, int, np.dtype]:
    """(time, batch, size, dtype) of a 3-D sequence tensor, by the ``time_major`` flag."""
    a, b, size = rank_in(args, name, (3,))
    dtype = dtype_in(args, name, FLOATS)
    return (a, b, size, dtype) if args["time_major"] else (b, a, size, dtype)


def _activation(args: Args, allowed: tuple[int, ...]) -> None:
    act = args["activation"]
    require(act in allowed, "activation", f"activation {act} is not one of {list(allowed)}",
            Status.VX_ERROR_INVALID_VALUE)


def _out_shape(args: Args, time: int, batch: int, size: int) -> tuple[int, int, int]:
    return (time, batch, size) if args["time_major"] else (batch, time, size)


def _bidirectional_outputs(args: Args, time: int, batch: int, fw: int, bw: int, dtype: np.dtype):
    """The outputs' shapes: one of ``fw + bw`` columns when merged, else one per direction."""
    if args["merge_outputs"]:
        return {"fw_output": (_out_shape(args, time, batch, fw + bw), dtype)}
    return {"fw_output": (_out_shape(args, time, batch, fw), dtype),
            "bw_output": (_out_shape(args, time, batch, bw), dtype)}


# ---- the LSTM cell's operands --------------------------------------------------------------------------------


def _check_lstm_cell(args: Args, p: str, size: int, batch: int, dtype: np.dtype, aux_size: int) -> tuple[int, int]:
    """The rules of one direction's weights (prefix ``p``): (units, output size)."""
    units, size2 = rank_in(args, p + "input_to_f", (2,))
    require(size2 == size, p + "input_to_f", f"{p}input_to_forget_weights have {size2} columns, the input {size}")
    proj = args.get(p + "projection_weights")
    out_size = units if proj is None else next(iter(proj.shape))
    cifg = args.get(p + "input_to_i") is None
    for g in GATES:
        if g == "i" and cifg:
            require(all(args.get(p + n) is None for n in ("recurrent_to_i", "cell_to_i", "bias_i", "aux_to_i",
                                                          "norm_i")),
                    p + "recurrent_to_i", "with CIFG (no input-to-input weights) the other input gate weights, bias "
                    "and layer normalization weights have no value")
            continue
        for n in (f"recurrent_to_{g}", f"bias_{g}"):
            require(args.get(p + n) is not None, p + n, f"{p}{n} has no value; gate {g} needs it")
        _shape(args, p + f"input_to_{g}", (units, size), dtype)
        _shape(args, p + f"recurrent_to_{g}", (units, out_size), dtype)
        _shape(args, p + f"bias_{g}", (units,), dtype)
    peep = [args.get(p + f"cell_to_{g}") is not None for g in ("f", "o") + (() if cifg else ("i",))]
    require(all(peep) or not any(peep), p + "cell_to_f", "the peephole (cell-to-gate) weights are all given or all "
            "absent (cell-to-input absent with CIFG)")
    for g in "ifo":
        _shape(args, p + f"cell_to_{g}", (units,), dtype)
    if proj is not None:
        _shape(args, p + "projection_weights", (out_size, units), dtype)
    else:
        require(args.get(p + "projection_bias") is None, p + "projection_bias",
                "a projection bias without projection weights")
    _shape(args, p + "projection_bias", (out_size,), dtype)
    norms = [args.get(p + f"norm_{g}") is not None for g in GATES[1 if cifg else 0:]]
    require(all(norms) or not any(norms), p + "norm_f", "the layer normalization weights are all given or all "
            "absent (the input gate's absent with CIFG)")
    for g in GATES:
        _shape(args, p + f"norm_{g}", (units,), dtype)
    auxes = [args.get(p + f"aux_to_{g}") is not None for g in GATES[1 if cifg else 0:]]
    require(all(auxes) == (aux_size > 0) and (aux_size > 0 or not any(auxes)), p + "aux_to_f",
            "the auxiliary input and its weights (of every gate the cell has) are given together or not at all")
    for g in GATES:
        _shape(args, p + f"aux_to_{g}", (units, aux_size), dtype)
    _shape(args, p + "output_state_in", (batch, out_size), dtype)
    _shape(args, p + "cell_state_in", (batch, units), dtype)
    require(args.get(p + "output_state_in") is not None and args.get(p + "cell_state_in") is not None,
            p + "output_state_in", "the output and cell state inputs are required")
    return units, out_size


def _check_clips(args: Args) -> None:
    for clip in ("cell_clip", "proj_clip"):
        require(math.isfinite(args[clip]) and args[clip] >= 0, clip, f"{clip} {args[clip]} must be >= 0",
                Status.VX_ERROR_INVALID_VALUE)


def _aux_size(args: Args, time: int, batch: int, dtype: np.dtype) -> int:
    if args.get("aux_input") is None:
        return 0
    t2, b2, size, d2 = _sequence(args, "aux_input")
    require((t2, b2, d2) == (time, batch, dtype), "aux_input", "the auxiliary input's time, batch and type must be "
            "the input's")
    return size


def _lstm_weights(p: str) -> tuple[str, ...]:
    return tuple(p + n for n in LSTM_WEIGHTS) + tuple(f"{p}{w}_{g}" for w in ("aux_to", "norm") for g in GATES)
# ---- UNIDIRECTIONAL_SEQUENCE_LSTM ----------------------------------------------------------------------------

UNI_LSTM_INPUTS = (("input",) + tuple(_opt(n, n in OPTIONAL) for n in LSTM_WEIGHTS)
                   + ("output_state_in", "cell_state_in") + tuple(f"norm_{g}?" for g in GATES))


def _infer_uni_lstm(args: Args):
    time, batch, size, dtype = _sequence(args)
    _, out_size = _check_lstm_cell(args, "", size, batch, dtype, 0)
    _activation(args, LSTM_ACTIVATIONS)
    _check_clips(args)
    return {"output": (_out_shape(args, time, batch, out_size), dtype)}


def _uni_lstm(args: Args) -> cells.Plan:
    """An LSTM cell (CIFG, peepholes, layer normalization, projection, clipping) over the sequence."""
    plan = cells.Plan()
    cells.direction(plan, cells.lstm_cell(args, "", False), cells.sequence(plan, args), bool(args["time_major"]),
                    plan.write(args["output"]), args["output_state_in"], args["cell_state_in"])
    return plan


_run, _prepare, _native = cells.kernel_calls(_uni_lstm, _lstm_weights(""))
nnapi_kernel(NNAPIKernel("unidirectional_sequence_lstm", 92, UNI_LSTM_INPUTS, ("output",), _infer_uni_lstm,
                         _run, ints=("activation", "time_major"), floats=("cell_clip", "proj_clip"),
                         prepare=_prepare, native=_native, packed=_lstm_weights("")))


# ---- BIDIRECTIONAL_SEQUENCE_LSTM -----------------------------------------------------------------------------

BI_LSTM_INPUTS = (("input",) + tuple(_opt("fw_" + n, n in OPTIONAL) for n in LSTM_WEIGHTS)
                  + tuple(_opt("bw_" + n, n in OPTIONAL) for n in LSTM_WEIGHTS)
                  + ("fw_output_state_in", "fw_cell_state_in", "bw_output_state_in", "bw_cell_state_in",
                     "aux_input?") + tuple(f"{d}_aux_to_{g}?" for d in ("fw", "bw") for g in GATES)
                  + tuple(f"{d}_norm_{g}?" for d in ("fw", "bw") for g in GATES))


def _infer_bi_lstm(args: Args):
    time, batch, size, dtype = _sequence(args)
    aux = _aux_size(args, time, batch, dtype)
    _, fw_out = _check_lstm_cell(args, "fw_", size, batch, dtype, aux)
    _, bw_out = _check_lstm_cell(args, "bw_", size, batch, dtype, aux)
    _activation(args, LSTM_ACTIVATIONS)
    _check_clips(args)
    return _bidirectional_outputs(args, time, batch, fw_out, bw_out, dtype)


def _bidirectional(args: Args, fw_size: int, make_cell, state_names: tuple[str, ...]) -> cells.Plan:
    """A forward cell over the sequence and a backward one from its end; merged: side by side in the forward
    output (its columns past ``fw_size``)."""
    plan = cells.Plan()
    x = cells.sequence(plan, args)
    aux = args.get("aux_input") is not None
    time_major = bool(args["time_major"])
    fw = plan.write(args["fw_output"])
    bw = fw[..., fw_size:] if args["merge_outputs"] else plan.write(args["bw_output"])
    for p, out in (("fw_", fw[..., :fw_size] if args["merge_outputs"] else fw), ("bw_", bw)):
        cells.direction(plan, make_cell(args, p, aux), x, time_major, out,
                        *(args[p + name] for name in state_names), reverse=p == "bw_")
    return plan


def _bi_lstm(args: Args) -> cells.Plan:
    return _bidirectional(args, tuple(args["fw_output_state_in"].shape)[1], cells.lstm_cell,
                          ("output_state_in", "cell_state_in"))


_BI_LSTM_WEIGHTS = _lstm_weights("fw_") + _lstm_weights("bw_")
_run, _prepare, _native = cells.kernel_calls(_bi_lstm, _BI_LSTM_WEIGHTS)


nnapi_kernel(NNAPIKernel("bidirectional_sequence_lstm", 42, BI_LSTM_INPUTS, ("fw_output", "bw_output?"),
                         _infer_bi_lstm, _run, ints=("activation", "merge_outputs", "time_major"),
                         floats=("cell_clip", "proj_clip"), prepare=_prepare, native=_native, packed=_BI_LSTM_WEIGHTS))


# ---- the sequence RNNs ---------------------------------------------------------------------------------------


def _check_rnn_cell(args: Args, p: str, size: int, batch: int, dtype: np.dtype, aux_size: int) -> int:
    units, size2 = rank_in(args, p + "weights", (2,))
    require(size2 == size, p + "weights", f"{p}weights have {size2} columns, the input {size}")
    _shape(args, p + "weights", (units, size), dtype)
    _shape(args, p + "recurrent_weights", (units, units), dtype)
    _shape(args, p + "bias", (units,), dtype)
    _shape(args, p + "hidden_state_in", (batch, units), dtype)
    require((args.get(p + "aux_weights") is not None) == (aux_size > 0), p + "aux_weights",
            "the auxiliary input and its weights are given together or not at all")
    _shape(args, p + "aux_weights", (units, aux_size), dtype)
    return units


def _infer_uni_rnn(args: Args):
    require(args["time_major"] in (0, 1), "time_major", f"timeMajor {args['time_major']} must be 0 or 1",
            Status.VX_ERROR_INVALID_VALUE)
    time, batch, size, dtype = _sequence(args)
    units = _check_rnn_cell(args, "", size, batch, dtype, 0)
    _activation(args, RNN_ACTIVATIONS)
    return {"output": (_out_shape(args, time, batch, units), dtype)}


_RNN_WEIGHTS = ("weights", "recurrent_weights", "bias", "aux_weights")


def _uni_rnn(args: Args) -> cells.Plan:
    """outputs[t] = state = act(x_t weights' + state recurrent_weights' + bias), t = 1 .. max_time."""
    plan = cells.Plan()
    cells.direction(plan, cells.rnn_cell(args, "", False), cells.sequence(plan, args), bool(args["time_major"]),
                    plan.write(args["output"]), args["hidden_state_in"])
    return plan


_run, _prepare, _native = cells.kernel_calls(_uni_rnn, _RNN_WEIGHTS)
nnapi_kernel(NNAPIKernel("unidirectional_sequence_rnn", 93,
                         ("input", "weights", "recurrent_weights", "bias", "hidden_state_in"), ("output",),
                         _infer_uni_rnn, _run, ints=("activation", "time_major"), prepare=_prepare, native=_native,
                         packed=_RNN_WEIGHTS))


def _infer_bi_rnn(args: Args):
    time, batch, size, dtype = _sequence(args)
    aux = _aux_size(args, time, batch, dtype)
    fw = _check_rnn_cell(args, "fw_", size, batch, dtype, aux)
    bw = _check_rnn_cell(args, "bw_", size, batch, dtype, aux)
    _activation(args, RNN_ACTIVATIONS)
    return _bidirectional_outputs(args, time, batch, fw, bw, dtype)


def _bi_rnn(args: Args) -> cells.Plan:
    """A forward RNN cell over the sequence and a backward one from its end; merged: side by side."""
    return _bidirectional(args, next(iter(args["fw_weights"].shape)), cells.rnn_cell, ("hidden_state_in",))


_BI_RNN_WEIGHTS = tuple(d + n for d in ("fw_", "bw_") for n in _RNN_WEIGHTS)
_run, _prepare, _native = cells.kernel_calls(_bi_rnn, _BI_RNN_WEIGHTS)


nnapi_kernel(NNAPIKernel("bidirectional_sequence_rnn", 43,
                         ("input", "fw_weights", "fw_recurrent_weights", "fw_bias", "fw_hidden_state_in",
                          "bw_weights", "bw_recurrent_weights", "bw_bias", "bw_hidden_state_in", "aux_input?",
                          "fw_aux_weights?", "bw_aux_weights?"), ("fw_output", "bw_output?"),
                         _infer_bi_rnn, _run, ints=("activation", "time_major", "merge_outputs"),
                         prepare=_prepare, native=_native, packed=_BI_RNN_WEIGHTS))


# ---- QUANTIZED_16BIT_LSTM ------------------------------------------------------------------------------------

I16, I32 = np.dtype(np.int16), np.dtype(np.int32)
Q16_LSTM_INPUTS = (("input",) + tuple(f"input_to_{g}" for g in GATES) + tuple(f"recurrent_to_{g}" for g in GATES)
                   + tuple(f"bias_{g}" for g in GATES) + ("cell_state_in", "output_state_in"))


def _infer_q16_lstm(args: Args):
    batch, size = rank_in(args, "input", (2,))
    dtype_in(args, "input", (U8,))
    units = next(iter(rank_in(args, "input_to_i", (2,))))
    for g in GATES:
        _shape(args, f"input_to_{g}", (units, size), U8)
        _shape(args, f"recurrent_to_{g}", (units, units), U8)
        _shape(args, f"bias_{g}", (units,), I32)
    _shape(args, "cell_state_in", (batch, units), I16)
    _shape(args, "output_state_in", (batch, units), U8)
    require(args["bias_scale"] > 0, "bias_scale", "the biases' scale must be positive", Status.VX_ERROR_INVALID_VALUE)
    return {"cell_state_out": ((batch, units), I16), "output": ((batch, units), U8)}


def _run_q16_lstm(args: Args) -> None:
    """One step in 16-bit fixed point (``quant16_lstm.lstm_cell``): Q3.12 gates, Q4.11 cell state."""
    def ints(names):
        return np.ascontiguousarray(np.stack([np.asarray(args[n], np.int64) for n in names]))
    multiplier, shift = quant16_lstm.quantize_multiplier(4096.0 * float(args["bias_scale"]))
    quant16_lstm.lstm_cell(np.asarray(args["input"], np.int64), np.asarray(args["output_state_in"], np.int64),
                           ints([f"input_to_{g}" for g in GATES]), ints([f"recurrent_to_{g}" for g in GATES]),
                           ints([f"bias_{g}" for g in GATES]), int(args["weights_zero_point"]), multiplier, shift,
                           np.asarray(args["cell_state_in"], np.int64), args["cell_state_out"], args["output"])


nnapi_kernel(NNAPIKernel("quantized_16bit_lstm", 73, Q16_LSTM_INPUTS, ("cell_state_out", "output"), _infer_q16_lstm,
                         _run_q16_lstm, ints=("weights_zero_point",), floats=("bias_scale",)))
