"""Compiler and linker flags for C programs using libopenvx.so.

    cc app.c $(python -m openvx_nn.config --cflags --libs)

NNAPI programs (``#include <NeuralNetworks.h>``) link libneuralnetworks.so instead:

    cc app.c $(python -m openvx_nn.config --cflags --nnapi-libs)

``--pkgconfig`` prints ``openvx.pc``; ``--pkgconfig DIR`` writes it into DIR
and prints DIR, the directory to put on ``PKG_CONFIG_PATH`` (``pkg-config
--cflags --libs openvx`` then works).  Nothing is written into the installed
package.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__
from .headers import include_dir
from .library import library_path


def cflags() -> str:
    return f"-I{include_dir()}"


def libs() -> str:
    libdir = library_path().parent
    return f"-L{libdir} -Wl,-rpath,{libdir} -lopenvx"


def nnapi_libs() -> str:
    libdir = library_path().parent
    if not (libdir / "libneuralnetworks.so").is_file():
        raise FileNotFoundError(f"{libdir / 'libneuralnetworks.so'} is missing: install the package (pip install .)")
    return f"-L{libdir} -Wl,-rpath,{libdir} -lneuralnetworks"


def pkgconfig_text() -> str:
    libdir = library_path().parent
    return (f"includedir={include_dir()}\nlibdir={libdir}\n\n"
            "Name: openvx\nDescription: openvx-nn: OpenVX 1.3 with the Neural Network extension\n"
            f"Version: {__version__}\nCflags: -I${{includedir}}\n"
            "Libs: -L${libdir} -Wl,-rpath,${libdir} -lopenvx\n")


def write_pkgconfig(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "openvx.pc"
    path.write_text(pkgconfig_text())
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openvx_nn.config", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cflags", action="store_true", help="include directory flags")
    parser.add_argument("--libs", action="store_true", help="linker flags (with rpath)")
    parser.add_argument("--nnapi-libs", action="store_true",
                        help="linker flags of libneuralnetworks.so, NNAPI's C API (with rpath)")
    parser.add_argument("--libdir", action="store_true", help="directory of libopenvx.so")
    parser.add_argument("--includedir", action="store_true", help="directory holding VX/")
    parser.add_argument("--pkgconfig", nargs="?", const="", metavar="DIR",
                        help="print openvx.pc, or with DIR write it into DIR and print DIR")
    args = parser.parse_args(argv)
    if args.pkgconfig == "":
        if args.cflags or args.libs or args.nnapi_libs or args.libdir or args.includedir:
            parser.error("--pkgconfig without DIR prints the whole openvx.pc: give it alone")
        print(pkgconfig_text(), end="")
        return 0
    out = []
    if args.cflags:
        out.append(cflags())
    if args.libs:
        out.append(libs())
    if args.nnapi_libs:
        out.append(nnapi_libs())
    if args.libdir:
        out.append(str(library_path().parent))
    if args.includedir:
        out.append(str(include_dir()))
    if args.pkgconfig is not None:
        out.append(str(write_pkgconfig(Path(args.pkgconfig)).parent))
    if not out:
        parser.print_help()
        return 2
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
