"""The library's first C call in a Python process that has already imported
coremltools and numba starts the runtime instead of spinning forever (cffi's
start-up lock lives in PyCapsule_Type's version tag, which such imports set)."""
import subprocess
import sys

import pytest

pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) sets the type cache that blocked start-up")

PROGRAM = """
import coremltools, numba
from openvx_nn.kernels.support import jit
from openvx_nn import vx
context = vx.vxCreateContext()
print(vx.vxGetStatus(vx.ffi.cast("vx_reference", context)))
"""


def test_first_c_call_after_importing_coremltools_starts_the_runtime():
    result = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0"
