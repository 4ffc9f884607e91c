"""The one place where kernel functions become numba functions.

Every kernel is compiled ``nogil`` with numba's on-disk cache when a cache
directory can be written, and without it otherwise. These details of numba's
cache are handled here so no kernel module has to think about them:

- numba keys a cached function by its own source file only, so editing a
  helper in ``fixed_point.py`` would leave every caller's cached machine code
  stale. The cache key here also carries a hash of every module of
  ``openvx_nn/kernels`` (:data:`PACKAGE_STAMP`).
- The cache never lives inside the installed package (files pip does not
  know about outlive ``pip uninstall``, and the leftover ``openvx_nn/``
  directory then shadows a later editable install as a namespace package).
  It is a per-user directory keyed by our version and the CPU
  (:func:`user_cache_dir`): ``$OPENVX_NN_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/openvx-nn/<version>-<cpu>`` (``~/.cache/...``);
  ``NUMBA_CACHE_DIR`` still wins over both. Below it, one directory per
  package stamp and module directory: keyed by content, not by install path,
  so every install of the same sources shares one compiled set.
- Concurrent processes: numba creates directories with
  ``makedirs(exist_ok=True)`` and writes each file under a temporary name then
  renames it; saving an entry (read the index, pick a free data file name,
  write both) holds a per-directory ``flock`` here, so two processes never
  pick one name for different signatures.
- A closure's compiled code is named (mangled) by its qualified name, its argument types and a counter
  drawn per process: two closures of one ``def`` that capture different values, compiled and cached by
  two processes that drew the same count, define one symbol with two bodies, and a third process that
  loads both links every call to the first. Every closure that is compiled gets a name that says what it
  captures (:func:`_distinct`) before numba sees it.
- numba raises ``RuntimeError`` at decoration when it finds no writable cache
  directory, and ``OSError`` at compile time when the directory vanishes or
  turns read-only later. Both mean "no cache" here, never an error.

These rely on numba internals (``numba.core.caching.FunctionCache`` and a
dispatcher's ``_cache``, which is all ``cache=True`` sets up); if a numba
release moves them, :func:`kernel` falls back to plain ``cache=True``.

Dispatchers (the Python side of each operation) do not call numba's
dispatcher directly: :func:`entry` compiles one specialisation for the
argument types the dispatcher names (arrays always layout ``'A'``, inputs
read-only), so a contiguous, a Fortran-ordered and a strided output share one
compiled function instead of three.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import threading
import types as types_module
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from . import thread_budget

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # openvx_nn/kernels: every kernel's source
_PACKAGE_ROOT = _PACKAGE_DIR.parent


def _package_stamp() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


PACKAGE_STAMP = _package_stamp()

# Qualified names of kernels running without an on-disk cache (diagnostics, tests).
_uncached: list[str] = []

CACHE_ENV = "OPENVX_NN_CACHE_DIR"


@functools.cache
def _version() -> str:
    """Read once per process: ``importlib.metadata`` scans every installed distribution on each call, and every
    kernel asks for its cache directory (``import openvx_nn.capi``: 0.86-1.26 s before, 0.60-0.82 s after)."""
    try:  # the installed distribution's version (kernels import nothing above them, so not openvx_nn's)
        from importlib.metadata import PackageNotFoundError, version
        return version("openvx-nn")
    except (ImportError, PackageNotFoundError):  # a bare source tree on PYTHONPATH
        return "source"


@functools.cache
def _cpu() -> str:
    """The CPU that numba compiles for (its name, e.g. ``znver4``): machine code for one does not run on all."""
    try:
        import llvmlite.binding as llvm
        return numba.config.CPU_NAME or llvm.get_host_cpu_name() or "generic"
    except Exception:  # noqa: BLE001 - a name for a directory only
        return "generic"


def user_cache_dir() -> Path:
    """Where kernels are cached: ``$OPENVX_NN_CACHE_DIR``, else ``<XDG cache>/openvx-nn/<version>-<cpu>``."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen:
        return Path(chosen)
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "openvx-nn" / f"{_version()}-{_cpu()}"


