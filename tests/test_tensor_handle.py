"""vxCreateTensorFromHandle and vxSwapTensorHandle: the tensor reads and
writes the application's memory, with the application's strides."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import (
    HOST,
    TYPES,
    padded,
    pointer,
    random_data,
    read,
    release,
    sizes,
    status_of,
    write,
)

from openvx_nn import vx


def from_handle(ctx, array: np.ndarray, vx_type, fpp: int = 0, ptr=None):
    """A tensor over ``array``'s memory (shape == dims, its strides); ``ptr`` overrides the pointer."""
    tensor = vx.vxCreateTensorFromHandle(ctx, array.ndim, sizes(array.shape), vx_type, fpp, sizes(array.strides),
                                         pointer(array) if ptr is None else ptr, HOST)
    assert status_of(tensor) == vx.VX_SUCCESS
    return tensor


def swap(tensor, new_ptr) -> int:
    """Swap and return the previous pointer as an integer (0 for NULL)."""
    previous = vx.ffi.new("void **")
    assert vx.vxSwapTensorHandle(tensor, new_ptr, previous) == vx.VX_SUCCESS
    return int(vx.ffi.cast("uintptr_t", previous[0]))


def address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


@pytest.mark.parametrize("name", TYPES)
def test_tensor_reads_and_writes_the_applications_padded_memory(ctx, name):
    vx_type, fpp, dtype = TYPES[name]
    rng = np.random.default_rng(len(name) + 50)
    dims = [4, 3, 2]
    buffer, memory = padded(rng, dims, dtype)
    memory[...] = random_data(rng, dims, dtype)
    tensor = from_handle(ctx, memory, vx_type, fpp)
    assert np.array_equal(read(tensor, dims, dtype), memory)

    padding = buffer.copy()
    data = random_data(rng, dims, dtype)
    write(tensor, data)
    assert np.array_equal(memory, data)  # the application's own array changed
    padding[:4, :3, :2] = data
    assert np.array_equal(buffer, padding)  # and nothing outside it

    memory[1, 2, 1] = 1  # the application writes; the tensor sees it
    assert read(tensor, [1, 1, 1], dtype, start=[1, 2, 1])[0, 0, 0] == 1
    release(tensor)


def test_swap_returns_the_previous_memory_and_null_takes_it_back(ctx, log):
    first = np.arange(6, dtype=np.int16).reshape((2, 3), order="F")
    second = np.full((2, 3), 9, dtype=np.int16, order="F")
    tensor = from_handle(ctx, first, vx.VX_TYPE_INT16)
    assert swap(tensor, pointer(second)) == address(first)
    assert (read(tensor, [2, 3], np.int16) == 9).all()
    write(tensor, np.full((2, 3), 5, dtype=np.int16, order="F"))
    assert (second == 5).all() and np.array_equal(first.ravel(order="F"), np.arange(6))

    assert swap(tensor, vx.ffi.NULL) == address(second)
    out = np.zeros((2, 3), np.int16, order="F")
    status = vx.vxCopyTensorPatch(tensor, 2, sizes([0, 0]), sizes([2, 3]), sizes(out.strides), pointer(out),
                                  vx.VX_READ_ONLY, HOST)
    assert status == vx.VX_ERROR_NO_MEMORY
    assert log.has(vx.VX_ERROR_NO_MEMORY, "vxCopyTensorPatch", "no memory")
    map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[2]"), vx.ffi.new("void **")
    status = vx.vxMapTensorPatch(tensor, 2, sizes([0, 0]), sizes([2, 3]), map_id, stride, ptr,
                                 vx.VX_READ_ONLY, HOST)
    assert status == vx.VX_ERROR_NO_MEMORY
    assert log.has(vx.VX_ERROR_NO_MEMORY, "vxMapTensorPatch", "no memory")

    assert swap(tensor, pointer(first)) == 0
    assert np.array_equal(read(tensor, [2, 3], np.int16), first)
    assert vx.vxSwapTensorHandle(tensor, pointer(second), vx.ffi.NULL) == vx.VX_SUCCESS  # prev may be NULL
    assert (read(tensor, [2, 3], np.int16) == 5).all()
    release(tensor)


