"""NNAPI 1.2's region and sampling operations: ROI_ALIGN, ROI_POOLING, AXIS_ALIGNED_BBOX_TRANSFORM,
HEATMAP_MAX_KEYPOINT, RANDOM_MULTINOMIAL, BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS (their outputs as many rows as the data decides:
``OpContext.rows_counted``) and DETECTION_POSTPROCESSING. ROI_ALIGN, ROI_POOLING, AXIS_ALIGNED_BBOX_TRANSFORM,
HEATMAP_MAX_KEYPOINT and BOX_WITH_NMS_LIMIT read such rows with their count (``op.rows_count``, given by ``counted_rows``).

Each is one node of its kernel (``operations/nnapi/detection``, ``multinomial``, ``suppression``); the lowering reads the scalars and checks the
quantizations the header fixes: TENSOR_QUANT16_ASYMM boxes have scale 0.125 and zero point 0, ROI_POOLING's
uint8 output is quantized as its input.
"""
from __future__ import annotations

from ..enums import OperandType, OperationType
from .context import OpContext
from .registry import lowers
from .reshaping import same_quantization

T = OperationType
Q16A, Q16S = OperandType.TENSOR_QUANT16_ASYMM, OperandType.TENSOR_QUANT16_SYMM


def _boxes_quantization(op: OpContext, k: int, output: bool = False) -> None:
    operand = op.operand(k, output)
    if operand.type == Q16A and (operand.scale != 0.125 or operand.zeroPoint != 0):
        op.fail(f"{'output' if output else 'input'} {k} (boxes) has scale {operand.scale} and zero point "
                f"{operand.zeroPoint}; TENSOR_QUANT16_ASYMM boxes need scale 0.125 and zero point 0")


def _ratios(op: OpContext, k: int) -> dict[str, float]:
    height, width = float(op.scalar(k)), float(op.scalar(k + 1))
    if not (height > 0 and width > 0):
        op.fail(f"inputs {k} and {k + 1} (height and width ratios) are {height} and {width}; they must be positive")
    return {"height_ratio": height, "width_ratio": width}


@lowers(T.ROI_ALIGN)
def lower_roi_align(op: OpContext) -> None:
    _boxes_quantization(op, 1)
    sampling = op.scalar(7), op.scalar(8)
    if min(sampling) < 0:
        op.fail(f"inputs 7 and 8 (sampling points) are {list(sampling)}; they must be 0 (adaptive) or more")
    op.node("roi_align", {"input": 0, "rois": 1, "batches": 2}, {"output": 0},
            {"out_height": op.scalar(3), "out_width": op.scalar(4), "sampling_h": sampling[0],
             "sampling_w": sampling[1], "nchw": int(bool(op.scalar(9)))}, _ratios(op, 5), made={"rows": op.rows_count})


@lowers(T.ROI_POOLING)
def lower_roi_pooling(op: OpContext) -> None:
    same_quantization(op)
    _boxes_quantization(op, 1)
    op.node("roi_pooling", {"input": 0, "rois": 1, "batches": 2}, {"output": 0},
            {"out_height": op.scalar(3), "out_width": op.scalar(4), "nchw": int(bool(op.scalar(7)))},
            _ratios(op, 5), made={"rows": op.rows_count})


@lowers(T.AXIS_ALIGNED_BBOX_TRANSFORM)
def lower_bbox_transform(op: OpContext) -> None:
    _boxes_quantization(op, 0)
    _boxes_quantization(op, 0, output=True)
    op.node("axis_aligned_bbox_transform", {"rois": 0, "deltas": 1, "batches": 2, "image_info": 3}, {"output": 0},
            made={"rows": op.rows_count})


@lowers(T.HEATMAP_MAX_KEYPOINT)
def lower_heatmap_max_keypoint(op: OpContext) -> None:
    _boxes_quantization(op, 1)
    _boxes_quantization(op, 1, output=True)
    op.node("heatmap_max_keypoint", {"heatmaps": 0, "boxes": 1}, {"scores": 0, "keypoints": 1},
            {"nchw": int(bool(op.scalar(2)))}, made={"rows": op.rows_count})


