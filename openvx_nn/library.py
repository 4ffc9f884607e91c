"""Where the built shared library is."""
from __future__ import annotations

from pathlib import Path

LIBRARY_NAME = "libopenvx.so"


def library_path() -> Path:
    path = Path(__file__).resolve().parent / LIBRARY_NAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: install the package (pip install .) so that it is built")
    return path
