"""The operand signatures of the operations API level 29 (NNAPI 1.2) adds, as data (``signatures`` merges them).

Written from the "Inputs"/"Outputs" lists and "Supported tensor types" of the Android 10 ``NeuralNetworks.h``.
"Supported tensor rank: from 1" is ranks 1 to 6 here (an OpenVX tensor has at most six dimensions). Scalars
whose type follows the tensor's (PAD_V2's pad value, LOG_SOFTMAX's beta, ...) pair with ``T`` by ``by_type``,
so a float16 form is one more pair.
"""
from __future__ import annotations

from .enums import OperandType, OperationType
from .signature_forms import F32, I32, Q8, TF32, TI32, UP_TO_4, Form, Signature, Slot, fixed, i32, t

BOOL, TB8 = OperandType.BOOL, OperandType.TENSOR_BOOL8
F16, TF16 = OperandType.FLOAT16, OperandType.TENSOR_FLOAT16
OP = OperationType
FROM_1 = (1, 2, 3, 4, 5, 6)
ANY_RANK = ()
NUMBERS = (TF16, TF32, TI32, Q8)
FLOATS = (TF16, TF32)
FLOAT_OR_QUANT_12 = (TF16, TF32, Q8)


def same(types: tuple[OperandType, ...], ranks: tuple[int, ...] = FROM_1) -> tuple[Form, ...]:
    """One tensor in, one of its type and shape out."""
    return (Form((t("input", ranks),), (t("output", ranks),), types),)


def pair(types: tuple[OperandType, ...], first: str = "input0", second: str = "input1") -> tuple[Form, ...]:
    """Two tensors of one type (broadcast against each other), one out."""
    return (Form((t(first, FROM_1), t(second, FROM_1)), (t("output", FROM_1),), types),)


def real(name: str) -> Slot:
    """A scalar of the tensors' real type: FLOAT32 beside TENSOR_FLOAT32."""
    return Slot(name, by_type=((TF32, F32), (TF16, F16)))


def with_axis(types: tuple[OperandType, ...], out: Slot) -> tuple[Form, ...]:
    return (Form((t("input", FROM_1), i32("axis")), (out,), types),)


def reduction(types: tuple[OperandType, ...]) -> tuple[Form, ...]:
    return (Form((t("input", UP_TO_4), fixed("axes", TI32, (1,)), fixed("keep dims", BOOL)),
                 (t("output", ANY_RANK),), types),)


def cast() -> tuple[Form, ...]:
    """Any of the types to any other (or the same): one form per output type."""
    return tuple(Form((t("input", FROM_1),), (fixed("output", out, FROM_1),), NUMBERS, name=f"to {out.name}")
                 for out in NUMBERS)


def resize_nearest() -> tuple[Form, ...]:
    data, layout, out = t("input", (4,)), fixed("NCHW layout", BOOL), (t("output", (4,)),)
    by_type = ((TF32, F32), (TF16, F16), (Q8, F32))
    scales = (Slot("width scale", by_type=by_type), Slot("height scale", by_type=by_type))
    return (Form((data, i32("output width"), i32("output height"), layout), out, FLOAT_OR_QUANT_12, name="by shape"),
            Form((data, *scales, layout), out, FLOAT_OR_QUANT_12, name="by scale"))


def comparison() -> tuple[Form, ...]:
    return (Form((t("input0", FROM_1), t("input1", FROM_1)), (fixed("output", TB8, FROM_1),), (TB8, *NUMBERS)),)


UNARY_MATH = (OP.ABS, OP.EXP, OP.LOG, OP.RSQRT, OP.SIN, OP.SQRT)
COMPARISONS = (OP.EQUAL, OP.NOT_EQUAL, OP.GREATER, OP.GREATER_EQUAL, OP.LESS, OP.LESS_EQUAL)