def cache_location() -> Path:
    """The directory this process caches kernels in (``NUMBA_CACHE_DIR`` when set)."""
    return Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else user_cache_dir()


def _build_folder() -> Path:
    """Where this build of the kernels is cached (numba's ``NUMBA_CACHE_DIR`` when set)."""
    return Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else user_cache_dir() / PACKAGE_STAMP[:16]


def cache_is_cold() -> bool:
    """True when this build of the kernels has nothing compiled on disk yet (the first run compiles)."""
    chosen = _build_folder()
    return next(chosen.rglob("*.nbi"), None) is None if chosen.is_dir() else True


try:  # numba internals; without them the plain cache=True path below is used.
    from numba.core import caching as _caching
    from numba.core.caching import FunctionCache as _FunctionCache
    from numba.core.dispatcher import Dispatcher as _Dispatcher
    from numba.core.serialize import dumps as _dumps

    from . import machine_code  # numba's runtime and code library internals
except ImportError:  # pragma: no cover - depends on the numba release
    _FunctionCache = None


def _code_digest(code: types_module.CodeType) -> str:
    """What a function's code does, as text the same in every process: its bytecode alone is not enough --
    two closures of different ``def``s that call different globals compile to the same bytes (the names are
    indices into ``co_names``), and two such kernels once shared one cache entry. The names, constants
    (nested code recursively) and the first line are in the digest too."""
    consts = tuple(_code_digest(c) if isinstance(c, types_module.CodeType)
                   else repr(sorted(map(repr, c))) if isinstance(c, frozenset)  # set order varies by process
                   else repr(c) for c in code.co_consts)
    text = repr((code.co_names, code.co_varnames, code.co_freevars, consts, code.co_firstlineno))
    return hashlib.sha256(code.co_code + text.encode()).hexdigest()


def _stable(value: object) -> object:
    """``value`` (a closure cell's contents) with every kernel in it replaced by what defines it -- its
    function's module, name, bytecode, options and, recursively, its own closure -- the same in every
    process (a plain function, a jit-callable helper, likewise); other values are left to numba's pickling
    (types, dtypes, numbers, strings pickle alike)."""
    if isinstance(value, tuple):
        return tuple(_stable(v) for v in value)
    if isinstance(value, _Dispatcher):
        func = value.py_func
        cells = func.__closure__
        return ("kernel", func.__module__, func.__qualname__, _code_digest(func.__code__),
                repr(sorted(value.targetoptions.items())),
                _stable(tuple(c.cell_contents for c in cells)) if cells is not None else ())
    if isinstance(value, types_module.FunctionType):  # a jit-callable helper made by closure (register_jitable)
        cells = value.__closure__
        return ("function", value.__module__, value.__qualname__, _code_digest(value.__code__),
                _stable(tuple(c.cell_contents for c in cells)) if cells is not None else ())
    return value

_DISTINCT = "_captures_"


def _distinct(function: Callable) -> None:
    """Append to closure ``function``'s qualified name a digest of its code and of what it captures
    (:func:`_stable`, the same in every process), once; then, recursively, to the closures it captures.

    numba mangles a compiled function's name from its qualified name, argument types and a per-process
    counter; without this, cached bodies of different closures of one ``def`` could share a symbol (see the
    module's docstring). A closure whose cells are not all filled yet keeps its name."""
    cells = function.__closure__
    if cells is None:
        return
    try:
        contents = tuple(c.cell_contents for c in cells)
    except ValueError:  # a cell still empty (a closure that refers to a name bound after it)
        return
    for value in _captured_functions(contents):
        _distinct(value)
    if _DISTINCT not in function.__qualname__:
        digest = hashlib.sha256(_code_digest(function.__code__).encode() + _dumps(_stable(contents))).hexdigest()[:16]
        function.__qualname__ = f"{function.__qualname__}{_DISTINCT}{digest}"


def _captured_functions(value: object) -> Iterator[Callable]:
    """The plain functions (jit-callable helpers) and kernels' functions among closure contents."""
    if isinstance(value, tuple):
        for item in value:
            yield from _captured_functions(item)
    elif isinstance(value, _Dispatcher):
        yield value.py_func
    elif isinstance(value, types_module.FunctionType):
        yield value


