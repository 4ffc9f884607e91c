"""NNAPI 1.2's BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS and DETECTION_POSTPROCESSING as OpenVX kernels: soft non-maximum suppression per
image and class (``kernels/frontend/suppression.soft_select``), then the image's best ``max_detections``; anchors
moved by their deltas (``detection.bbox_transform``), then hard suppression; centre-encoded anchors decoded
(``detection.decode_centre_boxes``), then hard suppression per class or once.

How many boxes come out depends on the data: the outputs' tensors hold the most that can (one per ROI and
class), and the kernel writes how many it filled into its ``count`` tensor (the lowering makes the model's
outputs report that many rows). BOX_WITH_NMS_LIMIT reads boxes so chosen too: its optional ``rows`` input says how
many of its input rows lead (``detection.used_rows``). Rows are grouped by image in ascending batch index; within an image, by score
descending (equal scores: the lower class, then the earlier taken).
"""
from __future__ import annotations

import numpy as np

from ...kernels.frontend import asymmetric, detection, suppression
from .common import I32, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require
from .detection import BOX_BITS, F16, F32, I16, U8, U16, real, rows_in, store, used_rows

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
    rows_in(args)
    most = rois * classes
    return {"out_scores": ((most,), dtype), "out_boxes": ((most, 4), box_type), "out_classes": ((most,), I32),
            "out_batches": ((most,), I32), "count": ((1,), I32)}


def _run(args: Args) -> None:
    """The boxes kept of each image and class, the image's best ``max_detections``, into the outputs' first rows."""
    n = used_rows(args, args["scores"].shape[0])
    scores, boxes = real(args, "scores")[:n], real(args, "boxes")[:n]
    batches = np.asarray(args["batches"][:n], np.int64)
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


nnapi_kernel(NNAPIKernel("box_with_nms_limit", 44, ("scores", "boxes", "batches", "rows?"),
                         ("out_scores", "out_boxes", "out_classes", "out_batches", "count"), _infer, _run,
                         ints=("max_detections", "method"),
                         floats=("score_threshold", "iou_threshold", "sigma", "nms_score_threshold"),
                         quantized=("scores", "boxes", "out_scores", "out_boxes")))


# -- GENERATE_PROPOSALS ------------------------------------------------------------------------------------------
def _layout(args: Args, name: str) -> np.ndarray:
    a = args[name]
    return a.transpose(0, 2, 3, 1) if args["nchw"] else a


def _infer_proposals(args: Args):
    shape = rank_in(args, "scores", (4,))
    dtype = dtype_in(args, "scores", (F16, F32, U8))
    batches, height, width, anchors = (shape[0], shape[2], shape[3], shape[1]) if args["nchw"] else shape
    deltas = rank_in(args, "deltas", (4,))
    dtype_in(args, "deltas", (dtype,))
    want = (batches, anchors * 4, height, width) if args["nchw"] else (batches, height, width, anchors * 4)
    require(deltas == want, "deltas", f"deltas has shape {list(deltas)}, expected {list(want)}")
    boxes = (I16,) if dtype == U8 else (dtype,)
    require(rank_in(args, "anchors", (2,)) == (anchors, 4), "anchors", f"anchors has shape "
            f"{list(args['anchors'].shape)}, expected [{anchors}, 4]")
    dtype_in(args, "anchors", boxes)
    require(rank_in(args, "image_info", (2,)) == (batches, 2), "image_info", f"image_info has shape "
            f"{list(args['image_info'].shape)}, expected [{batches}, 2]")
    dtype_in(args, "image_info", BOX_BITS if dtype == U8 else (dtype,))
    pre = int(args["pre_nms"])
    most = batches * (min(pre, height * width * anchors) if pre > 0 else height * width * anchors)
    return {"out_scores": ((most,), dtype), "out_boxes": ((most, 4), U16 if dtype == U8 else dtype),
            "out_batches": ((most,), I32), "count": ((1,), I32)}


def _run_proposals(args: Args) -> None:
    """Per image: the anchors at every position moved by their deltas and clipped to the image, the best
    ``pre_nms`` by score, those at least ``min_size`` wide and high, hard NMS, the best ``post_nms``."""
    scores = asymmetric.dequantize(_layout(args, "scores"), args.quant("scores"))
    deltas = asymmetric.dequantize(_layout(args, "deltas"), args.quant("deltas"))
    batches, height, width, _ = scores.shape
    anchors = detection.shifted_anchors(real(args, "anchors", signed=True), height, width, args["height_ratio"],
                                        args["width_ratio"]).reshape(-1, 4)
    info = real(args, "image_info")
    pre, post = int(args["pre_nms"]), int(args["post_nms"])
    rows: list[tuple[float, np.ndarray, int]] = []
    for b in range(batches):
        s = scores[b].reshape(-1)
        order = np.argsort(-s, kind="stable")  # equal scores: the earlier position and anchor first
        if pre > 0:
            order = order[:pre]
        boxes = np.empty((len(order), 4))
        detection.bbox_transform(anchors[order], deltas[b].reshape(-1, 4)[order], np.zeros(len(order), np.int64),
                                 info[b:b + 1], boxes)
        big = ((boxes[:, 2] - boxes[:, 0]) >= args["min_size"]) & ((boxes[:, 3] - boxes[:, 1]) >= args["min_size"])
        order, boxes = order[big], boxes[big]
        taken, kept = suppression.soft_select(boxes, s[order], "hard", args["iou_threshold"], 1.0, -np.inf)
        if post > 0:
            taken, kept = taken[:post], kept[:post]
        rows += [(score, boxes[t], b) for t, score in zip(taken, kept)]
    n = len(rows)
    out_scores, out_boxes = np.zeros(args["out_scores"].shape), np.zeros(args["out_boxes"].shape)
    for i, (score, box, _) in enumerate(rows):
        out_scores[i], out_boxes[i] = score, box
    asymmetric.store(out_scores, args["out_scores"], args.quant("out_scores"))
    store(args, "out_boxes", out_boxes)
    args["out_batches"][...] = 0
    args["out_batches"][:n] = [row[2] for row in rows]
    args["count"][0] = n