def test_tensor_created_without_memory_gets_it_by_a_swap(ctx, log):
    memory = np.arange(4, dtype=np.float32)
    tensor = from_handle(ctx, memory, vx.VX_TYPE_FLOAT32, ptr=vx.ffi.NULL)
    out = np.zeros(4, np.float32)
    status = vx.vxCopyTensorPatch(tensor, 1, sizes([0]), sizes([4]), sizes([4]), pointer(out),
                                  vx.VX_READ_ONLY, HOST)
    assert status == vx.VX_ERROR_NO_MEMORY
    assert swap(tensor, pointer(memory)) == 0
    assert np.array_equal(read(tensor, [4], np.float32), memory)
    release(tensor)


def test_a_view_follows_its_parents_swapped_memory(ctx):
    first = np.arange(12, dtype=np.uint8).reshape((4, 3), order="F")
    second = first + 100
    tensor = from_handle(ctx, first, vx.VX_TYPE_UINT8)
    view = vx.vxCreateTensorFromView(tensor, 1, sizes([1]), sizes([3]))
    assert np.array_equal(read(view, [2, 3], np.uint8), first[1:3])
    swap(tensor, pointer(second))
    assert np.array_equal(read(view, [2, 3], np.uint8), second[1:3])
    write(view, np.zeros((2, 3), np.uint8, order="F"))
    assert not second[1:3].any() and first[1:3].all()

    assert vx.vxSwapTensorHandle(view, pointer(first), vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    swap(tensor, vx.ffi.NULL)
    out = np.zeros((2, 3), np.uint8, order="F")
    status = vx.vxCopyTensorPatch(view, 2, sizes([0, 0]), sizes([2, 3]), sizes(out.strides), pointer(out),
                                  vx.VX_READ_ONLY, HOST)
    assert status == vx.VX_ERROR_NO_MEMORY
    release(view)
    release(tensor)


def test_swap_is_refused_while_the_tensor_or_a_view_is_mapped(ctx, log):
    memory = np.zeros((4, 4), np.int16, order="F")
    other = np.ones((4, 4), np.int16, order="F")
    tensor = from_handle(ctx, memory, vx.VX_TYPE_INT16)
    view = vx.vxCreateTensorFromView(tensor, 2, sizes([1, 1]), sizes([3, 3]))
    for mapped in (tensor, view):
        map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[2]"), vx.ffi.new("void **")
        assert vx.vxMapTensorPatch(mapped, 2, sizes([0, 0]), sizes([2, 2]), map_id, stride, ptr,
                                   vx.VX_READ_AND_WRITE, HOST) == vx.VX_SUCCESS
        assert vx.vxSwapTensorHandle(tensor, pointer(other), vx.ffi.NULL) == vx.VX_FAILURE
        assert log.has(vx.VX_FAILURE, "vxSwapTensorHandle", "1 open mapping")
        assert vx.vxUnmapTensorPatch(mapped, map_id[0]) == vx.VX_SUCCESS
    assert swap(tensor, pointer(other)) == address(memory)
    release(view)
    release(tensor)


@pytest.mark.parametrize("name", TYPES)
def test_a_created_tensor_swaps_to_application_memory_and_keeps_its_own_for_the_app(ctx, name):
    """vxCreateTensor tensors swap too: the previous pointer is the library's own
    storage, still holding the data, valid until the tensor is released."""
    vx_type, fpp, dtype = TYPES[name]
    rng = np.random.default_rng(len(name) + 70)
    dims = [3, 4, 2]
    tensor = vx.vxCreateTensor(ctx, 3, sizes(dims), vx_type, fpp)
    before = random_data(rng, dims, dtype)
    write(tensor, before)
    memory = np.asfortranarray(random_data(rng, dims, dtype))
    previous = swap(tensor, pointer(memory))
    assert previous != 0 and previous != address(memory)
    own = np.frombuffer(vx.ffi.buffer(vx.ffi.cast("char *", previous), before.nbytes), dtype)
    assert np.array_equal(own.reshape(dims, order="F"), before)  # the library's memory, intact
    assert np.array_equal(read(tensor, dims, dtype), memory)  # the tensor now reads the app's
    after = random_data(rng, dims, dtype)
    write(tensor, after)
    assert np.array_equal(memory, after)
    assert np.array_equal(own.reshape(dims, order="F"), before)
    assert swap(tensor, vx.ffi.cast("void *", previous)) == address(memory)  # and back again
    assert np.array_equal(read(tensor, dims, dtype), before)
    release(tensor)


def test_views_and_virtual_tensors_cannot_swap(ctx, log):
    tensor = vx.vxCreateTensor(ctx, 1, sizes([4]), vx.VX_TYPE_UINT8, 0)
    memory = np.zeros(4, np.uint8)
    view = vx.vxCreateTensorFromView(tensor, 1, sizes([0]), sizes([2]))
    assert vx.vxSwapTensorHandle(view, pointer(memory), vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxSwapTensorHandle", "is a view")
    graph = vx.vxCreateGraph(ctx)
    virtual = vx.vxCreateVirtualTensor(graph, 1, sizes([4]), vx.VX_TYPE_UINT8, 0)
    assert vx.vxSwapTensorHandle(virtual, pointer(memory), vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxSwapTensorHandle", "virtual")
    release(virtual)
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    release(view)
    release(tensor)


BAD_HANDLES = [
    # (rank, dims, type, fpp, strides, memory type, status, words in the log line)
    (0, [4], vx.VX_TYPE_INT16, 0, [2], HOST, vx.VX_ERROR_INVALID_DIMENSION, ["number_of_dims 0"]),
    (1, None, vx.VX_TYPE_INT16, 0, [2], HOST, vx.VX_ERROR_INVALID_PARAMETERS, ["dims is NULL"]),
    (2, [4, 0], vx.VX_TYPE_INT16, 0, [2, 8], HOST, vx.VX_ERROR_INVALID_DIMENSION, ["dims[1] is 0"]),
    (1, [4], vx.VX_TYPE_FLOAT64, 0, [8], HOST, vx.VX_ERROR_INVALID_TYPE, ["VX_TYPE_FLOAT64"]),
    (1, [4], vx.VX_TYPE_UINT8, 9, [1], HOST, vx.VX_ERROR_INVALID_VALUE, ["fixed point position 9"]),
    (1, [4], vx.VX_TYPE_INT16, 0, [2], vx.VX_MEMORY_TYPE_NONE, vx.VX_ERROR_INVALID_PARAMETERS, ["memory type"]),
    (1, [4], vx.VX_TYPE_INT16, 0, None, HOST, vx.VX_ERROR_INVALID_PARAMETERS, ["stride is NULL"]),
    (2, [4, 2], vx.VX_TYPE_INT16, 0, [4, 16], HOST, vx.VX_ERROR_INVALID_PARAMETERS,
     ["stride[0] is 4", "element size 2"]),
    (2, [4, 2], vx.VX_TYPE_INT16, 0, [2, 6], HOST, vx.VX_ERROR_INVALID_PARAMETERS,
     ["stride[1] is 6", "overlaps dimension 0", "at least stride[0] * 4 = 8"]),
    (2, [4, 2], vx.VX_TYPE_INT16, 0, [2, 2**62], HOST, vx.VX_ERROR_INVALID_PARAMETERS, ["address space"]),
]


@pytest.mark.parametrize("rank, dims, vx_type, fpp, strides, memory_type, status, words", BAD_HANDLES)
def test_from_handle_rejects_bad_arguments(ctx, log, rank, dims, vx_type, fpp, strides, memory_type, status,
                                           words):
    memory = np.zeros(64, np.int64)
    tensor = vx.vxCreateTensorFromHandle(ctx, rank, sizes(dims), vx_type, fpp, sizes(strides), pointer(memory),
                                         memory_type)
    assert status_of(tensor) == status
    assert vx.vxGetContext(vx.ffi.cast("vx_reference", tensor)) == ctx
    assert log.has(status, "vxCreateTensorFromHandle:", *words), log.entries
