"""Exceptions for failed OpenVX calls: the ``vx_status`` and the library's own log message."""
from __future__ import annotations

from ..core import errors as core
from ..core.enums import Status, status_name


class VXError(core.VXError, RuntimeError):
    """A call through libopenvx.so failed.

    ``status`` is the ``vx_status`` value, ``status_name`` its standard name
    (``'VX_ERROR_INVALID_DIMENSION'``), ``function`` the C function that failed
    and ``log`` what the library logged about it (may be empty).
    """

    def __init__(self, status: int, function: str, log: str = ""):
        self.status_name = status_name(status)
        self.function = function
        self.log = log
        detail = f": {log}" if log else ""
        super().__init__(status, f"{function} failed with {self.status_name}{detail}")

    def __str__(self) -> str:
        return self.message


class InvalidReferenceError(VXError):
    """VX_ERROR_INVALID_REFERENCE: a released, NULL or wrongly typed object."""


class InvalidParametersError(VXError):
    """VX_ERROR_INVALID_PARAMETERS: a bad argument (index, pointer, bounds, size)."""


class InvalidTypeError(VXError):
    """VX_ERROR_INVALID_TYPE: an unsupported data type."""


class InvalidDimensionError(VXError):
    """VX_ERROR_INVALID_DIMENSION: a rank, dim or shape mismatch."""


class InvalidValueError(VXError):
    """VX_ERROR_INVALID_VALUE: an enum, scalar or fixed point position out of range."""


class InvalidFormatError(VXError):
    """VX_ERROR_INVALID_FORMAT: fixed point positions that do not agree."""


class OptimizedAwayError(VXError):
    """VX_ERROR_OPTIMIZED_AWAY: the application asked for a virtual object's data."""


class NotSupportedError(VXError):
    """VX_ERROR_NOT_SUPPORTED: the attribute or feature is not there."""


_CLASSES: dict[int, type[VXError]] = {
    Status.VX_ERROR_INVALID_REFERENCE: InvalidReferenceError,
    Status.VX_ERROR_INVALID_PARAMETERS: InvalidParametersError,
    Status.VX_ERROR_INVALID_TYPE: InvalidTypeError,
    Status.VX_ERROR_INVALID_DIMENSION: InvalidDimensionError,
    Status.VX_ERROR_INVALID_VALUE: InvalidValueError,
    Status.VX_ERROR_INVALID_FORMAT: InvalidFormatError,
    Status.VX_ERROR_OPTIMIZED_AWAY: OptimizedAwayError,
    Status.VX_ERROR_NOT_SUPPORTED: NotSupportedError,
}


def error_for(status: int, function: str, log: str = "") -> VXError:
    """The most precise ``VXError`` subclass for ``status``."""
    return _CLASSES.get(int(status), VXError)(status, function, log)