@lowers(T.RANDOM_MULTINOMIAL)
def lower_random_multinomial(op: OpContext) -> None:
    op.node("random_multinomial", {"input": 0, "seeds": 2}, {"output": 0}, {"samples": op.scalar(1)})


@lowers(T.BOX_WITH_NMS_LIMIT)
def lower_box_with_nms_limit(op: OpContext) -> None:
    same_quantization(op)
    _boxes_quantization(op, 1)
    _boxes_quantization(op, 1, output=True)
    sigma = float(op.scalar(7))
    if op.scalar(5) == 2 and not sigma > 0:
        op.fail(f"input 7 (sigma) is {sigma}; the gaussian kernel needs it positive")
    inputs = {name: op.inputs[k] for k, name in enumerate(("scores", "boxes", "batches")) if op.shape(k)}
    count = op.rows_counted([0, 1, 2, 3])
    op.node_on("box_with_nms_limit", {**inputs, "rows": op.rows_count},
               {**{name: op.outputs[j] for j, name in enumerate(("out_scores", "out_boxes", "out_classes",
                                                                 "out_batches"))}, "count": count},
               {"max_detections": op.scalar(4), "method": op.scalar(5)},
               {"score_threshold": float(op.scalar(3)), "iou_threshold": float(op.scalar(6)), "sigma": sigma,
                "nms_score_threshold": float(op.scalar(8))})


@lowers(T.GENERATE_PROPOSALS)
def lower_generate_proposals(op: OpContext) -> None:
    same_quantization(op)
    for k in (2, 3):
        operand = op.operand(k)
        if operand.type in (Q16A, Q16S) and (operand.scale != 0.125 or operand.zeroPoint != 0):
            op.fail(f"input {k} has scale {operand.scale} and zero point {operand.zeroPoint}; with uint8 scores "
                    "it needs scale 0.125 and zero point 0")
    _boxes_quantization(op, 1, output=True)
    inputs = {name: op.inputs[k] for k, name in enumerate(("scores", "deltas", "anchors", "image_info"))
              if op.shape(k)}
    count = op.rows_counted([0, 1, 2])
    op.node_on("generate_proposals", inputs,
               {"out_scores": op.outputs[0], "out_boxes": op.outputs[1], "out_batches": op.outputs[2], "count": count},
               {"pre_nms": op.scalar(6), "post_nms": op.scalar(7), "nchw": int(bool(op.scalar(10)))},
               {**_ratios(op, 4), "iou_threshold": float(op.scalar(8)), "min_size": float(op.scalar(9))})


@lowers(T.DETECTION_POSTPROCESSING)
def lower_detection_postprocessing(op: OpContext) -> None:
    scales = [float(op.scalar(k)) for k in range(3, 7)]
    if not min(scales) > 0:
        op.fail(f"inputs 3 to 6 (scales of the deltas) are {scales}; they must be positive")
    regular, per_class = bool(op.scalar(7)), op.scalar(10)
    if regular and per_class < 1:
        op.fail(f"input 10 (maximum detections per class) is {per_class}; at least 1 is needed")
    if not regular and op.scalar(9) < 1:
        op.fail(f"input 9 (maximum classes per detection) is {op.scalar(9)}; at least 1 is needed")
    op.node("detection_postprocessing", {"scores": 0, "deltas": 1, "anchors": 2},
            {"out_scores": 0, "out_boxes": 1, "out_classes": 2, "out_count": 3},
            {"regular": int(regular), "max_detections": op.scalar(8), "max_per_class": per_class,
             "max_per_detection": op.scalar(9),
             "include_background": int(bool(op.scalar(13)))},
            {**dict(zip(("scale_y", "scale_x", "scale_h", "scale_w"), scales)),
             "score_threshold": float(op.scalar(11)), "iou_threshold": float(op.scalar(12))})
