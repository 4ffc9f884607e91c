"""Ctrl-C (SIGINT) while a C entry point runs Python: a log line and an error status, then the signal
goes back to the C host.

Python turns SIGINT into ``KeyboardInterrupt`` once its ``signal`` module is imported (even in an
interpreter started with ``install_signal_handlers = 0``, when the host left SIGINT at its default). A
C entry point must not let that exception escape (cffi would print it and return its ``onerror``
value, an empty-log ``VX_FAILURE``), and a C program does not expect to survive Ctrl-C because a
library swallowed it. So the entry logs "interrupted" and returns ``VX_FAILURE``, and when the
process is a C program (the library started Python) the signal is raised again with the default
action: the program ends as it would have without the library, and a host that blocks SIGINT finds
it pending. A Python program calling the C API through ``openvx_nn.vx`` gets the status and the log
line, and the interrupt stays pending (:func:`take_pending`): the Pythonic API raises
``KeyboardInterrupt`` in its caller when the call comes back, so Ctrl-C landing inside any call
ends a Python program as Python programs end on Ctrl-C.

One place loses the exception: numba compiles a kernel on its first call, and llvmlite calls back into
Python from C while it emits machine code; ``KeyboardInterrupt`` raised in such a ctypes callback is
printed and dropped, and the compilation carries on. :class:`_KeepCtrlC` records SIGINT while numba
holds its compiler lock (and keeps the dropped exception's traceback off stderr) and raises it again
when the lock is released. And one place must not get it at all: LLVM's Python bindings hand objects
between Python and C in steps (a module passed to the JIT, then marked as owned by it); an exception
between two steps leaves an object that two owners free, and the process crashed at exit. Landing in
llvmlite or numba's code generator, or in code they called, SIGINT is raised at the first line run once none of
their frames is on the stack. In a C host that
deferral stays for the process's life (:func:`guard_finalizers`): the garbage collector runs llvmlite's finalizers,
which hand objects back to C, at any moment, not only while numba compiles.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from collections.abc import Callable

import numba.core.event as numba_events

from ..core.enums import Status
from ..core.errors import VXError

MESSAGE = "interrupted by SIGINT (Ctrl-C); the call did not complete"
"""What an interrupted entry point logs (libopenvx's and libneuralnetworks's)."""


class Interrupted(VXError):
    """The error an entry point reports when SIGINT interrupted it."""

    def __init__(self) -> None:
        super().__init__(Status.VX_FAILURE, MESSAGE)


@functools.cache
def hosted_by_c() -> bool:
    """True when this process is not a Python interpreter but a program that embeds one (the library started
    Python for a C program): its executable is not ``sys.executable``."""
    try:
        return os.path.realpath("/proc/self/exe") != os.path.realpath(sys.executable)
    except OSError:  # no /proc: assume a Python host, which keeps the interrupt as a status
        return False


_pending = threading.Event()  # SIGINT ended an entry point called from Python and nobody has taken it yet


def take_pending() -> bool:
    """True once after an entry point called from a Python host was interrupted (then cleared)."""
    if not _pending.is_set():
        return False
    _pending.clear()
    return True


def redeliver() -> None:
    """Give SIGINT back: to a C host its default action (the program ends, status 130 in a shell); to a
    Python host as a pending interrupt that the Pythonic API raises as ``KeyboardInterrupt``."""
    if not hosted_by_c():
        _pending.set()
        return
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread: KeyboardInterrupt is only ever raised there, so unreachable
        return
    os.kill(os.getpid(), signal.SIGINT)


def escaped(value: int | None) -> Callable[..., int | None]:
    """cffi's ``onerror`` of an entry point (libopenvx's and libneuralnetworks's): ``value`` for an exception that
    escaped the entry's own handling. Only SIGINT lands there (between the C call and the entry's ``try``, or after
    it): it is given back like one caught inside (:func:`redeliver`), not lost in a bare status (0 would read as
    success)."""
    def onerror(exc_type, exc_value, traceback) -> int | None:
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            redeliver()
        return value
    return onerror


_UNSAFE = ("llvmlite", "numba.core.codegen")
"""Modules whose code SIGINT must not interrupt: they move LLVM objects between Python and C owners."""


def _unsafe(frame) -> bool:
    """True when ``frame`` or a frame that called it runs an :data:`_UNSAFE` module's code. The callers count:
    llvmlite calls back into other modules between its steps (numba's LLVM-lock hooks run inside llvmlite's lock,
    after it is taken and before the C call), and an exception raised there unwinds through llvmlite's frames."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if any(name == module or name.startswith(module + ".") for module in _UNSAFE):
            return True
        frame = frame.f_back
    return False


