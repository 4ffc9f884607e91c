"""References: the handle table and the counting every object shares.

A handle given to C is an id from a table, never an address: a bogus, stale or
released handle is simply absent from the table, so it is reported, never
dereferenced.  Ids are never reused.
"""
from __future__ import annotations

import itertools
import threading
from typing import TypeVar

from .enums import MAX_REFERENCE_NAME, Status, Type, type_name
from .errors import VXError

# Handles look like aligned user-space addresses so that C code printing them
# sees nothing odd, but they lie in a range no allocator hands out.
_HANDLE_BASE = 0x7F5A_0000_0000
_HANDLE_STEP = 16

lock = threading.RLock()
"""Serialises every change to the object model (creation, release, attributes)."""

_table: dict[int, Reference] = {}
_ids = itertools.count(1)

R = TypeVar("R", bound="Reference")


def lookup(handle: int, cls: type[R], what: str | None = None) -> R:
    """The live object behind ``handle``, which must be an instance of ``cls``.

    Raises ``VX_ERROR_INVALID_REFERENCE`` for NULL, unknown, released or
    wrongly typed handles.
    """
    what = what or cls.__name__.lower()
    if not handle:
        raise VXError(Status.VX_ERROR_INVALID_REFERENCE, f"{what} is NULL")
    obj = _table.get(handle)
    if obj is None:
        raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                      f"{what} {handle:#x} is not a live OpenVX reference")
    if not isinstance(obj, cls):
        raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                      f"{what} {handle:#x} is a {type_name(obj.vx_type)}, not a {cls.__name__.lower()}",
                      obj)
    return obj


def find(handle: int) -> Reference | None:
    """The live object behind ``handle`` or None, without raising."""
    return _table.get(handle) if handle else None


def live_references(context: Reference) -> list[Reference]:
    return [r for r in _table.values() if r.context is context]


class Reference:
    """Base of every OpenVX object.

    Two counts keep an object alive: ``external`` is the application's
    (``VX_REFERENCE_COUNT``), ``internal`` is the library's own (a graph holding
    its nodes, a view holding its parent).  It is destroyed when both are zero.
    """

    vx_type: int = Type.VX_TYPE_REFERENCE
    counted = True  # counts toward VX_CONTEXT_REFERENCES
    virtual = False  # a data object scoped to one graph (its kinds that can be virtual set it per object)

    def __init__(self, context: Reference | None):
        self.context = context if context is not None else self  # type: ignore[assignment]
        self.external = 1
        self.internal = 0
        self.name = ""
        self.alive = True
        with lock:
            self.handle = _HANDLE_BASE + next(_ids) * _HANDLE_STEP
            _table[self.handle] = self

    # -- counting ---------------------------------------------------------
    def retain(self) -> None:
        with lock:
            self.external += 1

    def release(self) -> None:
        """Drop one application reference."""
        with lock:
            if self.external <= 0:
                raise VXError(Status.VX_ERROR_INVALID_REFERENCE,
                              f"{self.describe()} has no application reference left to release", self)
            self.external -= 1
            self._collect()

    @property
    def executing(self) -> bool:
        """True while the object runs or is scheduled to run (only a graph can)."""
        return False

    def hold(self) -> None:
        """Take a library-internal reference."""
        with lock:
            self.internal += 1

    def unhold(self) -> None:
        with lock:
            self.internal -= 1
            self._collect()

    def _collect(self) -> None:
        if self.alive and self.external == 0 and self.internal == 0:
            self.destroy()

    def destroy(self) -> None:
        """Remove from the table and let go of whatever this object holds."""
        with lock:
            if not self.alive:
                return
            self.alive = False
            _table.pop(self.handle, None)
            self.on_destroy()

    def on_destroy(self) -> None:
        """Release library-held references; subclasses extend."""

    # -- naming -----------------------------------------------------------
    def set_name(self, name: str) -> None:
        size = len(name.encode("utf-8", "surrogateescape"))
        if size >= MAX_REFERENCE_NAME:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"name of {size} bytes is too long for {self.describe()} "
                          f"(at most {MAX_REFERENCE_NAME - 1})", self)
        self.name = name

    def describe(self) -> str:
        """How log lines name this object: its type, name if any, and handle."""
        kind = type_name(self.vx_type).replace("VX_TYPE_", "").lower()
        label = f" '{self.name}'" if self.name else ""
        return f"{kind}{label} ({self.handle:#x})"


_classes: dict[int, type[Reference]] = {}
"""``class_for``'s answers: every attribute query asks it, so the class tree is walked once per type."""


def class_for(vx_type: int) -> type[Reference]:
    """The model class whose objects have ``vx_type`` (Reference for VX_TYPE_REFERENCE)."""
    found = _classes.get(vx_type)
    if found is not None:
        return found
    if vx_type == Type.VX_TYPE_REFERENCE:
        return Reference
    pending = list(Reference.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.vx_type == vx_type:
            _classes[vx_type] = cls
            return cls
        pending.extend(cls.__subclasses__())
    raise VXError(Status.VX_ERROR_INVALID_TYPE, f"no object type {type_name(vx_type)}")


def destroy_all(context: Reference) -> None:
    """Destroy every object of ``context`` (vxReleaseContext)."""
    with lock:
        for ref in list(_table.values()):
            if ref.context is context and ref is not context:
                ref.alive = False
                _table.pop(ref.handle, None)
        context.alive = False
        _table.pop(context.handle, None)
