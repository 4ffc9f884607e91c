"""numba's on-disk kernel cache lives in a per-user directory keyed by version and CPU, never inside the
package (so ``pip uninstall`` leaves nothing behind), read-only install or not; only the first process
compiles."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import openvx_nn
from openvx_nn.kernels.support import jit

SCRIPT = """
import numpy as np
import openvx_nn
from openvx_nn.kernels import copy
from openvx_nn.kernels.support import jit
x = np.arange(6, dtype=np.int16).reshape(2, 3)
out = np.zeros((2, 3), np.int16)
copy(x, out)
assert (out == x).all()
print(openvx_nn.__file__)
print("uncached:", ",".join(jit.uncached()))
"""


def _read_only_runner(package_root: Path) -> list[str]:
    """A command prefix under which ``package_root`` is read-only (even for root), or skip."""
    if os.geteuid() != 0:
        for path in package_root.rglob("*"):
            path.chmod(path.stat().st_mode & ~0o222)
        return []
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode:
        pytest.skip("running as root without user namespaces: cannot make a directory read-only")
    return [unshare, "-rm", "sh", "-c", f'mount --bind -o ro "{package_root}" "{package_root}" && exec "$@"', "sh"]


def test_read_only_install_caches_kernels_in_the_user_cache_directory(tmp_path):
    source = Path(openvx_nn.__file__).parent
    root = tmp_path / "site"
    shutil.copytree(source, root / "openvx_nn", ignore=shutil.ignore_patterns("__pycache__", "*.so", "_build"))
    prefix = _read_only_runner(root)
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(tmp_path / "xdg"),
           "NUMBA_DEBUG_CACHE": "1"}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("OPENVX_NN_CACHE_DIR", None)  # the user cache directory is what this test is about

    def run() -> str:
        result = subprocess.run([*prefix, sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                                env=env, cwd=tmp_path, timeout=600)
        assert result.returncode == 0, result.stderr
        return result.stdout

    first = run()
    assert str(root / "openvx_nn") in first and "uncached: \n" in first  # the copy, every kernel cached
    assert not list(root.rglob("*.nbi"))  # nothing was written into the package
    cached = list((tmp_path / "xdg" / "openvx-nn").glob(f"{openvx_nn.__version__}-*/**/*.nbi"))
    assert cached, first
    second = run()
    assert "data loaded" in second and "data saved" not in second, second  # the second process compiles nothing


def test_a_writable_package_gets_no_cache_files_and_the_override_is_honoured(tmp_path):
    source = Path(openvx_nn.__file__).parent
    root = tmp_path / "site"
    shutil.copytree(source, root / "openvx_nn", ignore=shutil.ignore_patterns("__pycache__", "*.so", "_build"))
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(tmp_path / "xdg"),
           "OPENVX_NN_CACHE_DIR": str(tmp_path / "chosen")}
    env.pop("NUMBA_CACHE_DIR", None)
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert "uncached: \n" in result.stdout
    assert not [p for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert list((tmp_path / "chosen").rglob("*.nbi")) and not (tmp_path / "xdg").exists()


def test_two_installs_of_the_same_sources_share_one_compiled_set(tmp_path):
    """The cache is keyed by the sources' content, not their path: a second install (another virtual
    environment, or ``pip install -e .`` after ``pip install .``) loads what the first compiled."""
    source = Path(openvx_nn.__file__).parent
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "NUMBA_DEBUG_CACHE": "1"}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("OPENVX_NN_CACHE_DIR", None)
    outputs = []
    for site in ("first", "second"):
        shutil.copytree(source, tmp_path / site / "openvx_nn",
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "_build"))
        result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                                env={**env, "PYTHONPATH": str(tmp_path / site)}, cwd=tmp_path, timeout=600)
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert "data saved" in outputs[0]
    assert "data loaded" in outputs[1] and "data saved" not in outputs[1], outputs[1]


LOADER = """
import sys
import numpy as np
from openvx_nn.kernels import copy
x = np.arange(6, dtype=np.int16).reshape(2, 3)
out = np.zeros((2, 3), np.int16)
copy(x, out)
assert (out == x).all()
print("registries after a load:", "numba.np.linalg" in sys.modules)
wide = np.zeros((2, 3), np.int32)
copy(x.astype(np.int32), wide)
assert (wide == x).all()
print("registries after a compile:", "numba.np.linalg" in sys.modules)
"""


def test_loading_a_cached_kernel_does_not_load_numbas_compiler_registries(tmp_path):
    """numba readies its whole compiler (every typing and lowering registry, ~0.2 s) before loading machine
    code from its cache; a process that only loads compiled kernels skips that, and one that then compiles
    something new still compiles it."""
    env = {**os.environ, "OPENVX_NN_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DEBUG_CACHE": "1"}
    env.pop("NUMBA_CACHE_DIR", None)
    first = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=600)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", LOADER], capture_output=True, text=True, env=env, cwd=tmp_path,
                            timeout=600)
    assert second.returncode == 0, second.stderr
    assert "data loaded" in second.stdout
    assert "registries after a load: False" in second.stdout, second.stdout
    assert "registries after a compile: True" in second.stdout, second.stdout


def test_the_cache_directory_reads_the_installed_version_once(monkeypatch):
    # importlib.metadata scans every installed distribution per call; each kernel asks for its cache directory.
    import importlib.metadata
    calls = []
    monkeypatch.setattr(importlib.metadata, "version", lambda name: calls.append(name) or "9.9")
    monkeypatch.delenv(jit.CACHE_ENV, raising=False)
    jit._version.cache_clear()
    try:
        directories = {jit.user_cache_dir() for _ in range(5)}
    finally:
        jit._version.cache_clear()
    assert calls == ["openvx-nn"]
    assert len(directories) == 1 and next(iter(directories)).name.startswith("9.9-")


@jit.kernel
def _first(block):
    return 1


@jit.kernel
def _second(block):
    return 2


@jit.kernel
def _allocates(n):
    return np.arange(n) * 2.0


def _closures():
    # Two bodies whose bytecode is the same bytes: they differ only in which global they call.
    def calls_first(block):
        return _first(block)

    def calls_second(block):
        return _second(block)

    return calls_first, calls_second


def test_closures_that_differ_only_in_the_globals_they_call_are_distinct_kernels(tmp_path):
    first, second = _closures()
    assert first.__code__.co_code == second.__code__.co_code
    assert jit._code_digest(first.__code__) != jit._code_digest(second.__code__)
    script = f"""