class _KeepCtrlC(numba_events.Listener):
    """While the main thread holds numba's compiler lock, SIGINT is counted as well as raised; if a callback
    inside LLVM swallowed it, ``KeyboardInterrupt`` is raised when the outermost hold ends (the lock is
    already released then). Landing while an :data:`_UNSAFE` module's code is on the stack, it is raised at the
    next line run with none of its frames below (the frames on the stack are traced until then)."""

    def __init__(self) -> None:
        self.depth = 0
        self.previous = None
        self.unraisable = None
        self.seen = False
        self.traced: list = []  # frames given a line tracer by a deferred SIGINT
        self.resident = False  # the handler stays installed between compilations (a C host)

    def _on_sigint(self, signum, frame):
        if self.depth:
            self.seen = True
        if self.traced:
            if sys.gettrace() is _untraced:
                return  # an earlier SIGINT already waits for a safe line: this one is the same Ctrl-C
            self._forget()  # someone replaced the tracer: that deferral will never fire
        if frame is None or not _unsafe(frame) or sys.gettrace() is not None:
            raise KeyboardInterrupt
        while frame is not None:
            frame.f_trace = self._at_line
            self.traced.append(frame)
            frame = frame.f_back
        sys.settrace(_untraced)  # line events for the frames above only; calls made from now on are not traced

    def _at_line(self, frame, event, arg):
        if event == "line" and not _unsafe(frame):
            self._untrace()
            raise KeyboardInterrupt
        return self._at_line

    def _untrace(self) -> None:
        if self.traced:
            sys.settrace(None)
            self._forget()

    def _forget(self) -> None:
        for frame in self.traced:
            frame.f_trace = None
        self.traced.clear()

    def _on_unraisable(self, unraisable) -> None:
        if not (self.seen and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            (self.unraisable or sys.__unraisablehook__)(unraisable)

    def stay(self) -> None:
        """Keep the handler installed from now on (the host's SIGINT at Python's default only)."""
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return
        try:
            signal.signal(signal.SIGINT, self._on_sigint)
        except ValueError:  # not the thread the signal module counts as main (where Python started): no handler
            return
        self.resident = True

    def on_start(self, event) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.depth += 1
        if self.depth != 1:
            return
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self._on_sigint)
        if self.previous is not None or self.resident:
            self.unraisable, sys.unraisablehook = sys.unraisablehook, self._on_unraisable

    def on_end(self, event) -> None:
        if threading.current_thread() is not threading.main_thread() or self.depth == 0:
            return
        self.depth -= 1
        if self.depth:
            return
        if self.seen:  # raised below; a deferral begun outside the lock (a resident handler's) keeps waiting
            self._untrace()
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None
        if self.unraisable is not None:
            sys.unraisablehook = self.unraisable
            self.unraisable = None
        if self.seen:
            self.seen = False
            raise KeyboardInterrupt


def _untraced(frame, event, arg):
    """The global trace function while a SIGINT waits for a safe line: no new frame is traced (it returns
    no local tracer)."""


_KEEPER = _KeepCtrlC()
numba_events.register("numba:compiler_lock", _KEEPER)


def guard_finalizers() -> None:
    """In a C host, defer SIGINT out of llvmlite's code at any time, not only while numba compiles: a finalizer
    (``__del__``) that SIGINT interrupts prints a traceback and loses the interrupt. A Python host keeps its own
    handler (and the library leaves it alone)."""
    if hosted_by_c():
        _KEEPER.stay()
