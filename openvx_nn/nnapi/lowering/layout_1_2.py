"""API level 29's trailing NCHW-layout flag on the pools, RESIZE_BILINEAR, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND, and the trailing axis of SOFTMAX, L2_NORMALIZATION and
LOCAL_RESPONSE_NORMALIZATION: their lowerings run unchanged, wrapped here to read the flag or the axis
(``OpContext.perm``: input 0 read as NHWC or with the axis last, transposes at the node's edges).

The lowerings wrapped are imported first, so their registrations are the ones replaced.
"""
from __future__ import annotations

from collections.abc import Callable

from ..enums import OperandType
from ..signatures_conv_1_2 import LAYOUT_OPERATIONS, NORMALIZATIONS_1_2
from . import conv_pool, movement, reshaping  # noqa: F401  (register the lowerings wrapped below)
from .context import NHWC_FROM_NCHW, OpContext
from .registry import LOWERINGS


def read_layout(op: OpContext) -> None:
    """Set ``op.perm`` from the form's trailing layout flag, when it has one."""
    last = len(op.inputs) - 1
    if op.form.name.endswith("layout") and op.kind(last) == OperandType.BOOL and op.scalar(last):
        op.perm = NHWC_FROM_NCHW


def _with_layout(lower: Callable[[OpContext], None]) -> Callable[[OpContext], None]:
    def lowering(op: OpContext) -> None:
        read_layout(op)
        lower(op)
    lowering.__doc__ = f"{lower.__doc__ or lower.__name__}, in either layout."
    return lowering


def read_axis(op: OpContext) -> None:
    """A normalization's trailing axis (API level 29; -1 when absent): an axis other than the last is moved last
    (``op.perm``), where the kernels normalize."""
    rank = len(op.shape(0))
    axis = op.scalar(len(op.inputs) - 1) if op.form.name == "with an axis" else -1
    if not -rank <= axis < rank:
        op.fail(f"axis {axis} is outside [-{rank}, {rank}) for input 0 of rank {rank}")
    axis %= rank
    if axis != rank - 1:
        op.perm = (*(a for a in range(rank) if a != axis), axis)


def _with_axis(lower: Callable[[OpContext], None]) -> Callable[[OpContext], None]:
    def lowering(op: OpContext) -> None:
        read_axis(op)
        lower(op)
    lowering.__doc__ = f"{lower.__doc__ or lower.__name__}, along any axis."
    return lowering


for _kind in LAYOUT_OPERATIONS:
    LOWERINGS[_kind] = _with_layout(LOWERINGS[_kind])
for _kind in NORMALIZATIONS_1_2:
    LOWERINGS[_kind] = _with_axis(LOWERINGS[_kind])
