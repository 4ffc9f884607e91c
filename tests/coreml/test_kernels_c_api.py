"""The org.openvx_nn.coreml.* kernels are ordinary kernels: found by name and by enum
(VX_KERNEL_BASE(VX_ID_USER, 2) + i) through the C API, usable as generic nodes, and
their validators refuse what they do not compute with a status and a log line."""
from __future__ import annotations

import numpy as np
from vxhelp import release, scalar, status, tensor

from openvx_nn.operations.coreml.elementwise import COMBINE_OPERATIONS

BASE = (0xFFE << 20 | 2 << 12) - (1 << 32)  # VX_KERNEL_BASE(VX_ID_USER, 2) as a signed vx_enum


def _enum(vx, kernel):
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryKernel(kernel, vx.VX_KERNEL_ENUM, out, 4) == vx.VX_SUCCESS
    return out[0]


def test_coreml_kernels_by_name_and_enum(vx, ctx):
    by_name = vx.vxGetKernelByName(ctx, b"org.openvx_nn.coreml.combine")
    assert status(vx, by_name) == vx.VX_SUCCESS
    assert _enum(vx, by_name) == BASE + 1
    by_enum = vx.vxGetKernelByEnum(ctx, BASE + 1)
    assert status(vx, by_enum) == vx.VX_SUCCESS
    name = vx.ffi.new("vx_char[]", vx.VX_MAX_KERNEL_NAME)
    assert vx.vxQueryKernel(by_enum, vx.VX_KERNEL_NAME, name, vx.VX_MAX_KERNEL_NAME) == vx.VX_SUCCESS
    assert vx.ffi.string(name) == b"org.openvx_nn.coreml.combine"
    release(vx, by_name, by_enum)


def _combine_graph(vx, ctx, a, b, out):
    graph = vx.vxCreateGraph(ctx)
    kernel = vx.vxGetKernelByName(ctx, b"org.openvx_nn.coreml.combine")
    node = vx.vxCreateGenericNode(graph, kernel)
    op = scalar(vx, ctx, "vx_enum", COMBINE_OPERATIONS.index("max"), "VX_TYPE_ENUM")
    constant = scalar(vx, ctx, "vx_float32", 0.0, "VX_TYPE_FLOAT32")
    for index, ref in ((0, a), (1, b), (2, op), (3, constant), (4, out)):
        assert vx.vxSetParameterByIndex(node, index, vx.ffi.cast("vx_reference", ref)) == vx.VX_SUCCESS
    return graph, [node, kernel, op, constant]


def test_a_generic_combine_node_runs_from_the_c_api(vx, ctx, rng):
    from vxhelp import empty, read
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 1)).astype(np.float32)
    ta, tb, tout = tensor(vx, ctx, a), tensor(vx, ctx, b), empty(vx, ctx, (4, 3), np.float32)
    graph, objects = _combine_graph(vx, ctx, ta, tb, tout)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    np.testing.assert_array_equal(read(vx, tout, (4, 3), np.float32), np.maximum(a, b))
    release(vx, *objects, graph, ta, tb, tout)


def test_a_coreml_kernel_refuses_integer_tensors(vx, ctx, log):
    from vxhelp import empty
    a = tensor(vx, ctx, np.zeros((4, 3), np.int16), 8)
    out = empty(vx, ctx, (4, 3), np.int16, 8)
    graph, objects = _combine_graph(vx, ctx, a, a, out)
    assert vx.vxVerifyGraph(graph) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "org.openvx_nn.coreml.combine", "CoreML layers run in FLOAT32")
    release(vx, *objects, graph, a, out)