import ctypes, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_kernel_cache import _closures
from openvx_nn.kernels.support import jit
call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
print(*(call(jit.native(body))(None) for body in _closures()))
"""
    env = dict(os.environ, OPENVX_NN_CACHE_DIR=str(tmp_path))
    for _ in range(2):  # compiled and saved, then loaded from the cache
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert done.stdout.split() == ["1", "2"], done.stderr


@pytest.mark.skipif(platform.machine() != "x86_64", reason="loaded by LLVM elsewhere (``_shared_module`` kept None)")
def test_a_c_entry_loaded_from_the_cache_keeps_its_machine_code_and_never_parses_its_bitcode(tmp_path):
    # numba parses a cached library's bitcode back into LLVM IR for linking it into other libraries; nothing links
    # a C entry, and MediaPipe's face landmark model held 33 MiB of that IR from its first run on. Loaded by
    # ``object_loader``, a C entry keeps no bitcode at all.
    script = f"""
import ctypes, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_kernel_cache import _closures
from openvx_nn.kernels.support import jit
call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
bodies = _closures()
print(*(call(jit.native(body))(None) for body in bodies))
print(*(jit._natives[body]._cache_hits for body in bodies))
def unlinkable(library):
    try:
        library._get_module_for_linking()
    except RuntimeError:
        return True
    return False
print(*(unlinkable(jit._natives[body]._library) for body in bodies))
print(*(call(jit.native(body))(None) for body in bodies))
"""
    env = dict(os.environ, OPENVX_NN_CACHE_DIR=str(tmp_path))
    for run in range(2):  # compiled and saved, then loaded from the cache
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        lines = done.stdout.split("\n")
        assert lines[0].split() == ["1", "2"] and lines[3].split() == ["1", "2"], done.stderr
        assert lines[1].split() == (["0", "0"] if run == 0 else ["1", "1"]), done.stdout
        if run == 1:
            assert lines[2].split() == ["True", "True"], done.stdout


RUNTIME = """
import sys
import numba
import numpy as np
from numba.core.runtime import nrtdynmod
if sys.argv[1] == "cached":
    def refuse(*args):
        raise AssertionError("numba's runtime compiled although the cache holds it")
    nrtdynmod.create_nrt_module = refuse
