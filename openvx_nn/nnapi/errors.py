"""``NNAPIError``: a bad model, compilation or execution, with its ``ErrorStatus``."""
from __future__ import annotations

from ..errors import Error
from .enums import ErrorStatus, OperationType


class NNAPIError(Error, ValueError):
    """Raised with an ``ErrorStatus`` and, for a bad operation, its index and type (a ``ValueError``:
    bad values, like ``CoreMLError``, so callers such as ``openvx-nn run`` report it as a bad model)."""

    def __init__(self, message: str, status: ErrorStatus = ErrorStatus.INVALID_ARGUMENT,
                 operation: int | None = None, operation_type: int | None = None):
        if operation is not None:
            try:
                kind = OperationType(operation_type).name
            except ValueError:
                kind = f"type {operation_type}"
            message = f"operation {operation} ({kind}): {message}"
        super().__init__(message)
        self.status = ErrorStatus(status)
        self.operation = operation
        self.operation_type = operation_type
