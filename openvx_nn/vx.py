"""The OpenVX C API, called from Python in C style.

>>> from openvx_nn import vx
>>> ctx = vx.vxCreateContext()
>>> refs = vx.ffi.new("vx_uint32 *")
>>> vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, refs, 4) == vx.VX_SUCCESS
True

Every function, enumerator and struct of our headers is an attribute of this
module; the calls go through libopenvx.so exactly as a C program's do.
``ffi`` allocates C memory (``ffi.new``) and casts.
"""
from __future__ import annotations

from typing import Any

from cffi import FFI

from .headers import cdef_source
from .library import library_path

ffi = FFI()
ffi.cdef(cdef_source())
lib = ffi.dlopen(str(library_path()))


def __getattr__(name: str) -> Any:
    return getattr(lib, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(dir(lib)))
