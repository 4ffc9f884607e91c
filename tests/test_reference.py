"""References: counting, type, naming, release through the caller's variable,
and what happens to handles once released."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_c, ref, run_c

C_DIR = Path(__file__).resolve().parent / "c"


def count_of(vx, handle) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryReference(ref(vx, handle), vx.VX_REFERENCE_COUNT, out, 4) == vx.VX_SUCCESS
    return out[0]


def type_of(vx, handle) -> int:
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryReference(ref(vx, handle), vx.VX_REFERENCE_TYPE, out, 4) == vx.VX_SUCCESS
    return out[0]


def name_of(vx, handle) -> str:
    out = vx.ffi.new("vx_char **")
    assert vx.vxQueryReference(ref(vx, handle), vx.VX_REFERENCE_NAME, out,
                               vx.ffi.sizeof("vx_char *")) == vx.VX_SUCCESS
    assert out[0] != vx.ffi.NULL
    return vx.ffi.string(out[0]).decode()


def context_refs(vx, ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def release(vx, handle) -> int:
    return vx.vxReleaseReference(vx.ffi.new("vx_reference *", ref(vx, handle)))


# -- counting ----------------------------------------------------------------------
def test_reference_count_follows_retain_and_release(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    assert count_of(vx, graph) == 1
    for expected in (2, 3):
        assert vx.vxRetainReference(ref(vx, graph)) == vx.VX_SUCCESS
        assert count_of(vx, graph) == expected
    assert release(vx, graph) == vx.VX_SUCCESS
    assert count_of(vx, graph) == 2
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    assert count_of(vx, graph) == 1  # still alive: one reference left
    assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_SUCCESS
    assert release(vx, graph) == vx.VX_SUCCESS
    assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_ERROR_INVALID_REFERENCE


def test_context_reference_count_follows_retain_and_release(vx, ctx):
    start = count_of(vx, ctx)
    assert vx.vxRetainReference(ref(vx, ctx)) == vx.VX_SUCCESS
    assert count_of(vx, ctx) == start + 1
    holder = vx.ffi.new("vx_reference *", ref(vx, ctx))
    assert vx.vxReleaseReference(holder) == vx.VX_SUCCESS and holder[0] == vx.ffi.NULL
    assert count_of(vx, ctx) == start
    assert vx.vxGetStatus(ref(vx, ctx)) == vx.VX_SUCCESS


def test_context_references_return_to_baseline(vx, ctx):
    baseline = context_refs(vx, ctx)
    graphs = [vx.vxCreateGraph(ctx) for _ in range(5)]
    vx.vxRetainReference(ref(vx, graphs[0]))
    assert context_refs(vx, ctx) == baseline + 5  # objects, not application references
    for g in graphs:
        assert release(vx, g) == vx.VX_SUCCESS
    assert context_refs(vx, ctx) == baseline + 1
    assert release(vx, graphs[0]) == vx.VX_SUCCESS
    assert context_refs(vx, ctx) == baseline


# -- type ----------------------------------------------------------------------------
def test_reference_type_of_context_and_graph(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    assert type_of(vx, ctx) == vx.VX_TYPE_CONTEXT
    assert type_of(vx, graph) == vx.VX_TYPE_GRAPH
    assert release(vx, graph) == vx.VX_SUCCESS


@pytest.mark.parametrize("attribute,size", [("VX_REFERENCE_COUNT", 8), ("VX_REFERENCE_TYPE", 2),
                                            ("VX_REFERENCE_NAME", 4), ("VX_REFERENCE_COUNT", 0)])
def test_reference_attribute_with_a_wrong_size_is_invalid(vx, ctx, log, attribute, size):
    buf = vx.ffi.new("char[]", 16)
    status = vx.vxQueryReference(ref(vx, ctx), getattr(vx, attribute), buf, size)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxQueryReference", attribute)
    assert bytes(vx.ffi.buffer(buf)) == bytes(16)


def test_unknown_reference_attribute_is_not_supported(vx, ctx, log):
    buf = vx.ffi.new("vx_uint32 *")
    for attribute in (vx.VX_REFERENCE_NAME + 1, vx.VX_CONTEXT_REFERENCES):
        status = vx.vxQueryReference(ref(vx, ctx), attribute, buf, 4)
        assert status == vx.VX_ERROR_NOT_SUPPORTED
        assert log.has(status, "vxQueryReference")


# -- names ---------------------------------------------------------------------------
def test_reference_name_is_a_char_pointer_to_the_set_name(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    assert name_of(vx, graph) == ""
    assert vx.vxSetReferenceName(ref(vx, graph), b"conv1 weights") == vx.VX_SUCCESS
    assert name_of(vx, graph) == "conv1 weights"
    assert vx.vxSetReferenceName(ref(vx, graph), b"renamed") == vx.VX_SUCCESS
    assert name_of(vx, graph) == "renamed"
    assert vx.vxSetReferenceName(ref(vx, ctx), b"the context") == vx.VX_SUCCESS
    assert name_of(vx, ctx) == "the context"
    assert vx.vxSetReferenceName(ref(vx, ctx), b"") == vx.VX_SUCCESS
    assert name_of(vx, ctx) == ""
    assert release(vx, graph) == vx.VX_SUCCESS


def test_longest_name_fits_and_a_longer_one_is_rejected(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    longest = b"n" * (vx.VX_MAX_REFERENCE_NAME - 1)
    assert vx.vxSetReferenceName(ref(vx, graph), longest) == vx.VX_SUCCESS
    assert name_of(vx, graph) == longest.decode()
    for too_long in (b"x" * vx.VX_MAX_REFERENCE_NAME, b"y" * 1000):
        status = vx.vxSetReferenceName(ref(vx, graph), too_long)
        assert status == vx.VX_ERROR_INVALID_PARAMETERS
        assert log.has(status, "vxSetReferenceName")
        assert name_of(vx, graph) == longest.decode()  # unchanged
    assert vx.vxSetReferenceName(ref(vx, graph), vx.ffi.NULL) == vx.VX_ERROR_INVALID_PARAMETERS
    assert release(vx, graph) == vx.VX_SUCCESS


def test_names_are_bytes_returned_as_given(vx, ctx):
    """Names in any encoding come back unchanged; the limit counts bytes."""
    graph = vx.vxCreateGraph(ctx)
    out = vx.ffi.new("vx_char **")
    for name in (b"caf\xe9", "réseau".encode(), b"\xff" * (vx.VX_MAX_REFERENCE_NAME - 1)):
        assert vx.vxSetReferenceName(ref(vx, graph), name) == vx.VX_SUCCESS
        assert vx.vxQueryReference(ref(vx, graph), vx.VX_REFERENCE_NAME, out, 8) == vx.VX_SUCCESS
        assert vx.ffi.string(out[0]) == name
    too_long = "é".encode() * (vx.VX_MAX_REFERENCE_NAME // 2)  # 32 characters, 64 bytes
    assert vx.vxSetReferenceName(ref(vx, graph), too_long) == vx.VX_ERROR_INVALID_PARAMETERS
    assert release(vx, graph) == vx.VX_SUCCESS


def test_names_show_in_log_messages(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    assert vx.vxSetReferenceName(ref(vx, graph), b"my_graph") == vx.VX_SUCCESS
    error = vx.vxCreateGraph(vx.ffi.cast("vx_context", graph))
    assert vx.vxGetStatus(ref(vx, error)) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxCreateGraph")
    buf = vx.ffi.new("vx_uint32 *")
    log.clear()
    status = vx.vxQueryReference(ref(vx, graph), vx.VX_REFERENCE_COUNT, buf, 2)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryReference", "my_graph")
    assert release(vx, graph) == vx.VX_SUCCESS


# -- release ---------------------------------------------------------------------------
def test_release_sets_the_callers_variable_to_null(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    holder = vx.ffi.new("vx_graph *", graph)
    assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS
    assert holder[0] == vx.ffi.NULL
    graph = vx.vxCreateGraph(ctx)
    generic = vx.ffi.new("vx_reference *", ref(vx, graph))
    assert vx.vxReleaseReference(generic) == vx.VX_SUCCESS
    assert generic[0] == vx.ffi.NULL


def test_double_release_is_an_invalid_reference(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    holder = vx.ffi.new("vx_graph *", graph)
    assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS
    assert vx.vxReleaseGraph(holder) == vx.VX_ERROR_INVALID_REFERENCE  # the NULLed variable
    stale = vx.ffi.new("vx_graph *", graph)
    log.clear()
    assert vx.vxReleaseGraph(stale) == vx.VX_ERROR_INVALID_REFERENCE  # a copy of the old handle
    assert stale[0] == graph
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxReleaseGraph")
    assert release(vx, graph) == vx.VX_ERROR_INVALID_REFERENCE


def test_release_through_a_null_pointer_is_an_invalid_reference(vx, ctx):
    assert vx.vxReleaseReference(vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxReleaseGraph(vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxReleaseContext(vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE


def test_typed_release_of_another_type_is_refused(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    holder = vx.ffi.new("vx_context *", vx.ffi.cast("vx_context", graph))
    assert vx.vxReleaseContext(holder) == vx.VX_ERROR_INVALID_REFERENCE
    assert holder[0] != vx.ffi.NULL and count_of(vx, graph) == 1
    assert vx.vxGetStatus(ref(vx, ctx)) == vx.VX_SUCCESS
    assert release(vx, graph) == vx.VX_SUCCESS


# Every reference entry point, called with a released handle ``h``.
RELEASED_CALLS = {
    "vxQueryReference": lambda vx, h: vx.vxQueryReference(h, vx.VX_REFERENCE_COUNT,
                                                          vx.ffi.new("vx_uint32 *"), 4),
    "vxRetainReference": lambda vx, h: vx.vxRetainReference(h),
    "vxReleaseReference": lambda vx, h: vx.vxReleaseReference(vx.ffi.new("vx_reference *", h)),
    "vxSetReferenceName": lambda vx, h: vx.vxSetReferenceName(h, b"late"),
    "vxGetStatus": lambda vx, h: vx.vxGetStatus(h),
    "vxHint": lambda vx, h: vx.vxHint(h, vx.VX_HINT_PERFORMANCE_DEFAULT, vx.ffi.NULL, 0),
    "vxDirective": lambda vx, h: vx.vxDirective(h, vx.VX_DIRECTIVE_ENABLE_LOGGING),
    "vxReleaseGraph": lambda vx, h: vx.vxReleaseGraph(vx.ffi.new("vx_graph *", vx.ffi.cast("vx_graph", h))),
    "vxCreateGraph": lambda vx, h: vx.vxCreateGraph(vx.ffi.cast("vx_context", h)),
    "vxGetContext": lambda vx, h: vx.vxGetContext(h),
    "vxQueryContext": lambda vx, h: vx.vxQueryContext(vx.ffi.cast("vx_context", h), vx.VX_CONTEXT_REFERENCES,
                                                      vx.ffi.new("vx_uint32 *"), 4),
}


@pytest.mark.parametrize("function", RELEASED_CALLS)
def test_a_released_handle_is_an_invalid_reference_everywhere(vx, ctx, log, function):
    graph = vx.vxCreateGraph(ctx)
    assert release(vx, graph) == vx.VX_SUCCESS
    log.clear()
    result = RELEASED_CALLS[function](vx, ref(vx, graph))
    if function in ("vxCreateGraph", "vxGetContext"):
        assert result == vx.ffi.NULL
    else:
        assert result == vx.VX_ERROR_INVALID_REFERENCE
    if function != "vxGetStatus":
        assert log.has(vx.VX_ERROR_INVALID_REFERENCE, function)
        assert all(s != vx.VX_SUCCESS for s, _ in log.entries)


def test_released_and_unknown_handles_never_reach_the_log_callback(vx, ctx):
    """A failure about a dead handle is logged against no reference (NULL),
    never against the stale pointer."""
    refs = []

    @vx.ffi.callback("vx_log_callback_f")
    def on_log(context, reference, status, text):
        refs.append((context, reference))

    vx.vxRegisterLogCallback(ctx, on_log, vx.vx_true_e)
    graph = vx.vxCreateGraph(ctx)
    assert release(vx, graph) == vx.VX_SUCCESS
    for fn in RELEASED_CALLS.values():
        fn(vx, ref(vx, graph))
    assert refs and all(c == ctx and r == vx.ffi.NULL for c, r in refs)


# -- the same from C ---------------------------------------------------------------------
def test_references_from_a_c_program():
    result = run_c(compile_c(C_DIR / "reference_lifetime.c", "reference_lifetime"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "reference checks passed" in result.stdout
