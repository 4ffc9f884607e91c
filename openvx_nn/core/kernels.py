"""The kernel registry: every kernel the library provides, described once.

Filled by the graph engine; until kernels are registered it is empty.
"""
from __future__ import annotations

_KERNELS: list[tuple[int, str, int]] = []  # (enum, name, library)


def kernel_table() -> list[tuple[int, str]]:
    return [(enum, name) for enum, name, _ in _KERNELS]


def module_count() -> int:
    return len({lib for _, _, lib in _KERNELS})
