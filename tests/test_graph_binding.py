"""Node runners are bound once per verification, yet every run sees the
tensors' current memory and contents; tensors count the writes to them."""
from __future__ import annotations

import numpy as np
from test_tensor_support import HOST, pointer, sizes

from openvx_nn import vx
from openvx_nn.core import reference


def _model(handle):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)


def _relu_graph(ctx, x, out):
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxActivationLayer(graph, x, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, out)
    assert vx.vxGetStatus(vx.ffi.cast("vx_reference", node)) == vx.VX_SUCCESS
    return graph, node


def _release(*handles):
    for h in handles:
        assert vx.vxReleaseReference(vx.ffi.new("vx_reference *", vx.ffi.cast("vx_reference", h))) == vx.VX_SUCCESS


def test_bound_runner_follows_swapped_memory_and_new_contents(ctx):
    first = np.array([-3.0, 1.0, -2.0, 4.0], np.float32)
    second = np.array([5.0, -6.0, 7.0, -8.0], np.float32)
    result = np.zeros(4, np.float32)
    x = vx.vxCreateTensorFromHandle(ctx, 1, sizes([4]), vx.VX_TYPE_FLOAT32, 0, sizes([4]), pointer(first), HOST)
    out = vx.vxCreateTensorFromHandle(ctx, 1, sizes([4]), vx.VX_TYPE_FLOAT32, 0, sizes([4]), pointer(result), HOST)
    graph, node = _relu_graph(ctx, x, out)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert result.tolist() == [0, 1, 0, 4]
    first[:] = [9, -9, 9, -9]  # new contents, same memory
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert result.tolist() == [9, 0, 9, 0]
    previous = vx.ffi.new("void **")
    assert vx.vxSwapTensorHandle(x, pointer(second), previous) == vx.VX_SUCCESS  # new memory
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert result.tolist() == [5, 0, 7, 0]
    assert vx.vxSwapTensorHandle(x, vx.ffi.NULL, previous) == vx.VX_SUCCESS  # no memory: the run fails
    assert vx.vxProcessGraph(graph) == vx.VX_ERROR_NO_MEMORY
    assert vx.vxSwapTensorHandle(x, pointer(first), previous) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert result.tolist() == [9, 0, 9, 0]
    _release(node, graph, x, out)


def test_in_place_activation_runs_bound(ctx):
    data = np.array([-1, 2, -3, 4], np.int16)
    x = vx.vxCreateTensorFromHandle(ctx, 1, sizes([4]), vx.VX_TYPE_INT16, 0, sizes([2]), pointer(data), HOST)
    graph, node = _relu_graph(ctx, x, x)
    for _ in range(2):
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert data.tolist() == [0, 2, 0, 4]
    _release(node, graph, x)


def test_tensors_count_writes_from_the_application_and_from_nodes(ctx):
    x = vx.vxCreateTensor(ctx, 1, sizes([4]), vx.VX_TYPE_FLOAT32, 0)
    out = vx.vxCreateTensor(ctx, 1, sizes([4]), vx.VX_TYPE_FLOAT32, 0)
    graph, node = _relu_graph(ctx, x, out)
    model_x, model_out = _model(x), _model(out)
    before_x, before_out = model_x.writes, model_out.writes
    values = np.ones(4, np.float32)
    assert vx.vxCopyTensorPatch(x, 1, sizes([0]), sizes([4]), sizes([4]), pointer(values), vx.VX_WRITE_ONLY,
                                HOST) == vx.VX_SUCCESS
    assert model_x.writes == before_x + 1
    assert vx.vxCopyTensorPatch(x, 1, sizes([0]), sizes([4]), sizes([4]), pointer(values), vx.VX_READ_ONLY,
                                HOST) == vx.VX_SUCCESS
    assert model_x.writes == before_x + 1  # reading is not writing
    map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[1]"), vx.ffi.new("void **")
    assert vx.vxMapTensorPatch(x, 1, sizes([0]), sizes([4]), map_id, stride, ptr, vx.VX_READ_AND_WRITE,
                               HOST) == vx.VX_SUCCESS
    assert vx.vxUnmapTensorPatch(x, map_id[0]) == vx.VX_SUCCESS
    assert model_x.writes == before_x + 2
    for _ in range(3):
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert model_out.writes == before_out + 3 and model_x.writes == before_x + 2
    _release(node, graph, x, out)


def test_each_call_counts_the_writes_of_the_non_virtual_roots_its_node_writes():
    """``Call.writes``: the roots (a view's parent) of the non-virtual tensors a node writes, none
    for a virtual output; a run bumps each of their write counters once per writing node."""
    from openvx_nn.api import Context

    rng = np.random.default_rng(3)
    for _ in range(3):
        n = int(rng.integers(2, 6))
        with Context() as api:
            data = rng.integers(-100, 100, (4, 2 * n)).astype(np.int16)
            x = api.tensor(data, fixed_point_position=0)
            big = api.tensor(shape=(4, 2 * n), dtype=np.int16, fixed_point_position=0)
            g = api.graph()
            for k in range(n):  # relu into a virtual tensor, then into the k-th column pair of ``big``
                g.relu(g.relu(x.view((0, 2 * k), (4, 2 * k + 2))), out=big.view((0, 2 * k), (4, 2 * k + 2)))
            g.verify()
            model_big = _model(big.handle)
            before = model_big.writes
            g.process()
            calls = _model(g.handle).plan.calls
            writing = [c for c in calls if c.writes]
            assert all(c.writes == (model_big,) for c in writing)
            assert len(writing) == n and len(calls) == 2 * n
            assert model_big.writes - before == n
            assert np.array_equal(big.numpy(), np.maximum(data, 0))
