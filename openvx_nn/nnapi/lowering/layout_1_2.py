"""API level 29's trailing NCHW-layout flag on the pools, RESIZE_BILINEAR, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND: their NHWC lowerings run unchanged, wrapped here to read the flag
(``OpContext.nchw``: input 0 read as NHWC, transposes at the node's edges).

The lowerings wrapped are imported first, so their registrations are the ones replaced.
"""
from __future__ import annotations

from collections.abc import Callable

from ..enums import OperandType
from ..signatures_conv_1_2 import LAYOUT_OPERATIONS
from . import conv_pool, movement, reshaping  # noqa: F401  (register the lowerings wrapped below)
from .context import OpContext
from .registry import LOWERINGS


def read_layout(op: OpContext) -> None:
    """Set ``op.nchw`` from the form's trailing layout flag, when it has one."""
    if op.form.name.endswith("layout") and op.kind(len(op.inputs) - 1) == OperandType.BOOL:
        op.nchw = bool(op.scalar(len(op.inputs) - 1))


def _with_layout(lower: Callable[[OpContext], None]) -> Callable[[OpContext], None]:
    def lowering(op: OpContext) -> None:
        read_layout(op)
        lower(op)
    lowering.__doc__ = f"{lower.__doc__ or lower.__name__}, in either layout."
    return lowering


for _kind in LAYOUT_OPERATIONS:
    LOWERINGS[_kind] = _with_layout(LOWERINGS[_kind])
