"""Large graphs verify and release in linear time; overlaps are found without comparing every pair.

The bounds are generous guards against a quadratic pass coming back (10,000
nodes took 4 minutes to verify when each node scanned the others), not speed
measurements: those are in ``benchmarks/bench_verify.py``.
"""
from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from openvx_nn.core.regions import Access, boxes_overlap, overlapping

NODES = 10_000


def test_a_10000_node_graph_verifies_runs_and_releases_within_bounds(vx, ctx):
    graph = vx.vxCreateGraph(ctx)
    sizes = vx.ffi.new("vx_size[]", [4, 2])
    x = vx.vxCreateTensor(ctx, 2, sizes, vx.VX_TYPE_INT16, 0)
    one = vx.vxCreateTensor(ctx, 2, sizes, vx.VX_TYPE_INT16, 0)
    data = np.ones((2, 4), np.int16)
    strides = vx.ffi.new("vx_size[]", [2, 8])
    start = vx.ffi.new("vx_size[]", [0, 0])
    for t in (x, one):
        assert vx.vxCopyTensorPatch(t, 2, start, sizes, strides, vx.ffi.from_buffer(data), vx.VX_WRITE_ONLY,
                                    vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    out = vx.vxCreateTensor(ctx, 2, sizes, vx.VX_TYPE_INT16, 0)
    made, y = [], x
    for k in range(NODES):  # a chain of +1 that subtracts a value made 100 nodes before every 100 nodes
        target = out if k == NODES - 1 else vx.vxCreateVirtualTensor(graph, 0, vx.ffi.NULL, vx.VX_TYPE_INVALID, 0)
        if k % 100 == 99:
            node = vx.vxTensorSubtractNode(graph, y, made[k - 100], vx.VX_CONVERT_POLICY_SATURATE, target)
        else:
            node = vx.vxTensorAddNode(graph, y, one, vx.VX_CONVERT_POLICY_SATURATE, target)
        assert vx.vxGetStatus(vx.ffi.cast("vx_reference", node)) == vx.VX_SUCCESS
        assert vx.vxReleaseNode(vx.ffi.new("vx_node *", node)) == vx.VX_SUCCESS
        made.append(target)
        y = target

    began = time.perf_counter()
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    assert time.perf_counter() - began < 5.0
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    result = np.zeros((2, 4), np.int16)
    assert vx.vxCopyTensorPatch(out, 2, start, sizes, strides, vx.ffi.from_buffer(result), vx.VX_READ_ONLY,
                                vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    values = [1]  # values[k + 1]: what node k writes
    for k in range(NODES):
        value = values[k] - values[k - 99] if k % 100 == 99 else values[k] + 1
        values.append(min(max(value, -32768), 32767))
    assert (result == values[-1]).all(), (result, values[-1])

    began = time.perf_counter()
    for t in made[:-1]:
        vx.vxReleaseTensor(vx.ffi.new("vx_tensor *", t))
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    assert time.perf_counter() - began < 5.0
    for t in (x, one, out):
        vx.vxReleaseTensor(vx.ffi.new("vx_tensor *", t))


def _random_accesses(rng, count: int, rank: int, whole: float) -> list[Access]:
    accesses = []
    for k in range(count):
        if rng.random() < whole:
            box = None
        else:
            starts = rng.integers(0, 12, size=rank)
            box = tuple((int(s), int(s + rng.integers(1, 6))) for s in starts)
        accesses.append(Access(k, 0, None, box))
    return accesses


@pytest.mark.parametrize("seed", range(12))
def test_overlapping_finds_exactly_the_intersecting_pairs(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    first = _random_accesses(rng, int(rng.integers(1, 30)), rank, 0.1)
    second = _random_accesses(rng, int(rng.integers(1, 30)), rank, 0.1)

    def key(a, b):
        return (id(a), id(b))

    found = [key(a, b) for a, b in overlapping(first, second)]
    expected = [key(a, b) for a in first for b in second if boxes_overlap(a.box, b.box)]
    assert sorted(found) == sorted(expected) and len(found) == len(set(found))

    within = [key(a, b) for a, b in overlapping(first)]
    expected = [key(a, b) for a, b in itertools.combinations(first, 2) if boxes_overlap(a.box, b.box)]
    assert sorted(within) == sorted(expected) and len(within) == len(set(within))
