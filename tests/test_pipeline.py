"""A five-node Q7.8 pipeline (add, multiply, transpose into a view, subtract,
convert depth into application memory) that verifies once and then runs 100
times on new inputs through graph parameters, matching the references each time."""
from __future__ import annotations

import numpy as np
from kernel_testing import F32, Q78, random_values
from test_convert_depth import reference_convert
from test_elementwise import reference_add_sub, reference_multiply
from test_lookup_transpose import reference_transpose
from vxhelp import as_ref, empty, read, release, scalar, status, tensor, virtual, write

from openvx_nn.core import reference as table

SHAPE = (6, 4)


def _handle(vx, h) -> int:
    return int(vx.ffi.cast("uintptr_t", h))


def test_pipeline_runs_100_times_through_graph_parameters_without_reverifying(vx, ctx):
    rng = np.random.default_rng(2026)
    bias = random_values(rng, Q78, (6, 1))
    gain = random_values(rng, Q78, SHAPE)
    sub = random_values(rng, Q78, (4, 6))
    t_bias, t_gain, t_sub = tensor(vx, ctx, bias, 8), tensor(vx, ctx, gain, 8), tensor(vx, ctx, sub, 8)
    inputs = [empty(vx, ctx, SHAPE, np.int16, 8) for _ in range(3)]
    big = empty(vx, ctx, (4, 8), np.int16, 8)
    view = vx.vxCreateTensorFromView(big, 2, vx.ffi.new("vx_size[]", [0, 1]), vx.ffi.new("vx_size[]", [4, 7]))
    result = np.zeros((4, 6), np.float32, order="F")
    out = vx.vxCreateTensorFromHandle(ctx, 2, vx.ffi.new("vx_size[]", [4, 6]), vx.VX_TYPE_FLOAT32, 0,
                                      vx.ffi.new("vx_size[]", [4, 16]), vx.ffi.from_buffer(result.T),
                                      vx.VX_MEMORY_TYPE_HOST)
    assert status(vx, out) == vx.VX_SUCCESS
    one = scalar(vx, ctx, "vx_float32", 1.0, "VX_TYPE_FLOAT32")
    norm = scalar(vx, ctx, "vx_float32", 2.0, "VX_TYPE_FLOAT32")
    offset = scalar(vx, ctx, "vx_float32", 0.5, "VX_TYPE_FLOAT32")

    graph = vx.vxCreateGraph(ctx)
    v1, v2 = virtual(vx, graph, (0, 0)), virtual(vx, graph, SHAPE, np.int16, 8)
    v3 = vx.vxCreateVirtualTensor(graph, 0, vx.ffi.NULL, vx.VX_TYPE_INVALID, 0)
    sat, wrap = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_CONVERT_POLICY_WRAP
    nodes = [
        vx.vxTensorAddNode(graph, inputs[0], t_bias, sat, v1),
        vx.vxTensorMultiplyNode(graph, v1, t_gain, one, sat, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN, v2),
        vx.vxTensorTransposeNode(graph, v2, view, 0, 1),
        vx.vxTensorSubtractNode(graph, view, t_sub, wrap, v3),
        vx.vxTensorConvertDepthNode(graph, v3, sat, norm, offset, out),
    ]
    assert all(status(vx, n) == vx.VX_SUCCESS for n in nodes)
    p = vx.vxGetParameterByIndex(nodes[0], 0)
    assert vx.vxAddParameterToGraph(graph, p) == vx.VX_SUCCESS
    release(vx, p)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    model = table.find(_handle(vx, graph))
    assert model.verify_count == 1
    assert vx.vxDirective(as_ref(vx, ctx), vx.VX_DIRECTIVE_ENABLE_PERFORMANCE) == vx.VX_SUCCESS
    state = vx.ffi.new("vx_enum *")
    perf = vx.ffi.new("vx_perf_t *")
    try:
        for run in range(100):
            x = random_values(rng, Q78, SHAPE)
            current = inputs[run % 3]
            write(vx, current, x)
            assert vx.vxSetGraphParameterByIndex(graph, 0, as_ref(vx, current)) == vx.VX_SUCCESS
            assert vx.vxIsGraphVerified(graph) == vx.vx_true_e
            assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
            assert vx.vxQueryGraph(graph, vx.VX_GRAPH_STATE, state, 4) == vx.VX_SUCCESS
            assert state[0] == vx.VX_GRAPH_STATE_COMPLETED

            s1 = reference_add_sub(x, bias, SHAPE, Q78, True, False)
            s2 = reference_multiply(s1, gain, SHAPE, 1.0, Q78, Q78, Q78, True, True)
            s3 = reference_transpose(s2, 0, 1)
            s4 = reference_add_sub(s3, sub, (4, 6), Q78, False, True)
            s5 = reference_convert(s4, Q78, F32, 2.0, 0.5, True)
            assert np.array_equal(result.view(np.uint32), s5.view(np.uint32)), f"run {run}"
            assert np.array_equal(read(vx, big, (4, 8), np.int16)[:, 1:7], s3)
    finally:
        vx.vxDirective(as_ref(vx, ctx), vx.VX_DIRECTIVE_DISABLE_PERFORMANCE)
    assert model.verify_count == 1, "a graph parameter of the same meta-data must not re-verify"
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_PERFORMANCE, perf, vx.ffi.sizeof("vx_perf_t")) == vx.VX_SUCCESS
    assert perf.num == 100 and perf.min > 0
    release(vx, *nodes, v1, v2, v3, graph, view, big, out, one, norm, offset, t_bias, t_gain, t_sub, *inputs)
