"""Shared set-up of the CoreML tests: coremltools builds the models (it is imported
once per session; without it every test here is skipped with the reason shown)."""
from __future__ import annotations

import numpy as np
import pytest

ct = pytest.importorskip("coremltools", reason="coremltools (the 'coreml' extra) is needed to build .mlmodel files")


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded per test, so failures reproduce."""
    return np.random.default_rng(abs(hash(request.node.nodeid)) % (2 ** 32))
