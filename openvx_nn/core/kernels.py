"""The kernel registry: every kernel the library provides, by name and by enum."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .signature import KernelDescription

_BY_ENUM: dict[int, KernelDescription] = {}
_BY_NAME: dict[str, KernelDescription] = {}
_loaded = False


def register(description: KernelDescription) -> KernelDescription:
    if description.enum in _BY_ENUM or description.name in _BY_NAME:
        raise ValueError(f"kernel {description.name} ({description.enum:#x}) registered twice")
    _BY_ENUM[description.enum] = description
    _BY_NAME[description.name] = description
    return description


def _ensure_loaded() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from .. import operations  # noqa: F401  (registers every kernel description)


def by_enum(enum: int) -> KernelDescription | None:
    _ensure_loaded()
    return _BY_ENUM.get(enum)


def by_name(name: str) -> KernelDescription | None:
    _ensure_loaded()
    return _BY_NAME.get(name)


def all_kernels() -> list[KernelDescription]:
    _ensure_loaded()
    return sorted(_BY_ENUM.values(), key=lambda d: d.enum)


def kernel_table() -> list[tuple[int, str]]:
    return [(d.enum, d.name) for d in all_kernels()]


def module_count() -> int:
    return len({d.library for d in all_kernels()})
