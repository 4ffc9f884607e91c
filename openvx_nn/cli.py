"""The ``openvx-nn`` command (also ``python -m openvx_nn``): info, config, demo, and bench
in a source checkout."""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import __version__, kernel_cache

SOURCE_ROOT = Path(__file__).resolve().parent.parent
BENCHMARK = SOURCE_ROOT / "benchmarks" / "alexnet.py"


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (the usage is one ``--help`` away, not in front of the message)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1 (argparse prints the one-line usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def non_negative_days(text: str) -> float:
    """argparse type: a finite number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more days, got {text}")
    return value


@contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, then raise it: for work that must not be cut in the middle."""
    pending: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    except ValueError:  # not the main thread: Python delivers no KeyboardInterrupt here anyway
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


def start_library() -> None:
    """Start the library's embedded runtime with Ctrl-C held: cffi's start-up prints a KeyboardInterrupt
    that lands inside it as a failed start, after which every call of the process fails."""
    from . import vx
    with sigint_held():
        vx.vxGetStatus(vx.ffi.NULL)  # the first call of an exported function runs the start-up


def kernel_rows() -> list[tuple[str, str, str]]:
    """(enum, name, parameters) of every registered kernel."""
    from . import operations  # noqa: F401  (registers the built-in kernels)
    from .core.kernels import all_kernels
    rows = []
    for k in all_kernels():
        params = ", ".join(f"{'out' if p.direction == 1 else 'in'} {p.name}{'?' if p.optional else ''}"
                           for p in k.params)
        rows.append((f"{k.enum & 0xFFFFFFFF:#07x}", k.name, params))  # as C prints a vx_enum: unsigned
    return rows


def integer_engine_line() -> str:
    """Which instruction set the integer sums of products use, and how many threads."""
    from .kernels.engine import isa
    try:
        chosen = isa.selected()
    except ValueError as err:
        chosen = f"error: {err}"
    return (f"integer engine: {chosen} (available: {', '.join(isa.available())}; "
            f"{isa.ENV_ISA} forces one), {isa.threads()} threads ({isa.ENV_THREADS})")


def cmd_info(args: argparse.Namespace) -> int:
    from .api import Context
    from .library import library_path
    with Context() as ctx:
        major, minor = ctx.version
        print(f"openvx-nn {__version__}: {ctx.implementation}, OpenVX {major}.{minor}")
        print(f"library: {library_path()}")
        print(f"extensions: {' '.join(ctx.extensions)}")
    print(integer_engine_line())
    rows = kernel_rows()
    print(f"kernels ({len(rows)}):")
    width = max(len(r[1]) for r in rows)
    for enum, name, params in rows:
        print(f"  {enum}  {name:<{width}}  ({params})")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    from . import config
    return config.main(args.rest)


def first_run_notice(command: str) -> None:
    """Say so when this command will compile the kernels (once per version and CPU), instead of a silent wait."""
    from .kernels.support import jit
    if jit.cache_is_cold():
        print(f"openvx-nn {command}: first run of this version on this machine: compiling the kernels it needs into "
              f"{jit.cache_location()} (once; 'openvx-nn warm' compiles them all ahead of time)",
              file=sys.stderr, flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main
    first_run_notice("demo")
    return main(limit=args.limit, batch=args.batch)


def cmd_nnapi_demo(args: argparse.Namespace) -> int:
    from .nnapi.demo import main
    first_run_notice("nnapi-demo")
    return main(runs=args.runs)


def cmd_bench(args: argparse.Namespace) -> int:
    command = [sys.executable, str(BENCHMARK)] + (["--smoke"] if args.smoke else [])
    return subprocess.call(command)


def cmd_coreml(args: argparse.Namespace) -> int:
    from .coreml.cli import main
    from .runner import Pending
    first_run_notice("coreml")
    return main(args.model, args.input, args.bench, loading=lambda: Pending(f"loading {args.model}", sys.stderr))


def cmd_run(args: argparse.Namespace) -> int:
    from .distributed import BatchError
    from .runner import ModelError, RunError, run
    local = args.workers is None and args.scheduler is None
    try:
        run(args.model, args.input, args.output, batch_size=args.batch, workers=args.workers,
            scheduler=args.scheduler, variant=args.variant, progress=sys.stderr, report=sys.stdout,
            connect_timeout=args.connect_timeout, starting=(lambda: first_run_notice("run")) if local else None)
    except (RunError, ModelError, BatchError) as error:
        print(f"openvx-nn run: error: {error}", file=sys.stderr)
        return 1
    return 0


def cmd_warm(args: argparse.Namespace) -> int:
    import time

    from .kernels.support import jit
    from .kernels.support.warm import warm
    for path in args.signatures:
        if not path.is_file():
            print(f"openvx-nn warm: error: {str(path)!r} is not a signatures file (record one with "
                  f"OPENVX_NN_RECORD_SIGNATURES=<file>)", file=sys.stderr)
            return 1
    start = time.perf_counter()
    warmed, skipped = warm(args.signatures, shipped=not args.only)
    print(f"{warmed} kernel specialisations compiled or loaded in {time.perf_counter() - start:.1f} s "
          f"({skipped} recorded ones skipped: for another CPU's instruction set, or of kernels changed since); "
          f"cache: {jit.cache_location()}")
    if jit.uncached():
        print("running without a disk cache:", ", ".join(sorted(set(jit.uncached()))))
    if jit.cache_location() == jit.user_cache_dir():  # not NUMBA_CACHE_DIR's: numba lays that out its own way
        pruned = kernel_cache.prune(jit.user_cache_dir(), jit.PACKAGE_STAMP[:16], args.keep_days)
        if pruned.removed:
            print(f"removed {len(pruned.removed)} kernel builds of other sources unused for {args.keep_days:g} days "
                  f"({pruned.freed / 2**20:.0f} MiB)")
    return 0


def parser() -> argparse.ArgumentParser:
    # bench runs benchmarks/ of a source checkout: a normal install does not ship them, so it
    # offers no bench command rather than one that fails.
    has_bench = BENCHMARK.exists()
    p = Parser(prog="openvx-nn", description="openvx-nn: OpenVX 1.3 with the Neural Network "
                                "extension (libopenvx.so and a Python package)",
                                epilog=None if has_bench else "The benchmarks (bench) are in a source checkout "
                                "of openvx-nn: install it with pip install -e . to get the command.")
    p.add_argument("--version", action="version", version=f"openvx-nn {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, extensions and the kernel table").set_defaults(run=cmd_info)
    config = sub.add_parser("config", help="compiler and linker flags (same as python -m openvx_nn.config)",
                            add_help=False)
    config.set_defaults(run=cmd_config)
    demo = sub.add_parser("demo", help="classify held-out 8x8 digits with a LeNet-style CNN in Q7.8 and F32")
    demo.add_argument("--limit", type=positive_int, default=None, help="classify only the first N test images")
    demo.add_argument("--batch", type=positive_int, default=64, help="images per graph run (default 64)")
    demo.set_defaults(run=cmd_demo)
    nnapi_demo = sub.add_parser("nnapi-demo", help="build a small quantized NNAPI model, run it, print timings")
    nnapi_demo.add_argument("--runs", type=positive_int, default=3, help="executions (default 3)")
    nnapi_demo.set_defaults(run=cmd_nnapi_demo)
    if has_bench:
        bench = sub.add_parser("bench", help="run benchmarks/alexnet.py of this source checkout")
        bench.add_argument("--smoke", action="store_true", help="tiny shapes (seconds)")
        bench.set_defaults(run=cmd_bench)
    coreml = sub.add_parser("coreml", help="run a CoreML .mlmodel neural network on OpenVX graphs")
    coreml.add_argument("model", help="the .mlmodel file")
    coreml.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input array")
    coreml.add_argument("--bench", action="store_true", help="per-layer timing from the performance counters")
    coreml.set_defaults(run=cmd_coreml)

    run = sub.add_parser("run", help="run a model over a whole .npy dataset (batch axis last), here or on Dask")
    run.add_argument("--model", required=True, help="'digits' (built in), a model file (.mlmodel, .nnapi) or an NNEF folder")
    run.add_argument("--input", required=True, type=Path, help=".npy array, OpenVX dim order, batch axis last")
    run.add_argument("--output", required=True, type=Path, help=".npy file for the results (digits: labels)")
    run.add_argument("--batch", type=positive_int, default=256, help="items per graph run (default 256)")
    run.add_argument("--variant", default="q78", choices=("q78", "f32"), help="digits number format (default q78)")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, default=None, metavar="N",
                       help="run on a local Dask cluster of N processes")
    where.add_argument("--scheduler", default=None, metavar="ADDR", help="run on the Dask scheduler at ADDR (tcp://host:port)")
    run.add_argument("--connect-timeout", type=positive_seconds, default=10.0, metavar="S",
                     help="give up on a --scheduler that does not answer within S seconds (default 10)")
    run.set_defaults(run=cmd_run)
    warm = sub.add_parser("warm", help="fill the kernel cache ahead of time (the shipped recorded signatures)")
    warm.add_argument("signatures", nargs="*", type=Path, help="more files recorded with OPENVX_NN_RECORD_SIGNATURES")
    warm.add_argument("--only", action="store_true", help="only the files given, not the shipped signatures")
    warm.add_argument("--keep-days", type=non_negative_days, default=kernel_cache.UNUSED_DAYS, metavar="DAYS",
                      help="then remove the cached builds of other kernel sources unused for DAYS days "
                           f"(default {kernel_cache.UNUSED_DAYS}; 0: all of them)")
    warm.set_defaults(run=cmd_warm)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args, rest = p.parse_known_args(argv)
    if rest and args.command != "config":
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        if args.command not in ("config", "warm", "bench"):
            start_library()
        return args.run(args)
    except BrokenPipeError:  # `openvx-nn info | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line, the shell's status for SIGINT; run removed its partial file
        print(f"\nopenvx-nn {args.command}: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
