"""The table of NNEF operation lowerings: ``LOWERINGS[name](builder, op) -> str`` adds the operation's nodes to
the graph and says how it ran (for ``NNEFModel.operations``). The lowering modules fill it with ``@lowers``;
the package imports them all."""
from __future__ import annotations

from collections.abc import Callable

from ..errors import NNEFError

LOWERINGS: dict[str, Callable] = {}


def lowers(*names: str):
    def register(function: Callable) -> Callable:
        for name in names:
            LOWERINGS[name] = function
        return function
    return register


def describe(op) -> str:
    results = ", ".join(str(v) for v in _flat(op.outputs.values()))
    return f"{op.name} ({results})"


def _flat(values):
    for v in values:
        if isinstance(v, list):
            yield from v
        else:
            yield v


def lower(builder, op) -> str:
    """Lower one operation (``builder.operation`` names it for errors)."""
    builder.operation = describe(op)
    function = LOWERINGS.get(op.name)
    if function is None:
        raise builder.fail(f"operation '{op.name}' is not supported by openvx_nn.nnef "
                           f"(supported: {', '.join(sorted(LOWERINGS))})")
    try:
        return function(builder, op)
    except NNEFError as err:
        if err.operation is not None:
            raise
        raise NNEFError(err.reason, builder.operation) from None
