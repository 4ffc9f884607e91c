"""The operand signatures of API level 29's region and sampling operations (ROI_ALIGN, ROI_POOLING,
AXIS_ALIGNED_BBOX_TRANSFORM, HEATMAP_MAX_KEYPOINT, RANDOM_MULTINOMIAL, BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS,
DETECTION_POSTPROCESSING), written from the Android 10 ``NeuralNetworks.h`` (``signatures`` merges them).

A uint8 feature map takes TENSOR_QUANT16_ASYMM boxes, a TENSOR_QUANT16_ASYMM box tensor TENSOR_QUANT8_ASYMM deltas.
The header calls the ROI operations' ratios FLOAT32 scalars; beside a float16 map FLOAT16 ones are taken too (as
Android's runtime wants them).
"""
from __future__ import annotations

from .enums import OperandType, OperationType
from .signature_forms import F32, Q8, TF32, TI32, Form, Signature, Slot, fixed, i32, t

BOOL, F16, TF16 = OperandType.BOOL, OperandType.FLOAT16, OperandType.TENSOR_FLOAT16
Q16A, Q16S = OperandType.TENSOR_QUANT16_ASYMM, OperandType.TENSOR_QUANT16_SYMM
OP = OperationType
MAPS = (TF16, TF32, Q8)
BOXES = Slot("rois", by_type=((TF32, TF32), (TF16, TF16), (Q8, Q16A)), ranks=(2,))
RATIO = ((TF32, F32), (TF16, F16), (TF16, F32), (Q8, F32))


def roi(sampling: bool) -> tuple[Form, ...]:
    ratios = (Slot("height ratio", by_type=RATIO), Slot("width ratio", by_type=RATIO))
    points = (i32("sampling points height"), i32("sampling points width")) if sampling else ()
    return (Form((t("input", (4,)), BOXES, fixed("batch indices", TI32, (1,)), i32("output height"),
                  i32("output width"), *ratios, *points, fixed("NCHW layout", BOOL)), (t("output", (4,)),), MAPS),)


def bbox_transform() -> tuple[Form, ...]:
    deltas = Slot("deltas", by_type=((TF32, TF32), (TF16, TF16), (Q16A, Q8)), ranks=(2,))
    return (Form((t("rois", (2,)), deltas, fixed("batch indices", TI32, (1,)), t("image info", (2,))),
                 (t("output", (2,)),), (TF16, TF32, Q16A)),)


def heatmap_max_keypoint() -> tuple[Form, ...]:
    return (Form((t("heatmaps", (4,)), BOXES, fixed("NCHW layout", BOOL)),
                 (t("scores", (2,)), Slot("keypoints", by_type=BOXES.by_type, ranks=(3,))), MAPS),)


def box_with_nms_limit() -> tuple[Form, ...]:
    """The header calls its thresholds and sigma FLOAT32; beside float16 scores FLOAT16 ones are taken too."""
    real = tuple(Slot(name, by_type=RATIO) for name in ("score threshold", "IoU threshold", "sigma",
                                                         "NMS score threshold"))
    return (Form((t("scores", (2,)), Slot("boxes", by_type=BOXES.by_type, ranks=(2,)),
                  fixed("batch indices", TI32, (1,)), real[0], i32("max detections"), i32("NMS kernel", (0, 1, 2)),
                  *real[1:]),
                 (t("output scores", (1,)), Slot("output boxes", by_type=BOXES.by_type, ranks=(2,)),
                  fixed("output classes", TI32, (1,)), fixed("output batch indices", TI32, (1,))), MAPS),)


def generate_proposals() -> tuple[Form, ...]:
    """uint8 scores take TENSOR_QUANT16_SYMM anchors, image sizes of TENSOR_QUANT16_SYMM (as the header writes
    them) or TENSOR_QUANT16_ASYMM (as its output boxes are), TENSOR_QUANT16_ASYMM output boxes."""
    real = tuple(Slot(name, by_type=RATIO) for name in ("height ratio", "width ratio", "IoU threshold", "min size"))
    return (Form((t("scores", (4,)), t("deltas", (4,)), Slot("anchors", by_type=((TF32, TF32), (TF16, TF16), (Q8, Q16S)),
                                                             ranks=(2,)),
                  Slot("image info", by_type=((TF32, TF32), (TF16, TF16), (Q8, Q16S), (Q8, Q16A)), ranks=(2,)),
                  *real[:2], i32("pre-NMS limit"), i32("post-NMS limit"), *real[2:], fixed("NCHW layout", BOOL)),
                 (t("output scores", (1,)), Slot("output boxes", by_type=BOXES.by_type, ranks=(2,)),
                  fixed("output batch indices", TI32, (1,))), MAPS),)


def detection_postprocessing() -> tuple[Form, ...]:
    """The four scales are FLOAT32 in the header (FLOAT16 taken too beside float16); the thresholds follow T."""
    scales = tuple(Slot(f"{name} scale", by_type=RATIO) for name in ("y", "x", "h", "w"))
    exact = tuple(Slot(name, by_type=((TF32, F32), (TF16, F16))) for name in ("score threshold", "IoU threshold"))
    return (Form((t("scores", (3,)), t("deltas", (3,)), t("anchors", (2,)), *scales, fixed("regular NMS", BOOL),
                  i32("max detections"), i32("max classes per detection"), i32("max detections per class"), *exact,
                  fixed("include background", BOOL)),
                 (t("output scores", (2,)), t("output boxes", (3,)), fixed("output classes", TI32, (2,)),
                  fixed("detections", TI32, (1,))), (TF16, TF32)),)


SIGNATURES_1_2_DETECTION: dict[OperationType, Signature] = {s.operation: s for s in (
    Signature(OP.ROI_ALIGN, roi(True), 29),
    Signature(OP.ROI_POOLING, roi(False), 29),
    Signature(OP.AXIS_ALIGNED_BBOX_TRANSFORM, bbox_transform(), 29),
    Signature(OP.HEATMAP_MAX_KEYPOINT, heatmap_max_keypoint(), 29),
    Signature(OP.BOX_WITH_NMS_LIMIT, box_with_nms_limit(), 29),
    Signature(OP.GENERATE_PROPOSALS, generate_proposals(), 29),
    Signature(OP.DETECTION_POSTPROCESSING, detection_postprocessing(), 29),
    Signature(OP.RANDOM_MULTINOMIAL, (Form((t("input", (2,)), i32("samples"), fixed("seeds", TI32, (1,))),
                                           (fixed("output", TI32, (2,)),), (TF16, TF32)),), 29),
)}
"""API level 29's region and sampling operations this driver runs, by their ``OperationType``."""