from openvx_nn.kernels import copy
x = np.arange(6, dtype=np.int16).reshape(2, 3)
out = np.zeros((2, 3), np.int16)
copy(x, out)
assert (out == x).all()

@numba.njit
def fresh(n):  # compiled in this process (no cache for -c code), allocating: linked against the runtime
    return np.arange(n).sum()

assert fresh(5) == 10
print("ok")
"""


def test_numbas_runtime_is_compiled_once_then_loaded_from_the_cache(tmp_path):
    """numba compiles its runtime's functions in every process: with every kernel cached, the one compilation,
    which brought ~20 MiB of LLVM's code into memory. The first process saves it; later ones load it, and still
    compile new code against it; a damaged file is compiled over."""
    env = {**os.environ, "OPENVX_NN_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)

    def run(mode: str) -> None:
        done = subprocess.run([sys.executable, "-c", RUNTIME, mode], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=600)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr

    run("compile")
    saved = list((tmp_path / "cache").rglob("numba-runtime-*.bin"))
    assert len(saved) == 1
    run("cached")
    data = bytearray(saved[0].read_bytes())
    data[-100] ^= 0xFF  # the bitcode damaged: the digest no longer matches
    saved[0].write_bytes(bytes(data))
    run("compile")
    assert saved[0].read_bytes() != bytes(data)
    run("cached")
    saved[0].write_bytes(b"")  # empty
    run("compile")
    run("cached")
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_a_python_host_leaves_llvms_state_to_the_first_compilation(tmp_path):
    """Building LLVM's lazily made state at start-up orders its teardown after the C exit handler of a C host; a
    Python host runs its own exit handlers first, and a process whose kernels all come from the cache would
    carry ~20 MiB of LLVM's code it never runs."""
    script = """
from openvx_nn.kernels.support import jit
called = []
jit.start_codegen = lambda: called.append(1)
from openvx_nn import vx
vx.vxGetStatus(vx.ffi.NULL)  # starts libopenvx.so in this (Python) host
from openvx_nn.core import execution
print(execution.ready(), called)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.stdout.split() == ["True", "[]"], done.stderr


def test_a_kernel_loaded_from_the_cache_links_into_a_new_compilation(tmp_path):
    """A cached kernel's bitcode is parsed only when a compilation links it: here one that calls it."""
    script = f"""
import sys
import numba
sys.path.insert(0, {str(Path(__file__).parent)!r})
import llvmlite.binding as llvm
parsed = []
parse = llvm.parse_bitcode
llvm.parse_bitcode = lambda code: parsed.append(len(code)) or parse(code)
from test_kernel_cache import _allocates
print(_allocates(4).sum(), sum(_allocates._cache_hits.values()), len(parsed))

@numba.njit
def caller(n):
    return _allocates(n).sum() + 1.0

print(caller(4), len(parsed) > 0)
"""
    env = dict(os.environ, OPENVX_NN_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    outputs = []
    for run in range(2):  # compiled and saved, then loaded from the cache
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.split())
    assert outputs[0] == ["12.0", "0", "0", "13.0", "False"], outputs[0]  # compiled: nothing parsed
    assert outputs[1] == ["12.0", "1", "0", "13.0", "True"], outputs[1]  # loaded; parsed when linked


def test_the_names_an_object_file_defines_are_read_from_its_symbol_table():
    import llvmlite.binding as llvm

    from openvx_nn.kernels.support import object_loader
    module = llvm.parse_assembly("""
@counter = global i64 0
@hidden = internal global i64 1
@shared = weak global i32 2
declare i64 @elsewhere(i64)
define i64 @twice(i64 %x) { %y = call i64 @elsewhere(i64 %x) %z = add i64 %y, %y ret i64 %z }
define internal i64 @inner(i64 %x) { ret i64 %x }
define i64 @uses_inner(i64 %x) { %y = call i64 @inner(i64 %x) ret i64 %y }
""")
    target = llvm.Target.from_default_triple().create_target_machine(reloc="static")
    code = target.emit_object(module)
    names = {"counter", "shared", "twice", "uses_inner"}
    assert object_loader.defined_names(code) == names
    assert object_loader.defined_names(b"MZ" + code[2:]) is None  # not ELF
    for cut in (16, 64, len(code) // 2, len(code) - 8):
        found = object_loader.defined_names(code[:cut])  # cut short: never raises, never invents a name
        assert found is None or found <= names
