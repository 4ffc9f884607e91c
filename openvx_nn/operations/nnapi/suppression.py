"""NNAPI 1.2's BOX_WITH_NMS_LIMIT as an OpenVX kernel: soft non-maximum suppression per image and class
(``kernels/frontend/suppression.soft_select``), then the image's best ``max_detections``.

How many boxes come out depends on the data: the outputs' tensors hold the most that can (one per ROI and
class), and the kernel writes how many it filled into its ``count`` tensor (the lowering makes the model's
outputs report that many rows). Rows are grouped by image in ascending batch index; within an image, by score
descending (equal scores: the lower class, then the earlier taken).
"""
from __future__ import annotations

import numpy as np

from ...kernels.frontend import asymmetric, suppression
from .common import I32, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require
from .detection import BOX_BITS, F16, F32, U8, real, store

METHODS = suppression.SOFT_KERNELS


def _infer(args: Args):
    rois, classes = rank_in(args, "scores", (2,))
    dtype = dtype_in(args, "scores", (F16, F32, U8))
    boxes = rank_in(args, "boxes", (2,))
    box_type = dtype_in(args, "boxes", BOX_BITS if dtype == U8 else (dtype,))
    require(boxes == (rois, 4 * classes), "boxes", f"boxes has shape {list(boxes)}, expected [{rois}, {4 * classes}]")
    require(tuple(args["batches"].shape) == (rois,), "batches", f"{list(args['batches'].shape)} batch indices for "
            f"{rois} ROIs")
    dtype_in(args, "batches", (I32,))
    most = rois * classes
    return {"out_scores": ((most,), dtype), "out_boxes": ((most, 4), box_type), "out_classes": ((most,), I32),
            "out_batches": ((most,), I32), "count": ((1,), I32)}


def _run(args: Args) -> None:
    """The boxes kept of each image and class, the image's best ``max_detections``, into the outputs' first rows."""
    scores, boxes = real(args, "scores"), real(args, "boxes")
    batches = np.asarray(args["batches"], np.int64)
    if (batches < 0).any():
        raise IndexError(f"batch index {int(batches[batches < 0][0])} is negative")
    limit, method = int(args["max_detections"]), METHODS[int(args["method"])]
    rows: list[tuple[float, int, int, int]] = []  # score, class, roi, image
    for image in np.unique(batches):
        mine = np.flatnonzero(batches == image)
        found = []
        for c in range(scores.shape[1]):
            candidates = mine[scores[mine, c] >= args["score_threshold"]]
            taken, kept = suppression.soft_select(boxes[candidates, 4 * c:4 * c + 4], scores[candidates, c], method,
                                                  args["iou_threshold"], args["sigma"], args["nms_score_threshold"])
            found += [(s, c, int(candidates[t]), int(image)) for t, s in zip(taken, kept)]
        found.sort(key=lambda row: -row[0])  # stable: equal scores keep class and taking order
        rows += found if limit < 0 else found[:limit]
    n = len(rows)
    out_scores, out_boxes = np.zeros(args["out_scores"].shape), np.zeros(args["out_boxes"].shape)
    for i, (s, c, r, _) in enumerate(rows):
        out_scores[i], out_boxes[i] = s, boxes[r, 4 * c:4 * c + 4]
    asymmetric.store(out_scores, args["out_scores"], args.quant("out_scores"))
    store(args, "out_boxes", out_boxes)
    args["out_classes"][...] = 0
    args["out_batches"][...] = 0
    args["out_classes"][:n] = [row[1] for row in rows]
    args["out_batches"][:n] = [row[3] for row in rows]
    args["count"][0] = n


nnapi_kernel(NNAPIKernel("box_with_nms_limit", 44, ("scores", "boxes", "batches"),
                         ("out_scores", "out_boxes", "out_classes", "out_batches", "count"), _infer, _run,
                         ints=("max_detections", "method"),
                         floats=("score_threshold", "iou_threshold", "sigma", "nms_score_threshold"),
                         quantized=("scores", "boxes", "out_scores", "out_boxes")))
