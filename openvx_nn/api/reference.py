"""The bridge to libopenvx.so: checked calls (status → exception with the
library's log message) and the base class of every object wrapper."""
from __future__ import annotations

import threading
from typing import Any

from .. import capi, vx
from ..capi import interrupt
from .errors import error_for

ffi = vx.ffi
SUCCESS = vx.VX_SUCCESS


class LogBook:
    """The messages the library logs, kept so a failed call can quote its own.

    :meth:`mark` runs before every call and takes no lock (it reads one int,
    atomic under the GIL): a thread switched out while holding a lock that
    every call takes would make the other threads queue on it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[str] = []
        self._added = 0  # entries ever added; _entries holds the last len(_entries) of them

    def mark(self) -> int:
        return self._added

    def add(self, text: str) -> None:
        with self._lock:
            self._entries.append(text)
            self._added += 1
            if len(self._entries) > 1000:  # keep the tail; marks only ever look at recent entries
                del self._entries[:500]

    def since(self, mark: int) -> str:
        with self._lock:
            first = len(self._entries) - (self._added - mark)
            return "; ".join(self._entries[max(first, 0):])

    def last(self) -> str:
        with self._lock:
            return self._entries[-1] if self._entries else ""


LOG = LogBook()


@ffi.callback("vx_log_callback_f")
def _on_log(context, ref, status, text) -> None:
    LOG.add(ffi.string(text).decode(errors="replace"))


def register_log(context_handle) -> None:
    vx.vxRegisterLogCallback(context_handle, _on_log, vx.vx_false_e)


def unregister_log(context_handle) -> None:
    vx.vxRegisterLogCallback(context_handle, ffi.NULL, vx.vx_false_e)


def _checked(status: int, function: str, mark: int) -> int:
    if status != SUCCESS and interrupt.take_pending():
        raise KeyboardInterrupt(f"{function} was interrupted by SIGINT")
    if status != SUCCESS:
        raise error_for(status, function, LOG.since(mark))
    return status


def call(function: str, *args: Any) -> int:
    """Call ``vx.<function>``; raise the matching ``VXError`` unless it returns VX_SUCCESS."""
    mark = LOG.mark()
    return _checked(getattr(vx, function)(*args), function, mark)


def call_on(function: str, obj: Reference) -> int:
    """``call(function, obj.handle)``, run in-process when the library offers the entry
    (``openvx_nn.capi.IN_PROCESS``): the same body, status and log line, without the
    GIL releases of a trip through C, which hand the GIL to waiting threads."""
    direct = capi.IN_PROCESS.get(function)
    if direct is None:
        return call(function, obj.handle)
    mark = LOG.mark()
    return _checked(direct(obj.address), function, mark)


def create(function: str, *args: Any):
    """Call a ``vx*Create``-style function; raise unless the handle it returns is good."""
    mark = LOG.mark()
    handle = getattr(vx, function)(*args)
    status = vx.vxGetStatus(ffi.cast("vx_reference", handle))
    if status != SUCCESS:
        raise error_for(status, function, LOG.since(mark))
    return handle


class Reference:
    """An OpenVX object owned by Python: released by ``close()`` (or its owner's)."""

    _c_type = "vx_reference"

    def __init__(self, handle) -> None:
        self._handle = handle
        self._address: int | None = None  # made once: in-process entries take it per call

    @property
    def handle(self):
        """The C handle (a cffi pointer) for use with :mod:`openvx_nn.vx`."""
        if self._handle is None:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def ref(self):
        return ffi.cast("vx_reference", self.handle)

    @property
    def address(self) -> int:
        """The handle as the integer the library's entry points receive."""
        address = self._address
        if address is None or self._handle is None:
            address = self._address = int(ffi.cast("uintptr_t", self.handle))
        return address

    @property
    def name(self) -> str:
        out = ffi.new("vx_char **")
        call("vxQueryReference", self.ref, vx.VX_REFERENCE_NAME, out, ffi.sizeof("vx_char *"))
        return ffi.string(out[0]).decode() if out[0] != ffi.NULL else ""

    @name.setter
    def name(self, value: str) -> None:
        call("vxSetReferenceName", self.ref, value.encode())

    def close(self) -> None:
        """Release the object (idempotent)."""
        if self._handle is not None:
            holder = ffi.new("vx_reference *", ffi.cast("vx_reference", self._handle))
            self._handle = None
            call("vxReleaseReference", holder)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
