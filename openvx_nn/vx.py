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
    """A function or constant of ``lib``, kept as a module global: the first lookup goes through cffi's
    lazy accessor, later ones are a plain module attribute (a hot ``vx.vxProcessGraph`` cost 1.4 us per
    lookup through this hook, more than the call itself)."""
    value = getattr(lib, name)
    if not isinstance(getattr(type(lib), name, None), property):  # a C variable is read afresh each time
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(dir(lib)))
