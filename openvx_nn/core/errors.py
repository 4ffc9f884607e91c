"""The one exception the object model raises: a ``vx_status`` with a message (the base of the public
``openvx_nn.api.errors.VXError``, so a caller catches one class whichever layer raised it)."""
from __future__ import annotations

from ..errors import Error
from .enums import Status, status_name


class VXError(Error):
    """A failed OpenVX operation.

    ``status`` is the ``vx_status`` the C caller receives; ``ref`` is the object
    the failure concerns (it names the object in the log line and gives the
    context whose error object a creator returns).
    """

    def __init__(self, status: int, message: str, ref: object | None = None):
        super().__init__(message)
        self.status = int(status)
        self.message = message
        self.ref = ref

    def __str__(self) -> str:
        return f"{status_name(self.status)}: {self.message}"


def invalid_parameters(message: str, ref=None) -> VXError:
    return VXError(Status.VX_ERROR_INVALID_PARAMETERS, message, ref)


def require(condition: bool, status: int, message: str, ref=None) -> None:
    """Raise ``VXError(status, message)`` unless ``condition`` holds."""
    if not condition:
        raise VXError(status, message, ref)
