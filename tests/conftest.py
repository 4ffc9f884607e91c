"""Shared fixtures: the C-style API, a leak-checked context, log capture, and a
compiler for C test programs built exactly as an application would be."""
from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# The plain references of tests/kernels serve the API-level tests too.
sys.path.insert(0, str(Path(__file__).resolve().parent / "kernels"))

# A suite started in the background of a non-interactive shell inherits SIGINT ignored, and so would every program
# the Ctrl-C tests start (an ignored signal stays ignored across exec): give the children SIGINT's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(__file__).resolve().parent / "_build"
ABI = Path(__file__).resolve().parent / "abi"
C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


@pytest.fixture(scope="session")
def vx():
    from openvx_nn import vx as module
    return module


def _query_u32(vx, ctx, attribute):
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, attribute, out, 4) == vx.VX_SUCCESS
    return out[0]


class LogCapture:
    """Collects (status, text) of every log entry of a context."""

    def __init__(self, vx, ctx):
        self.entries: list[tuple[int, str]] = []

        @vx.ffi.callback("vx_log_callback_f")
        def on_log(context, ref, status, text):
            self.entries.append((status, vx.ffi.string(text).decode()))

        self._callback = on_log
        vx.vxRegisterLogCallback(ctx, on_log, vx.vx_false_e)

    def clear(self):
        self.entries.clear()

    def last(self) -> str:
        assert self.entries, "nothing was logged"
        return self.entries[-1][1]

    def has(self, status: int, *words: str) -> bool:
        """True when some entry has ``status`` and contains every word."""
        return any(s == status and all(w in t for w in words) for s, t in self.entries)


@pytest.fixture
def ctx(vx):
    """A context whose reference count must be back at its start value at the end."""
    context = vx.vxCreateContext()
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", context)) == vx.VX_SUCCESS
    baseline = _query_u32(vx, context, vx.VX_CONTEXT_REFERENCES)
    yield context
    after = _query_u32(vx, context, vx.VX_CONTEXT_REFERENCES)
    vx.vxRegisterLogCallback(context, vx.ffi.NULL, vx.vx_false_e)
    holder = vx.ffi.new("vx_context *", context)
    assert vx.vxReleaseContext(holder) == vx.VX_SUCCESS
    assert after == baseline, f"leaked references: {after} live, {baseline} after create"


@pytest.fixture
def log(vx, ctx):
    return LogCapture(vx, ctx)


@pytest.fixture
def graph(vx, ctx):
    """A graph of the leak-checked context, released at the end."""
    g = vx.vxCreateGraph(ctx)
    yield g
    holder = vx.ffi.new("vx_graph *", g)
    assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS


@pytest.fixture
def one_simd_tile(monkeypatch):
    """The integer SIMD engine planned with one micro-kernel tile (``simd_tiles``): each format binds one native
    entry whatever the test's random shapes."""
    import simd_tiles

    from openvx_nn.kernels.engine import tiles

    one = simd_tiles.single()
    if one is not None:
        monkeypatch.setitem(tiles.TILES, *one)


def ref(vx, handle):
    """Any handle as a vx_reference."""
    return vx.ffi.cast("vx_reference", handle)


def config_flags() -> list[str]:
    out = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--libs"],
                         check=True, capture_output=True, text=True).stdout
    return shlex.split(out)


def compile_c(source: str | Path, name: str | None = None, extra: list[str] | None = None) -> Path:
    """Compile a C program (text or file) against the installed library with the
    flags ``python -m openvx_nn.config`` prints; cached by content."""
    text = Path(source).read_text() if isinstance(source, Path) else source
    digest = hashlib.sha1((text + " ".join(extra or [])).encode()).hexdigest()[:12]
    BUILD.mkdir(exist_ok=True)
    exe = BUILD / f"{name or 'prog'}_{digest}"
    if not exe.exists():
        # built under this process's own name, then renamed into place: two test processes may build the same
        # program at once (two suites on one checkout), and neither may run the other's half-written one
        own = BUILD / f"{exe.name}.{os.getpid()}"
        src = own.with_name(f"{own.name}.c")
        src.write_text(text)
        cmd = ["cc", *C_FLAGS, str(src), "-o", str(own), *config_flags(), *(extra or [])]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode:
            raise AssertionError(f"compile failed: {' '.join(cmd)}\n{result.stderr}")  # the source kept
        src.unlink()
        os.replace(own, exe)
    return exe


def run_c(exe: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def asked(monkeypatch):
    """The (entry, function) pairs graphs and layers asked the float32 activation kernel for: its bound call
    (``bind``) and its native entry (``native``)."""
    from openvx_nn.kernels.frontend import float_activation as fa
    calls: list[tuple[str, str]] = []
    bind, native_entry = fa.bind, fa.native_entry

    def recording_bind(x, out, function, *args):
        calls.append(("bind", function))
        return bind(x, out, function, *args)

    def recording_native(x, out, function, *args):
        calls.append(("native", function))
        return native_entry(x, out, function, *args)
    monkeypatch.setattr(fa, "bind", recording_bind)
    monkeypatch.setattr(fa, "native_entry", recording_native)
    return calls
