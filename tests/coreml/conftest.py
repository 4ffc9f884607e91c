"""Shared set-up of the CoreML tests: coremltools builds the models (it is imported
once per session; without it every test here is skipped with the reason shown)."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn import vx as _vx

# Start libopenvx's embedded runtime before coremltools is imported. cffi's start-up
# spin-waits until PyCapsule_Type.tp_version_tag is 0 (its lock on Python < 3.12); after
# coremltools and numba are imported that type has a version tag, and the first C call
# made later in the same process (any C-API test) would spin forever.
_vx.vxGetStatus(_vx.ffi.NULL)

ct = pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) is needed to build .mlmodel files")


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded per test, so failures reproduce."""
    return np.random.default_rng(abs(hash(request.node.nodeid)) % (2 ** 32))
