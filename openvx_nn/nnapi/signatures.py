"""The operand signature of every NNAPI 1.0 and 1.1 operation (API levels 27 and 28), as data.

Written from the "Inputs"/"Outputs" lists of ``NeuralNetworks.h`` (its API 27 and 28 parts only: no float16,
no layout flag, no dilation) and the 1.0 HAL text, which adds forms of its own (CONCATENATION's trailing fused
activation; LSTM, RNN and SVDF without state inputs, RNN's state after its activation and with one output).
One table drives the checks at ``addOperation`` and on whole models (``signature_check``), the lowering (which
inputs may be omitted, enum values) and the operation table of ``docs/nnapi.md``.
The forms are written with ``signature_forms``' vocabulary (``Slot``, ``Form``, ``Signature``).
"""
from __future__ import annotations

from ..operations.nnapi.recurrent import ACTIVATIONS as LSTM_ACTIVATIONS
from .enums import OperandType, OperationType, PaddingScheme
from .signature_forms import (
    ACTIVATION,
    ANY_TENSOR,
    BIAS,
    F32,
    FLOAT_OR_QUANT,
    I32,
    OP,
    Q8,
    TF32,
    TI32,
    UP_TO_4,
    Form,
    Signature,
    Slot,
    binary,
    f32,
    fixed,
    i32,
    ints,
    t,
    unary,
)
from .signatures_1_2 import SIGNATURES_1_2
from .signatures_1_2_detection import SIGNATURES_1_2_DETECTION
from .signatures_1_2_sequence import SIGNATURES_1_2_SEQUENCE
from .signatures_conv_1_2 import (
    CONVOLUTIONS_1_2,
    LAYOUT_OPERATIONS,
    NORMALIZATIONS_1_2,
    resize_bilinear,
    with_float16,
    with_layout,
)

PADS = tuple(i32(n) for n in ("padding left", "padding right", "padding top", "padding bottom"))
STRIDES = (i32("stride width"), i32("stride height"))
SCHEME = i32("padding scheme", tuple(int(p) for p in PaddingScheme))


def pool(types: tuple[OperandType, ...]) -> tuple[Form, ...]:
    data, out, size = t("input", (4,)), (t("output", (4,)),), (i32("filter width"), i32("filter height"))
    return (Form((data, *PADS, *STRIDES, *size, ACTIVATION), out, types, name="explicit padding"),
            Form((data, SCHEME, *STRIDES, *size, ACTIVATION), out, types, name="implicit padding"))


def convolution(depthwise: bool) -> tuple[Form, ...]:
    head = (t("input", (4,)), t("filter", (4,)), BIAS)
    tail = (i32("depth multiplier"), ACTIVATION) if depthwise else (ACTIVATION,)
    out = (t("output", (4,)),)
    return (Form((*head, *PADS, *STRIDES, *tail), out, FLOAT_OR_QUANT, name="explicit padding"),
            Form((*head, SCHEME, *STRIDES, *tail), out, FLOAT_OR_QUANT, name="implicit padding"))


def block_move() -> tuple[Form, ...]:
    return (Form((t("input", (4,)), i32("block size")), (t("output", (4,)),), FLOAT_OR_QUANT),)


def concatenation() -> tuple[Form, ...]:
    tensors, axis, out = t("input"), i32("axis"), (t("output"),)
    return (Form((tensors, axis), out, FLOAT_OR_QUANT, repeated=True, name="tensors, axis"),
            Form((tensors, axis, ACTIVATION), out, FLOAT_OR_QUANT, repeated=True,
                 name="with the 1.0 HAL's fused activation"))


GATES = ("input", "forget", "cell", "output")


def lstm() -> tuple[Form, ...]:
    weights = tuple(t(f"input-to-{g} weights", (2,), optional=g == "input") for g in GATES)
    weights += tuple(t(f"recurrent-to-{g} weights", (2,), optional=g == "input") for g in GATES)
    weights += tuple(t(f"cell-to-{g} weights", (1,), optional=True) for g in ("input", "forget", "output"))
    weights += tuple(t(f"{g} gate bias" if g != "cell" else "cell bias", (1,), optional=g == "input") for g in GATES)
    weights += (t("projection weights", (2,), optional=True), t("projection bias", (1,), optional=True))
    state = (t("output state in", (2,)), t("cell state in", (2,)))
    params = (i32("activation", tuple(int(a) for a in LSTM_ACTIVATIONS)), f32("cell clip"), f32("projection clip"))
    outs = (t("scratch buffer", (2, 3)), t("output state out", (2,)), t("cell state out", (2,)), t("output", (2,)))
    head = (t("input", (2,)), *weights)
    return (Form((*head, *state, *params), outs, (TF32,), name="state inputs"),
            Form((*head, *params), outs, (TF32,), name="the 1.0 HAL's, without state inputs"))