def jitable(function: Callable) -> Callable:
    """``function`` made callable from kernels and entries (numba's ``register_jitable``), under a name that
    says what it captures when it is a closure (:func:`_distinct`)."""
    _distinct(function)
    return register_jitable(function)


def switch(functions: tuple[Callable, ...]) -> Callable:
    """``choose(code, args)`` for kernels: ``functions[code](*args)``, ``code`` a compile-time literal
    (``types.literal`` in :func:`entry`'s types, or a closure's constant, passed down as a kernel's own argument:
    inside a tuple or a call's ``*args`` it loses its literal type). The caller compiles ``functions[code]`` alone:
    a kernel of many variants of which a layer runs one, known when it is bound, compiles that one, where a
    dispatch over all of them compiled every variant into each specialisation (the float convolution's 20 tile
    loops: 98 s of CPU cold, for one layer). A runtime code does not type."""
    def choose(code, args):  # pragma: no cover - kernels call the overload below
        return functions[code](*args)

    @overload(choose, prefer_literal=True)
    def _typed(code, args):
        if not isinstance(code, types.IntegerLiteral):
            return None
        picked = functions[code.literal_value]

        def one(code, args):
            return picked(*args)
        _distinct(one)
        return one
    return choose


def inlined(function: Callable) -> Callable:
    """:func:`jitable`, inlined by numba into each caller's function: its loops then take the caller's LLVM
    attributes (``support/vector_width``), and the views it is given need no reference counts of their own."""
    _distinct(function)
    return register_jitable(inline="always")(function)


