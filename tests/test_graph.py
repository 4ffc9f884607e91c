"""The graph engine through the C API: kernels and parameters, verification
errors (status and log line), inference, ordering, execution, scheduling,
callbacks, graph parameters and performance counters."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from vxhelp import as_ref, empty, query_dims, read, release, scalar, status, tensor, virtual

U8 = np.uint8


@pytest.fixture
def graph(vx, ctx):
    g = vx.vxCreateGraph(ctx)
    yield g
    release(vx, g)


def _add(vx, graph, a, b, out, policy=None):
    node = vx.vxTensorAddNode(graph, a, b, policy or vx.VX_CONVERT_POLICY_SATURATE, out)
    assert status(vx, node) == vx.VX_SUCCESS
    return node


def _u32(vx, query, obj, attribute):
    out = vx.ffi.new("vx_uint32 *")
    assert query(obj, attribute, out, 4) == vx.VX_SUCCESS
    return out[0]


def _enum(vx, query, obj, attribute):
    out = vx.ffi.new("vx_enum *")
    assert query(obj, attribute, out, 4) == vx.VX_SUCCESS
    return out[0]


# -- kernels and parameters ---------------------------------------------------------
def test_kernel_by_name_and_enum_describe_the_same_kernel(vx, ctx):
    by_name = vx.vxGetKernelByName(ctx, b"org.khronos.openvx.tensor_add")
    by_enum = vx.vxGetKernelByEnum(ctx, vx.VX_KERNEL_TENSOR_ADD)
    for k in (by_name, by_enum):
        assert status(vx, k) == vx.VX_SUCCESS
        assert _u32(vx, vx.vxQueryKernel, k, vx.VX_KERNEL_PARAMETERS) == 4
        assert _enum(vx, vx.vxQueryKernel, k, vx.VX_KERNEL_ENUM) == vx.VX_KERNEL_TENSOR_ADD
        name = vx.ffi.new("vx_char[]", vx.VX_MAX_KERNEL_NAME)
        assert vx.vxQueryKernel(k, vx.VX_KERNEL_NAME, name, vx.VX_MAX_KERNEL_NAME) == vx.VX_SUCCESS
        assert vx.ffi.string(name) == b"org.khronos.openvx.tensor_add"
    p = vx.vxGetKernelParameterByIndex(by_name, 2)
    assert _enum(vx, vx.vxQueryParameter, p, vx.VX_PARAMETER_TYPE) == vx.VX_TYPE_SCALAR
    assert _enum(vx, vx.vxQueryParameter, p, vx.VX_PARAMETER_DIRECTION) == vx.VX_INPUT
    assert _enum(vx, vx.vxQueryParameter, p, vx.VX_PARAMETER_STATE) == vx.VX_PARAMETER_STATE_REQUIRED
    out = vx.vxGetKernelParameterByIndex(by_name, 3)
    assert _enum(vx, vx.vxQueryParameter, out, vx.VX_PARAMETER_DIRECTION) == vx.VX_OUTPUT
    release(vx, p, out, by_name, by_enum)


def test_unknown_kernels_and_indices_are_errors(vx, ctx, log):
    k = vx.vxGetKernelByName(ctx, b"org.khronos.openvx.no_such_kernel")
    assert status(vx, k) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxGetKernelByName", "no_such_kernel")
    assert status(vx, vx.vxGetKernelByEnum(ctx, 0x7777)) == vx.VX_ERROR_INVALID_PARAMETERS
    add = vx.vxGetKernelByEnum(ctx, vx.VX_KERNEL_TENSOR_ADD)
    assert status(vx, vx.vxGetKernelParameterByIndex(add, 4)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxGetKernelParameterByIndex", "4")
    release(vx, add)


def test_unique_kernel_table_lists_every_tensor_operation(vx, ctx):
    count = _u32(vx, vx.vxQueryContext, ctx, vx.VX_CONTEXT_UNIQUE_KERNELS)
    table = vx.ffi.new("vx_kernel_info_t[]", count)
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_UNIQUE_KERNEL_TABLE, table,
                             count * vx.ffi.sizeof("vx_kernel_info_t")) == vx.VX_SUCCESS
    names = {vx.ffi.string(table[i].name).decode(): table[i].enumeration for i in range(count)}
    for op in ("add", "subtract", "multiply", "table_lookup", "transpose", "convert_depth",
               "matrix_multiply"):
        assert names[f"org.khronos.openvx.tensor_{op}"] == getattr(vx, f"VX_KERNEL_TENSOR_{op.upper()}")


# -- verification errors --------------------------------------------------------------
def _verify_fails(vx, graph, log, expected, *words):
    rc = vx.vxVerifyGraph(graph)
    assert rc == expected, (rc, log.entries)
    assert log.has(expected, "vxVerifyGraph", *words), log.entries
    assert vx.vxIsGraphVerified(graph) == vx.vx_false_e


def test_mismatched_input_types_fail_with_invalid_type(vx, ctx, graph, log):
    a, b, out = empty(vx, ctx, (4, 3), np.uint8), empty(vx, ctx, (4, 3), np.int8), empty(vx, ctx, (4, 3), U8)
    node = _add(vx, graph, a, b, out)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_TYPE, "tensor_add", "parameter 1")
    release(vx, node, a, b, out)


def test_mismatched_fixed_point_positions_fail_with_invalid_format(vx, ctx, graph, log):
    a = empty(vx, ctx, (4, 3), np.int16, 8)
    b = empty(vx, ctx, (4, 3), np.int16, 7)
    out = empty(vx, ctx, (4, 3), np.int16, 8)
    node = _add(vx, graph, a, b, out)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_FORMAT, "parameter 1", "fixed point")
    release(vx, node, a, b, out)


def test_wrong_output_dims_fail_with_invalid_dimension_and_say_expected(vx, ctx, graph, log):
    a, b, out = empty(vx, ctx, (4, 3), U8), empty(vx, ctx, (4, 1), U8), empty(vx, ctx, (3, 4), U8)
    node = _add(vx, graph, a, b, out)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_DIMENSION, "parameter 3", "expected [4, 3]")
    release(vx, node, a, b, out)


def test_unbroadcastable_input2_fails(vx, ctx, graph, log):
    a, b, out = empty(vx, ctx, (4, 3), U8), empty(vx, ctx, (2, 3), U8), empty(vx, ctx, (4, 3), U8)
    node = _add(vx, graph, a, b, out)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_DIMENSION, "parameter 1", "broadcast")
    release(vx, node, a, b, out)


def test_cycle_fails_with_invalid_graph(vx, ctx, graph, log):
    a, b, c = (empty(vx, ctx, (5,), U8) for _ in range(3))
    n1 = _add(vx, graph, a, b, c)
    n2 = _add(vx, graph, c, b, a)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_GRAPH, "cycle")
    release(vx, n1, n2, a, b, c)


def test_two_writers_fail_with_multiple_writers(vx, ctx, graph, log):
    a, b, c = (empty(vx, ctx, (5,), U8) for _ in range(3))
    n1 = _add(vx, graph, a, b, c)
    n2 = vx.vxTensorSubtractNode(graph, a, b, vx.VX_CONVERT_POLICY_WRAP, c)
    _verify_fails(vx, graph, log, vx.VX_ERROR_MULTIPLE_WRITERS, "write the same data")
    release(vx, n1, n2, a, b, c)


def test_overlapping_views_written_by_two_nodes_are_multiple_writers(vx, ctx, graph, log):
    a, b = empty(vx, ctx, (4,), U8), empty(vx, ctx, (4,), U8)
    big = empty(vx, ctx, (6,), U8)
    v1 = vx.vxCreateTensorFromView(big, 1, vx.ffi.new("vx_size[]", [0]), vx.ffi.new("vx_size[]", [4]))
    v2 = vx.vxCreateTensorFromView(big, 1, vx.ffi.new("vx_size[]", [2]), vx.ffi.new("vx_size[]", [6]))
    n1, n2 = _add(vx, graph, a, b, v1), _add(vx, graph, a, b, v2)
    _verify_fails(vx, graph, log, vx.VX_ERROR_MULTIPLE_WRITERS)
    release(vx, n1, n2, v1, v2, big, a, b)


def test_disjoint_views_written_by_two_nodes_concatenate(vx, ctx, graph):
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    b = tensor(vx, ctx, np.array([10, 20, 30], U8))
    big = empty(vx, ctx, (6,), U8)
    lo = vx.vxCreateTensorFromView(big, 1, vx.ffi.new("vx_size[]", [0]), vx.ffi.new("vx_size[]", [3]))
    hi = vx.vxCreateTensorFromView(big, 1, vx.ffi.new("vx_size[]", [3]), vx.ffi.new("vx_size[]", [6]))
    n1, n2 = _add(vx, graph, a, a, lo), _add(vx, graph, b, b, hi)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert read(vx, big, (6,), U8).tolist() == [2, 4, 6, 20, 40, 60]
    release(vx, n1, n2, lo, hi, big, a, b)


def test_virtual_tensor_of_another_graph_fails_with_invalid_scope(vx, ctx, graph, log):
    other = vx.vxCreateGraph(ctx)
    a, b = empty(vx, ctx, (5,), U8), empty(vx, ctx, (5,), U8)
    v = virtual(vx, other, (5,), U8)
    node = _add(vx, graph, a, b, v)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_SCOPE, "another graph")
    release(vx, node, v, a, b, other)


def test_missing_required_parameter_fails_with_not_sufficient(vx, ctx, graph, log):
    kernel = vx.vxGetKernelByEnum(ctx, vx.VX_KERNEL_TENSOR_ADD)
    node = vx.vxCreateGenericNode(graph, kernel)
    a = empty(vx, ctx, (5,), U8)
    assert vx.vxSetParameterByIndex(node, 0, as_ref(vx, a)) == vx.VX_SUCCESS
    _verify_fails(vx, graph, log, vx.VX_ERROR_NOT_SUFFICIENT, "parameter 1", "not set")
    release(vx, node, kernel, a)


def test_virtual_input_nobody_writes_fails(vx, ctx, graph, log):
    v = virtual(vx, graph, (5,), U8)
    a, out = empty(vx, ctx, (5,), U8), empty(vx, ctx, (5,), U8)
    node = _add(vx, graph, v, a, out)
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_GRAPH, "no node writes it")
    release(vx, node, v, a, out)


def test_empty_graph_does_not_verify(vx, ctx, graph, log):
    _verify_fails(vx, graph, log, vx.VX_ERROR_INVALID_GRAPH, "no nodes")


def test_verify_logs_every_error_and_returns_the_first(vx, ctx, graph, log):
    a, b8, out = empty(vx, ctx, (4,), U8), empty(vx, ctx, (4,), np.int8), empty(vx, ctx, (4,), U8)
    wrong = empty(vx, ctx, (3,), U8)
    n1 = _add(vx, graph, a, b8, out)
    n2 = _add(vx, graph, a, a, wrong)
    assert vx.vxVerifyGraph(graph) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxVerifyGraph")
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "vxVerifyGraph")
    release(vx, n1, n2, a, b8, out, wrong)


def test_setting_a_parameter_of_the_wrong_type_is_refused(vx, ctx, graph, log):
    a, out = empty(vx, ctx, (4,), U8), empty(vx, ctx, (4,), U8)
    node = _add(vx, graph, a, a, out)
    s = scalar(vx, ctx, "vx_int32", 1, "VX_TYPE_INT32")
    assert vx.vxSetParameterByIndex(node, 0, as_ref(vx, s)) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxSetParameterByIndex", "parameter 0")
    assert vx.vxSetParameterByIndex(node, 9, as_ref(vx, a)) == vx.VX_ERROR_INVALID_PARAMETERS
    release(vx, node, s, a, out)


# -- inference, ordering, re-verification ---------------------------------------------
def test_virtual_dims_are_inferred_and_nodes_run_in_dependency_order(vx, ctx, graph):
    a = tensor(vx, ctx, np.arange(12, dtype=U8).reshape(4, 3, order="F"))
    v1 = vx.vxCreateVirtualTensor(graph, 0, vx.ffi.NULL, vx.VX_TYPE_INVALID, 0)
    v2 = virtual(vx, graph, (0, 0))
    out = empty(vx, ctx, (4, 3), U8)
    n3 = _add(vx, graph, v2, a, out)        # created first, must run last
    n2 = _add(vx, graph, v1, a, v2)
    n1 = _add(vx, graph, a, a, v1)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    assert query_dims(vx, v1) == (4, 3) and query_dims(vx, v2) == (4, 3)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    expected = np.minimum(np.arange(12).reshape(4, 3, order="F") * 4, 255)
    assert np.array_equal(read(vx, out, (4, 3), U8), expected)
    release(vx, n1, n2, n3, v1, v2, a, out)


def test_changing_a_graph_unverifies_it_and_process_verifies_again(vx, ctx, graph):
    a = tensor(vx, ctx, np.array([1, 2], U8))
    b = tensor(vx, ctx, np.array([5, 5], U8))
    out = empty(vx, ctx, (2,), U8)
    node = _add(vx, graph, a, a, out)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    assert vx.vxIsGraphVerified(graph) == vx.vx_true_e
    assert vx.vxSetParameterByIndex(node, 1, as_ref(vx, b)) == vx.VX_SUCCESS
    assert vx.vxIsGraphVerified(graph) == vx.vx_false_e
    assert _enum(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_STATE) == vx.VX_GRAPH_STATE_UNVERIFIED
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert _enum(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_STATE) == vx.VX_GRAPH_STATE_COMPLETED
    assert read(vx, out, (2,), U8).tolist() == [6, 7]
    release(vx, node, a, b, out)


def test_remove_node_releases_it_and_unverifies(vx, ctx, graph):
    a, out1, out2 = empty(vx, ctx, (2,), U8), empty(vx, ctx, (2,), U8), empty(vx, ctx, (2,), U8)
    n1, n2 = _add(vx, graph, a, a, out1), _add(vx, graph, a, a, out2)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    holder = vx.ffi.new("vx_node *", n2)
    assert vx.vxRemoveNode(holder) == vx.VX_SUCCESS and holder[0] == vx.ffi.NULL
    assert _u32(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_NUMNODES) == 1
    assert vx.vxIsGraphVerified(graph) == vx.vx_false_e
    assert status(vx, n2) == vx.VX_ERROR_INVALID_REFERENCE
    release(vx, n1, a, out1, out2)


# -- callbacks, scheduling, performance ---------------------------------------------
def test_schedule_returns_before_the_graph_finishes_and_wait_returns_its_status(vx, ctx, graph):
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    out = empty(vx, ctx, (3,), U8)
    node = _add(vx, graph, a, a, out)
    entered, release_node = threading.Event(), threading.Event()

    @vx.ffi.callback("vx_nodecomplete_f")
    def on_complete(n):
        entered.set()
        release_node.wait(10)
        return vx.VX_ACTION_CONTINUE

    assert vx.vxAssignNodeCallback(node, on_complete) == vx.VX_SUCCESS
    assert vx.vxRetrieveNodeCallback(node) == on_complete
    assert vx.vxScheduleGraph(graph) == vx.VX_SUCCESS
    assert entered.wait(10)
    # the graph is still inside its node callback: it has not finished
    assert _enum(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_STATE) == vx.VX_GRAPH_STATE_RUNNING
    assert vx.vxScheduleGraph(graph) == vx.VX_ERROR_GRAPH_SCHEDULED
    release_node.set()
    assert vx.vxWaitGraph(graph) == vx.VX_SUCCESS
    assert _enum(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_STATE) == vx.VX_GRAPH_STATE_COMPLETED
    assert read(vx, out, (3,), U8).tolist() == [2, 4, 6]
    assert vx.vxWaitGraph(graph) == vx.VX_FAILURE  # nothing scheduled any more
    release(vx, node, a, out)


def test_abandoning_callback_stops_the_graph(vx, ctx, graph, log):
    a = tensor(vx, ctx, np.array([1, 2], U8))
    mid, out = empty(vx, ctx, (2,), U8), empty(vx, ctx, (2,), U8)
    n1, n2 = _add(vx, graph, a, a, mid), _add(vx, graph, mid, a, out)

    @vx.ffi.callback("vx_nodecomplete_f")
    def abandon(n):
        return vx.VX_ACTION_ABANDON

    assert vx.vxAssignNodeCallback(n1, abandon) == vx.VX_SUCCESS
    assert vx.vxAssignNodeCallback(n1, abandon) == vx.VX_ERROR_NOT_SUPPORTED
    assert vx.vxProcessGraph(graph) == vx.VX_ERROR_GRAPH_ABANDONED
    assert _enum(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_STATE) == vx.VX_GRAPH_STATE_ABANDONED
    assert read(vx, mid, (2,), U8).tolist() == [2, 4]
    assert read(vx, out, (2,), U8).tolist() == [0, 0]      # the second node never ran
    assert vx.vxAssignNodeCallback(n1, vx.ffi.NULL) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert read(vx, out, (2,), U8).tolist() == [3, 6]
    release(vx, n1, n2, a, mid, out)


def test_performance_counters_follow_the_directive(vx, ctx, graph):
    a, out = tensor(vx, ctx, np.ones(64, U8)), empty(vx, ctx, (64,), U8)
    node = _add(vx, graph, a, a, out)
    perf = vx.ffi.new("vx_perf_t *")
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_PERFORMANCE, perf, vx.ffi.sizeof("vx_perf_t")) == vx.VX_SUCCESS
    assert perf.num == 0
    assert vx.vxDirective(as_ref(vx, ctx), vx.VX_DIRECTIVE_ENABLE_PERFORMANCE) == vx.VX_SUCCESS
    try:
        for _ in range(3):
            assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    finally:
        vx.vxDirective(as_ref(vx, ctx), vx.VX_DIRECTIVE_DISABLE_PERFORMANCE)
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_PERFORMANCE, perf, vx.ffi.sizeof("vx_perf_t")) == vx.VX_SUCCESS
    assert perf.num == 3 and perf.sum >= perf.max >= perf.avg >= perf.min > 0
    node_perf = vx.ffi.new("vx_perf_t *")
    assert vx.vxQueryNode(node, vx.VX_NODE_PERFORMANCE, node_perf, vx.ffi.sizeof("vx_perf_t")) == vx.VX_SUCCESS
    assert node_perf.num == 3 and node_perf.sum <= perf.sum
    assert _enum(vx, vx.vxQueryNode, node, vx.VX_NODE_STATUS) == vx.VX_SUCCESS
    assert _u32(vx, vx.vxQueryNode, node, vx.VX_NODE_PARAMETERS) == 4
    release(vx, node, a, out)


def test_node_target_and_hints(vx, ctx, graph, log):
    a, out = empty(vx, ctx, (2,), U8), empty(vx, ctx, (2,), U8)
    node = _add(vx, graph, a, a, out)
    assert vx.vxSetNodeTarget(node, vx.VX_TARGET_ANY, vx.ffi.NULL) == vx.VX_SUCCESS
    assert vx.vxSetNodeTarget(node, vx.VX_TARGET_STRING, b"cpu") == vx.VX_SUCCESS
    assert vx.vxSetNodeTarget(node, vx.VX_TARGET_STRING, b"gpu") == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(vx.VX_ERROR_NOT_SUPPORTED, "vxSetNodeTarget", "gpu")
    release(vx, node, a, out)


# -- graph parameters ---------------------------------------------------------------
def test_graph_parameters_rebind_without_reverifying(vx, ctx, graph):
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    out = empty(vx, ctx, (3,), U8)
    node = _add(vx, graph, a, a, out)
    for index in (0, 3):
        p = vx.vxGetParameterByIndex(node, index)
        assert vx.vxAddParameterToGraph(graph, p) == vx.VX_SUCCESS
        release(vx, p)
    assert _u32(vx, vx.vxQueryGraph, graph, vx.VX_GRAPH_NUMPARAMETERS) == 2
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    for k in range(5):
        new_in = tensor(vx, ctx, np.array([k, 10 * k, 20], U8))
        new_out = empty(vx, ctx, (3,), U8)
        assert vx.vxSetGraphParameterByIndex(graph, 0, as_ref(vx, new_in)) == vx.VX_SUCCESS
        assert vx.vxSetGraphParameterByIndex(graph, 1, as_ref(vx, new_out)) == vx.VX_SUCCESS
        assert vx.vxIsGraphVerified(graph) == vx.vx_true_e
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        assert read(vx, new_out, (3,), U8).tolist() == [k + 1, 10 * k + 2, 23]
        release(vx, new_in, new_out)
    gp = vx.vxGetGraphParameterByIndex(graph, 0)
    ref = vx.ffi.new("vx_reference *")
    assert vx.vxQueryParameter(gp, vx.VX_PARAMETER_REF, ref, vx.ffi.sizeof("vx_reference")) == vx.VX_SUCCESS
    assert vx.vxQueryReference(ref[0], vx.VX_REFERENCE_TYPE, vx.ffi.new("vx_enum *"), 4) == vx.VX_SUCCESS
    release(vx, ref[0], gp)
    # a tensor of other meta-data sends the graph back to verification
    bigger = empty(vx, ctx, (4,), U8)
    assert vx.vxSetGraphParameterByIndex(graph, 0, as_ref(vx, bigger)) == vx.VX_SUCCESS
    assert vx.vxIsGraphVerified(graph) == vx.vx_false_e
    assert status(vx, vx.vxGetGraphParameterByIndex(graph, 7)) == vx.VX_ERROR_INVALID_PARAMETERS
    release(vx, node, a, out, bigger)


def test_released_graph_handles_are_invalid(vx, ctx):
    g = vx.vxCreateGraph(ctx)
    holder = vx.ffi.new("vx_graph *", g)
    assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS
    assert vx.vxVerifyGraph(g) == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxProcessGraph(g) == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxIsGraphVerified(g) == vx.vx_false_e
