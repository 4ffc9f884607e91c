"""What the lowerings share: operands (tensors by name, variables, literals), NNEF's broadcasting, shapes."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...api.builder_nodes import broadcast_shape, reshape
from ..builder import Blob, NNEFBuilder


def shape_of(g: NNEFBuilder, name: str) -> tuple[int, ...]:
    """The shape the parser inferred for tensor ``name``."""
    return tuple(int(d) for d in g.nnef.tensors[str(name)].shape)


def result(op, key: str | None = None) -> str:
    """The name of the operation's (only, or ``key``) result."""
    values = list(op.outputs.values())
    return str(op.outputs[key] if key else values[0])


def operand(g: NNEFBuilder, value, rank: int = 1) -> Blob:
    """A tensor operand: a named tensor, or a literal as a constant of ``rank`` unit dims."""
    if isinstance(value, str):
        return g.blob(str(value))
    if isinstance(value, bool | int | float):
        array = np.full((1,) * max(rank, 1), float(value), np.float32)
        return Blob(g.constant(array), array.shape)
    raise g.fail(f"operand {value!r} is neither a tensor nor a number")


def literal(value) -> float | None:
    """The number a literal operand holds, None for a tensor."""
    if isinstance(value, str):
        return None
    return float(value)


def ranked(g: NNEFBuilder, blob: Blob, rank: int) -> Blob:
    """``blob`` with trailing unit axes up to ``rank``: NNEF shapes extend with singletons at the end, so a
    ``[1, C]`` bias meets ``[N, C, H, W]`` on C."""
    if blob.rank >= rank:
        return blob
    return reshape(g, blob, blob.shape + (1,) * (rank - blob.rank))


def broadcast(g: NNEFBuilder, shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """NNEF's broadcast of several shapes: left-aligned (``ranked``)."""
    return broadcast_shape(g, shapes, align="left")


def axis(g: NNEFBuilder, a: int, rank: int) -> int:
    if not -rank <= a < rank:
        raise g.fail(f"axis {a} is outside rank {rank}")
    return a % rank


def vx_axis(a: int, rank: int) -> int:
    """OpenVX axis of NNEF axis ``a`` (NNEF's first axis is the slowest, OpenVX's dim 0 the fastest)."""
    return rank - 1 - a
