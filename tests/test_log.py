"""The log: vxAddLogEntry and vxRegisterLogCallback, and the library's own
errors arriving through the same path."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compile_c, ref, run_c

C_DIR = Path(__file__).resolve().parent / "c"


class RawLog:
    """A log callback that keeps everything it is given, text as bytes."""

    def __init__(self, vx, ctx, reentrant=False):
        self.entries: list[tuple] = []

        @vx.ffi.callback("vx_log_callback_f")
        def on_log(context, reference, status, text):
            self.entries.append((context, reference, status, vx.ffi.string(text)))

        self.callback = on_log
        vx.vxRegisterLogCallback(ctx, on_log, vx.vx_true_e if reentrant else vx.vx_false_e)


@pytest.fixture
def raw(vx, ctx):
    return RawLog(vx, ctx)


def test_entry_reaches_the_callback_with_context_reference_and_status(vx, ctx, raw):
    graph = vx.vxCreateGraph(ctx)
    vx.vxAddLogEntry(ref(vx, graph), vx.VX_ERROR_INVALID_GRAPH, b"graph %s has %d nodes",
                     vx.ffi.new("char[]", b"g1"), vx.ffi.cast("int", 3))
    assert raw.entries == [(ctx, ref(vx, graph), vx.VX_ERROR_INVALID_GRAPH, b"graph g1 has 3 nodes")]
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_success_entries_are_dropped(vx, ctx, raw):
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_SUCCESS, b"all is well")
    assert raw.entries == []
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"not well")
    assert [e[3] for e in raw.entries] == [b"not well"]


@pytest.mark.parametrize("length", [1022, 1023, 1024, 5000])
def test_messages_are_truncated_to_max_log_message_len_minus_one(vx, ctx, raw, length):
    message = b"<" + b"m" * (length - 1)
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"%s", vx.ffi.new("char[]", message))
    (text,) = [e[3] for e in raw.entries]
    assert text == message[: vx.VX_MAX_LOG_MESSAGE_LEN - 1]


def test_library_messages_are_truncated_too(vx, ctx, raw):
    target = b"t" * 3000
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_STRING, target) == vx.VX_ERROR_NOT_SUPPORTED
    (text,) = [e[3] for e in raw.entries]
    assert len(text) == vx.VX_MAX_LOG_MESSAGE_LEN - 1
    assert text.startswith(b"vxSetImmediateModeTarget")


def test_non_utf8_bytes_and_split_characters_come_back_unchanged(vx, ctx, raw):
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"caf\xe9 \xff\xfe")
    message = b"x" + "é".encode() * 600  # the cut falls inside a two-byte character
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"%s", vx.ffi.new("char[]", message))
    assert [e[3] for e in raw.entries] == [b"caf\xe9 \xff\xfe", message[:1023]]


def test_text_is_formatted_once(vx, ctx, raw):
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"%s", vx.ffi.new("char[]", b"100%d %s %n"))
    assert raw.entries[0][3] == b"100%d %s %n"


def test_entries_for_no_or_dead_references_go_nowhere(vx, ctx, raw):
    graph = vx.vxCreateGraph(ctx)
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    for target in (vx.ffi.NULL, ref(vx, graph), vx.ffi.cast("vx_reference", 0x1234)):
        vx.vxAddLogEntry(target, vx.VX_FAILURE, b"lost")
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, vx.ffi.NULL)
    assert raw.entries == []


def test_null_callback_removes_it(vx, ctx, raw):
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"one")
    vx.vxRegisterLogCallback(ctx, vx.ffi.NULL, vx.vx_false_e)
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"two")
    assert vx.vxDirective(ref(vx, ctx), 0x7FFF) == vx.VX_ERROR_NOT_SUPPORTED
    assert [e[3] for e in raw.entries] == [b"one"]
    vx.vxRegisterLogCallback(ctx, raw.callback, vx.vx_false_e)
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"three")
    assert [e[3] for e in raw.entries] == [b"one", b"three"]


def test_a_new_callback_replaces_the_old_one(vx, ctx, raw):
    other = RawLog(vx, ctx)
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"for the new one")
    assert raw.entries == [] and len(other.entries) == 1


@pytest.mark.parametrize("call,function", [
    (lambda vx, ctx, g: vx.vxQueryContext(ctx, vx.VX_CONTEXT_VERSION, vx.ffi.new("vx_uint32 *"), 4),
     "vxQueryContext"),
    (lambda vx, ctx, g: vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_VERSION, vx.ffi.new("vx_uint16 *"), 2),
     "vxSetContextAttribute"),
    (lambda vx, ctx, g: vx.vxQueryReference(ref(vx, g), vx.VX_REFERENCE_TYPE, vx.ffi.new("vx_enum *"), 8),
     "vxQueryReference"),
    (lambda vx, ctx, g: vx.vxSetReferenceName(ref(vx, g), b"z" * 80), "vxSetReferenceName"),
    (lambda vx, ctx, g: vx.vxHint(ref(vx, g), 0, vx.ffi.NULL, 0), "vxHint"),
    (lambda vx, ctx, g: vx.vxDirective(ref(vx, g), 0), "vxDirective"),
    (lambda vx, ctx, g: vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_STRING, b"nowhere"),
     "vxSetImmediateModeTarget"),
    (lambda vx, ctx, g: vx.vxCreateGraph(vx.ffi.cast("vx_context", g)), "vxCreateGraph"),
    (lambda vx, ctx, g: vx.vxReleaseContext(vx.ffi.new("vx_context *", vx.ffi.cast("vx_context", g))),
     "vxReleaseContext"),
])
def test_library_errors_name_the_function_and_carry_the_object(vx, ctx, raw, call, function):
    graph = vx.vxCreateGraph(ctx)
    concerned = ctx if function in ("vxQueryContext", "vxSetContextAttribute", "vxSetImmediateModeTarget") \
        else graph
    raw.entries.clear()
    call(vx, ctx, graph)
    assert len(raw.entries) == 1
    context, reference, status, text = raw.entries[0]
    assert status < 0
    assert text.startswith(function.encode() + b":")
    assert context == ctx and reference == ref(vx, concerned)
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_errors_about_unknown_handles_carry_no_reference(vx, ctx, raw):
    assert vx.vxRetainReference(vx.ffi.cast("vx_reference", 0x40)) == vx.VX_ERROR_INVALID_REFERENCE
    ((context, reference, status, text),) = raw.entries
    assert (context, reference, status) == (ctx, vx.ffi.NULL, vx.VX_ERROR_INVALID_REFERENCE)
    assert text.startswith(b"vxRetainReference:")


NESTED_SCRIPT = """
import sys
from openvx_nn import vx
ctx = vx.vxCreateContext()
seen = []

