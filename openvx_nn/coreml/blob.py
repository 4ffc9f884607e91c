"""CoreML blob semantics on OpenVX tensors.

The classic NeuralNetwork spec (RANK5 mapping) treats every blob as rank 5,
``[Seq, Batch, C, H, W]``; the later spec (EXACT mapping) keeps the shapes a
model declares. Either way a blob of CoreML shape ``(d0, ..., dn)`` is an
OpenVX float32 tensor of dims ``(dn, ..., d0)``: OpenVX dim 0 moves fastest,
so W is dim 0, H dim 1, C dim 2, Batch dim 3, Seq dim 4 and the NN
extension's ``[width, height, #IFM, #batches]`` layout falls out directly.
The array of the tensor is the transpose (all axes) of the CoreML-order array.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..api.graph_builder import dims_of, to_vx  # noqa: F401 - the front end takes them here
from .errors import CoreMLError


def axis(cm_axis: int, rank: int) -> int:
    """OpenVX axis of CoreML axis ``cm_axis`` (negative counts from the end) of a rank-``rank`` blob."""
    if not -rank <= cm_axis < rank:
        raise CoreMLError(f"axis {cm_axis} is outside a rank-{rank} blob")
    return rank - 1 - (cm_axis % rank)


def rank5_shape(shape: Sequence[int], feature_rank: int) -> tuple[int, ...]:
    """The rank-5 shape a user array of ``shape`` takes for a RANK5 input declared with ``feature_rank`` dims
    ([C] or [C, H, W]): the declared rank gives one sequence step, one more dim is the sequence, 5 dims are taken
    whole."""
    shape = tuple(int(d) for d in shape)
    if len(shape) == 5:
        return shape
    if feature_rank == 1 and len(shape) in (1, 2):
        shape += (1, 1)
        feature_rank = 3
    if len(shape) == feature_rank == 3:
        return (1, 1) + shape
    if len(shape) == feature_rank + 1 == 4:
        return (shape[0], 1) + shape[1:]
    raise CoreMLError(f"an array of shape {list(shape)} does not fit an input of rank {feature_rank} "
                      "(give [C]/[C,H,W], [Seq, ...] or the full [Seq, Batch, C, H, W])")


def rank5(array: np.ndarray, feature_rank: int) -> np.ndarray:
    """A user array for a RANK5 input declared with ``feature_rank`` dims, reshaped to rank 5 (``rank5_shape``)."""
    a = np.asarray(array, np.float32)
    return a.reshape(rank5_shape(a.shape, feature_rank))


def from_rank5(array: np.ndarray, feature_rank: int) -> np.ndarray:
    """A RANK5 output as coremltools shapes it: [C] or [C, H, W], with a leading Seq when longer than 1."""
    seq, batch = array.shape[:2]
    features = array.shape[2:]
    if feature_rank == 1 and features[1:] == (1, 1):
        features = features[:1]
    lead = (seq,) if seq > 1 else ()
    lead += (batch,) if batch > 1 else ()
    return array.reshape(lead + features)
