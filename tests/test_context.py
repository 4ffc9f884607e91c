"""The context: its attributes, its lifetime, hints, directives, the immediate
mode target and vxGetStatus, through the C API (from Python and from C)."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_c, ref, run_c

C_DIR = Path(__file__).resolve().parent / "c"


def query(vx, ctx, attribute, ctype):
    out = vx.ffi.new(f"{ctype} *")
    assert vx.vxQueryContext(ctx, attribute, out, vx.ffi.sizeof(ctype)) == vx.VX_SUCCESS
    return out[0]


def u32(vx, ctx, attribute):
    return query(vx, ctx, attribute, "vx_uint32")


def extensions(vx, ctx) -> str:
    size = query(vx, ctx, vx.VX_CONTEXT_EXTENSIONS_SIZE, "vx_size")
    buf = vx.ffi.new("vx_char[]", size)
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_EXTENSIONS, buf, size) == vx.VX_SUCCESS
    return vx.ffi.string(buf).decode()


# -- attributes ------------------------------------------------------------------
def test_vendor_id_is_a_standard_vendor(vx, ctx):
    vendor = query(vx, ctx, vx.VX_CONTEXT_VENDOR_ID, "vx_uint16")
    from openvx_nn.core.enums import Vendor
    assert vendor in {int(v) for v in Vendor}


def test_version_is_1_3(vx, ctx):
    assert query(vx, ctx, vx.VX_CONTEXT_VERSION, "vx_uint16") == vx.VX_VERSION_1_3 == 0x103


def test_kernel_and_module_counts_agree_with_the_kernel_table(vx, ctx):
    count = u32(vx, ctx, vx.VX_CONTEXT_UNIQUE_KERNELS)
    modules = u32(vx, ctx, vx.VX_CONTEXT_MODULES)
    assert modules <= count and (modules >= 1 or count == 0)
    entry = vx.ffi.sizeof("vx_kernel_info_t")
    assert entry == 260
    table = vx.ffi.new("vx_kernel_info_t[]", count + 1)
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_UNIQUE_KERNEL_TABLE, table, count * entry) == vx.VX_SUCCESS
    names = [vx.ffi.string(table[i].name).decode() for i in range(count)]
    enums = [table[i].enumeration for i in range(count)]
    assert all(names) and len(set(names)) == count and len(set(enums)) == count
    assert all(len(n) < vx.VX_MAX_KERNEL_NAME for n in names)


def test_kernel_table_needs_exactly_count_entries(vx, ctx, log):
    count = u32(vx, ctx, vx.VX_CONTEXT_UNIQUE_KERNELS)
    entry = vx.ffi.sizeof("vx_kernel_info_t")
    table = vx.ffi.new("vx_kernel_info_t[]", count + 2)
    for size in ((count + 1) * entry, count * entry + 1):
        log.clear()
        status = vx.vxQueryContext(ctx, vx.VX_CONTEXT_UNIQUE_KERNEL_TABLE, table, size)
        assert status == vx.VX_ERROR_INVALID_PARAMETERS
        assert log.has(status, "vxQueryContext", "VX_CONTEXT_UNIQUE_KERNEL_TABLE")


def test_references_counts_the_context_and_its_objects(vx, ctx):
    before = u32(vx, ctx, vx.VX_CONTEXT_REFERENCES)
    assert before >= 1
    graphs = [vx.vxCreateGraph(ctx) for _ in range(3)]
    assert u32(vx, ctx, vx.VX_CONTEXT_REFERENCES) == before + 3
    for g in graphs:
        assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", g)) == vx.VX_SUCCESS
    assert u32(vx, ctx, vx.VX_CONTEXT_REFERENCES) == before


def test_implementation_is_a_name_in_a_fixed_size_buffer(vx, ctx):
    buf = vx.ffi.new("vx_char[]", vx.VX_MAX_IMPLEMENTATION_NAME)
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMPLEMENTATION, buf,
                             vx.VX_MAX_IMPLEMENTATION_NAME) == vx.VX_SUCCESS
    name = vx.ffi.string(buf).decode()
    assert name and len(name) < vx.VX_MAX_IMPLEMENTATION_NAME


@pytest.mark.parametrize("size", [0, 1, 63, 65, 128])
def test_implementation_with_another_size_is_invalid(vx, ctx, log, size):
    buf = vx.ffi.new("vx_char[]", 256)
    status = vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMPLEMENTATION, buf, size)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxQueryContext", "VX_CONTEXT_IMPLEMENTATION")
    assert buf[0] == b"\0"  # nothing was written


def test_extensions_list_both_nn_extensions_and_fit_extensions_size(vx, ctx):
    size = query(vx, ctx, vx.VX_CONTEXT_EXTENSIONS_SIZE, "vx_size")
    text = extensions(vx, ctx)
    assert size == len(text) + 1  # the terminating NUL included
    assert {"KHR_NN_8", "KHR_NN_16"} <= set(text.split(" "))


def test_extensions_into_a_too_small_buffer_is_invalid(vx, ctx, log):
    size = query(vx, ctx, vx.VX_CONTEXT_EXTENSIONS_SIZE, "vx_size")
    buf = vx.ffi.new("vx_char[]", size)
    status = vx.vxQueryContext(ctx, vx.VX_CONTEXT_EXTENSIONS, buf, size - 1)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxQueryContext", "VX_CONTEXT_EXTENSIONS")


def test_max_tensor_dims_is_at_least_4(vx, ctx):
    assert query(vx, ctx, vx.VX_CONTEXT_MAX_TENSOR_DIMS, "vx_size") >= 4


def test_immediate_border_defaults_to_undefined_and_round_trips(vx, ctx):
    border = vx.ffi.new("vx_border_t *")
    size = vx.ffi.sizeof("vx_border_t")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, border, size) == vx.VX_SUCCESS
    assert border.mode == vx.VX_BORDER_UNDEFINED
    border.mode = vx.VX_BORDER_CONSTANT
    border.constant_value.U32 = 0xA5A5_0042
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, border, size) == vx.VX_SUCCESS
    back = vx.ffi.new("vx_border_t *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, back, size) == vx.VX_SUCCESS
    assert (back.mode, back.constant_value.U32) == (vx.VX_BORDER_CONSTANT, 0xA5A5_0042)
    border.mode = vx.VX_BORDER_UNDEFINED
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, border, size) == vx.VX_SUCCESS


def test_immediate_border_rejects_an_unknown_mode(vx, ctx, log):
    border = vx.ffi.new("vx_border_t *", {"mode": 0x1234})
    status = vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, border,
                                      vx.ffi.sizeof("vx_border_t"))
    assert status == vx.VX_ERROR_INVALID_VALUE
    assert log.has(status, "vxSetContextAttribute", "VX_CONTEXT_IMMEDIATE_BORDER")
    back = vx.ffi.new("vx_border_t *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, back, 20) == vx.VX_SUCCESS
    assert back.mode == vx.VX_BORDER_UNDEFINED


def test_immediate_border_policy_defaults_and_validates(vx, ctx, log):
    assert query(vx, ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, "vx_enum") == \
        vx.VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED
    policy = vx.ffi.new("vx_enum *", vx.VX_BORDER_POLICY_RETURN_ERROR)
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, policy, 4) == vx.VX_SUCCESS
    assert query(vx, ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, "vx_enum") == \
        vx.VX_BORDER_POLICY_RETURN_ERROR
    policy[0] = vx.VX_BORDER_UNDEFINED
    status = vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, policy, 4)
    assert status == vx.VX_ERROR_INVALID_VALUE
    assert log.has(status, "vxSetContextAttribute")
    policy[0] = vx.VX_BORDER_POLICY_DEFAULT_TO_UNDEFINED
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, policy, 4) == vx.VX_SUCCESS


# Every queryable attribute with a size that is not its own.
WRONG_SIZES = [
    ("VX_CONTEXT_VENDOR_ID", 4), ("VX_CONTEXT_VERSION", 4), ("VX_CONTEXT_UNIQUE_KERNELS", 2),
    ("VX_CONTEXT_UNIQUE_KERNELS", 8), ("VX_CONTEXT_MODULES", 8), ("VX_CONTEXT_REFERENCES", 2),
    ("VX_CONTEXT_EXTENSIONS_SIZE", 4), ("VX_CONTEXT_MAX_TENSOR_DIMS", 4),
    ("VX_CONTEXT_IMMEDIATE_BORDER", 16), ("VX_CONTEXT_IMMEDIATE_BORDER_POLICY", 8),
]


@pytest.mark.parametrize("name,size", WRONG_SIZES)
def test_query_with_a_wrong_size_is_invalid_parameters(vx, ctx, log, name, size):
    buf = vx.ffi.new("char[]", 64)
    status = vx.vxQueryContext(ctx, getattr(vx, name), buf, size)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxQueryContext", name)
    assert bytes(vx.ffi.buffer(buf)) == bytes(64)


def test_set_with_a_wrong_size_is_invalid_parameters(vx, ctx, log):
    border = vx.ffi.new("vx_border_t *", {"mode": vx.VX_BORDER_CONSTANT})
    status = vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, border, 16)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxSetContextAttribute", "VX_CONTEXT_IMMEDIATE_BORDER")
    assert query(vx, ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER_POLICY, "vx_enum")  # still answers
    back = vx.ffi.new("vx_border_t *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_IMMEDIATE_BORDER, back, 20) == vx.VX_SUCCESS
    assert back.mode == vx.VX_BORDER_UNDEFINED


def test_query_into_null_is_invalid_parameters(vx, ctx, log):
    status = vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, vx.ffi.NULL, 4)
    assert status == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(status, "vxQueryContext")


@pytest.mark.parametrize("attribute", [0x80199, 0, 0x80108, 0x80400, 0x81500])
def test_unknown_attribute_is_not_supported(vx, ctx, log, attribute):
    """Attributes of other objects, of no object, and ones the library does not
    implement (VX_CONTEXT_CONVOLUTION_MAX_DIMENSION, a vision attribute)."""
    buf = vx.ffi.new("char[]", 512)
    status = vx.vxQueryContext(ctx, attribute, buf, 4)
    assert status == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(status, "vxQueryContext")
    status = vx.vxSetContextAttribute(ctx, attribute, buf, 4)
    assert status == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(status, "vxSetContextAttribute")


@pytest.mark.parametrize("name,ctype", [
    ("VX_CONTEXT_VENDOR_ID", "vx_uint16"), ("VX_CONTEXT_VERSION", "vx_uint16"),
    ("VX_CONTEXT_UNIQUE_KERNELS", "vx_uint32"), ("VX_CONTEXT_MODULES", "vx_uint32"),
    ("VX_CONTEXT_REFERENCES", "vx_uint32"), ("VX_CONTEXT_EXTENSIONS_SIZE", "vx_size"),
    ("VX_CONTEXT_MAX_TENSOR_DIMS", "vx_size"),
])
def test_read_only_attribute_cannot_be_set(vx, ctx, log, name, ctype):
    before = query(vx, ctx, getattr(vx, name), ctype)
    value = vx.ffi.new(f"{ctype} *", 3)
    status = vx.vxSetContextAttribute(ctx, getattr(vx, name), value, vx.ffi.sizeof(ctype))
    assert status == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(status, "vxSetContextAttribute", name)
    assert query(vx, ctx, getattr(vx, name), ctype) == before


def test_read_only_text_attributes_cannot_be_set(vx, ctx, log):
    text = vx.ffi.new("vx_char[]", b"x" * 63)
    for name in ("VX_CONTEXT_IMPLEMENTATION", "VX_CONTEXT_EXTENSIONS"):
        status = vx.vxSetContextAttribute(ctx, getattr(vx, name), text, 64)
        assert status == vx.VX_ERROR_NOT_SUPPORTED
        assert log.has(status, "vxSetContextAttribute", name)
    assert "KHR_NN_8" in extensions(vx, ctx)


def test_context_functions_reject_handles_that_are_not_contexts(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    as_ctx = vx.ffi.cast("vx_context", graph)
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(as_ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxQueryContext")
    assert vx.vxSetImmediateModeTarget(as_ctx, vx.VX_TARGET_ANY, vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    holder = vx.ffi.new("vx_context *", as_ctx)
    assert vx.vxReleaseContext(holder) == vx.VX_ERROR_INVALID_REFERENCE
    assert holder[0] == as_ctx  # a failed release leaves the variable alone
    assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_SUCCESS
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


# -- lifetime ----------------------------------------------------------------------
def test_context_is_a_singleton_with_counted_references(vx, ctx):
    count = vx.ffi.new("vx_uint32 *")

    def ref_count():
        assert vx.vxQueryReference(ref(vx, ctx), vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
        return count[0]

    start = ref_count()
    second = vx.vxCreateContext()
    assert second == ctx
    assert ref_count() == start + 1
    holder = vx.ffi.new("vx_context *", second)
    assert vx.vxReleaseContext(holder) == vx.VX_SUCCESS
    assert holder[0] == vx.ffi.NULL
    assert ref_count() == start
    assert vx.vxGetStatus(ref(vx, ctx)) == vx.VX_SUCCESS  # the first reference still holds it


def test_release_of_the_last_reference_destroys_everything_in_the_context(vx):
    context = vx.vxCreateContext()
    count = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryReference(ref(vx, context), vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
    assert count[0] == 1, "another test left the context alive"
    graph = vx.vxCreateGraph(context)
    extra = vx.vxCreateGraph(context)
    assert vx.vxRetainReference(ref(vx, extra)) == vx.VX_SUCCESS
    error = vx.vxCreateGraph(vx.ffi.cast("vx_context", graph))
    assert vx.vxGetStatus(ref(vx, error)) == vx.VX_ERROR_INVALID_REFERENCE
    holder = vx.ffi.new("vx_context *", context)
    assert vx.vxReleaseContext(holder) == vx.VX_SUCCESS and holder[0] == vx.ffi.NULL
    for handle in (context, graph, extra, error):
        assert vx.vxGetStatus(ref(vx, handle)) == vx.VX_ERROR_INVALID_REFERENCE
        assert vx.vxQueryReference(ref(vx, handle), vx.VX_REFERENCE_COUNT, count, 4) == \
            vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_ERROR_INVALID_REFERENCE
    # A new context is a new object: the old handles stay invalid.
    fresh = vx.vxCreateContext()
    try:
        assert fresh != context
        assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_ERROR_INVALID_REFERENCE
        assert vx.vxQueryReference(ref(vx, fresh), vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
        assert count[0] == 1
        refs = vx.ffi.new("vx_uint32 *")
        assert vx.vxQueryContext(fresh, vx.VX_CONTEXT_REFERENCES, refs, 4) == vx.VX_SUCCESS
        assert refs[0] == 1  # nothing of the old context is counted in the new one
    finally:
        assert vx.vxReleaseContext(vx.ffi.new("vx_context *", fresh)) == vx.VX_SUCCESS


def test_get_context_returns_the_owning_context_without_a_new_reference(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    count = vx.ffi.new("vx_uint32 *")
    assert vx.vxGetContext(ref(vx, graph)) == ctx
    assert vx.vxGetContext(ref(vx, ctx)) == ctx
    assert vx.vxQueryReference(ref(vx, ctx), vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
    assert count[0] == 1
    error = vx.vxCreateGraph(vx.ffi.cast("vx_context", graph))
    assert vx.vxGetContext(ref(vx, error)) == ctx
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    assert vx.vxGetContext(ref(vx, graph)) == vx.ffi.NULL
    assert vx.vxGetContext(vx.ffi.NULL) == vx.ffi.NULL
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxGetContext")


# -- hints, directives, immediate target ------------------------------------------------
@pytest.mark.parametrize("hint", ["VX_HINT_PERFORMANCE_DEFAULT", "VX_HINT_PERFORMANCE_LOW_POWER",
                                  "VX_HINT_PERFORMANCE_HIGH_SPEED"])
def test_known_hints_succeed_on_any_reference(vx, ctx, hint):
    graph = vx.vxCreateGraph(ctx)
    assert vx.vxHint(ref(vx, ctx), getattr(vx, hint), vx.ffi.NULL, 0) == vx.VX_SUCCESS
    assert vx.vxHint(ref(vx, graph), getattr(vx, hint), vx.ffi.NULL, 0) == vx.VX_SUCCESS
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_unknown_hint_is_not_supported_and_bad_references_are_invalid(vx, ctx, log):
    status = vx.vxHint(ref(vx, ctx), vx.VX_DIRECTIVE_ENABLE_LOGGING, vx.ffi.NULL, 0)
    assert status == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(status, "vxHint")
    assert vx.vxHint(vx.ffi.NULL, vx.VX_HINT_PERFORMANCE_DEFAULT, vx.ffi.NULL, 0) == \
        vx.VX_ERROR_INVALID_REFERENCE


def test_disable_logging_stops_the_callback_and_enable_restarts_it(vx, ctx, log):
    assert vx.vxDirective(ref(vx, ctx), vx.VX_DIRECTIVE_DISABLE_LOGGING) == vx.VX_SUCCESS
    log.clear()
    buf = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, 0x80199, buf, 4) == vx.VX_ERROR_NOT_SUPPORTED
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"while disabled")
    assert log.entries == []
    assert vx.vxDirective(ref(vx, ctx), vx.VX_DIRECTIVE_ENABLE_LOGGING) == vx.VX_SUCCESS
    assert vx.vxQueryContext(ctx, 0x80199, buf, 4) == vx.VX_ERROR_NOT_SUPPORTED
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"while enabled")
    assert [s for s, _ in log.entries] == [vx.VX_ERROR_NOT_SUPPORTED, vx.VX_FAILURE]
    assert log.last() == "while enabled"


def test_logging_directive_through_another_reference_applies_to_its_context(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    assert vx.vxDirective(ref(vx, graph), vx.VX_DIRECTIVE_DISABLE_LOGGING) == vx.VX_SUCCESS
    log.clear()
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"silenced")
    assert log.entries == []
    assert vx.vxDirective(ref(vx, graph), vx.VX_DIRECTIVE_ENABLE_LOGGING) == vx.VX_SUCCESS
    vx.vxAddLogEntry(ref(vx, ctx), vx.VX_FAILURE, b"heard")
    assert log.last() == "heard"
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_performance_directives_succeed(vx, ctx):
    for directive in (vx.VX_DIRECTIVE_ENABLE_PERFORMANCE, vx.VX_DIRECTIVE_DISABLE_PERFORMANCE):
        assert vx.vxDirective(ref(vx, ctx), directive) == vx.VX_SUCCESS


def test_unknown_directive_is_not_supported(vx, ctx, log):
    for directive in (0, vx.VX_HINT_PERFORMANCE_DEFAULT, vx.VX_DIRECTIVE_ENABLE_PERFORMANCE + 1):
        log.clear()
        status = vx.vxDirective(ref(vx, ctx), directive)
        assert status == vx.VX_ERROR_NOT_SUPPORTED
        assert log.has(status, "vxDirective")
    assert vx.vxDirective(vx.ffi.NULL, vx.VX_DIRECTIVE_ENABLE_LOGGING) == vx.VX_ERROR_INVALID_REFERENCE


def test_immediate_mode_target(vx, ctx, log):
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_ANY, vx.ffi.NULL) == vx.VX_SUCCESS
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_STRING, b"any") == vx.VX_SUCCESS
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_STRING, b"CPU") == vx.VX_SUCCESS
    for target, text in ((vx.VX_TARGET_STRING, b"gpu-that-is-not-there"),
                         (vx.VX_TARGET_VENDOR_BEGIN, vx.ffi.NULL), (0x12345, b"any")):
        log.clear()
        status = vx.vxSetImmediateModeTarget(ctx, target, text)
        assert status == vx.VX_ERROR_NOT_SUPPORTED
        assert log.has(status, "vxSetImmediateModeTarget")
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_STRING, vx.ffi.NULL) == \
        vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxSetImmediateModeTarget(vx.ffi.NULL, vx.VX_TARGET_ANY, vx.ffi.NULL) == \
        vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxSetImmediateModeTarget(ctx, vx.VX_TARGET_ANY, vx.ffi.NULL) == vx.VX_SUCCESS


# -- vxGetStatus and error objects --------------------------------------------------------
def test_get_status_of_null_bogus_and_good_references(vx, ctx):
    assert vx.vxGetStatus(vx.ffi.NULL) == vx.VX_ERROR_NO_RESOURCES
    for bogus in (1, 0x1000, 0xDEADBEEF, 2**64 - 16):
        assert vx.vxGetStatus(vx.ffi.cast("vx_reference", bogus)) == vx.VX_ERROR_INVALID_REFERENCE
    graph = vx.vxCreateGraph(ctx)
    assert vx.vxGetStatus(ref(vx, ctx)) == vx.VX_SUCCESS
    assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_SUCCESS
    holder = vx.ffi.new("vx_graph *", graph)
    assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS
    assert vx.vxGetStatus(ref(vx, graph)) == vx.VX_ERROR_INVALID_REFERENCE


def test_a_failed_creator_returns_an_error_object_with_its_status(vx, ctx, log):
    graph = vx.vxCreateGraph(ctx)
    refs_before = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, refs_before, 4) == vx.VX_SUCCESS
    error = vx.vxCreateGraph(vx.ffi.cast("vx_context", graph))
    assert error != vx.ffi.NULL
    assert vx.vxGetStatus(ref(vx, error)) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxCreateGraph")
    kind = vx.ffi.new("vx_enum *")
    assert vx.vxQueryReference(ref(vx, error), vx.VX_REFERENCE_TYPE, kind, 4) == vx.VX_SUCCESS
    assert kind[0] == vx.VX_TYPE_ERROR
    refs = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, refs, 4) == vx.VX_SUCCESS
    assert refs[0] == refs_before[0]  # error objects are the context's, not the application's
    # Releasing an error object is allowed and harmless.
    holder = vx.ffi.new("vx_reference *", ref(vx, error))
    assert vx.vxReleaseReference(holder) == vx.VX_SUCCESS and holder[0] == vx.ffi.NULL
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


def test_a_creator_without_a_known_context_returns_null(vx, ctx):
    assert vx.vxCreateGraph(vx.ffi.NULL) == vx.ffi.NULL
    assert vx.vxCreateGraph(vx.ffi.cast("vx_context", 0xBAD0)) == vx.ffi.NULL


# -- the same from C ---------------------------------------------------------------------
def test_context_from_a_c_program():
    result = run_c(compile_c(C_DIR / "context_lifetime.c", "context_lifetime"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "context checks passed" in result.stdout


FIRST_CALLS_FROM_THREADS = r"""
#include <pthread.h>
#include <stdio.h>
#include <VX/vx.h>
#define N 8
static vx_context got[N];
static void *start(void *arg) { got[(long)arg] = vxCreateContext(); return NULL; }
int main(void)
{
    pthread_t threads[N];
    long i;
    vx_uint32 count = 0;
    for (i = 0; i < N; i++)
        pthread_create(&threads[i], NULL, start, (void *)i);
    for (i = 0; i < N; i++)
        pthread_join(threads[i], NULL);
    for (i = 0; i < N; i++)
        if (got[i] == NULL || got[i] != got[0])
            return 1;
    vxQueryReference((vx_reference)got[0], VX_REFERENCE_COUNT, &count, sizeof count);
    for (i = 0; i < N; i++)
        if (vxReleaseContext(&got[i]) != VX_SUCCESS)
            return 2;
    printf("one context, count %u\n", count);
    return vxGetStatus((vx_reference)got[0]) == VX_ERROR_NO_RESOURCES ? 0 : 3;
}
"""


def test_first_calls_from_many_threads_start_the_library_once_and_share_the_context():
    exe = compile_c(FIRST_CALLS_FROM_THREADS, "context_threads", extra=["-pthread"])
    for _ in range(3):
        result = run_c(exe, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout == "one context, count 8\n"
