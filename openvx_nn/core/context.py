"""The context: the process-wide root of all objects, its attributes and its log."""
from __future__ import annotations

import os
import struct
import sys
import threading
from collections.abc import Callable

from . import cells, reference
from .compat import Compat
from .enums import MAX_LOG_MESSAGE_LEN, VERSION, Border, BorderPolicy, Status, Type, Vendor, status_name
from .errors import VXError
from .kernels import KernelTable
from .reference import Reference
from .user_struct import UserStructs

_ECHO = os.environ.get("OPENVX_NN_LOG", "") not in ("", "0")
"""OPENVX_NN_LOG=1 echoes every error entry to stderr, callback or not."""

IMPLEMENTATION = "openvx-nn"
EXTENSIONS = ("KHR_NN_8", "KHR_NN_16")
MAX_TENSOR_DIMS = 6
VENDOR_ID = Vendor.VX_ID_USER

LogSink = Callable[["Context", Reference | None, int, str], None]

_in_callback = threading.local()
"""``active`` is True on a thread while it runs the application's log callback."""


class ErrorObject(Reference):
    """What a failed creator returns: a reference whose ``vxGetStatus`` is the failure.

    One per status per context, owned by the context, not counted among the
    application's references and never destroyed before the context.
    """

    vx_type = Type.VX_TYPE_ERROR
    counted = False

    def __init__(self, context: Context, status: int):
        super().__init__(context)
        self.status = status

    def release(self) -> None:  # the context owns it; the application's release is a no-op
        pass

    def retain(self) -> None:
        pass


class Context(Reference):
    vx_type = Type.VX_TYPE_CONTEXT
    _current: Context | None = None

    def __init__(self) -> None:
        super().__init__(None)
        self.logging_enabled = True
        self._performance = False
        self._log_sink: LogSink | None = None
        self._log_lock: threading.Lock | None = None
        self._errors: dict[int, ErrorObject] = {}
        # vx_border_t {mode, vx_pixel_value_t}: the standard's defaults.
        self.immediate_border = struct.pack("=i16s", Border.VX_BORDER_UNDEFINED, bytes(16))
        self.immediate_border_policy = int(BorderPolicy.VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED)
        self.immediate_target = "any"
        self.nn_compat = int(Compat.VX_OPENVX_NN_COMPAT_ENVIRONMENT)  # VX_CONTEXT_OPENVX_NN_COMPAT (core/compat.py)
        self.kernels = KernelTable()  # built-in families and user kernels, published alike (core/kernels.py)
        self.user_structs = UserStructs()

    @classmethod
    def create(cls) -> Context:
        """The live context with one more application reference, or a new one."""
        with reference.lock:
            ctx = cls._current
            if ctx is not None and ctx.alive:
                ctx.retain()
                return ctx
            cls._current = ctx = cls()
            return ctx

    @classmethod
    def current(cls) -> Context | None:
        ctx = cls._current
        return ctx if ctx is not None and ctx.alive else None

    def release(self) -> None:
        """Drop one application reference; the last one is refused while a graph executes.

        Destroying the objects under a running kernel would leave it writing
        into buffers the application is about to free (imported handles).
        """
        with reference.lock:
            if self.external == 1:
                busy = next((r for r in reference.live_references(self) if r.executing), None)
                if busy is not None:
                    raise VXError(Status.VX_FAILURE,
                                  f"{self.describe()} cannot be released while {busy.describe()} is executing "
                                  "or scheduled; let it finish (vxWaitGraph) first", self)
            super().release()

    def _collect(self) -> None:
        # Only the application's count matters: releasing the last application
        # reference to the context destroys everything created in it.
        if self.alive and self.external == 0:
            reference.destroy_all(self)
            if Context._current is self:
                Context._current = None

    # -- attributes ---------------------------------------------------------
    @property
    def reference_count(self) -> int:
        """Live references of this context, itself included, error objects not."""
        return sum(1 for r in reference.live_references(self) if r.counted)

    @property
    def extensions(self) -> str:
        return " ".join(EXTENSIONS)

    # -- errors and log -------------------------------------------------------
    def error_object(self, status: int) -> ErrorObject:
        with reference.lock:
            err = self._errors.get(status)
            if err is None or not err.alive:
                err = self._errors[status] = ErrorObject(self, status)
            return err

    def set_log_sink(self, sink: LogSink | None, reentrant: bool) -> None:
        self._log_sink = sink
        self._log_lock = None if reentrant else threading.Lock()

    def log(self, ref: Reference | None, status: int, message: str) -> None:
        """Send one entry to the application's callback (VX_SUCCESS entries are dropped).

        Entries raised on the thread that is running the callback (its own
        failing OpenVX calls) are dropped: delivering them would recurse without
        bound, or deadlock on the lock of a non-reentrant callback.
        """
        if _ECHO and status != Status.VX_SUCCESS:
            print(f"[openvx-nn] {status_name(status)} {message}", file=sys.stderr, flush=True)
        sink = self._log_sink
        if status == Status.VX_SUCCESS or not self.logging_enabled or sink is None:
            return
        if getattr(_in_callback, "active", False):
            return
        # C text travels as str with undecodable bytes kept as surrogates (surrogateescape),
        # so the application gets back exactly the bytes it logged.
        data = message.encode("utf-8", "surrogateescape")[: MAX_LOG_MESSAGE_LEN - 1]
        text = data.decode("utf-8", "surrogateescape")
        # Always the model lock first, then the callback's own: one lock order
        # for every thread (graph workers log without holding the model lock).
        with reference.lock:
            _in_callback.active = True
            try:
                if self._log_lock is None:
                    sink(self, ref, status, text)
                else:
                    with self._log_lock:
                        sink(self, ref, status, text)
            finally:
                _in_callback.active = False

    @property
    def performance_enabled(self) -> bool:
        return self._performance

    @performance_enabled.setter
    def performance_enabled(self, value: bool) -> None:
        self._performance = bool(value)
        cells.changed()  # native plans do not time nodes: they are rebuilt (or not) for the next run

    def directive(self, directive: int) -> None:
        from .enums import Directive as D
        flags = {D.VX_DIRECTIVE_DISABLE_LOGGING: ("logging_enabled", False),
                 D.VX_DIRECTIVE_ENABLE_LOGGING: ("logging_enabled", True),
                 D.VX_DIRECTIVE_DISABLE_PERFORMANCE: ("performance_enabled", False),
                 D.VX_DIRECTIVE_ENABLE_PERFORMANCE: ("performance_enabled", True)}
        if directive not in flags:
            raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                          f"directive {directive:#x} is not supported", self)
        attr, value = flags[directive]
        setattr(self, attr, value)


__all__ = [
    "EXTENSIONS",
    "IMPLEMENTATION",
    "MAX_TENSOR_DIMS",
    "VENDOR_ID",
    "VERSION",
    "Context",
    "ErrorObject",
]
