"""Each C library runs the Python package it was built with, even when the path offers another
``openvx_nn`` first (an older install, a checkout on PYTHONPATH): its C and Python sides must match."""
from __future__ import annotations

import os
import subprocess
import sys

from conftest import compile_c, run_c

OPENVX = r"""
#include <stdio.h>
#include <VX/vx.h>
int main(void) {
    vx_context context = vxCreateContext();
    vx_status status = vxGetStatus((vx_reference)context);
    printf("status %d\n", status);
    vxReleaseContext(&context);
    return status == VX_SUCCESS ? 0 : 1;
}
"""

NNAPI = r"""
#include <stdio.h>
#include <NeuralNetworks.h>
int main(void) {
    ANeuralNetworksModel *model = NULL;
    int result = ANeuralNetworksModel_create(&model);
    printf("result %d\n", result);
    ANeuralNetworksModel_free(model);
    return result == ANEURALNETWORKS_NO_ERROR ? 0 : 1;
}
"""


def _shadow(tmp_path):
    """A directory holding another ``openvx_nn`` package, which leaves a mark when it is imported."""
    package = tmp_path / "path" / "openvx_nn"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n")
    return str(tmp_path / "path")


def test_libopenvx_imports_the_package_beside_it_not_one_earlier_on_the_path(tmp_path):
    exe = compile_c(OPENVX, "own_package")
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=_shadow(tmp_path)))
    assert done.returncode == 0 and "status 0" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "imported").exists(), "the library imported the other openvx_nn"
    assert run_c(exe).returncode == 0


def test_libneuralnetworks_imports_the_package_beside_it_not_one_earlier_on_the_path(tmp_path):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "nnapi"))
    try:
        from test_nnapi_c_api import nnapi_flags
    finally:
        sys.path.pop(0)
    exe = compile_c(NNAPI, "own_package_nnapi", extra=nnapi_flags())
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=_shadow(tmp_path)))
    assert done.returncode == 0 and "result 0" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "imported").exists(), "the library imported the other openvx_nn"
