"""Machine code from the kernel cache, loaded without LLVM's compiler: numba's runtime library, which numba
compiles in every process, saved and loaded like a kernel; and cached libraries placed by :mod:`object_loader`
(LLVM never sees their machine code; their bitcode is parsed only when a compilation links them). In a process
whose kernels all come from the cache, LLVM then neither generates nor loads code: its pages stay out of memory
(MediaPipe's face landmark model: 58 MiB beyond the import with numba's way, 29 with LLVM loading the machine
code, 21 without).

Where the loader declines (an object it cannot read), LLVM loads the machine code, the names it defines read
from its ELF symbol table; that relies on numba's code library internals (``enable_object_caching``,
``_set_compiled_object``, ``_finalize_final_module``, the engine's ``_defined_symbols``, ``_shared_module``),
and where one is missing, numba's own way is taken.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numba
from numba.core.codegen import CPUCodeLibrary
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import nrtdynmod, rtsys

from . import object_loader

_LOADABLE = all(hasattr(CPUCodeLibrary, name) for name in (
    "enable_object_caching", "_set_compiled_object", "_finalize_final_module", "_get_module_for_linking"))


def start_runtime(target_context, folder: Callable[[], Path]) -> None:
    """Start numba's runtime (NRT) with its machine code from the kernel cache, in the directory ``folder()``
    (asked only the first time).

    numba compiles the runtime's few functions from LLVM IR in every process: in a process whose kernels all
    come from the cache, the one compilation, and it brings ~20 MiB of LLVM's optimiser and code generator
    into memory (MediaPipe's face landmark model cost 58 MiB beyond the import with it, 38 without)."""
    if rtsys._init:
        return
    with global_compiler_lock:
        if rtsys._init:
            return
        compile_runtime = getattr(nrtdynmod, "compile_nrt_functions", None)
        if compile_runtime is None or not hasattr(nrtdynmod, "create_nrt_module"):  # pragma: no cover
            rtsys.initialize(target_context)  # a numba release whose runtime is built otherwise
            return
        # what ``initialize`` calls, replaced for this call only
        nrtdynmod.compile_nrt_functions = functools.partial(_runtime_library, folder())
        try:
            rtsys.initialize(target_context)
        finally:
            nrtdynmod.compile_nrt_functions = compile_runtime


_RUNTIME_MAGIC = b"openvx-nn numba runtime\n"


def _runtime_file(codegen, folder: Path) -> Path:
    key = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple())).encode()
    return folder / f"numba-runtime-{hashlib.sha256(key).hexdigest()[:16]}.bin"


def _runtime_library(folder: Path, target_context):
    """numba's runtime library: loaded from the cache file (machine code and the bitcode that later compilations
    link against, as numba caches a kernel), else compiled and saved. The file is checked whole (a digest of
    its contents) and written under a temporary name, then renamed: a torn or foreign file is compiled over."""
    codegen = target_context.codegen()
    path = _runtime_file(codegen, folder)
    try:
        data = path.read_bytes()
        head = len(_RUNTIME_MAGIC)
        digest, split = data[head:head + 32], int.from_bytes(data[head + 32:head + 40], "little")
        body = data[head + 40:]
        if data[:head] == _RUNTIME_MAGIC and hashlib.sha256(body).digest() == digest and 0 < split < len(body):
            return cached_library(codegen, True, ("nrt", "object", (body[:split], body[split:])))
    except (OSError, ValueError, RuntimeError):
        pass
    ir_module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()  # keeps the machine code for saving
    library.add_ir_module(ir_module)
    library.finalize()
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        _, _, (machine_code, bitcode) = library.serialize_using_object_code()
        body = bytes(machine_code) + bytes(bitcode)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(_RUNTIME_MAGIC + hashlib.sha256(body).digest()
                              + len(machine_code).to_bytes(8, "little") + body)
        os.replace(temporary, path)
    except (OSError, ValueError, RuntimeError):
        temporary.unlink(missing_ok=True)  # compiled again by the next process
    return library


