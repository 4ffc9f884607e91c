"""Builds libopenvx.so and libneuralnetworks.so (cffi embedding) inside the openvx_nn package and
installs the C headers next to them.  Project metadata lives in pyproject.toml."""
import shutil
from pathlib import Path

import cffi
from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


LIBRARIES = {"_capi": "libopenvx.so", "_nnapi_capi": "libneuralnetworks.so"}
"""cffi module -> the shared object's name (the one C programs link and NNAPI clients dlopen)."""


class BuildLibrary(build_ext):
    """Names the cffi extensions ``libopenvx.so`` and ``libneuralnetworks.so`` instead of Python module files."""

    def get_ext_filename(self, fullname):
        # Called with the module's full name or its last part; keep the package part.
        parts = fullname.split(".")
        if parts[-1] in LIBRARIES:
            return str(Path(*parts[:-1], LIBRARIES[parts[-1]]))
        return super().get_ext_filename(fullname)


class BuildPy(build_py):
    """Copies include/VX/*.h and include/NeuralNetworks.h into the package so installed programs find them."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "openvx_nn" / "include" / "VX"
        target.mkdir(parents=True, exist_ok=True)
        for header in (ROOT / "include" / "VX").glob("*.h"):
            shutil.copy2(header, target / header.name)
        shutil.copy2(ROOT / "include" / "NeuralNetworks.h", target.parent / "NeuralNetworks.h")


# The embedded module checks at start-up that the cffi backend it meets is the
# one that generated it, so the runtime cffi must be exactly the build's.
DEPENDENCIES = [f"cffi=={cffi.__version__}", "numpy>=1.24", "numba>=0.59"]

setup(
    install_requires=DEPENDENCIES,
    cffi_modules=["csrc/build_capi.py:ffibuilder", "csrc/build_nnapi.py:ffibuilder"],
    cmdclass={"build_ext": BuildLibrary, "build_py": BuildPy},
)
