"""Shared set-up of the CoreML tests: coremltools builds the models (it is imported
once per session; without it every module here is skipped with the reason shown).

The modules import coremltools (directly or through ``harness``), so without it each is collected as a
skip instead of being imported: ``pytest.importorskip`` at this file's top stopped the whole run."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

MISSING = "coremltools (the 'coreml' extra) is needed to build .mlmodel files"

try:
    import coremltools as ct  # noqa: F401 - imported once here, as the modules' own imports then find it
except ImportError:
    class _SkippedModule(pytest.Module):
        """A test module of this folder, reported as skipped (never imported)."""

        def collect(self):
            pytest.skip(MISSING, allow_module_level=True)

    def pytest_pycollect_makemodule(module_path, parent):
        return _SkippedModule.from_parent(parent, path=module_path)


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded per test by its id (crc32, the same in every process), so failures reproduce."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
