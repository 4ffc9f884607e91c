"""User structs: struct types an application registers (``vxRegisterUserStruct[WithName]``).

Each gets the next enum from VX_TYPE_USER_STRUCT_START up to VX_TYPE_USER_STRUCT_END and
counts as a type of its registered size wherever a type is taken: scalars
(``vxCreateScalarWithSize``), array items, user kernel parameters.
"""
from __future__ import annotations

from .enums import Status, Type, type_name
from .errors import VXError

FIRST, LAST = int(Type.VX_TYPE_USER_STRUCT_START), int(Type.VX_TYPE_USER_STRUCT_END)


class UserStructs:
    """One context's user structs: enum -> (size, name); the name may be empty."""

    def __init__(self) -> None:
        self._types: dict[int, tuple[int, str]] = {}

    def register(self, size: int, name: str = "") -> int:
        """The new type's enum, or VX_TYPE_INVALID (size 0, name taken, no enum left)."""
        if size < 1 or (name and self.enum_of(name) is not None):
            return Type.VX_TYPE_INVALID
        enum = FIRST + len(self._types)
        if enum > LAST:
            return Type.VX_TYPE_INVALID
        self._types[enum] = (int(size), name)
        return enum

    def size_of(self, enum: int) -> int | None:
        entry = self._types.get(enum)
        return entry[0] if entry else None

    def name_of(self, enum: int) -> str:
        entry = self._types.get(enum)
        if entry is None or not entry[1]:
            raise VXError(Status.VX_FAILURE, f"{type_name(enum)} is not a user struct registered with a name")
        return entry[1]

    def enum_of(self, name: str) -> int | None:
        return next((e for e, (_, n) in self._types.items() if n == name), None)
