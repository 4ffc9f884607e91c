"""The C boundary: ``@ffi.def_extern`` bodies of libopenvx.so's entry points.

These modules only translate: C arguments to Python values, object-model
exceptions to ``vx_status`` (plus a log line).  They are imported by the
library's start-up code (``install``), never directly: ``binding`` exists only
inside a process that loaded libopenvx.so.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable

from .. import operations  # noqa: F401  (the built-in kernels: registered before any entry point runs)
from .interrupt import guard_finalizers

IN_PROCESS: dict[str, Callable[..., int]] = {}
"""Status entries that Python code in this process may call without the C round trip, by the
exported C function's name, with the arguments the C wrapper would pass (handles as ints).
Filled by ``entry.status_entry(exported=...)`` once the library has started (empty before)."""

FAMILIES = ("reference_api", "scalar_api", "lut_api", "tensor_api", "graph_api",
            "image_api", "array_api", "object_array_api", "user_kernel_api", "import_kernel_api",
            "unimplemented_api")


def install() -> None:
    """Register every entry point with cffi (called once from the library's init code)."""
    for name in FAMILIES:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    guard_finalizers()
