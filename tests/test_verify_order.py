"""The execution order verify finds: dependencies first, ties to the node added first.

Graphs here are random DAGs of tensor additions whose nodes are added in a shuffled order,
so some edges go from a node to one added before it (verify sorts) and some graphs happen to
be added in order (verify keeps the list). The expected order is Kahn's algorithm written out
plainly; the expected values are NumPy's sums in dependency order.
"""
from __future__ import annotations

import heapq
import random

import numpy as np
import pytest

from openvx_nn.core import reference

I16 = np.int16


def _kahn(count: int, edges: set[tuple[int, int]]) -> list[int]:
    """Creation indices in execution order: the smallest ready index first."""
    pending = [0] * count
    for _, reader in edges:
        pending[reader] += 1
    ready = [k for k in range(count) if not pending[k]]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for writer, reader in sorted(edges):
            if writer == k:
                pending[reader] -= 1
                if not pending[reader]:
                    heapq.heappush(ready, reader)
    return order


@pytest.mark.parametrize("seed", range(12))
def test_random_dags_added_in_any_order_run_in_dependency_order(vx, ctx, seed):
    rng = random.Random(seed)
    count = rng.randint(2, 24)
    shape = vx.ffi.new("vx_size[]", [3])
    graph = vx.vxCreateGraph(ctx)
    sources = [rng.sample(range(-50, 50), 3) for _ in range(2)]
    inputs = []
    for values in sources:
        t = vx.vxCreateTensor(ctx, 1, shape, vx.VX_TYPE_INT16, 0)
        data = np.array(values, I16)
        stride = vx.ffi.new("vx_size[]", [2])
        assert vx.vxCopyTensorPatch(t, 1, vx.ffi.new("vx_size[]", [0]), shape, stride, vx.ffi.from_buffer(data),
                                    vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
        inputs.append(t)
    # DAG step s reads two of: the sources, earlier steps' results; the last step writes a real tensor
    reads = [(rng.randrange(2 + s), rng.randrange(2 + s)) for s in range(count)]
    results = [vx.vxCreateVirtualTensor(graph, 1, shape, vx.VX_TYPE_INT16, 0) for _ in range(count - 1)]
    results.append(vx.vxCreateTensor(ctx, 1, shape, vx.VX_TYPE_INT16, 0))
    operand = inputs + results
    creation = list(range(count))
    if seed % 3:  # every third graph is added in dependency order
        rng.shuffle(creation)
    created_at = {step: k for k, step in enumerate(creation)}
    nodes = []
    for step in creation:
        a, b = reads[step]
        nodes.append(vx.vxTensorAddNode(graph, operand[a], operand[b], vx.VX_CONVERT_POLICY_WRAP,
                                        operand[2 + step]))
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    edges = {(created_at[r - 2], created_at[step]) for step, pair in enumerate(reads) for r in pair if r >= 2}
    model = reference.lookup(int(vx.ffi.cast("uintptr_t", graph)), reference.Reference)
    model_nodes = [reference.lookup(int(vx.ffi.cast("uintptr_t", n)), reference.Reference) for n in nodes]
    assert [model_nodes.index(n) for n in model.order] == _kahn(count, edges)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    values = [np.array(v, I16) for v in sources]
    for a, b in reads:
        values.append((values[a].astype(np.int32) + values[b]).astype(I16))  # wrap
    got = np.zeros(3, I16)
    stride = vx.ffi.new("vx_size[]", [2])
    assert vx.vxCopyTensorPatch(results[-1], 1, vx.ffi.new("vx_size[]", [0]), shape, stride,
                                vx.ffi.from_buffer(got), vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    assert got.tolist() == values[-1].tolist()
    for n in nodes:
        vx.vxReleaseNode(vx.ffi.new("vx_node *", n))
    for t in inputs + results:
        vx.vxReleaseTensor(vx.ffi.new("vx_tensor *", t))
    vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph))
