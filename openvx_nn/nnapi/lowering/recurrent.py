"""LSTM, RNN and SVDF (float32).

Two forms are accepted for each: with the previous state as inputs (the
application feeds each execution's state outputs back in), and the seed's
form without state inputs, where the prepared model carries the state from
one execution to the next in its own state outputs (zero at first)."""
from __future__ import annotations

from ...operations.nnapi.recurrent import GATES
from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers

T = OperationType


@lowers(T.LSTM)
def lower_lstm(op: OpContext) -> None:
    with_state = len(op.inputs) == 23
    params = 20 if with_state else 18
    names = {"input": 0}
    for i, g in enumerate(GATES):
        names[f"input_to_{g}"] = 1 + i
        names[f"recurrent_to_{g}"] = 5 + i
        names[f"bias_{g}"] = 12 + i
    names.update({"cell_to_i": 9, "cell_to_f": 10, "cell_to_o": 11, "projection_weights": 16,
                  "projection_bias": 17})
    if with_state:
        names.update(output_state_in=18, cell_state_in=19)
    for required in ("input_to_f", "input_to_c", "input_to_o", "recurrent_to_f", "bias_f"):
        if not op.present(names[required]):
            op.fail(f"input {names[required]} ({required}) has no value; it is not optional")
    op.node("lstm", names, {"scratch": 0, "output_state_out": 1, "cell_state_out": 2, "output": 3},
            {"activation": op.scalar(params)},
            {"cell_clip": op.scalar(params + 1), "proj_clip": op.scalar(params + 2)})


@lowers(T.RNN)
def lower_rnn(op: OpContext) -> None:
    if len(op.inputs) == 5:
        act, state = 4, None
    else:  # the HAL puts the state at 4 and the activation at 5; the seed's text lists them swapped
        act, state = (4, 5) if op.kind(4) == OperandType.INT32 else (5, 4)
    outputs = {"output": 0} if len(op.outputs) == 1 else {"hidden_state_out": 0, "output": 1}
    op.node("rnn", {"input": 0, "weights": 1, "recurrent_weights": 2, "bias": 3, "hidden_state_in": state},
            outputs, {"activation": op.scalar(act)})


@lowers(T.SVDF)
def lower_svdf(op: OpContext) -> None:
    with_state = len(op.inputs) == 7
    first = 5 if with_state else 4
    op.node("svdf", {"input": 0, "weights_feature": 1, "weights_time": 2, "bias": 3,
                     "state_in": 4 if with_state else None},
            {"state_out": 0, "output": 1}, {"rank": op.scalar(first), "activation": op.scalar(first + 1)})
