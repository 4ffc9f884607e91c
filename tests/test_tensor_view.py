"""vxCreateTensorFromView: shared memory both ways, nesting, lifetime, bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import (
    TYPES,
    as_ref,
    create,
    query_meta,
    random_box,
    random_data,
    random_dims,
    read,
    release,
    sizes,
    status_of,
    write,
)

from openvx_nn import vx


def context_references(ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def view_of(tensor, start, end, n=None):
    view = vx.vxCreateTensorFromView(tensor, len(start) if n is None else n, sizes(start), sizes(end))
    assert status_of(view) == vx.VX_SUCCESS
    return view


def _view_box(dims, start, end):
    """The full-rank box a view of ``start``/``end`` (maybe fewer dims) covers."""
    n = len(start)
    return list(start) + [0] * (len(dims) - n), list(end) + list(dims[n:])


@pytest.mark.parametrize("seed", range(8))
def test_view_and_parent_see_each_others_writes(ctx, seed):
    rng = np.random.default_rng(200 + seed)
    vx_type, fpp, dtype = list(TYPES.values())[seed % len(TYPES)]
    dims = random_dims(rng)
    parent = create(ctx, dims, vx_type, fpp)
    expected = random_data(rng, dims, dtype)
    write(parent, expected)

    n = int(rng.integers(1, len(dims) + 1))
    start, end = random_box(rng, dims[:n])
    view = view_of(parent, start, end)
    low, high = _view_box(dims, start, end)
    box = tuple(slice(s, e) for s, e in zip(low, high))
    view_dims = [e - s for s, e in zip(low, high)]
    assert query_meta(view) == (view_dims, vx_type, fpp)  # the rank is kept; higher dims whole
    assert np.array_equal(read(view, view_dims, dtype), expected[box])

    through_view = random_data(rng, view_dims, dtype)
    write(view, through_view)
    expected[box] = through_view
    assert np.array_equal(read(parent, dims, dtype), expected)

    through_parent = random_data(rng, dims, dtype)
    write(parent, through_parent)
    assert np.array_equal(read(view, view_dims, dtype), through_parent[box])
    release(view)
    release(parent)


def test_nested_views_address_the_root_tensor(ctx):
    rng = np.random.default_rng(7)
    dims = [8, 6, 4]
    root = create(ctx, dims, vx.VX_TYPE_INT32)
    data = random_data(rng, dims, np.int32)
    write(root, data)
    outer = view_of(root, [2, 1, 1], [8, 6, 3])
    inner = view_of(outer, [1, 2], [4, 5])  # root box [3:6, 3:6, 1:3]
    assert query_meta(inner)[0] == [3, 3, 2]
    assert np.array_equal(read(inner, [3, 3, 2], np.int32), data[3:6, 3:6, 1:3])
    patch = random_data(rng, [1, 2, 1], np.int32)
    write(inner, patch, start=[2, 0, 1])
    data[5:6, 3:5, 2:3] = patch
    assert np.array_equal(read(root, dims, np.int32), data)
    for t in (inner, outer, root):
        release(t)


def test_a_view_keeps_its_released_parent_alive(ctx):
    before = context_references(ctx)
    parent = create(ctx, [5, 5], vx.VX_TYPE_UINT8)
    data = random_data(np.random.default_rng(1), [5, 5], np.uint8)
    write(parent, data)
    view = view_of(parent, [1, 1], [4, 3])
    inner = view_of(view, [1], [2])
    release(parent)
    release(view)
    assert context_references(ctx) == before + 3  # the library still holds both
    assert np.array_equal(read(inner, [1, 2], np.uint8), data[2:3, 1:3])
    release(inner)
    assert context_references(ctx) == before


def test_view_of_a_view_of_a_virtual_tensor_is_virtual(ctx, log):
    graph = vx.vxCreateGraph(ctx)
    parent = vx.vxCreateVirtualTensor(graph, 2, sizes([4, 4]), vx.VX_TYPE_INVALID, 0)
    view = view_of(parent, [1, 1], [3, 3])
    assert query_meta(view) == ([2, 2], vx.VX_TYPE_INVALID, 0)
    data = np.zeros((2, 2), np.int16, order="F")
    status = vx.vxCopyTensorPatch(view, 2, sizes([0, 0]), sizes([2, 2]), sizes(data.strides),
                                  vx.ffi.cast("void *", data.ctypes.data), vx.VX_READ_ONLY,
                                  vx.VX_MEMORY_TYPE_HOST)
    assert status == vx.VX_ERROR_OPTIMIZED_AWAY

    unknown = vx.vxCreateVirtualTensor(graph, 2, sizes([4, 0]), vx.VX_TYPE_UINT8, 0)
    error = vx.vxCreateTensorFromView(unknown, 1, sizes([0]), sizes([1]))
    assert status_of(error) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateTensorFromView", "not known yet")
    for t in (view, parent, unknown):
        release(t)
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


@pytest.mark.parametrize("n, start, end, words", [
    (0, [0], [1], ["number_of_dims 0", "of rank 2", "1..2"]),
    (3, [0, 0, 0], [1, 1, 1], ["number_of_dims 3", "1..2"]),
    (2, None, [1, 1], ["view start is NULL"]),
    (2, [0, 0], None, ["view end is NULL"]),
    (2, [0, 0], [4, 9], ["view end 9 exceeds dimension 1 of size 8"]),
    (2, [2, 0], [2, 8], ["view start 2 is not below end 2 in dimension 0"]),
    (1, [3], [1], ["view start 3 is not below end 1"]),
])
def test_view_rejects_bad_boxes_with_an_error_object(ctx, log, n, start, end, words):
    parent = create(ctx, [4, 8], vx.VX_TYPE_UINT8)
    view = vx.vxCreateTensorFromView(parent, n, sizes(start), sizes(end))
    assert status_of(view) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxGetContext(as_ref(view)) == ctx
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateTensorFromView:", *words), log.entries
    release(parent)

