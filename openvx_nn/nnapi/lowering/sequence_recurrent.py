"""NNAPI 1.2's sequence RNNs and LSTMs: one node each (``operations/nnapi/sequence_recurrent``), its operands
named by their NNAPI positions. A bidirectional operation with ``merge_outputs`` produces one output (the
header leaves the backward one unused): a second output is refused rather than left unwritten."""
from __future__ import annotations

from ...operations.nnapi.sequence_recurrent import GATES, LSTM_WEIGHTS
from ..enums import OperationType
from .context import OpContext
from .registry import lowers

T = OperationType


def _merged(op: OpContext, position: int) -> int:
    merged = int(bool(op.scalar(position)))
    if merged and len(op.outputs) != 1:
        op.fail(f"merge_outputs is true: the backward output is not produced; give one output, not "
                f"{len(op.outputs)}")
    if not merged and len(op.outputs) != 2:
        op.fail("merge_outputs is false: the forward and the backward outputs are both needed")
    return merged


def _outputs(merged: int) -> dict[str, int]:
    return {"fw_output": 0} if merged else {"fw_output": 0, "bw_output": 1}


@lowers(T.UNIDIRECTIONAL_SEQUENCE_RNN)
def lower_unidirectional_sequence_rnn(op: OpContext) -> None:
    op.node("unidirectional_sequence_rnn", {"input": 0, "weights": 1, "recurrent_weights": 2, "bias": 3,
                                            "hidden_state_in": 4}, {"output": 0},
            {"activation": op.scalar(5), "time_major": op.scalar(6)})


@lowers(T.BIDIRECTIONAL_SEQUENCE_RNN)
def lower_bidirectional_sequence_rnn(op: OpContext) -> None:
    merged = _merged(op, 14)
    names = ("input", "fw_weights", "fw_recurrent_weights", "fw_bias", "fw_hidden_state_in", "bw_weights",
             "bw_recurrent_weights", "bw_bias", "bw_hidden_state_in", "aux_input", "fw_aux_weights",
             "bw_aux_weights")
    op.node("bidirectional_sequence_rnn", {n: k for k, n in enumerate(names)}, _outputs(merged),
            {"activation": op.scalar(12), "time_major": int(bool(op.scalar(13))), "merge_outputs": merged})


@lowers(T.UNIDIRECTIONAL_SEQUENCE_LSTM)
def lower_unidirectional_sequence_lstm(op: OpContext) -> None:
    names = {"input": 0, **{n: 1 + k for k, n in enumerate(LSTM_WEIGHTS)}, "output_state_in": 18,
             "cell_state_in": 19, **{f"norm_{g}": 24 + k for k, g in enumerate(GATES)}}
    op.node("unidirectional_sequence_lstm", names, {"output": 0},
            {"activation": op.scalar(20), "time_major": int(bool(op.scalar(23)))},
            {"cell_clip": float(op.scalar(21)), "proj_clip": float(op.scalar(22))})


@lowers(T.BIDIRECTIONAL_SEQUENCE_LSTM)
def lower_bidirectional_sequence_lstm(op: OpContext) -> None:
    merged = _merged(op, 51)
    names = {"input": 0}
    for d, first in (("fw", 1), ("bw", 18)):
        names.update({f"{d}_{n}": first + k for k, n in enumerate(LSTM_WEIGHTS)})
    names.update(fw_output_state_in=35, fw_cell_state_in=36, bw_output_state_in=37, bw_cell_state_in=38,
                 aux_input=39)
    for j, d in enumerate(("fw", "bw")):
        names.update({f"{d}_aux_to_{g}": 40 + 4 * j + k for k, g in enumerate(GATES)})
        names.update({f"{d}_norm_{g}": 53 + 4 * j + k for k, g in enumerate(GATES)})
    op.node("bidirectional_sequence_lstm", names, _outputs(merged),
            {"activation": op.scalar(48), "merge_outputs": merged, "time_major": int(bool(op.scalar(52)))},
            {"cell_clip": float(op.scalar(49)), "proj_clip": float(op.scalar(50))})


ACTIVATION_QUANT = (1.0 / 128, 128)
STATE_QUANT = (16.0 / 32768, 0)


@lowers(T.QUANTIZED_16BIT_LSTM)
def lower_quantized_16bit_lstm(op: OpContext) -> None:
    """The header fixes the activations' and the cell state's quantization, and one scale and zero point for
    the eight weights; the biases' scale is the input's times the weights'."""
    def quant(k, output=False):
        o = op.operand(k, output)
        return float(o.scale), int(o.zeroPoint)

    for k, output, want, what in ((0, False, ACTIVATION_QUANT, "input"), (14, False, ACTIVATION_QUANT,
                                  "previous output"), (1, True, ACTIVATION_QUANT, "output"),
                                  (13, False, STATE_QUANT, "previous cell state"), (0, True, STATE_QUANT,
                                                                                    "cell state")):
        if quant(k, output) != want:
            op.fail(f"{'output' if output else 'input'} {k} ({what}) has scale and zero point {quant(k, output)}; "
                    f"the header fixes {want}")
    weights = quant(1)
    for k in range(2, 9):
        if quant(k) != weights:
            op.fail(f"input {k} has scale and zero point {quant(k)}, input 1 {weights}: the weights share one")
    bias_scale = quant(9)[0]
    for k in range(9, 13):
        if quant(k) != (bias_scale, 0) or abs(bias_scale - weights[0] / 128) > 1e-6 * bias_scale:
            op.fail(f"input {k} (bias) has scale and zero point {quant(k)}; expected the input's scale times the "
                    f"weights' ({weights[0] / 128!r}) and 0")
    names = {"input": 0, **{f"input_to_{g}": 1 + k for k, g in enumerate(GATES)},
             **{f"recurrent_to_{g}": 5 + k for k, g in enumerate(GATES)},
             **{f"bias_{g}": 9 + k for k, g in enumerate(GATES)}, "cell_state_in": 13, "output_state_in": 14}
    op.node("quantized_16bit_lstm", names, {"cell_state_out": 0, "output": 1},
            {"weights_zero_point": weights[1]}, {"bias_scale": bias_scale})
