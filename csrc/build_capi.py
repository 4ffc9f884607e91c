"""cffi build description of libopenvx.so (used by setup.py's ``cffi_modules``).

The exported ``vx*`` functions are thin C wrappers (``csrc/api/*.c``) compiled
against our headers; they call ``extern "Python+C"`` functions declared in
``csrc/bridge/*.h`` and defined with ``@ffi.def_extern`` in ``openvx_nn.capi``.
"""
from __future__ import annotations

import re
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

    return (f'{plain("bridge_types.h")}\nextern "Python+C" {{\n{extern}\n}}\n{plain("runtime.h")}\n'
            f'{plain("plan.h")}\n')


OWN_PACKAGE = """
import importlib.util, os, sys
_init = os.path.join(_libdir, "__init__.py")
if "openvx_nn" not in sys.modules and os.path.isfile(_init):
    # The package this library was built with, never another ``openvx_nn`` the path also holds (an older
    # install, a checkout on PYTHONPATH): its Python side must be the one its C side was built against.
    _spec = importlib.util.spec_from_file_location("openvx_nn", _init, submodule_search_locations=[_libdir])
    _package = importlib.util.module_from_spec(_spec)
    sys.modules["openvx_nn"] = _package
    try:
        _spec.loader.exec_module(_package)
    except BaseException:
        del sys.modules["openvx_nn"]
        raise
try:
    import openvx_nn  # noqa: F401
except ImportError:
    sys.path.append(os.path.dirname(_libdir))
"""
"""Start-up code of both libraries: import the package beside the library (``_libdir``)."""

INIT_CODE = f"""
from {MODULE} import ffi, lib
_libdir = ffi.string(lib.vxnn_library_dir()).decode()
{OWN_PACKAGE}
from openvx_nn.capi import install
install()
"""


# -- stubs: every declared function without a hand-written wrapper --------------
_PROTOTYPE = re.compile(r"^VX_API_ENTRY (.+?) VX_API_CALL (\w+)\((.*)\);$", re.MULTILINE)
_DEFINED = re.compile(r"\bVX_API_CALL\s+(\w+)\s*\(")
_HANDLE = re.compile(r"^typedef struct \w+ \*(\w+);$", re.MULTILINE)


def _first_handle(parameters: str, handles: set[str]) -> str:
    """The name of the first parameter passed as a handle (the object whose context
    the stub's error object and log line belong to), or "0"."""
    for param in parameters.split(","):
        words = re.findall(r"\w+", re.sub(r"\[.*?\]", "", param))
        if len(words) >= 2 and "*" not in param and words[-2] in handles:
            return words[-1]
    return "0"


def _stub(returns: str, name: str, parameters: str, handles: set[str]) -> str:
    call = f"vxnn_not_implemented(__func__, H({_first_handle(parameters, handles)}))"
    if returns == "void":
        tail = f"    if (vxnn_start())\n        {call};\n"
    elif returns == "vx_status":
        tail = f"    if (vxnn_start())\n        {call};\n    return VX_ERROR_NOT_IMPLEMENTED;\n"
    elif returns in handles:
        tail = f"    return ({returns})(vxnn_start() ? {call} : 0);\n"
    else:
        tail = f"    if (vxnn_start())\n        {call};\n    return ({returns})0;\n"
    return f"VX_API_ENTRY {returns} VX_API_CALL {name}({parameters})\n{{\n{tail}}}\n"


def stub_source(include: Path = ROOT / "include" / "VX", api: Path = CSRC / "api") -> str:
    """C definitions for every function the headers declare and csrc/api/*.c does
    not define: each logs "not implemented" and returns VX_ERROR_NOT_IMPLEMENTED,
    an error object (creators) or 0.  The headers come from the ABI tables
    (tools/gen_headers.py), so a function added to a table is stubbed here."""
    defined = {m for p in api.glob("*.c") for m in _DEFINED.findall(p.read_text())}
    headers = sorted(include.glob("*.h"))
    texts = {h.name: h.read_text() for h in headers}
    handles = {m for t in texts.values() for m in _HANDLE.findall(t)}
    out = [f"#include <VX/{n}>\n" for n in texts]
    for text in texts.values():
        out.extend(_stub(r, n, ps, handles) for r, n, ps in _PROTOTYPE.findall(text) if n not in defined)
    return "".join(out)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def set_embedded_source(ffi: cffi.FFI, module: str, source: str, soname: str, exports: Path,
                        sources: list[str] = ()) -> None:
    """Compile ``source`` as an embedding library linked to this Python (the options every library of the
    package shares: hidden visibility, exported names from ``exports``, libpython by rpath)."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    ffi.set_source(
        module,
        source,
        sources=list(sources),
        include_dirs=[str(ROOT / "include"), str(CSRC)],
        # sys.executable, not its real path: a venv's python is a symlink whose
        # location is what makes the embedded interpreter find the venv.
        define_macros=[("VXNN_BUILD_PYTHON", _c_string(sys.executable))],
        extra_compile_args=["-fvisibility=hidden", "-std=gnu99", "-Wall", "-Wno-unused-function"],
        extra_link_args=[
            f"-Wl,-soname,{soname}",
            f"-Wl,--version-script={exports}",
            f"-L{libdir}", f"-Wl,-rpath,{libdir}",
        ],
        libraries=["dl", "pthread", f"python{sys.version_info[0]}.{sys.version_info[1]}"],
        py_limited_api=False,
    )


def _builder() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(_declarations())
    ffi.embedding_init_code(INIT_CODE)
    sources = sorted(str(p.relative_to(ROOT)) for p in (CSRC / "api").glob("*.c")) + ["csrc/plan.c", "csrc/plan_helpers.c",
                                                                                     "csrc/tensor_copy.c"]
    set_embedded_source(ffi, MODULE, '#include "runtime.c"\n' + stub_source(), "libopenvx.so",
                        CSRC / "exports.map", sources)
    return ffi


ffibuilder = _builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
