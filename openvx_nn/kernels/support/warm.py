"""Filling the kernel cache ahead of time: record the specialisations programs use, compile them later.

A kernel is compiled per argument types (``jit.entry``), so what to compile
ahead of time is a list of (kernel, argument types).  The list is recorded,
not written by hand: with ``OPENVX_NN_RECORD_SIGNATURES=<file>`` every new
specialisation a process meets is appended to that file, one per line.  The
package ships such a file (``signatures.txt``, recorded from the demo, the
benchmarks' smoke runs, the conv3 cold-start case and the tests of the native
entries, float16 layers and float activations; ``tests/test_warm.py`` fails
when a native entry's maker has no line); ``openvx-nn warm``
compiles every line of it (and of any file given) into the on-disk cache, so
kernels added later are covered as soon as a recording run uses them.

Line format: ``module:qualname:parallel:error_model<TAB>type;type;...`` with
arrays as ``array:<dtype>:<ndim>:<layout>:<r|w>`` and scalars by numba name
(``int64``, ``float64``, ``bool``).  Lines of unknown kernels or types are
skipped (a renamed kernel simply is not warmed).

Native entries (``native.factory``: the C-callable entries of native plans, 3 to 8 s each to compile
on a cold cache, else paid at a graph's first bind) are recorded and warmed the same way, as
``native:module:qualname<TAB>arg;arg;...`` with arguments ``dtype:<name>``, ``int:<n>``, ``bool:<0|1>``,
``str:<text>`` and ``code:<n>`` (a micro-kernel code: warmed only where this CPU runs it).
"""
from __future__ import annotations

import functools
import importlib
import os
import pkgutil
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numba import types
from numba.core.errors import NumbaError

from ..engine import isa, microkernel
from . import jit, native

SHIPPED = Path(__file__).with_name("signatures.txt")
_SCALARS = {"int64": types.int64, "float64": types.float64, "bool": types.boolean}


def encode(arg_types: Iterable[types.Type]) -> str | None:
    """The text of ``arg_types``, or None when one of them has no text form."""
    parts = [_encode_one(t) for t in arg_types]
    return None if None in parts else ";".join(parts)


def _encode_one(t: types.Type) -> str | None:
    if isinstance(t, types.Array):
        return f"array:{t.dtype}:{t.ndim}:{t.layout}:{'w' if t.mutable else 'r'}"
    if isinstance(t, types.IntegerLiteral):  # a micro-kernel's tile code or a variant: one compiled body per value
        return f"literal:{t.literal_value}"
    if isinstance(t, types.UniTuple):
        inner = _encode_one(t.dtype)
        return None if inner is None or ":" in inner else f"tuple:{inner}:{t.count}"
    return str(t) if str(t) in _SCALARS else None


def decode(text: str) -> tuple[types.Type, ...] | None:
    out = [_decode_one(part) for part in (text.split(";") if text else [])]
    return None if None in out else tuple(out)


def _decode_one(part: str) -> types.Type | None:
    kind, _, rest = part.partition(":")
    try:
        if kind == "array":
            dtype, ndim, layout, mode = rest.split(":")
            scalar = getattr(types, dtype, None)
            if not isinstance(scalar, types.Number):
                return None
            return types.Array(scalar, int(ndim), layout, readonly=mode == "r")
        if kind == "literal":
            return types.literal(int(rest))
        if kind == "tuple":
            inner, count = rest.split(":")
            return types.UniTuple(_SCALARS[inner], int(count)) if inner in _SCALARS else None
    except ValueError:  # a damaged line is skipped like an unknown one
        return None
    return _SCALARS.get(part)


NATIVE = "native:"


def encode_native(args: tuple, codes: tuple[int, ...]) -> str | None:
    """The text of a native entry maker's arguments, or None when one has no text form."""
    parts = []
    for k, a in enumerate(args):
        if isinstance(a, bool):
            parts.append(f"bool:{int(a)}")
        elif isinstance(a, int):
            parts.append(f"{'code' if k in codes else 'int'}:{a}")
        elif isinstance(a, str) and ";" not in a and "\t" not in a:
            parts.append(f"str:{a}")
        elif isinstance(a, type) and issubclass(a, np.generic):
            parts.append(f"dtype:{np.dtype(a).name}")
        else:
            return None
    return ";".join(parts)


