"""The convolutions' signatures as API level 29 writes them (``signatures`` merges them): GROUPED_CONV_2D and
TRANSPOSE_CONV_2D, and CONV_2D's and DEPTHWISE_CONV_2D's forms with float16, a per-channel quantized filter, the
trailing NCHW-layout flag and, after it, the dilation factors; the layout flag of the pools, resizing and the
depth/space and batch/space moves, and their float16 forms; SOFTMAX's, L2_NORMALIZATION's and LOCAL_RESPONSE_NORMALIZATION's ranks 1 to 4,
float16 and trailing axis.

Written from the "Inputs" lists and "Supported tensor types" of the Android 10 ``NeuralNetworks.h``. A filter of a
TENSOR_QUANT8_ASYMM convolution is TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_SYMM_PER_CHANNEL (its channel axis and its
bias's scale are ``model_rules``'); a float16 convolution's bias is float16.
"""
from __future__ import annotations

from dataclasses import replace

from .enums import OperandType, OperationType
from .signature_forms import ACTIVATION, F32, Q8, TF32, TI32, UP_TO_4, Form, Signature, Slot, fixed, i32, t

BOOL, TF16, PC = OperandType.BOOL, OperandType.TENSOR_FLOAT16, OperandType.TENSOR_QUANT8_SYMM_PER_CHANNEL
F16 = OperandType.FLOAT16
OP = OperationType
TYPES = (TF16, TF32, Q8)
FILTER = Slot("filter", by_type=((TF16, TF16), (TF32, TF32), (Q8, Q8), (Q8, PC)), ranks=(4,))
BIAS = Slot("bias", by_type=((TF16, TF16), (TF32, TF32), (Q8, TI32)), ranks=(1,))
PADS = tuple(i32(n) for n in ("padding left", "padding right", "padding top", "padding bottom"))
STRIDES = (i32("stride width"), i32("stride height"))
SCHEME = i32("padding scheme", (1, 2))
LAYOUT = fixed("NCHW layout", BOOL)
DILATIONS = (i32("dilation width"), i32("dilation height"))
HEAD = (t("input", (4,)), FILTER, BIAS)
OUT = (t("output", (4,)),)


def _forms(window: tuple[Slot, ...], tail: tuple[Slot, ...], name: str, dilated: bool) -> tuple[Form, ...]:
    """The header's list of one padding form: without the layout flag, with it, and (``dilated``) with the
    dilation factors after it."""
    lists = [((*HEAD, *window, *tail), ""), ((*HEAD, *window, *tail, LAYOUT), ", layout")]
    if dilated:
        lists.append(((*HEAD, *window, *tail, LAYOUT, *DILATIONS), ", layout, dilation"))
    return tuple(Form(inputs, OUT, TYPES, name=name + suffix) for inputs, suffix in lists)


def convolution(tail: tuple[Slot, ...], dilated: bool) -> tuple[Form, ...]:
    return (_forms((*PADS, *STRIDES), tail, "explicit padding", dilated)
            + _forms((SCHEME, *STRIDES), tail, "implicit padding", dilated))


def grouped() -> tuple[Form, ...]:
    tail = (i32("number of groups"), ACTIVATION, LAYOUT)
    return (Form((*HEAD, *PADS, *STRIDES, *tail), OUT, TYPES, name="explicit padding"),
            Form((*HEAD, SCHEME, *STRIDES, *tail), OUT, TYPES, name="implicit padding"))


def transposed() -> tuple[Form, ...]:
    shape = fixed("output shape", TI32, (1,))
    return (Form((*HEAD, *PADS, *STRIDES, ACTIVATION, LAYOUT), OUT, TYPES, name="explicit padding"),
            Form((*HEAD, shape, SCHEME, *STRIDES, ACTIVATION, LAYOUT), OUT, TYPES, name="implicit padding"))