SIGNATURES_1_2: dict[OperationType, Signature] = {s.operation: s for s in (
    *(Signature(kind, same(FLOATS), 29) for kind in UNARY_MATH),
    Signature(OP.NEG, same((*FLOATS, TI32)), 29),
    Signature(OP.POW, pair(FLOATS, "base", "exponent"), 29),
    Signature(OP.MAXIMUM, pair(NUMBERS), 29),
    Signature(OP.MINIMUM, pair(NUMBERS), 29),
    Signature(OP.PRELU, pair(FLOAT_OR_QUANT_12, "input", "alpha"), 29),
    Signature(OP.ARGMAX, with_axis(NUMBERS, fixed("output", TI32, ANY_RANK)), 29),
    Signature(OP.ARGMIN, with_axis(NUMBERS, fixed("output", TI32, ANY_RANK)), 29),
    Signature(OP.EXPAND_DIMS, with_axis(NUMBERS, t("output", FROM_1)), 29),
    Signature(OP.GATHER, (Form((t("input", FROM_1), i32("axis"), fixed("indices", TI32, FROM_1)),
                               (t("output", FROM_1),), NUMBERS),), 29),
    Signature(OP.SLICE, (Form((t("input", FROM_1), fixed("begin", TI32, (1,)), fixed("size", TI32, (1,))),
                              (t("output", FROM_1),), NUMBERS),), 29),
    Signature(OP.SPLIT, (Form((t("input", FROM_1), i32("axis"), i32("number of splits")), (t("output", FROM_1),),
                              NUMBERS, repeated_outputs=True),), 29),
    Signature(OP.TILE, (Form((t("input", FROM_1), fixed("multiples", TI32, (1,))), (t("output", FROM_1),),
                             NUMBERS),), 29),
    Signature(OP.TOPK_V2, (Form((t("input", FROM_1), i32("k")), (t("values", FROM_1), fixed("indices", TI32, FROM_1)),
                                NUMBERS),), 29),
    Signature(OP.PAD_V2, (Form((t("input", UP_TO_4), fixed("paddings", TI32, (2,)),
                                Slot("pad value", by_type=((TF32, F32), (TF16, F16), (Q8, I32)))),
                               (t("output", UP_TO_4),), FLOAT_OR_QUANT_12),), 29),
    Signature(OP.CHANNEL_SHUFFLE, (Form((t("input", UP_TO_4), i32("number of groups"), i32("axis")),
                                        (t("output", UP_TO_4),), FLOAT_OR_QUANT_12),), 29),
    Signature(OP.LOG_SOFTMAX, (Form((t("input", FROM_1), real("beta"), i32("axis")), (t("output", FROM_1),),
                                    FLOATS),), 29),
    Signature(OP.INSTANCE_NORMALIZATION, (Form((t("input", (4,)), real("gamma"), real("beta"), real("epsilon"),
                                                fixed("NCHW layout", BOOL)), (t("output", (4,)),), FLOATS),), 29),
    Signature(OP.REDUCE_MAX, reduction(FLOAT_OR_QUANT_12), 29),
    Signature(OP.REDUCE_MIN, reduction(FLOAT_OR_QUANT_12), 29),
    Signature(OP.REDUCE_PROD, reduction(FLOATS), 29),
    Signature(OP.REDUCE_SUM, reduction(FLOATS), 29),
    Signature(OP.CAST, cast(), 29),
    Signature(OP.QUANTIZE, (Form((t("input", FROM_1),), (fixed("output", Q8, FROM_1),), FLOATS),), 29),
    Signature(OP.RESIZE_NEAREST_NEIGHBOR, resize_nearest(), 29),
    *(Signature(kind, comparison(), 29) for kind in COMPARISONS),
    Signature(OP.LOGICAL_AND, pair((TB8,)), 29),
    Signature(OP.LOGICAL_OR, pair((TB8,)), 29),
    Signature(OP.LOGICAL_NOT, same((TB8,)), 29),
    Signature(OP.SELECT, (Form((fixed("condition", TB8, FROM_1), t("input1", FROM_1), t("input2", FROM_1)),
                               (t("output", FROM_1),), NUMBERS, anchor=1),), 29),
    Signature(OP.REDUCE_ALL, reduction((TB8,)), 29),
    Signature(OP.REDUCE_ANY, reduction((TB8,)), 29),
)}
"""The API level 29 operations this driver runs, by their ``OperationType``."""
