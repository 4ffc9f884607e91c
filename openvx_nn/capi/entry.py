"""Decorators that turn object-model functions into C entry points.

An entry's Python body receives the C arguments after ``fn`` (the exported
function's name) and may raise ``VXError``; the decorator maps that to the C
return value and sends a log line naming the function, the object and the
problem.  Any other exception is a library bug: it is logged with its
traceback and reported as ``VX_FAILURE``, never propagated into C; Ctrl-C is
logged and given back to a C host (``interrupt.py``).

A status entry may also be offered to Python callers of this same process
(``exported=``, the C function's name): :data:`openvx_nn.capi.IN_PROCESS`
then runs the very same body, error mapping and log line without the trip
through C and back, whose two GIL releases each wake a waiting thread.
"""
from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..core import reference
from ..core.context import Context
from ..core.enums import Status
from ..core.errors import VXError
from . import IN_PROCESS
from .binding import ffi
from .interrupt import Interrupted, escaped, redeliver


def report(fn: str, error: VXError) -> None:
    """Log ``error`` against its object's context (or the live context)."""
    if getattr(error, "logged", False):
        return
    ref = error.ref if error.ref is not None and error.ref.alive else None
    ctx = ref.context if ref is not None else Context.current()
    text = f"{fn}: {error.message}"
    if ctx is not None and ctx.alive:
        ctx.log(ref, error.status, text)


def _internal(fn: str, exc: BaseException) -> VXError:
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    print(f"[openvx-nn] internal error in {fn}:\n{detail}", file=sys.stderr, flush=True)
    return VXError(Status.VX_FAILURE, f"internal error: {type(exc).__name__}: {exc}")


def _name(fn_c) -> str:
    """The exported function's name that its C wrapper passes (``__func__``)."""
    return ffi.string(fn_c).decode() if fn_c != ffi.NULL else "?"


def _failure(fn: str, exc: BaseException, from_c: bool) -> VXError:
    """The error an entry's exception becomes, reported; Ctrl-C raises again for an in-process caller."""
    if isinstance(exc, VXError):
        err = exc
    elif isinstance(exc, KeyboardInterrupt):
        if not from_c:  # an in-process Python caller gets Ctrl-C as Python does
            raise exc
        err = Interrupted()
    elif isinstance(exc, Exception):  # the C host must never see a Python exception
        err = _internal(fn, exc)
    else:  # SystemExit and the like: not ours to turn into a status
        raise exc
    report(fn, err)
    return err


def _run(fn: str, body: Callable, args: tuple, locked: bool = True, from_c: bool = True):
    # Failures are reported under the lock (Context.log takes it too): every log
    # entry reaches the application's callback with the lock held, so a callback
    # that calls OpenVX never takes the lock after the log's own lock while
    # another thread holds them the other way round.  Unlocked entries (process,
    # wait) report without it, as they run.
    if locked:
        with reference.lock:
            try:
                return fn, body(*args), None
            except BaseException as exc:  # noqa: BLE001 - sorted out by _failure
                err = _failure(fn, exc, from_c)
    else:
        try:
            return fn, body(*args), None
        except BaseException as exc:  # noqa: BLE001 - sorted out by _failure
            err = _failure(fn, exc, from_c)
    if isinstance(err, Interrupted):
        redeliver()  # outside the lock; a C program ends here, as Ctrl-C ends it without the library
    return fn, None, err


def _status(body: Callable[..., int | None], locked: bool, fn: str, *args, from_c: bool = True) -> int:
    _, result, err = _run(fn, body, args, locked, from_c)
    if err is not None:
        return err.status
    return Status.VX_SUCCESS if result is None else int(result)


def status_entry(body: Callable[..., int | None] | None = None, *, locked: bool = True,
                 exported: str | None = None):
    """An entry returning ``vx_status``: the body returns None (success) or a status.

    ``locked=False`` is for calls that block on graph execution (process, wait):
    their bodies take the model lock only around bookkeeping.  ``exported``:
    also offer the entry in :data:`IN_PROCESS` under that C function's name.
    """

    def decorate(body: Callable[..., int | None]) -> Callable:
        @ffi.def_extern(name=body.__name__, onerror=escaped(Status.VX_FAILURE))
        def wrapper(fn_c, *args):
            return _status(body, locked, _name(fn_c), *args)

        if exported is not None:
            IN_PROCESS[exported] = functools.partial(_status, body, locked, exported, from_c=False)
        return body

    return decorate(body) if body is not None else decorate


def creator_entry(body: Callable[..., reference.Reference]) -> Callable:
    """An entry returning a handle: on failure an error object of the context
    concerned, or NULL when no context is known."""

    @ffi.def_extern(name=body.__name__, onerror=escaped(0))
    def wrapper(fn_c, *args):
        _, result, err = _run(_name(fn_c), body, args)
        if err is None:
            return result.handle
        ref = err.ref if err.ref is not None and err.ref.alive else None
        ctx = ref.context if ref is not None else None
        return ctx.error_object(err.status).handle if ctx is not None and ctx.alive else 0

    return body


def value_entry(failure: int) -> Callable:
    """An entry returning a plain value: ``failure`` on error."""

    def decorate(body: Callable) -> Callable:
        @ffi.def_extern(name=body.__name__, onerror=escaped(failure))
        def wrapper(fn_c, *args):
            _, result, err = _run(_name(fn_c), body, args)
            return failure if err is not None or result is None else result

        return body

    return decorate


def void_entry(body: Callable[..., None]) -> Callable:
    """An entry returning nothing; failures are only logged."""

    @ffi.def_extern(name=body.__name__, onerror=escaped(None))
    def wrapper(fn_c, *args):
        _run(_name(fn_c), body, args)

    return body


@contextmanager
def blaming(ref: reference.Reference) -> Iterator[None]:
    """Attach ``ref`` to any VXError raised inside that names no object yet, so
    that a creator's failure becomes an error object of ``ref``'s context."""
    try:
        yield
    except VXError as err:
        if err.ref is None:
            err.ref = ref
        raise
