"""The kernel registry: every kernel the library provides, by name and by enum.

The object model only reads it. The kernel descriptions (``openvx_nn.operations``, a layer above)
register themselves when imported, and whoever needs the built-in kernels imports that package: the
C entry points (``capi``) at start-up, the front ends, the CLI. Core never imports upwards."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .signature import KernelDescription

_BY_ENUM: dict[int, KernelDescription] = {}
_BY_NAME: dict[str, KernelDescription] = {}


def register(description: KernelDescription) -> KernelDescription:
    if description.enum in _BY_ENUM or description.name in _BY_NAME:
        raise ValueError(f"kernel {description.name} ({description.enum:#x}) registered twice")
    _BY_ENUM[description.enum] = description
    _BY_NAME[description.name] = description
    return description


def by_enum(enum: int) -> KernelDescription | None:
    return _BY_ENUM.get(enum)


def by_name(name: str) -> KernelDescription | None:
    return _BY_NAME.get(name)


def all_kernels() -> list[KernelDescription]:
    return sorted(_BY_ENUM.values(), key=lambda d: d.enum)


def kernel_table() -> list[tuple[int, str]]:
    return [(d.enum, d.name) for d in all_kernels()]


def module_count() -> int:
    return len({d.library for d in all_kernels()})
