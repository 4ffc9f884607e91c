"""Shared set-up of the CoreML tests: coremltools builds the models (it is imported
once per session; without it every test here is skipped with the reason shown)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

ct = pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) is needed to build .mlmodel files")


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded per test by its id (crc32, the same in every process), so failures reproduce."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
