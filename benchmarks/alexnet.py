"""Every AlexNet-sized layer benchmark in one run: the three convolutions
(bench_convolution.py), then FC 9216->4096 and 3x3/2 pooling (bench_layers.py),
each in U8 and Q7.8 against a plain NumPy float64 reference timed in the same
process.  ``--smoke`` runs the tiny CI variants of both."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    status = 0
    for script in ("bench_convolution.py", "bench_layers.py"):
        print(f"== {script}", flush=True)
        status |= subprocess.run([sys.executable, str(HERE / script), *argv], check=False).returncode
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