if _FunctionCache is not None and all(hasattr(_FunctionCache, n) for n in ("_index_key", "_load_overload")) and all(
        hasattr(_caching, n) for n in ("UserProvidedCacheLocator", "CompileResultCacheImpl")):

    class _UserCacheLocator(_caching.UserProvidedCacheLocator):
        """``user_cache_dir()/<package stamp>/<module's directory in the package>``.

        Keyed by the sources' content, not by where they are installed: every install of the same
        sources (``pip install .``, then ``pip install -e .`` of the same checkout, a second virtual
        environment) shares one compiled set, and different sources never share a directory (numba
        finds its index by file name; a directory of other sources would be overwritten under it).
        A file outside the package (a kernel a test or an application defines) keeps numba's naming.
        """

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            try:
                inside = Path(py_file).resolve().parent.relative_to(_PACKAGE_ROOT)
                self._cache_path = str(user_cache_dir() / PACKAGE_STAMP[:16] / inside)
            except ValueError:
                self._cache_path = str(user_cache_dir() / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            return _caching._SourceFileBackedLocatorMixin.from_function.__func__(cls, py_func, py_file)

    class _KernelCacheImpl(_caching.CompileResultCacheImpl):
        # $NUMBA_CACHE_DIR, else the user's cache directory; never next to the sources.
        _locator_classes = (_caching.UserProvidedCacheLocator, _UserCacheLocator)
        _linked = True
        """Whether later compilations may link the library (a kernel's may be; a C entry's never is)."""

        def rebuild(self, target_context, payload):
            codegen = target_context.codegen()
            outer = codegen.__dict__.get("unserialize_library")  # a rebuild within a rebuild (``reload_init``)
            # numba's ``_rebuild`` loads through ``codegen.unserialize_library``: ours, for this call. Its callers
            # hold the compiler lock (``Dispatcher.compile``, ``CFunc.compile``): no other thread loads meanwhile.
            codegen.unserialize_library = functools.partial(machine_code.cached_library, codegen, self._linked)
            try:
                return super().rebuild(target_context, payload)
            finally:
                if outer is None:
                    del codegen.unserialize_library
                else:
                    codegen.unserialize_library = outer

    class _EntryCacheImpl(_KernelCacheImpl):
        _linked = False

    class _KernelCache(_FunctionCache):
        """numba's per-function disk cache, keyed also by this package's sources, never fatal."""

        _impl_class = _KernelCacheImpl

        def __init__(self, py_func, options: str):
            if options == "native":
                self._impl_class = _EntryCacheImpl
            super().__init__(py_func)
            self._options = options

        def _index_key(self, sig, codegen):
            # numba's key, except that a closure's cells are hashed by what they are (:func:`_stable`), not
            # by their pickle: a kernel pickles with a uuid drawn per process, so an entry whose body calls
            # one (every native entry) missed the cache in every new process and compiled again.  The
            # options matter: one function may be compiled both serial and parallel.
            func = self._py_func
            cells = func.__closure__
            cell_bytes = _dumps(_stable(tuple(c.cell_contents for c in cells))) if cells is not None else b""
            digest = (_code_digest(func.__code__), hashlib.sha256(cell_bytes).hexdigest())
            return ((sig, codegen.magic_tuple(), digest), PACKAGE_STAMP, self._options)

        def load_overload(self, sig, target_context):
            # numba's own ``load_overload`` first refreshes the whole context: imports and installs every
            # typing and lowering registry it has (~0.2 s, most of a new process's first layer). Machine code
            # loaded from disk needs none of them, only the runtime's symbols to link against; numba's
            # compiler refreshes the context itself before anything is compiled.
            machine_code.start_runtime(target_context, _build_folder)
            try:
                return self._load_overload(sig, target_context)
            except OSError:
                self._give_up()
                return None

        def save_overload(self, sig, data):
            try:
                with _exclusive(self._impl.locator.get_cache_path()):
                    super().save_overload(sig, data)
            except OSError:
                self._give_up()

        def _give_up(self) -> None:
            self.disable()
            _uncached.append(self._py_func.__qualname__)
else:  # pragma: no cover
    _KernelCache = None


@contextmanager
def _exclusive(directory: str) -> Iterator[None]:
    """Hold ``directory``'s lock file: numba saves an entry as read index, pick the first free data file
    name, write index, write data; two processes doing that at once pick the same name for different
    signatures, and the index can then point at the other's machine code."""
    with open(os.path.join(directory, ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _attach_cache(dispatcher, options: dict) -> None:
    try:
        dispatcher._cache = _KernelCache(dispatcher.py_func, repr(sorted(options.items())))
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        _uncached.append(dispatcher.py_func.__qualname__)


def kernel(fn: Callable | None = None, *, parallel: bool = False, error_model: str = "python", nogil: bool = True,
           contract: bool = False):
    """Compile ``fn`` with numba (``nogil``, disk cache when possible); usable bare or with options.

    ``error_model="numpy"`` gives IEEE results (inf, nan) for float division
    by zero instead of raising. ``nogil=False`` keeps the GIL: for kernels too
    small to be worth handing the GIL to a waiting thread (a thread switch
    costs more than they do). ``contract=True`` lets LLVM fuse a float multiply and add into one FMA
    (one rounding instead of two): for float kernels whose tolerance allows it, never the exact ones.
    """

    def build(function: Callable):
        options = {"nogil": nogil, "parallel": parallel, "error_model": error_model}
        if contract:
            options["fastmath"] = {"contract"}
        _distinct(function)
        if _KernelCache is not None:
            dispatcher = numba.njit(**options)(function)
            _attach_cache(dispatcher, options)
            name = f"{function.__module__}:{function.__qualname__}:{parallel}:{error_model}" + ("" if nogil else ":gil")
            dispatchers[name] = dispatcher
            return dispatcher
        try:  # pragma: no cover - only with a numba whose cache internals moved
            # numba's own key ignores the options, and matmul compiles one function serial and parallel;
            # without NUMBA_CACHE_DIR its cache would go next to the sources, which the package never allows.
            return numba.njit(cache=bool(numba.config.CACHE_DIR) and not parallel, **options)(function)
        except RuntimeError:  # pragma: no cover
            _uncached.append(function.__qualname__)
            return numba.njit(**options)(function)

    return build(fn) if fn is not None else build


def uncached() -> tuple[str, ...]:
    """Names of the kernels that run without an on-disk cache in this process."""
    return tuple(_uncached)


def start_codegen() -> None:
    """Compile one tiny function (never cached) so that LLVM sets up its lazily built state now.

    LLVM registers the destructors of much of its state with the C runtime's
    exit handlers on first use, i.e. during the first compilation.  A host that
    must run its own exit handler before them (the embedded library waits there
    for kernels still compiling) calls this first, then registers its handler.
    """
    try:  # numba's code generator on a hand-written module: ~10 ms, where numba.njit costs ~0.3 s
        import llvmlite.binding as llvm
        from llvmlite import ir
        from numba.core.compiler_lock import global_compiler_lock
        from numba.core.registry import cpu_target

        module = ir.Module("openvx_nn_start")
        i64 = ir.IntType(64)
        function = ir.Function(module, ir.FunctionType(i64, [i64]), "openvx_nn_start")
        build = ir.IRBuilder(function.append_basic_block())
        build.ret(build.add(build.mul(function.args[0], ir.Constant(i64, 3)), ir.Constant(i64, 1)))
        library = cpu_target.target_context.codegen().create_library("openvx_nn_start")
        with global_compiler_lock:  # also keeps Ctrl-C out of llvmlite's handovers (capi/interrupt.py)
            library.add_llvm_module(llvm.parse_assembly(str(module)))
            library.finalize()  # optimisation passes
            library.get_pointer_to_function("openvx_nn_start")  # machine code
    except Exception:  # noqa: BLE001 - numba internals moved: the slower public way
        numba.njit(lambda n: n * 3 + 1)(1)


# ---- specialisation -------------------------------------------------------------------------------

_entries: dict[tuple, Callable] = {}


def entry(dispatcher, *arg_types) -> Callable:
    """The compiled function of ``dispatcher`` for exactly ``arg_types`` (compiled on first use).

    The caller must pass arguments of exactly those types: the compiled
    entry point unboxes arrays without checking their dtype or rank.
    """
    key = (dispatcher, arg_types)
    function = _entries.get(key)
    if function is None:
        function = _entries[key] = dispatcher.compile(arg_types)
        for hook in on_new_entry:
            hook(dispatcher, arg_types)
    return function


_natives: dict[Callable, object] = {}

RAISED = -1
"""What a native entry returns when its body raised (``VX_FAILURE``): numba's C callbacks cannot raise, and
without the guard an exception (an allocation that fails, an index out of range) returned 0, success, with
the outputs unwritten."""


def _guarded(body: Callable) -> Callable:
    """``body`` behind a ``try``: what it raises becomes :data:`RAISED`. Exceptions raised inside a parallel
    region (``prange``) are not caught by numba this way; those kernels must not raise."""
    inner = register_jitable(body)

    def guarded(block):
        try:
            return inner(block)
        except Exception:  # noqa: BLE001 - numba catches only Exception as a whole
            return RAISED

    guarded.__qualname__ = f"{body.__qualname__}.guarded"
    return guarded


def native(body: Callable) -> int:
    """The address of ``body`` compiled as the C function ``int32 body(int64 *block)`` (``nogil``, disk cache),
    returning :data:`RAISED` if ``body`` raises.

    Compiled on first use and kept for the process (the machine code lives as long as the returned
    object); ``body`` is usually a closure made once per specialisation (see ``native.py``).
    """
    compiled = _natives.get(body)
    if compiled is None:
        from numba.core.ccallback import CFunc
        _distinct(body)
        wrapper = _guarded(body)
        _distinct(wrapper)
        compiled = CFunc(wrapper, ((types.CPointer(types.int64),), types.int32), {}, {"nogil": True})
        if _KernelCache is not None:
            try:
                compiled._cache = _KernelCache(wrapper, "native")
            except RuntimeError:  # no locator (a body defined outside a file): compile without a cache
                _uncached.append(body.__qualname__)
        compiled.compile()
        _natives[body] = compiled
    return compiled.address


dispatchers: dict[str, Callable] = {}
"""Every kernel made by :func:`kernel`, by "module:qualname:parallel:error_model" (and ":gil" when it keeps
the GIL; ``warm`` replays them)."""

on_new_entry: list[Callable[[Callable, tuple], None]] = []
"""Called with (dispatcher, argument types) whenever :func:`entry` meets a new specialisation."""


_array_types: dict[tuple, types.Array] = {}


def _array_type(array: np.ndarray, layout: str, readonly: bool) -> types.Array:
    # numba.typeof costs microseconds per call; the type depends only on this key.
    key = (array.dtype, array.ndim, array.flags.aligned, layout, readonly)
    found = _array_types.get(key)
    if found is None:
        found = _array_types[key] = numba.typeof(array).copy(layout=layout, readonly=readonly)
    return found


def array_in(array: np.ndarray, layout: str = "A") -> types.Array:
    """numba type of a read-only input array (layout 'A' unless the caller guarantees 'C')."""
    return _array_type(array, layout, True)


def array_out(array: np.ndarray, layout: str = "A") -> types.Array:
    """numba type of a written output array (layout 'A' unless the caller guarantees 'C')."""
    return _array_type(array, layout, False)


# ---- the thread pool ------------------------------------------------------------------------------

_pool = threading.Lock()
_SERIAL = os.environ.get("OPENVX_NN_THREADS", "").strip() == "1"
"""OPENVX_NN_THREADS=1: kernels never use numba's thread pool (one core per graph)."""
native_runs = thread_budget.native_runs
"""Graph runs in flight on the native path (``thread_budget``), counted by C."""


def is_crowded() -> bool:
    """Whether another graph is executing (on the Python or the native path)."""
    return thread_budget.graphs() > 1


def configure_pool() -> None:
    """Size numba's pool from ``OPENVX_NN_THREADS`` (called at import, before numba starts its threading
    layer)."""
    wanted = os.environ.get("OPENVX_NN_THREADS", "").strip()
    if wanted.isdigit() and int(wanted) > 0 and "NUMBA_NUM_THREADS" not in os.environ:
        numba.config.NUMBA_NUM_THREADS = int(wanted)  # read when the pool starts (not yet, at import)


configure_pool()
_pool_started = False


def _start_pool() -> None:
    """Start numba's threading layer, its idle threads bounded to about 1 ms of spinning.

    An idle OpenMP thread spins for about 1 ms (``GOMP_SPINCOUNT=30000``) before it sleeps: long enough to
    catch the next layer of a graph (waking a sleeping thread costs tens of microseconds per layer), short
    enough not to hold a core that other work wants (libgomp's default spins for about 10 ms). libgomp reads
    the variable once, when numba loads it here; it is in the environment only for that moment, so other
    libraries of the host process and its child processes never see it. Settings the user made win.
    Called under ``_pool``.
    """
    global _pool_started
    if _pool_started:
        return
    _pool_started = True
    from numba.np.ufunc import parallel
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        parallel._launch_threads()
        return
    os.environ["GOMP_SPINCOUNT"] = "30000"
    try:
        parallel._launch_threads()
    finally:
        del os.environ["GOMP_SPINCOUNT"]


@contextmanager
def thread_pool() -> Iterator[bool]:
    """True while the caller holds numba's thread pool and may launch a ``parallel`` kernel, else False.

    One parallel kernel runs at a time in the process, on the caller and the spare threads of the
    budget it could take (``thread_budget``; numba's thread count is set for this thread's launch);
    none spare, or the pool busy: False, and the caller runs its serial kernel (``nogil``, so it
    still runs concurrently). numba's ``workqueue`` threading layer, the one left when neither TBB
    nor OpenMP is available, aborts the whole process on concurrent launches, and two launches
    sharing one pool gain nothing.
    """
    acquired = not _SERIAL and thread_budget.spare() > 0 and _pool.acquire(blocking=False)
    lent = thread_budget.take(numba.config.NUMBA_NUM_THREADS - 1) if acquired else 0
    if acquired and not lent:
        _pool.release()
        acquired = False
    try:
        if acquired:
            _start_pool()
            numba.set_num_threads(1 + lent)
        yield acquired
    finally:
        if acquired:
            thread_budget.give(lent)
            _pool.release()


INT = types.int64
FLOAT = types.float64
BOOL = types.boolean
