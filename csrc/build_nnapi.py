"""cffi build description of libneuralnetworks.so, NNAPI's C API (used by setup.py's ``cffi_modules``).

Built like libopenvx.so (``build_capi``) and with its start-up code (``runtime.c``: the embedded
interpreter finds the package's virtual environment, waits for running graphs at exit): the exported
``ANeuralNetworks*`` functions (``nnapi/neuralnetworks.c``) check their pointers and call the
``extern "Python+C"`` functions of ``nnapi/bridge.h``, defined in ``openvx_nn.nnapi.capi.entry``.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import cffi

CSRC = Path(__file__).resolve().parent
ROOT = CSRC.parent
MODULE = "openvx_nn._nnapi_capi"


def _build_capi():
    """build_capi.py as a module (setuptools loads these files by path, not as a package)."""
    spec = importlib.util.spec_from_file_location("openvx_nn_build_capi", CSRC / "build_capi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


INIT_CODE = f"""
from {MODULE} import ffi, lib
_libdir = ffi.string(lib.vxnn_library_dir()).decode()
{_build_capi().OWN_PACKAGE}
from openvx_nn.nnapi.capi import install
install()
"""


def _builder() -> cffi.FFI:
    capi = _build_capi()
    ffi = cffi.FFI()
    bridge = (CSRC / "nnapi" / "bridge.h").read_text()
    ffi.cdef(f'extern "Python+C" {{\n{bridge}\n}}\nconst char *vxnn_library_dir(void);\n')
    ffi.embedding_init_code(INIT_CODE)
    # runtime.c is included, not copied: cffi_start_python() is static in this translation unit
    capi.set_embedded_source(ffi, MODULE, '#include "runtime.c"\n#include "nnapi/neuralnetworks.c"\n',
                             "libneuralnetworks.so", CSRC / "nnapi" / "exports.map")
    return ffi


ffibuilder = _builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
