"""The ``openvx-nn`` command (also ``python -m openvx_nn``): info, config, demo, bench."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from . import __version__

SOURCE_ROOT = Path(__file__).resolve().parent.parent
BENCHMARK = SOURCE_ROOT / "benchmarks" / "alexnet.py"


def kernel_rows() -> list[tuple[str, str, str]]:
    """(enum, name, parameters) of every registered kernel."""
    from .core.kernels import all_kernels
    rows = []
    for k in all_kernels():
        params = ", ".join(f"{'out' if p.direction == 1 else 'in'} {p.name}{'?' if p.optional else ''}"
                           for p in k.params)
        rows.append((f"{k.enum:#07x}", k.name, params))
    return rows


def cmd_info(args: argparse.Namespace) -> int:
    from .api import Context
    from .library import library_path
    with Context() as ctx:
        major, minor = ctx.version
        print(f"openvx-nn {__version__}: {ctx.implementation}, OpenVX {major}.{minor}")
        print(f"library: {library_path()}")
        print(f"extensions: {' '.join(ctx.extensions)}")
    rows = kernel_rows()
    print(f"kernels ({len(rows)}):")
    width = max(len(r[1]) for r in rows)
    for enum, name, params in rows:
        print(f"  {enum}  {name:<{width}}  ({params})")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    from . import config
    return config.main(args.rest)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main
    return main(limit=args.limit, batch=args.batch)


def cmd_bench(args: argparse.Namespace) -> int:
    if not BENCHMARK.exists():
        print("the benchmarks are only in the source tree (benchmarks/alexnet.py of a checkout of openvx-nn);"
              " run this from a source install (pip install -e .)", file=sys.stderr)
        return 1
    command = [sys.executable, str(BENCHMARK)] + (["--smoke"] if args.smoke else [])
    return subprocess.call(command)


def cmd_warm(args: argparse.Namespace) -> int:
    import time

    from .kernels import jit
    from .kernels.warm import warm
    start = time.perf_counter()
    warmed, skipped = warm(args.signatures, shipped=not args.only)
    print(f"{warmed} kernel specialisations compiled or loaded in {time.perf_counter() - start:.1f} s "
          f"({skipped} recorded ones no longer exist); cache: next to the sources if writable, "
          f"else {jit.user_cache_dir()}")
    if jit.uncached():
        print("running without a disk cache:", ", ".join(sorted(set(jit.uncached()))))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="openvx-nn", description="openvx-nn: OpenVX 1.3 with the Neural Network "
                                "extension (libopenvx.so and a Python package)")
    p.add_argument("--version", action="version", version=f"openvx-nn {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, extensions and the kernel table").set_defaults(run=cmd_info)
    config = sub.add_parser("config", help="compiler and linker flags (same as python -m openvx_nn.config)",
                            add_help=False)
    config.set_defaults(run=cmd_config)
    demo = sub.add_parser("demo", help="classify held-out 8x8 digits with a LeNet-style CNN in Q7.8 and F32")
    demo.add_argument("--limit", type=int, default=None, help="classify only the first N test images")
    demo.add_argument("--batch", type=int, default=64, help="images per graph run (default 64)")
    demo.set_defaults(run=cmd_demo)
    warm = sub.add_parser("warm", help="fill the kernel cache ahead of time (the shipped recorded signatures)")
    warm.add_argument("signatures", nargs="*", type=Path, help="more files recorded with OPENVX_NN_RECORD_SIGNATURES")
    warm.add_argument("--only", action="store_true", help="only the files given, not the shipped signatures")
    warm.set_defaults(run=cmd_warm)
    bench = sub.add_parser("bench", help="run benchmarks/alexnet.py (source tree only)")
    bench.add_argument("--smoke", action="store_true", help="tiny shapes (seconds)")
    bench.set_defaults(run=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args, rest = p.parse_known_args(argv)
    if rest and args.command != "config":
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