def decode_native(text: str) -> tuple[tuple, tuple[int, ...]] | None:
    """(arguments, micro-kernel codes among them) of a native line, or None when a part is unknown."""
    args, codes = [], []
    for part in text.split(";") if text else []:
        kind, _, rest = part.partition(":")
        try:
            if kind == "dtype":
                args.append(np.dtype(rest).type)
            elif kind in ("int", "code"):
                args.append(int(rest))
                if kind == "code":
                    codes.append(args[-1])
            elif kind == "bool":
                args.append(rest == "1")
            elif kind == "str":
                args.append(rest)
            else:
                return None
        except (TypeError, ValueError):
            return None
    return tuple(args), tuple(codes)


def _append(path: str, line: str) -> None:
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
    except OSError:  # a recording aid must never fail a kernel
        pass


def _native_recorder(path: str):
    def record(name: str, args: tuple, codes: tuple[int, ...]) -> None:
        text = encode_native(args, codes)
        if text is not None:
            _append(path, f"{NATIVE}{name}\t{text}\n")
    return record


def _recorder(path: str):
    def record(dispatcher, arg_types) -> None:
        name = next((n for n, d in jit.dispatchers.items() if d is dispatcher), None)
        text = encode(arg_types)
        if name is not None and text is not None:
            _append(path, f"{name}\t{text}\n")

    return record


def load_all_kernels() -> None:
    """Import every kernel module so that every kernel is in ``jit.dispatchers``."""
    package = importlib.import_module(__name__.rsplit(".", 2)[0])  # openvx_nn.kernels, every family below it
    for module in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
        importlib.import_module(module.name)


def signatures(files: Iterable[Path]) -> tuple[list[tuple[str, tuple]], int]:
    """The distinct (kernel name, argument types) of ``files`` that this package still has,
    and the number of distinct lines it does not (renamed kernels, unknown types)."""
    seen: dict[tuple[str, str], tuple | None] = {}
    for path in files:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            name, _, text = line.partition("\t")
            if line.strip() and (name, text) not in seen:
                if name.startswith(NATIVE):
                    known = name[len(NATIVE):] in native.factories
                    seen[(name, text)] = decode_native(text) if known else None
                else:
                    seen[(name, text)] = decode(text) if name in jit.dispatchers else None
    usable = [(name, arg_types) for (name, _), arg_types in seen.items() if arg_types is not None]
    return usable, len(seen) - len(usable)


def _compiles_here(name: str) -> bool:
    return name in isa.available() or (name == "amx" and isa.amx_on_cpu())


def runs_here(arg_types: tuple[types.Type, ...]) -> bool:
    """False for a specialisation of another CPU: a literal argument is a micro-kernel's tile code, and
    compiling one for an instruction set this CPU lacks aborts the process inside LLVM (not an exception). A
    literal that decodes to a tile of no rows is no micro-kernel's code (a variant's index, below 128:
    ``float_convolution.tile_variant``) and compiles anywhere."""
    try:
        return all(microkernel.decode(t.literal_value)[2] == 0 or _compiles_here(microkernel.decode(t.literal_value)[0])
                   for t in arg_types if isinstance(t, types.IntegerLiteral))
    except (IndexError, ValueError):  # a damaged line: skipped like an unknown one
        return False


def warm(files: Iterable[Path] = (), shipped: bool = True) -> tuple[int, int]:
    """Compile (or load from the cache) every recorded specialisation: (warmed, skipped)."""
    load_all_kernels()
    listed = [SHIPPED, *files] if shipped and SHIPPED.exists() else list(files)
    usable, skipped = signatures(listed)
    warmed = 0
    for name, arg_types in usable:
        if name.startswith(NATIVE):
            args, codes = arg_types
            if not runs_here(tuple(types.literal(c) for c in codes)):
                skipped += 1
                continue
            compile_it = functools.partial(native.factories[name[len(NATIVE):]], *args)
        elif not runs_here(arg_types):
            skipped += 1
            continue
        else:
            compile_it = functools.partial(jit.entry, jit.dispatchers[name], *arg_types)
        try:
            compile_it()
        except (TypeError, KeyError, NumbaError):  # recorded before the kernel's signature changed: only a hint
            skipped += 1
        else:
            warmed += 1
    return warmed, skipped


def start_recording() -> None:
    """Append what this process compiles to $OPENVX_NN_RECORD_SIGNATURES (``openvx_nn.kernels`` calls this at import when it is set)."""
    path = os.environ["OPENVX_NN_RECORD_SIGNATURES"]
    jit.on_new_entry.append(_recorder(path))
    native.on_new_entry.append(_native_recorder(path))
