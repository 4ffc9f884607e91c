"""The operand signatures of API level 29's recurrent operations: the sequence RNNs and LSTMs, and
QUANTIZED_16BIT_LSTM (``signatures`` merges them).

Written from the Android 10 ``NeuralNetworks.h`` "Inputs"/"Outputs" lists: every tensor TENSOR_FLOAT32 or
TENSOR_FLOAT16 (one type), the clipping thresholds FLOAT32 or FLOAT16 with them. BIDIRECTIONAL_SEQUENCE_RNN's
auxiliary input and weights (9 to 11) may have no value (the header's diagram shows the op with and without
them); its and BIDIRECTIONAL_SEQUENCE_LSTM's backward output is absent when ``merge_outputs`` is true (the
lowering checks the count against the flag).
"""
from __future__ import annotations

from .enums import OperandType, OperationType
from .signature_forms import F32, FUSE, Q8, TF32, TI32, Form, Signature, Slot, fixed, i32, t

BOOL, F16, TF16 = OperandType.BOOL, OperandType.FLOAT16, OperandType.TENSOR_FLOAT16
OP = OperationType
FLOATS = (TF16, TF32)
LSTM_ACTIVATION = i32("activation", (0, 1, 3, 4, 6))
CLIPS = tuple(Slot(name, by_type=((TF32, F32), (TF16, F16))) for name in ("cell clip", "projection clip"))
GATES = ("input", "forget", "cell", "output")


def _lstm_cell(prefix: str = "") -> tuple[Slot, ...]:
    """An LSTM cell's weights (the inputs 1 to 17 of UNIDIRECTIONAL_SEQUENCE_LSTM)."""
    def w(name, ranks, optional=False):
        return t(prefix + name, ranks, optional)
    return (*(w(f"input-to-{g} weights", (2,), g == "input") for g in GATES),
            *(w(f"recurrent-to-{g} weights", (2,), g == "input") for g in GATES),
            *(w(f"cell-to-{g} weights", (1,), True) for g in ("input", "forget", "output")),
            *(w(f"{g} gate bias", (1,), g == "input") for g in GATES),
            w("projection weights", (2,), True), w("projection bias", (1,), True))


def _norms(prefix: str = "") -> tuple[Slot, ...]:
    return tuple(t(f"{prefix}{g} layer normalization weights", (1,), True) for g in GATES)


def unidirectional_lstm() -> tuple[Form, ...]:
    inputs = (t("input", (3,)), *_lstm_cell(), t("output state in", (2,)), t("cell state in", (2,)),
              LSTM_ACTIVATION, *CLIPS, fixed("time major", BOOL), *_norms())
    return (Form(inputs, (t("output", (3,)),), FLOATS),)


def bidirectional_lstm() -> tuple[Form, ...]:
    aux = tuple(t(f"{d} auxiliary input-to-{g} weights", (2,), True) for d in ("forward", "backward") for g in GATES)
    inputs = (t("input", (3,)), *_lstm_cell("forward "), *_lstm_cell("backward "),
              t("forward output state in", (2,)), t("forward cell state in", (2,)),
              t("backward output state in", (2,)), t("backward cell state in", (2,)),
              t("auxiliary input", (3,), True), *aux, LSTM_ACTIVATION, *CLIPS, fixed("merge outputs", BOOL),
              fixed("time major", BOOL), *_norms("forward "), *_norms("backward "))
    out = t("forward output", (3,))
    return (Form(inputs, (out, t("backward output", (3,))), FLOATS, name="separate outputs"),
            Form(inputs, (out,), FLOATS, name="merged outputs"))


def unidirectional_rnn() -> tuple[Form, ...]:
    return (Form((t("input", (3,)), t("weights", (2,)), t("recurrent weights", (2,)), t("bias", (1,)),
                  t("hidden state", (2,)), i32("fused activation", FUSE), i32("time major", (0, 1))),
                 (t("output", (3,)),), FLOATS),)


def bidirectional_rnn() -> tuple[Form, ...]:
    def cell(d):
        return (t(f"{d} weights", (2,)), t(f"{d} recurrent weights", (2,)), t(f"{d} bias", (1,)),
                t(f"{d} hidden state", (2,)))
    inputs = (t("input", (3,)), *cell("forward"), *cell("backward"), t("auxiliary input", (3,), True),
              t("forward auxiliary weights", (2,), True), t("backward auxiliary weights", (2,), True),
              i32("fused activation", FUSE), fixed("time major", BOOL), fixed("merge outputs", BOOL))
    out = t("forward output", (3,))
    return (Form(inputs, (out, t("backward output", (3,))), FLOATS, name="separate outputs"),
            Form(inputs, (out,), FLOATS, name="merged outputs"))


def quantized_lstm() -> tuple[Form, ...]:
    """Inputs 0 to 14 and the two outputs of QUANTIZED_16BIT_LSTM: uint8 activations, int32 biases, a
    TENSOR_QUANT16_SYMM cell state."""
    q16 = OperandType.TENSOR_QUANT16_SYMM
    weights = tuple(fixed(f"{src}-to-{g} weights", Q8, (2,)) for src in ("input", "recurrent") for g in GATES)
    biases = tuple(fixed(f"{g} gate bias", TI32, (1,)) for g in GATES)
    inputs = (fixed("input", Q8, (2,)), *weights, *biases, fixed("previous cell state", q16, (2,)),
              fixed("previous output", Q8, (2,)))
    return (Form(inputs, (fixed("cell state", q16, (2,)), fixed("output", Q8, (2,)))),)


SIGNATURES_1_2_SEQUENCE: dict[OperationType, Signature] = {s.operation: s for s in (
    Signature(OP.UNIDIRECTIONAL_SEQUENCE_RNN, unidirectional_rnn(), 29),
    Signature(OP.BIDIRECTIONAL_SEQUENCE_RNN, bidirectional_rnn(), 29),
    Signature(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, unidirectional_lstm(), 29),
    Signature(OP.BIDIRECTIONAL_SEQUENCE_LSTM, bidirectional_lstm(), 29),
    Signature(OP.QUANTIZED_16BIT_LSTM, quantized_lstm(), 29),
)}
"""The recurrent operations of API level 29, by their ``OperationType``."""
