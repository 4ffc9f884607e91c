"""The object-model interface the graph engine relies on: ``dims``, ``array``,
``has_memory``, ``allocate`` and the links between tensors (reached through
the handles, since the library runs in this interpreter)."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import (
    HOST,
    create,
    model,
    pointer,
    query_meta,
    random_data,
    read,
    release,
    sizes,
    write,
)

from openvx_nn import vx
from openvx_nn.core.errors import VXError


@pytest.fixture
def graph(ctx):
    g = vx.vxCreateGraph(ctx)
    yield g
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", g)) == vx.VX_SUCCESS


def virtual(graph, dims, vx_type=vx.VX_TYPE_INVALID, fpp=0):
    return vx.vxCreateVirtualTensor(graph, len(dims), sizes(dims) if dims else vx.ffi.NULL, vx_type, fpp)


def raises(status, call):
    with pytest.raises(VXError) as info:
        call()
    assert info.value.status == status, info.value
    return info.value


def test_array_is_the_data_in_openvx_axis_order(ctx):
    dims = [5, 3, 2]
    handle = create(ctx, dims, vx.VX_TYPE_INT16, 8)
    t = model(handle)
    assert (t.dims, t.data_type, t.fpp) == ((5, 3, 2), vx.VX_TYPE_INT16, 8) == t.meta()
    assert not t.virtual and t.graph is None and t.parent is None and t.has_memory
    assert t.array.shape == (5, 3, 2) and t.array.strides == (2, 10, 30)
    data = random_data(np.random.default_rng(0), dims, np.int16)
    write(handle, data)
    assert np.array_equal(t.array, data)
    t.array[4, 2, 1] = 123  # a kernel's write is the application's data
    assert read(handle, [1, 1, 1], np.int16, start=[4, 2, 1])[0, 0, 0] == 123
    release(handle)


def test_view_array_follows_the_parents_current_array(ctx):
    memory = np.arange(24, dtype=np.int32).reshape((4, 6), order="F")
    other = memory + 1000
    parent = vx.vxCreateTensorFromHandle(ctx, 2, sizes([4, 6]), vx.VX_TYPE_INT32, 0, sizes(memory.strides),
                                         pointer(memory), HOST)
    handle = vx.vxCreateTensorFromView(parent, 2, sizes([1, 2]), sizes([3, 5]))
    view = model(handle)
    assert view.parent is model(parent) and view.view_start == (1, 2) and view.dims == (2, 3)
    assert np.array_equal(view.array, memory[1:3, 2:5])
    assert vx.vxSwapTensorHandle(parent, pointer(other), vx.ffi.NULL) == vx.VX_SUCCESS
    assert np.array_equal(view.array, other[1:3, 2:5])
    assert vx.vxSwapTensorHandle(parent, vx.ffi.NULL, vx.ffi.NULL) == vx.VX_SUCCESS
    assert not view.has_memory
    raises(vx.VX_ERROR_NO_MEMORY, lambda: view.array)
    release(handle)
    release(parent)


def test_allocate_fills_unknown_meta_data_of_a_virtual_tensor(graph, log):
    handle = virtual(graph, [4, 0, 2])
    t = model(handle)
    assert t.virtual and t.graph is model(graph) and not t.has_memory
    raises(vx.VX_ERROR_OPTIMIZED_AWAY, lambda: t.array)
    t.allocate((4, 3, 2), vx.VX_TYPE_INT8, 5)
    assert t.has_memory and t.meta() == ((4, 3, 2), vx.VX_TYPE_INT8, 5)
    assert query_meta(handle) == ([4, 3, 2], vx.VX_TYPE_INT8, 5)
    assert t.array.shape == (4, 3, 2) and not t.array.any() and t.array.flags.f_contiguous

    t.array[...] = 7
    t.allocate((4, 3, 2), vx.VX_TYPE_INT8, 5)  # re-verified with the same result: data kept
    assert (t.array == 7).all()
    t.allocate((4, 9, 2), vx.VX_TYPE_INT16, 8)  # the unknowns may be inferred anew
    assert t.array.shape == (4, 9, 2) and t.array.dtype == np.int16 and not t.array.any()

    # Still never the application's.
    data = np.zeros((4, 9, 2), np.int16, order="F")
    status = vx.vxCopyTensorPatch(handle, 3, sizes([0, 0, 0]), sizes([4, 9, 2]), sizes(data.strides),
                                  pointer(data), vx.VX_READ_ONLY, HOST)
    assert status == vx.VX_ERROR_OPTIMIZED_AWAY
    release(handle)


@pytest.mark.parametrize("declared, dims, vx_type, fpp, status, words", [
    (([4, 0], vx.VX_TYPE_INVALID, 0), (5, 3), vx.VX_TYPE_UINT8, 0, vx.VX_ERROR_INVALID_DIMENSION,
     ["dims [5, 3] do not match the declared [4, 0]"]),
    (([4, 0], vx.VX_TYPE_INVALID, 0), (4, 3, 1), vx.VX_TYPE_UINT8, 0, vx.VX_ERROR_INVALID_DIMENSION,
     ["declared [4, 0]"]),
    (([4, 0], vx.VX_TYPE_INT16, 8), (4, 3), vx.VX_TYPE_INT16, 7, vx.VX_ERROR_INVALID_TYPE,
     ["declared VX_TYPE_INT16 with 8"]),
    (([], vx.VX_TYPE_INVALID, 0), (4, 0), vx.VX_TYPE_UINT8, 0, vx.VX_ERROR_INVALID_DIMENSION, ["dims[1] is 0"]),
    (([], vx.VX_TYPE_INVALID, 0), (4,), vx.VX_TYPE_INVALID, 0, vx.VX_ERROR_INVALID_TYPE, ["VX_TYPE_INVALID"]),
    (([], vx.VX_TYPE_INVALID, 0), (4,), vx.VX_TYPE_FLOAT32, 2, vx.VX_ERROR_INVALID_VALUE, ["position 2"]),
])
def test_allocate_refuses_meta_data_that_contradicts_the_declaration(graph, declared, dims, vx_type, fpp,
                                                                    status, words):
    handle = virtual(graph, *declared)
    t = model(handle)
    error = raises(status, lambda: t.allocate(dims, vx_type, fpp))
    assert error.ref is t and all(w in error.message for w in words), error.message
    assert not t.has_memory
    release(handle)


def test_allocate_is_only_for_virtual_tensors(ctx):
    handle = create(ctx, [2])
    raises(vx.VX_ERROR_INVALID_PARAMETERS, lambda: model(handle).allocate((2,), vx.VX_TYPE_INT16, 0))
    release(handle)


def test_a_view_of_a_virtual_tensor_allocates_through_its_parent(graph):
    parent_handle = virtual(graph, [6, 4])
    handle = vx.vxCreateTensorFromView(parent_handle, 1, sizes([2]), sizes([5]))
    view, parent = model(handle), model(parent_handle)
    assert view.virtual and view.graph is parent.graph and view.dims == (3, 4)
    raises(vx.VX_ERROR_OPTIMIZED_AWAY, lambda: view.array)
    view.allocate((3, 4), vx.VX_TYPE_FLOAT32, 0)
    assert parent.meta() == ((6, 4), vx.VX_TYPE_FLOAT32, 0) == (parent.dims, view.data_type, view.fpp)
    view.array[...] = 1.5
    assert parent.array[2:5].sum() == 1.5 * 12 and parent.array.sum() == 1.5 * 12
    release(handle)
    release(parent_handle)