def rnn() -> tuple[Form, ...]:
    head = (t("input", (2,)), t("weights", (2,)), t("recurrent weights", (2,)), t("bias", (1,)))
    state = t("hidden state in", (2,))
    inputs = (((*head, state, ACTIVATION), "state in, activation"),
              ((*head, ACTIVATION, state), "the 1.0 HAL's order: activation, state in"),
              ((*head, ACTIVATION), "no state input"))
    outputs = (((t("hidden state out", (2,)), t("output", (2,))), "two outputs"),
               ((t("output", (2,)),), "one output"))
    return tuple(Form(ins, outs, (TF32,), name=f"{a}; {b}") for ins, a in inputs for outs, b in outputs)


def svdf() -> tuple[Form, ...]:
    head = (t("input", (2,)), t("weights feature", (2,)), t("weights time", (2,)), t("bias", (1,), optional=True))
    params = (i32("rank"), ACTIVATION)
    outs = (t("state out", (2,)), t("output", (2,)))
    return (Form((*head, t("state in", (2,)), *params), outs, (TF32,), name="state input"),
            Form((*head, *params), outs, (TF32,), name="the 1.0 HAL's, without state input"))


def trailing_optional(inputs: tuple[Slot, ...], outputs: tuple[Slot, ...]) -> tuple[Form, ...]:
    """The header's list, and the list without its last input, which is optional (SQUEEZE's axes, TRANSPOSE's
    permutation): omitted by NO_VALUE or left out."""
    return (Form(inputs, outputs, FLOAT_OR_QUANT, name="all inputs"),
            Form(inputs[:-1], outputs, FLOAT_OR_QUANT, name=f"without the optional {inputs[-1].name}"))


DEQUANTIZABLE = (Q8, OperandType.TENSOR_QUANT8_SYMM, OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL)
"""DEQUANTIZE's inputs: TENSOR_QUANT8_ASYMM, and API level 29's symmetric types (its output may be float16)."""


SIGNATURES: dict[OperationType, Signature] = {s.operation: s for s in (
    Signature(OP.ADD, binary(FLOAT_OR_QUANT)),
    Signature(OP.AVERAGE_POOL_2D, pool(FLOAT_OR_QUANT)),
    Signature(OP.CONCATENATION, concatenation()),
    Signature(OP.CONV_2D, convolution(False)),
    Signature(OP.DEPTHWISE_CONV_2D, convolution(True)),
    Signature(OP.DEPTH_TO_SPACE, block_move()),
    Signature(OP.DEQUANTIZE, tuple(Form((t("input"),), (fixed("output", out, UP_TO_4),), DEQUANTIZABLE,
                                        name=f"to {out.name}") for out in (TF32, OperandType.TENSOR_FLOAT16))),
    Signature(OP.EMBEDDING_LOOKUP, (Form((ints("lookups"), t("values", (), min_rank=2)),
                                         (t("output", (), min_rank=2),), ANY_TENSOR, anchor=1),)),
    Signature(OP.FLOOR, unary((TF32,))),
    Signature(OP.FULLY_CONNECTED, (Form((t("input"), t("weights", (2,)), BIAS, ACTIVATION), (t("output", (2,)),),
                                        FLOAT_OR_QUANT),)),
    Signature(OP.HASHTABLE_LOOKUP, (Form((ints("lookups"), ints("keys"), t("values", (), min_rank=1)),
                                         (t("output", (), min_rank=1), fixed("hits", Q8, (1,))), ANY_TENSOR,
                                         anchor=2),)),
    Signature(OP.L2_NORMALIZATION, (Form((t("input", (4,)),), (t("output", (4,)),), (TF32,)),)),
    Signature(OP.L2_POOL_2D, pool((TF32,))),
    Signature(OP.LOCAL_RESPONSE_NORMALIZATION, (Form((t("input", (4,)), i32("radius"), f32("bias"), f32("alpha"),
                                                      f32("beta")), (t("output", (4,)),), (TF32,)),)),
    Signature(OP.LOGISTIC, unary(FLOAT_OR_QUANT)),
    Signature(OP.LSH_PROJECTION, (Form((fixed("hash functions", TF32, (2,)), t("input", (), min_rank=1),
                                        fixed("weight", TF32, (1,), optional=True), i32("projection type", (1, 2))),
                                       (fixed("output", TI32, (1,)),), ANY_TENSOR, anchor=1),)),
    Signature(OP.LSTM, lstm()),
    Signature(OP.MAX_POOL_2D, pool(FLOAT_OR_QUANT)),
    Signature(OP.MUL, binary(FLOAT_OR_QUANT)),
    Signature(OP.RELU, unary(FLOAT_OR_QUANT)),
    Signature(OP.RELU1, unary(FLOAT_OR_QUANT)),
    Signature(OP.RELU6, unary(FLOAT_OR_QUANT)),
    Signature(OP.RESHAPE, (Form((t("input"), ints("shape")), (t("output"),), FLOAT_OR_QUANT),)),
    Signature(OP.RESIZE_BILINEAR, (Form((t("input", (4,)), i32("output width"), i32("output height")),
                                        (t("output", (4,)),), (TF32,)),)),
    Signature(OP.RNN, rnn()),
    Signature(OP.SOFTMAX, (Form((t("input", (2, 4)), f32("beta")), (t("output", (2, 4)),), FLOAT_OR_QUANT),)),
    Signature(OP.SPACE_TO_DEPTH, block_move()),
    Signature(OP.SVDF, svdf()),
    Signature(OP.TANH, unary((TF32,))),
    Signature(OP.BATCH_TO_SPACE_ND, (Form((t("input", (4,)), ints("block shape")), (t("output", (4,)),),
                                          FLOAT_OR_QUANT),), 28),
    Signature(OP.DIV, binary((TF32,)), 28),
    Signature(OP.MEAN, (Form((t("input"), ints("axes"), i32("keep dims")), (t("output", ()),), FLOAT_OR_QUANT),), 28),
    Signature(OP.PAD, (Form((t("input"), ints("paddings", 2)), (t("output"),), FLOAT_OR_QUANT),), 28),
    Signature(OP.SPACE_TO_BATCH_ND, (Form((t("input", (4,)), ints("block shape"), ints("paddings", 2)),
                                          (t("output", (4,)),), FLOAT_OR_QUANT),), 28),
    Signature(OP.SQUEEZE, trailing_optional((t("input"), ints("axes", optional=True)), (t("output", ()),)), 28),
    Signature(OP.STRIDED_SLICE, (Form((t("input"), ints("begin"), ints("end"), ints("strides"), i32("begin mask"),
                                       i32("end mask"), i32("shrink axis mask")), (t("output", ()),),
                                      FLOAT_OR_QUANT),), 28),
    Signature(OP.SUB, binary((TF32,)), 28),
    Signature(OP.TRANSPOSE, trailing_optional((t("input"), ints("permutation", optional=True)), (t("output"),)), 28),
)}
"""Every operation NNAPI defines that this driver runs, by its ``OperationType``."""
SIGNATURES.update(SIGNATURES_1_2)
SIGNATURES.update(SIGNATURES_1_2_SEQUENCE)
SIGNATURES.update(SIGNATURES_1_2_DETECTION)
SIGNATURES.update(CONVOLUTIONS_1_2)
SIGNATURES.update(NORMALIZATIONS_1_2)
SIGNATURES.update({kind: with_layout(with_float16(SIGNATURES[kind])) for kind in LAYOUT_OPERATIONS})
SIGNATURES[OP.RESIZE_BILINEAR] = resize_bilinear()


