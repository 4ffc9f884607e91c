"""Two checkouts' builds of one network from C (``bench_c_networks.c``) and ONNX Runtime, in turns.

Both builds' C programs stay alive at once (one thread each, ``OPENVX_NN_THREADS=1``), and each turn asks each of
them and ORT (one intra-op thread, in this process) for ``--calls`` runs timed by the thread's CPU time, the order
rotating from turn to turn. On a VM whose speed swings from minute to minute, the two builds then meet the same
minutes: the ratio of their times per turn is the figure to read, not either time.

    python benchmarks/bench_c_builds.py OLD_CHECKOUT NEW_CHECKOUT [--network resnet18] [--turns 9] [--calls 5]

Each checkout needs its library built (``python setup.py build_ext --inplace``).
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench_c_networks as nets


def build(root: Path, directory: Path) -> Path:
    """``bench_c_networks.c`` of ``root`` compiled against ``root``'s headers and library."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    flags = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"], check=True,
                           capture_output=True, text=True, cwd=root, env=env).stdout
    program = directory / f"bench_c_networks_{len(list(directory.iterdir()))}"
    subprocess.run(["cc", "-O2", "-std=c99", str(root / "benchmarks" / "bench_c_networks.c"), "-o", str(program),
                    *shlex.split(flags)], check=True, cwd=root)
    return program


class Build(nets.COpenVX):
    """One checkout's C program serving runs, on one thread, importing that checkout's package."""

    def __init__(self, program: Path, root: Path, network: str, files: dict[str, Path]):
        env = {**os.environ, "PYTHONPATH": str(root), "OPENVX_NN_THREADS": "1"}
        self.process = subprocess.Popen(
            [str(program), network, "f32", "224", "1", *(str(files[k]) for k in ("weights", "input", "output")), "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root, env=env)
        first = self.process.stdout.readline().split()
        if not first or first[0] != "nodes":
            self.close()
            raise RuntimeError(f"{root}: bench_c_networks {network} failed to build or run")

    def output(self, files: dict[str, Path]) -> np.ndarray:
        return np.frombuffer(files["output"].read_bytes(), np.float32).copy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--network", default="resnet18", choices=tuple(nets.NETWORKS))
    parser.add_argument("--turns", type=int, default=9)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"# {args.network} F32, one thread a side, CPU time; load {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        net = nets.Network("f32", 224, seed=list(nets.NETWORKS).index(args.network))
        logits, probs = nets.NETWORKS[args.network](net, 1)
        model = net.model(args.network, logits, probs)
        x = np.random.default_rng(7).random((1, 3, 224, 224)).astype(np.float32)
        files = {k: directory / f"net.{k}" for k in ("weights", "input", "output")}
        files["weights"].write_bytes(b"".join(net.blobs))
        files["input"].write_bytes(x.tobytes())
        programs = [build(root.resolve(), directory) for root in (args.old, args.new)]
        session = nets.ort_session(model, threads=1)
        old = Build(programs[0], args.old.resolve(), args.network, files)
        old_out = old.output(files)
        new = Build(programs[1], args.new.resolve(), args.network, files)
        same = np.array_equal(old_out.view(np.uint32), new.output(files).view(np.uint32))
        times: dict[str, list[float]] = {"old": [], "new": [], "ort": []}

        def ort() -> list[float]:
            found = []
            for _ in range(args.calls):
                start = time.thread_time()
                session.run(None, {"x": x})
                found.append((time.thread_time() - start) * 1e3)
            return found
        sides = [("old", lambda: old.run(args.calls, True)), ("new", lambda: new.run(args.calls, True)), ("ort", ort)]
        try:
            for turn in range(args.turns):
                for name, run in sides[turn % 3:] + sides[:turn % 3]:
                    time.sleep(0.05)
                    times[name].append(statistics.median(run()))
                print(f"turn {turn}: " + "  ".join(f"{k} {v[-1]:.2f}" for k, v in times.items())
                      + f"  load {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            old.close()
            new.close()
    m = {k: statistics.median(v) for k, v in times.items()}
    print(f"medians ms: old {m['old']:.2f}, new {m['new']:.2f}, ORT {m['ort']:.2f}; ORT / ours: old "
          f"{m['ort'] / m['old']:.3f}, new {m['ort'] / m['new']:.3f}; new / old time per turn, median "
          f"{statistics.median(n / o for o, n in zip(times['old'], times['new'])):.3f}; outputs "
          + ("the same bits" if same else "DIFFER"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