def cached_library(codegen, linked: bool, state):
    """A cached library loaded from its machine code, with its bitcode kept for linking it into later compilations
    only if ``linked`` (never for a C entry, which is called through its address). numba instead hands the
    machine code to LLVM's engine (6 MiB of LLVM's object reader and linker in memory) and parses the bitcode back
    into LLVM IR at once: MediaPipe's face landmark model loads 16 C entries with 2.6 MB of bitcode, which grew
    the heap by 33 MiB as IR; parsing any bitcode at all brings 3.4 MiB of LLVM's reader into memory."""
    name, kind, data = state
    if kind == "object":
        symbols = object_loader.load(data[0], llvm.address_of_symbol)
        if symbols is not None:
            return LoadedLibrary(name, codegen, symbols, bytes(data[1]) if linked else None)
    names = object_loader.defined_names(data[0]) if kind == "object" and _LOADABLE else None
    if names is None or not hasattr(codegen._engine, "_defined_symbols"):  # not an ELF object (another
        return type(codegen).unserialize_library(codegen, state)  # platform), or a numba that moved these
    library = codegen.create_library(name)
    library.enable_object_caching()
    library._set_compiled_object(data[0])
    library._finalize_final_module()  # the engine loads the machine code
    codegen._engine._defined_symbols |= names
    if linked:
        _link_later(library, data[1])
    return library


class LoadedLibrary:
    """A cached library whose machine code :mod:`object_loader` placed: what numba asks of a code library when it
    loads one from its cache and when a later compilation links it. LLVM never sees the machine code; the
    bitcode (None for a C entry, which nothing links) is parsed only when a compilation links the library."""

    has_dynamic_globals = False

    def __init__(self, name: str, codegen, symbols: dict[str, int], bitcode: bytes | None):
        self.name = name
        self.codegen = _OwnEnvironments(codegen, symbols)
        self._symbols = symbols
        self._bitcode = bitcode
        self._linking_module = None
        self._reload_init: set = set()

    def __repr__(self) -> str:
        return f"<LoadedLibrary {self.name!r}>"

    def get_pointer_to_function(self, name: str) -> int:
        return self._symbols.get(name, 0)

    def _ensure_finalized(self) -> None:
        pass  # loaded whole

    def _get_module_for_linking(self):
        if self._linking_module is None:
            if self._bitcode is None:
                raise RuntimeError(f"library unfit for linking: {self.name} was loaded without its bitcode")
            self._linking_module = llvm.parse_bitcode(self._bitcode)
            self._bitcode = None
        return self._linking_module


class _OwnEnvironments:
    """The codegen as numba's loading reaches it through ``library.codegen``: ``set_env`` writes an environment's
    address into the library's own global of that name, which LLVM's engine does not know; the rest is the
    codegen's."""

    def __init__(self, codegen, symbols: dict[str, int]):
        self._codegen = codegen
        self._symbols = symbols

    def set_env(self, env_name: str, env) -> None:
        address = self._symbols.get(env_name)
        if address is None:
            self._codegen.set_env(env_name, env)
        else:
            ctypes.c_void_p.from_address(address).value = id(env)

    def __getattr__(self, name: str):
        return getattr(self._codegen, name)


_linkable_classes: dict[type, type] = {}


def _link_later(library, bitcode: bytes) -> None:
    """Give ``library`` the linking module numba expects (``_shared_module``), parsed from ``bitcode`` on first
    use: its class becomes a subclass whose ``_shared_module`` is that lazy property."""
    base = type(library)
    lazy = _linkable_classes.get(base)
    if lazy is None:
        def module(self):
            found = self.__dict__.get("_linking_module")
            if found is None and self.__dict__.get("_linking_bitcode") is not None:
                found = self.__dict__["_linking_module"] = llvm.parse_bitcode(self.__dict__.pop("_linking_bitcode"))
            return found

        def replace(self, value):
            self.__dict__.pop("_linking_bitcode", None)
            self.__dict__["_linking_module"] = value

        lazy = _linkable_classes[base] = type(base.__name__, (base,), {
            "_shared_module": property(module, replace), "__module__": base.__module__})
    library.__class__ = lazy
    library.__dict__["_linking_bitcode"] = bytes(bitcode)