CONVOLUTIONS_1_2: dict[OperationType, Signature] = {
    OP.CONV_2D: Signature(OP.CONV_2D, convolution((ACTIVATION,), True)),
    OP.DEPTHWISE_CONV_2D: Signature(OP.DEPTHWISE_CONV_2D, convolution((i32("depth multiplier"), ACTIVATION), True)),
    OP.GROUPED_CONV_2D: Signature(OP.GROUPED_CONV_2D, grouped(), 29),
    OP.TRANSPOSE_CONV_2D: Signature(OP.TRANSPOSE_CONV_2D, transposed(), 29),
}
"""The convolutions' signatures with API level 29's forms (CONV_2D and DEPTHWISE_CONV_2D keep API level 27)."""

LAYOUT_OPERATIONS = (OP.AVERAGE_POOL_2D, OP.L2_POOL_2D, OP.MAX_POOL_2D, OP.RESIZE_BILINEAR, OP.DEPTH_TO_SPACE,
                     OP.SPACE_TO_DEPTH, OP.BATCH_TO_SPACE_ND, OP.SPACE_TO_BATCH_ND)
"""The operations API level 29 gives a trailing NCHW-layout flag (besides the convolutions)."""


def with_float16(signature: Signature) -> Signature:
    """``signature`` with TENSOR_FLOAT16 among the types of each of its forms (API level 29 lists it for the
    operations of :data:`LAYOUT_OPERATIONS`, whose scalars are INT32 and BOOL whatever the tensors' type)."""
    forms = tuple(replace(f, types=(TF16, *f.types)) for f in signature.forms)
    return Signature(signature.operation, forms, signature.api)


def with_layout(signature: Signature) -> Signature:
    """``signature`` with each of its forms also taking the trailing layout flag."""
    extra = tuple(Form((*f.inputs, LAYOUT), f.outputs, f.types, f.anchor, name=f"{f.name}, layout".lstrip(", "))
                  for f in signature.forms)
    return Signature(signature.operation, signature.forms + extra, signature.api)


def _real(name: str) -> Slot:
    """A scalar of the tensors' real type: FLOAT16 beside TENSOR_FLOAT16, else FLOAT32."""
    return Slot(name, by_type=((TF16, F16), (TF32, F32), (Q8, F32)))


def _with_axis(inputs: tuple[Slot, ...], types: tuple[OperandType, ...]) -> tuple[Form, ...]:
    out = (t("output", UP_TO_4),)
    return (Form(inputs, out, types, name="along the last axis"),
            Form((*inputs, i32("axis")), out, types, name="with an axis"))


def resize_bilinear() -> Signature:
    """RESIZE_BILINEAR as API level 29 writes it: by shape (INT32 width and height) or by scale (a real scalar per
    axis, ``floor(extent * scale)``), float16, float32 or uint8, each with and without the layout flag."""
    data, out = t("input", (4,)), (t("output", (4,)),)
    shape = Form((data, i32("output width"), i32("output height")), out, TYPES, name="by shape")
    scale = Form((data, _real("width scale"), _real("height scale")), out, TYPES, name="by scale")
    return with_layout(Signature(OP.RESIZE_BILINEAR, (shape, scale)))


DATA = t("input", UP_TO_4)
NORMALIZATIONS_1_2: dict[OperationType, Signature] = {
    OP.SOFTMAX: Signature(OP.SOFTMAX, _with_axis((DATA, _real("beta")), TYPES)),
    OP.L2_NORMALIZATION: Signature(OP.L2_NORMALIZATION, _with_axis((DATA,), TYPES)),
    OP.LOCAL_RESPONSE_NORMALIZATION: Signature(OP.LOCAL_RESPONSE_NORMALIZATION, _with_axis(
        (DATA, i32("radius"), _real("bias"), _real("alpha"), _real("beta")), (TF16, TF32))),
}
"""The normalizations with API level 29's forms (their API level stays 27)."""
