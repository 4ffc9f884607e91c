"""Shared set-up of the NNEF tests: Khronos's parser (the ``nnef`` extra) reads and writes the folders; without
it every test module here skips itself (``NEEDS_PARSER``) with the reason shown. ``families`` writes one folder per operation family with
``tools/make_nnef_samples.py``."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

NEEDS_PARSER = "the nnef parser (the 'nnef' extra) is needed to read NNEF folders"

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _samples_module():
    """``tools/make_nnef_samples.py``, imported once (it imports ``nnef_references`` beside it)."""
    module = sys.modules.get("make_nnef_samples")
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location("make_nnef_samples", TOOLS / "make_nnef_samples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_nnef_samples"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["make_nnef_samples"]
        raise
    return module


@pytest.fixture(scope="session")
def samples():
    """``tools/make_nnef_samples.py`` as a module (its ``FAMILIES``, ``write``)."""
    return _samples_module()


@pytest.fixture(scope="session")
def written(samples, tmp_path_factory):
    """``written(family, seed) -> (folder, case)``: the family's folder, written once per session."""
    made = {}

    def write(family: str, seed: int = 0):
        key = (family, seed)
        if key not in made:
            import numpy as np
            folder = tmp_path_factory.mktemp(f"{family}_{seed}") / family
            case = samples.FAMILIES[family](np.random.default_rng([seed, list(samples.FAMILIES).index(family)]))
            samples.write(folder, case)
            made[key] = folder, case
        return made[key]
    return write


def read_dat(path: Path):
    import nnef
    with open(path, "rb") as f:
        return nnef.read_tensor(f)


def import_kernel():
    """``vxImportKernelFromURL`` of the loaded library as a ctypes function of (context address, type, url)
    (``openvx_nn.vx`` declares the core headers only)."""
    import ctypes

    import openvx_nn
    library = ctypes.CDLL(str(Path(openvx_nn.__file__).with_name("libopenvx.so")))
    function = library.vxImportKernelFromURL
    function.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    function.restype = ctypes.c_void_p
    return function
