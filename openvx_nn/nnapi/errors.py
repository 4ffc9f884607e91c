"""``NNAPIError``: a bad model, compilation or execution, with its ``ErrorStatus``."""
from __future__ import annotations

import functools

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


def refusing(function):
    """Make ``function`` a boundary of the front end: it raises ``NNAPIError`` only.  What the checks did not
    foresee (an internal exception, ``MemoryError``) is wrapped, its type and message kept, so a caller tells
    "the model or call was refused" from success by one exception type."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except NNAPIError:
            raise
        except MemoryError:
            raise NNAPIError(f"{function.__qualname__}: out of memory", ErrorStatus.GENERAL_FAILURE) from None
        except Exception as err:  # the boundary: nothing else reaches the caller
            raise NNAPIError(f"{function.__qualname__}: {type(err).__name__}: {err}",
                             ErrorStatus.GENERAL_FAILURE) from err
    return call