nnapi_kernel(NNAPIKernel("generate_proposals", 52, ("scores", "deltas", "anchors", "image_info"),
                         ("out_scores", "out_boxes", "out_batches", "count"), _infer_proposals, _run_proposals,
                         ints=("pre_nms", "post_nms", "nchw"),
                         floats=("height_ratio", "width_ratio", "iou_threshold", "min_size"),
                         quantized=("scores", "deltas", "anchors", "image_info", "out_scores", "out_boxes")))


# -- DETECTION_POSTPROCESSING ------------------------------------------------------------------------------------
def _infer_postprocessing(args: Args):
    batches, anchors, classes = rank_in(args, "scores", (3,))
    dtype = dtype_in(args, "scores", (F16, F32))
    deltas = rank_in(args, "deltas", (3,))
    dtype_in(args, "deltas", (dtype,))
    require(deltas[:2] == (batches, anchors) and deltas[2] >= 4, "deltas", f"deltas has shape {list(deltas)}, "
            f"expected [{batches}, {anchors}, at least 4]")
    require(rank_in(args, "anchors", (2,)) == (anchors, 4), "anchors", f"anchors has shape "
            f"{list(args['anchors'].shape)}, expected [{anchors}, 4]")
    dtype_in(args, "anchors", (dtype,))
    most = int(args["max_detections"])
    require(most >= 1, "max_detections", f"max_num_detections is {most}; at least 1 is needed")
    require(classes >= 2, "scores", "the scores need a class beside the background class 0")
    return {"out_scores": ((batches, most), dtype), "out_boxes": ((batches, most, 4), dtype),
            "out_classes": ((batches, most), I32), "out_count": ((batches,), I32)}


def _run_postprocessing(args: Args) -> None:
    """Per image: anchors decoded by their deltas, hard NMS per class (regular) or once over each anchor's best
    class, each kept anchor then giving its best ``max_per_detection`` classes (fast); the best ``max_detections``
    in score order; rows past the count are 0."""
    scores = np.asarray(args["scores"], np.float64)[..., 1:]  # class 0, the background, takes no part
    boxes = detection.decode_centre_boxes(args["deltas"], args["anchors"][None],
                                          (args["scale_y"], args["scale_x"], args["scale_h"], args["scale_w"]))
    most, threshold, iou = int(args["max_detections"]), args["score_threshold"], args["iou_threshold"]
    per_class = int(args["max_per_class"])
    shift = 1 if args["include_background"] else 0
    out_scores, out_boxes = np.zeros(args["out_scores"].shape), np.zeros(args["out_boxes"].shape)
    out_classes = np.zeros(args["out_classes"].shape, np.int32)
    for b in range(scores.shape[0]):
        found = []  # score, class, anchor
        if args["regular"]:
            for c in range(scores.shape[2]):
                candidates = np.flatnonzero(scores[b, :, c] >= threshold)
                taken, kept = suppression.soft_select(boxes[b, candidates], scores[b, candidates, c], "hard", iou, 1.0,
                                                      -np.inf)
                found += [(s, c, int(candidates[t])) for t, s in list(zip(taken, kept))[:max(per_class, 0)]]
        else:
            # each anchor's classes by score (equal: the lower class first); NMS once, on the best
            ranked = np.argsort(-scores[b], axis=1, kind="stable")[:, :int(args["max_per_detection"])]
            top = scores[b, np.arange(scores.shape[1]), ranked[:, 0]]
            candidates = np.flatnonzero(top >= threshold)
            taken, _ = suppression.soft_select(boxes[b, candidates], top[candidates], "hard", iou, 1.0, -np.inf)
            found = [(scores[b, a, c], int(c), a) for a in (int(candidates[t]) for t in taken) for c in ranked[a]]
        found.sort(key=lambda row: -row[0])  # stable: equal scores keep class and taking order
        found = found[:most]
        for i, (s, c, a) in enumerate(found):
            out_scores[b, i], out_boxes[b, i], out_classes[b, i] = s, boxes[b, a], c + shift
        args["out_count"][b] = len(found)
    args["out_scores"][...] = out_scores
    args["out_boxes"][...] = out_boxes
    args["out_classes"][...] = out_classes


nnapi_kernel(NNAPIKernel("detection_postprocessing", 47, ("scores", "deltas", "anchors"),
                         ("out_scores", "out_boxes", "out_classes", "out_count"), _infer_postprocessing,
                         _run_postprocessing, ints=("regular", "max_detections", "max_per_class", "max_per_detection",
                               "include_background"),
                         floats=("scale_y", "scale_x", "scale_h", "scale_w", "score_threshold", "iou_threshold")))
