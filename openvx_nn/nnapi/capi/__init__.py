"""NNAPI's C API (``NeuralNetworks.h``, ``libneuralnetworks.so``): the objects behind its handles
(``objects``) and the ``@ffi.def_extern`` bodies of the exported functions (``entry``).

``entry`` and ``binding`` exist only inside a process that loaded libneuralnetworks.so; its start-up
code calls ``install``.  ``objects`` is plain Python over the builder (``Model``, ``Compilation``) and
the HAL driver, so it is tested without C too.
"""
from __future__ import annotations

import importlib

from ...capi.interrupt import guard_finalizers


def install() -> None:
    """Register every entry point with cffi (called once from the library's init code); in a C host, keep
    SIGINT out of llvmlite's code for the process's life (``capi.interrupt.guard_finalizers``)."""
    importlib.import_module(f"{__name__}.entry")
    guard_finalizers()
