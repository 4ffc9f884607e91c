"""``NNEFError``: an NNEF folder we cannot read or run, naming the operation (or file) and why."""
from __future__ import annotations

from ..errors import Error


class NNEFError(Error, ValueError):
    """Raised by :func:`openvx_nn.nnef.load` and :meth:`NNEFModel.predict`."""

    def __init__(self, reason: str, operation: str | None = None, where: str | None = None):
        self.reason = reason
        self.operation = operation
        self.where = where
        prefix = f"{where}: " if where else ""
        if operation is not None:
            prefix += f"operation {operation}: "
        super().__init__(prefix + reason)
