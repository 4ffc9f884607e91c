"""Attribute tables: how each ``vxQuery*``/``vxSet*Attribute`` value is laid out in C.

Each object family registers ``{attribute: Attr}`` for its ``vx_type``.  The
generic query/set entry points check the pointer, the size the caller gave
(``VX_ERROR_INVALID_PARAMETERS`` when it is not the attribute's size) and that
the attribute exists for the object (``VX_ERROR_NOT_SUPPORTED``).
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.enums import Status, enumerations_name
from ..core.errors import VXError
from ..core.reference import Reference
from .binding import ffi

Getter = Callable[[Any], Any]
Setter = Callable[[Any, Any], None]


@dataclass(frozen=True)
class Attr:
    """One attribute: its C layout and how to read (and maybe write) it.

    ``fmt`` is a ``struct`` code for a single value ("H" vx_uint16, "I" vx_uint32,
    "i" vx_enum, "b" vx_int8, "N" vx_size, "P" a pointer), or one of
    "sizes" (vx_size[n], size at least n entries), "text" (a NUL-terminated
    string, size at least its length + 1), "fixed" (exact byte block).
    """

    fmt: str
    get: Getter
    set: Setter | None = None
    width: int = 0  # byte width for "fixed" with a known size, 0 = len(value)


_TABLES: dict[int, dict[int, Attr]] = {}
_NAMES: dict[int, str] = {}


def register(vx_type: int, table: dict[int, Attr]) -> None:
    _TABLES.setdefault(int(vx_type), {}).update(table)


def _encode(attr: Attr, value: Any, size: int, name: str) -> bytes:
    if attr.fmt == "sizes":
        data = struct.pack(f"{len(value)}N", *value)
        if size < len(data) or size % struct.calcsize("N"):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{name} needs {len(data)} bytes (vx_size[{len(value)}]), size is {size}")
        return data
    if attr.fmt == "text":
        data = value.encode() + b"\0"
        if attr.width:
            if size != attr.width:
                raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                              f"{name} is a vx_char[{attr.width}], size is {size}")
            return data.ljust(attr.width, b"\0")
        if size < len(data):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{name} needs at least {len(data)} bytes, size is {size}")
        return data
    if attr.fmt == "fixed":
        data = bytes(value)
        if size != len(data):
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{name} is {len(data)} bytes, size is {size}")
        return data
    _check_size(struct.calcsize(attr.fmt), size, name)
    return struct.pack(attr.fmt, value)


def _check_size(expected: int, size: int, name: str) -> None:
    if size != expected:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{name} is {expected} bytes, size is {size}")


def _find(obj: Reference, vx_type: int, attribute: int) -> tuple[Attr, str]:
    name = enumerations_name(attribute)
    attr = _TABLES.get(int(vx_type), {}).get(attribute)
    if attr is None:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED,
                      f"{name} is not an attribute of {obj.describe()}", obj)
    return attr, name


def query(obj: Reference, vx_type: int, attribute: int, ptr, size: int) -> None:
    attr, name = _find(obj, vx_type, attribute)
    if ptr == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"NULL pointer for {name} of {obj.describe()}", obj)
    try:
        if attr.fmt not in ("sizes", "text", "fixed"):
            # Checked before the getter runs: VX_PARAMETER_REF's getter retains a reference,
            # which a refused query would leak.
            _check_size(struct.calcsize(attr.fmt), size, name)
        data = _encode(attr, attr.get(obj), size, name)
    except VXError as err:
        err.ref = err.ref or obj
        err.message += f" (querying {obj.describe()})"
        raise
    ffi.memmove(ptr, data, len(data))


def set_attribute(obj: Reference, vx_type: int, attribute: int, ptr, size: int) -> None:
    attr, name = _find(obj, vx_type, attribute)
    if attr.set is None:
        raise VXError(Status.VX_ERROR_NOT_SUPPORTED, f"{name} of {obj.describe()} is read-only", obj)
    if ptr == ffi.NULL:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"NULL pointer for {name} of {obj.describe()}", obj)
    if attr.fmt == "fixed":
        if size != attr.width:
            raise VXError(Status.VX_ERROR_INVALID_PARAMETERS,
                          f"{name} is {attr.width} bytes, size is {size}", obj)
        attr.set(obj, bytes(ffi.buffer(ptr, size)))
        return
    expected = struct.calcsize(attr.fmt)
    if size != expected:
        raise VXError(Status.VX_ERROR_INVALID_PARAMETERS, f"{name} is {expected} bytes, size is {size}", obj)
    (value,) = struct.unpack(attr.fmt, bytes(ffi.buffer(ptr, size)))
    attr.set(obj, value)
