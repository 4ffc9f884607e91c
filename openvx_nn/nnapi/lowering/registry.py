"""The table of NNAPI operation lowerings: ``LOWERINGS[OperationType](op)`` checks one operation and
adds its nodes. The lowering modules fill it with ``@lowers``; the package imports them all."""
from __future__ import annotations

from collections.abc import Callable

from .context import OpContext

LOWERINGS: dict[int, Callable[[OpContext], None]] = {}


def lowers(*types: int):
    """Register the decorated function as the lowering of ``types``."""
    def register(function: Callable[[OpContext], None]):
        for t in types:
            LOWERINGS[t] = function
        return function
    return register