SHORT = {F32: "F32", I32: "I32", OperandType.UINT32: "U32", TF32: "TF32", TI32: "TI32", Q8: "Q8",
         OperandType.BOOL: "BOOL", OperandType.FLOAT16: "F16", OperandType.TENSOR_FLOAT16: "TF16",
         OperandType.TENSOR_BOOL8: "TB8", OperandType.TENSOR_QUANT16_SYMM: "Q16S",
         OperandType.TENSOR_QUANT16_ASYMM: "Q16A", OperandType.TENSOR_QUANT8_SYMM: "Q8S",
         OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL: "Q8PC"}


def _slot_text(slot: Slot) -> str:
    if slot.type is not None:
        kind = SHORT[slot.type]
    elif slot.by_type:
        paired: dict[OperandType, list[str]] = {}
        for a, b in slot.by_type:
            if a != b:
                paired.setdefault(a, []).append(SHORT[b])
        kind = " ".join(f"{'/'.join(bs)} if T is {SHORT[a]}," for a, bs in paired.items())
        kind += " else T" if any(a == b for a, b in slot.by_type) else ""
    else:
        kind = "T"
    rank = ""
    if kind.endswith("else T"):
        kind = f"({kind})"
    if slot.ranks and len(slot.ranks) > 4:
        rank = f"[{slot.ranks[0]}..{slot.ranks[-1]}]"
    elif slot.ranks and slot.ranks != UP_TO_4:
        rank = f"[{','.join(map(str, slot.ranks))}]"
    elif slot.ranks:
        rank = "[≤4]"
    elif slot.min_rank:
        rank = f"[≥{slot.min_rank}]"
    values = f" {{{', '.join(map(str, slot.values))}}}" if slot.values else ""
    return f"{slot.name}: {kind}{rank}{values}{' (optional)' if slot.optional else ''}"


def markdown_table() -> str:
    """The table of ``docs/nnapi.md``'s Validation section, written from ``SIGNATURES`` (a test compares)."""
    rows = ["| operation | API | T | inputs → outputs |", "|---|---|---|---|"]
    for signature in SIGNATURES.values():
        forms = []
        for form in signature.forms:
            ins = ", ".join(_slot_text(s) + (" ×n" if form.repeated and k == 0 else "")
                            for k, s in enumerate(form.inputs))
            outs = ", ".join(_slot_text(s) + (" ×n" if form.repeated_outputs else "") for s in form.outputs)
            forms.append((f"*{form.name}*: " if len(signature.forms) > 1 else "") + f"{ins} → {outs}")
        types = dict.fromkeys(SHORT[k] for form in signature.forms for k in form.types)
        anchor = signature.forms[0].anchor
        t = " ".join(types) + (f" (of input {anchor})" if anchor else "")
        rows.append(f"| {signature.operation.name} | {signature.api} | {t} | {'<br>'.join(forms)} |")
    return "\n".join(rows) + "\n"