@vx.ffi.callback("vx_log_callback_f")
def on_log(context, reference, status, text):
    seen.append(vx.ffi.string(text).decode())
    seen.append(vx.vxRetainReference(vx.ffi.NULL))

vx.vxRegisterLogCallback(ctx, on_log, int(sys.argv[1]))
vx.vxAddLogEntry(vx.ffi.cast("vx_reference", ctx), vx.VX_FAILURE, b"outer")
vx.vxAddLogEntry(vx.ffi.cast("vx_reference", ctx), vx.VX_FAILURE, b"again")
print(seen)
"""


@pytest.mark.parametrize("reentrant", [0, 1])
def test_a_callback_may_make_failing_calls_itself(vx, reentrant):
    """The callback's own failures neither deadlock a non-reentrant callback
    nor recurse into it (run apart: a regression would hang or overflow)."""
    result = subprocess.run([sys.executable, "-c", NESTED_SCRIPT, str(reentrant)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    error = vx.VX_ERROR_INVALID_REFERENCE
    assert result.stdout.strip() == repr(["outer", error, "again", error])


def test_log_from_a_c_program():
    exe = compile_c(C_DIR / "log_entries.c", "log_entries", extra=["-pthread"])
    result = run_c(exe, timeout=30)  # a deadlocked callback shows as a timeout
    assert result.returncode == 0, result.stdout + result.stderr
    assert "log checks passed" in result.stdout
