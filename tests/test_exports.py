"""libopenvx.so exports the standard functions of the families it implements,
and nothing else, under the SONAME applications link against."""
from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest
from test_abi import compatibility_functions, functions

TIER1 = [f.name for f in functions(1)]

# The foundation's families.  Scalars, LUTs and tensors are written on other
# branches: until they are merged none of their functions is exported, and
# their checks skip; once any of them is exported, all of them must be.
FAMILIES: dict[str, list[str]] = {
    "context": ["vxCreateContext", "vxReleaseContext", "vxGetContext", "vxQueryContext",
                "vxSetContextAttribute", "vxHint", "vxDirective", "vxGetStatus",
                "vxSetImmediateModeTarget"],
    "reference": ["vxQueryReference", "vxReleaseReference", "vxRetainReference", "vxSetReferenceName"],
    "log": ["vxAddLogEntry", "vxRegisterLogCallback"],
    "graph": ["vxCreateGraph", "vxReleaseGraph"],
    "scalar": [n for n in TIER1 if "Scalar" in n],
    "lut": [n for n in TIER1 if "LUT" in n],
    "tensor": [n for n in TIER1 if n.startswith("vxCreateTensor")] + [
        "vxCreateVirtualTensor", "vxSwapTensorHandle", "vxCopyTensorPatch", "vxMapTensorPatch",
        "vxUnmapTensorPatch", "vxQueryTensor", "vxReleaseTensor"],
}
PARALLEL_FAMILIES = ("scalar", "lut", "tensor")


def library_path():
    from openvx_nn.library import library_path as path
    return path()


_exported: set[str] | None = None


def exported_symbols() -> set[str]:
    """Names of the defined dynamic symbols of libopenvx.so."""
    global _exported
    if _exported is None:
        out = subprocess.run(["nm", "-D", "--defined-only", str(library_path())],
                             check=True, capture_output=True, text=True).stdout
        _exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return _exported


def family_present(family: str) -> bool:
    """Whether ``family`` is implemented: True when all of its functions are
    exported, False when none is; a partial family is a failure."""
    names = FAMILIES[family]
    have = [n for n in names if n in exported_symbols()]
    if have and len(have) != len(names):
        missing = sorted(set(names) - set(have))
        pytest.fail(f"{family} family is half exported: missing {missing}")
    return bool(have)


def test_family_lists_name_tier1_functions_only():
    for family, names in FAMILIES.items():
        assert names, family
        assert set(names) <= set(TIER1), f"{family}: {sorted(set(names) - set(TIER1))} not tier 1"
    assert len(FAMILIES["scalar"]) == 7 and len(FAMILIES["lut"]) == 7 and len(FAMILIES["tensor"]) == 10


def test_a_half_exported_family_fails_rather_than_skips(monkeypatch):
    scalar_but_one = (exported_symbols() - set(FAMILIES["scalar"])) | {"vxCreateScalar"}
    monkeypatch.setattr(sys.modules[__name__], "_exported", scalar_but_one)
    with pytest.raises(pytest.fail.Exception, match="scalar family is half exported"):
        family_present("scalar")
    monkeypatch.setattr(sys.modules[__name__], "_exported", exported_symbols() | set(FAMILIES["lut"]))
    assert family_present("lut")


@pytest.mark.parametrize("family", FAMILIES)
def test_every_function_of_the_family_is_exported(family):
    if family in PARALLEL_FAMILIES:
        if not family_present(family):
            pytest.skip(f"no {family} function is exported yet (its branch is not merged)")
        return
    missing = sorted(set(FAMILIES[family]) - exported_symbols())
    assert not missing, f"{family} functions not exported: {missing}"


def test_only_standard_vx_functions_are_exported():
    symbols = exported_symbols()
    assert symbols, "nm found no exported symbol"
    standard = {f.name for f in functions() + compatibility_functions()}
    assert all(s.startswith("vx") for s in symbols), sorted(s for s in symbols if not s.startswith("vx"))
    strays = sorted(symbols - standard)
    assert not strays, f"exported names that are not standard OpenVX functions: {strays}"


def test_soname_is_libopenvx_so():
    out = subprocess.run(["readelf", "-d", str(library_path())], check=True,
                         capture_output=True, text=True).stdout
    sonames = [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(SONAME)" in line]
    assert sonames == ["libopenvx.so"]


CTYPES_SCRIPT = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.vxGetStatus.restype = ctypes.c_int32
lib.vxGetStatus.argtypes = [ctypes.c_void_p]
lib.vxCreateContext.restype = ctypes.c_void_p
lib.vxReleaseContext.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
lib.vxReleaseContext.restype = ctypes.c_int32
ctx = ctypes.c_void_p(lib.vxCreateContext())
print(lib.vxGetStatus(None), lib.vxGetStatus(ctx), lib.vxReleaseContext(ctypes.byref(ctx)), ctx.value)
"""


def test_ctypes_loads_the_library_into_a_fresh_python():
    """A Python program that knows nothing of openvx_nn can load and call it."""
    result = subprocess.run([sys.executable, "-c", CTYPES_SCRIPT, str(library_path())],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # VX_ERROR_NO_RESOURCES, VX_SUCCESS, VX_SUCCESS, NULL
    assert result.stdout.split() == ["-7", "0", "0", "None"]


def test_ctypes_in_this_process_reports_no_resources_for_null(vx):
    lib = ctypes.CDLL(str(library_path()))
    lib.vxGetStatus.restype = ctypes.c_int32
    lib.vxGetStatus.argtypes = [ctypes.c_void_p]
    assert lib.vxGetStatus(None) == vx.VX_ERROR_NO_RESOURCES == -7
