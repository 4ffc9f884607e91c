"""Fetch MediaPipe's own ``.tflite`` models for the benchmark's ``.tflite`` rows: the ``mediapipe`` wheel on PyPI
ships them inside the package (``mediapipe/modules/*/*.tflite``); this downloads that wheel with pip (no
install, no dependencies) and extracts only the ``.tflite`` files into a cache folder.

Newer wheels no longer carry the files, so a version that does is pinned (``--version``).  The folder is
``$OPENVX_NN_TFLITE_MODELS`` or ``~/.cache/openvx-nn/mediapipe``; ``benchmarks/tflite_rows.py`` reads it.

    python tools/fetch_mediapipe_models.py [--version 0.10.14] [--into DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

VERSION = "0.10.14"
"""The last wheel checked to ship the models (face, iris, hand, palm, pose, selfie segmentation)."""


def models_folder() -> Path:
    """Where the models are kept: ``$OPENVX_NN_TFLITE_MODELS`` or ``~/.cache/openvx-nn/mediapipe``."""
    chosen = os.environ.get("OPENVX_NN_TFLITE_MODELS")
    return Path(chosen) if chosen else Path.home() / ".cache" / "openvx-nn" / "mediapipe"


def extract(wheel: Path, into: Path) -> list[Path]:
    """The wheel's ``.tflite`` members written flat into ``into``; returns their paths."""
    into.mkdir(parents=True, exist_ok=True)
    written = []
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(".tflite"):
                path = into / Path(member).name
                path.write_bytes(archive.read(member))
                written.append(path)
    return written


def fetch(version: str, into: Path) -> list[Path]:
    """Download ``mediapipe==version`` for this Python and platform and extract its models."""
    with tempfile.TemporaryDirectory(prefix="mediapipe-wheel-") as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", folder,
                        f"mediapipe=={version}"], check=True)
        wheels = sorted(Path(folder).glob("mediapipe-*.whl"))
        if not wheels:
            raise SystemExit(f"pip downloaded no mediapipe wheel into {folder}")
        written = extract(wheels[0], into)
    if not written:
        raise SystemExit(f"mediapipe {version} ships no .tflite files; try --version {VERSION}")
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=VERSION, help="the mediapipe wheel to take the models from")
    parser.add_argument("--into", type=Path, default=None, help="the folder (default: models_folder())")
    args = parser.parse_args(argv)
    into = args.into or models_folder()
    for path in fetch(args.version, into):
        print(f"{path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
