"""cffi build description of libopenvx.so (used by setup.py's ``cffi_modules``).

The exported ``vx*`` functions are thin C wrappers (``csrc/api/*.c``) compiled
against our headers; they call ``extern "Python+C"`` functions declared in
``csrc/bridge/*.h`` and defined with ``@ffi.def_extern`` in ``openvx_nn.capi``.
"""
from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import cffi

ROOT = Path(__file__).resolve().parent.parent
CSRC = ROOT / "csrc"
MODULE = "openvx_nn._capi"


def _declarations() -> str:
    bridge = sorted(p for p in (CSRC / "bridge").glob("*.h") if p.name != "all.h")
    extern = "\n".join(p.read_text() for p in bridge)

    def plain(name: str) -> str:
        return "\n".join(line for line in (CSRC / name).read_text().splitlines()
                         if not line.startswith("#"))

    return f'{plain("bridge_types.h")}\nextern "Python+C" {{\n{extern}\n}}\n{plain("runtime.h")}\n'


INIT_CODE = f"""
import os, sys
from {MODULE} import ffi, lib
_libdir = ffi.string(lib.vxnn_library_dir()).decode()
_parent = os.path.dirname(_libdir)
try:
    import openvx_nn  # noqa: F401
except ImportError:
    sys.path.append(_parent)
from openvx_nn.capi import install
install()
"""


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _builder() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(_declarations())
    ffi.embedding_init_code(INIT_CODE)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    sources = sorted(str(p.relative_to(ROOT)) for p in (CSRC / "api").glob("*.c"))
    ffi.set_source(
        MODULE,
        '#include "runtime.c"\n',
        sources=sources,
        include_dirs=[str(ROOT / "include"), str(CSRC)],
        # sys.executable, not its real path: a venv's python is a symlink whose
        # location is what makes the embedded interpreter find the venv.
        define_macros=[("VXNN_BUILD_PYTHON", _c_string(sys.executable))],
        extra_compile_args=["-fvisibility=hidden", "-std=gnu99", "-Wall", "-Wno-unused-function"],
        extra_link_args=[
            "-Wl,-soname,libopenvx.so",
            f"-Wl,--version-script={CSRC / 'exports.map'}",
            f"-L{libdir}", f"-Wl,-rpath,{libdir}",
        ],
        libraries=["dl", "pthread", f"python{sys.version_info[0]}.{sys.version_info[1]}"],
        py_limited_api=False,
    )
    return ffi


ffibuilder = _builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
