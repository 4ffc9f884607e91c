"""Non-maximum suppression over batches of boxes (CoreML's NonMaximumSuppression layer), and the soft
suppression of one class NNAPI's BOX_WITH_NMS_LIMIT runs (``soft_select``, on the same intersection over union).

Boxes are ``(x, y, width, height)`` with ``(x, y)`` the centre. In each batch item a box's score is the largest
of its class scores; boxes scoring below the score threshold are dropped; the rest are taken greedily from the
highest score (ties: the lower index first), each removing the later candidates whose intersection over union
with it is above the IoU threshold (only those of its own class, the class of its largest score, when
``per_class``), until ``max_boxes`` are taken. When no box passes the score threshold the item keeps its
highest-scoring box alone. Computed in float64.
"""
from __future__ import annotations

import numpy as np


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Intersection over union of one centre-format box with each of ``others`` (0 where the union is empty)."""
    low = np.maximum(box[:2] - box[2:] / 2, others[:, :2] - others[:, 2:] / 2)
    high = np.minimum(box[:2] + box[2:] / 2, others[:, :2] + others[:, 2:] / 2)
    inter = np.prod(np.clip(high - low, 0, None), axis=1)
    union = box[2] * box[3] + others[:, 2] * others[:, 3] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def select_boxes(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float, score_threshold: float,
                 max_boxes: int, per_class: bool) -> list[int]:
    """The indices one batch item keeps (``boxes`` ``[N, 4]``, ``scores`` ``[N, C]``), in the order taken."""
    best = scores.max(axis=1)
    classes = scores.argmax(axis=1)
    order = [int(i) for i in np.argsort(-best, kind="stable")]
    candidates = [i for i in order if best[i] >= score_threshold]
    if not candidates:
        return order[:1]
    kept: list[int] = []
    alive = np.ones(len(boxes), bool)
    for i in candidates:
        if not alive[i]:
            continue
        kept.append(i)
        if len(kept) == max_boxes:
            break
        close = _iou(boxes[i], boxes) > iou_threshold
        if per_class:
            close &= classes == classes[i]
        alive &= ~close
    return kept


def suppress(boxes: np.ndarray, scores: np.ndarray, out_boxes: np.ndarray, out_scores: np.ndarray,
             out_indices: np.ndarray, out_count: np.ndarray, iou_threshold: float, score_threshold: float,
             per_class: bool) -> None:
    """Every batch item of ``boxes`` ``[B, N, 4]`` and ``scores`` ``[B, N, C]``: the kept boxes, their score rows
    and indices in the first rows of ``out_boxes`` ``[B, M, 4]``, ``out_scores`` ``[B, M, C]`` and ``out_indices``
    ``[B, M]`` (padding 0, 0 and -1), their number in ``out_count`` ``[B]``; ``M`` is the most boxes kept."""
    b64, s64 = np.asarray(boxes, np.float64), np.asarray(scores, np.float64)
    out_boxes[...], out_scores[...], out_indices[...] = 0, 0, -1
    for b in range(b64.shape[0]):
        kept = select_boxes(b64[b], s64[b], iou_threshold, score_threshold, out_indices.shape[1], per_class)
        n = len(kept)
        out_boxes[b, :n] = b64[b, kept]
        out_scores[b, :n] = s64[b, kept]
        out_indices[b, :n] = kept
        out_count[b] = n


SOFT_KERNELS = ("hard", "linear", "gaussian")


def soft_select(corners: np.ndarray, scores: np.ndarray, method: str, iou_threshold: float, sigma: float,
                score_threshold: float) -> tuple[list[int], list[float]]:
    """Soft non-maximum suppression of one class (NNAPI's BOX_WITH_NMS_LIMIT): the indices taken, in order, and
    their scores when taken. ``corners`` ``[N, 4]`` are ``[x1, y1, x2, y2]``. The pending box of the highest
    score (ties: the lower index) is taken; every other pending box's score is multiplied by the method's factor
    of its IoU with it (hard: 0 from ``iou_threshold`` on, linear: ``1 - IoU`` from ``iou_threshold`` on,
    gaussian: ``exp(-IoU**2 / sigma)``) and a box whose score falls below ``score_threshold``, or to 0 by the
    hard factor, leaves the pending set."""
    if method not in SOFT_KERNELS:
        raise ValueError(f"unknown NMS kernel {method!r} (expected one of {', '.join(SOFT_KERNELS)})")
    c = np.asarray(corners, np.float64)
    centred = np.concatenate([(c[:, :2] + c[:, 2:]) / 2, c[:, 2:] - c[:, :2]], axis=1)
    current = np.array(scores, np.float64)
    pending = np.ones(len(c), bool)
    taken, taken_scores = [], []
    while pending.any():
        best = int(np.flatnonzero(pending)[np.argmax(current[pending])])  # argmax: the first of equal scores
        taken.append(best)
        taken_scores.append(float(current[best]))
        pending[best] = False
        iou = _iou(centred[best], centred)
        if method == "hard":
            factor = np.where(iou < iou_threshold, 1.0, 0.0)
        elif method == "linear":
            factor = np.where(iou < iou_threshold, 1.0, 1.0 - iou)
        else:
            factor = np.exp(-iou * iou / sigma)
        current = current * factor
        pending &= (current >= score_threshold) & ~((method == "hard") & (factor == 0.0))
    return taken, taken_scores
