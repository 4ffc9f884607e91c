"""vx_array: creation, queries, adding items with the application's stride,
copying and mapping ranges, truncation, bad arguments and bad handles."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import HOST, pointer, status_of

from openvx_nn import vx

ffi = vx.ffi
# item type -> its C size (the plain types from <stdint.h>, the structs from the ABI table)
ITEM_TYPES = {
    "UINT8": (vx.VX_TYPE_UINT8, 1), "INT16": (vx.VX_TYPE_INT16, 2), "FLOAT32": (vx.VX_TYPE_FLOAT32, 4),
    "SIZE": (vx.VX_TYPE_SIZE, 8), "RECTANGLE": (vx.VX_TYPE_RECTANGLE, 16),
    "KEYPOINT": (vx.VX_TYPE_KEYPOINT, 28), "COORDINATES3D": (vx.VX_TYPE_COORDINATES3D, 12),
}


def query_size(array, attribute) -> int:
    out = ffi.new("vx_size *")
    assert vx.vxQueryArray(array, attribute, out, ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    return out[0]


def release(array) -> None:
    assert vx.vxReleaseArray(ffi.new("vx_array *", array)) == vx.VX_SUCCESS


def items_with_stride(rng, count: int, size: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """(buffer laid out with ``stride``, the packed items it holds)."""
    packed = rng.integers(0, 256, (count, size)).astype(np.uint8)
    buffer = np.full((count, stride), 0xEE, np.uint8)
    buffer[:, :size] = packed
    return buffer, packed


@pytest.mark.parametrize("name", ITEM_TYPES)
def test_items_are_added_copied_mapped_and_truncated(ctx, name):
    item_type, size = ITEM_TYPES[name]
    rng = np.random.default_rng(len(name))
    capacity = 9
    array = vx.vxCreateArray(ctx, item_type, capacity)
    assert status_of(array) == vx.VX_SUCCESS
    itype = ffi.new("vx_enum *")
    assert vx.vxQueryArray(array, vx.VX_ARRAY_ITEMTYPE, itype, 4) == vx.VX_SUCCESS and itype[0] == item_type
    assert query_size(array, vx.VX_ARRAY_ITEMSIZE) == size
    assert query_size(array, vx.VX_ARRAY_CAPACITY) == capacity
    assert query_size(array, vx.VX_ARRAY_NUMITEMS) == 0

    first, packed1 = items_with_stride(rng, 4, size, size + 3)
    assert vx.vxAddArrayItems(array, 4, pointer(first), size + 3) == vx.VX_SUCCESS
    second, packed2 = items_with_stride(rng, 3, size, size)
    assert vx.vxAddArrayItems(array, 3, pointer(second), size) == vx.VX_SUCCESS
    assert query_size(array, vx.VX_ARRAY_NUMITEMS) == 7
    model = np.concatenate([packed1, packed2])

    out = np.zeros((5, size + 1), np.uint8)  # read items 1..6 with a stride of size + 1
    assert vx.vxCopyArrayRange(array, 1, 6, size + 1, pointer(out), vx.VX_READ_ONLY, HOST) == vx.VX_SUCCESS
    assert np.array_equal(out[:, :size], model[1:6]) and not out[:, size:].any()

    map_id, stride, ptr = ffi.new("vx_map_id *"), ffi.new("vx_size *"), ffi.new("void **")
    assert vx.vxMapArrayRange(array, 2, 7, map_id, stride, ptr, vx.VX_READ_AND_WRITE, HOST, 0) == vx.VX_SUCCESS
    assert stride[0] == size
    mapped = np.frombuffer(ffi.buffer(ptr[0], 5 * size), np.uint8).reshape(5, size)
    assert np.array_equal(mapped, model[2:7])
    fresh = rng.integers(0, 256, size).astype(np.uint8)
    ffi.memmove(ffi.cast("char *", ptr[0]) + 3 * size, fresh.tobytes(), size)  # item 5
    assert vx.vxUnmapArrayRange(array, map_id[0]) == vx.VX_SUCCESS
    model[5] = fresh

    back = np.zeros((7, size), np.uint8)
    assert vx.vxCopyArrayRange(array, 0, 7, size, pointer(back), vx.VX_READ_ONLY, HOST) == vx.VX_SUCCESS
    assert np.array_equal(back, model)
    write = rng.integers(0, 256, (2, size)).astype(np.uint8)
    assert vx.vxCopyArrayRange(array, 3, 5, size, pointer(write), vx.VX_WRITE_ONLY, HOST) == vx.VX_SUCCESS
    model[3:5] = write
    assert vx.vxTruncateArray(array, 5) == vx.VX_SUCCESS
    assert query_size(array, vx.VX_ARRAY_NUMITEMS) == 5
    assert vx.vxCopyArrayRange(array, 0, 5, size, pointer(back), vx.VX_READ_ONLY, HOST) == vx.VX_SUCCESS
    assert np.array_equal(back[:5], model[:5])
    release(array)


def test_a_full_array_refuses_more_items(ctx, log):
    array = vx.vxCreateArray(ctx, vx.VX_TYPE_INT32, 3)
    data = np.arange(4, dtype=np.int32)
    assert vx.vxAddArrayItems(array, 4, pointer(data), 4) == vx.VX_FAILURE
    assert log.has(vx.VX_FAILURE, "vxAddArrayItems", "do not fit")
    assert vx.vxAddArrayItems(array, 3, pointer(data), 4) == vx.VX_SUCCESS
    assert vx.vxAddArrayItems(array, 1, pointer(data), 4) == vx.VX_FAILURE
    assert vx.vxAddArrayItems(array, 0, ffi.NULL, 4) == vx.VX_SUCCESS  # nothing to add
    assert query_size(array, vx.VX_ARRAY_NUMITEMS) == 3
    release(array)


def test_bad_arrays_ranges_and_handles_are_errors(ctx, log):
    assert status_of(vx.vxCreateArray(ctx, vx.VX_TYPE_INT32, 0)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert status_of(vx.vxCreateArray(ctx, vx.VX_TYPE_IMAGE, 4)) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateArray", "VX_TYPE_IMAGE")
    array = vx.vxCreateArray(ctx, vx.VX_TYPE_INT16, 4)
    data = np.arange(4, dtype=np.int16)
    assert vx.vxAddArrayItems(array, 2, pointer(data), 2) == vx.VX_SUCCESS
    map_id, stride, ptr = ffi.new("vx_map_id *"), ffi.new("vx_size *"), ffi.new("void **")
    bad = [
        (lambda: vx.vxAddArrayItems(array, 1, pointer(data), 1), "stride 1"),
        (lambda: vx.vxAddArrayItems(array, 1, ffi.NULL, 2), "ptr is NULL"),
        (lambda: vx.vxCopyArrayRange(array, 0, 3, 2, pointer(data), vx.VX_READ_ONLY, HOST), "beyond"),
        (lambda: vx.vxCopyArrayRange(array, 1, 1, 2, pointer(data), vx.VX_READ_ONLY, HOST), "empty"),
        (lambda: vx.vxCopyArrayRange(array, 0, 2, 2, pointer(data), vx.VX_READ_AND_WRITE, HOST), "usage"),
        (lambda: vx.vxCopyArrayRange(array, 0, 2, 2, pointer(data), vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_NONE),
         "memory type"),
        (lambda: vx.vxMapArrayRange(array, 0, 2, map_id, ffi.NULL, ptr, vx.VX_READ_ONLY, HOST, 0), "stride is NULL"),
        (lambda: vx.vxUnmapArrayRange(array, 12345), "not an open mapping"),
        (lambda: vx.vxTruncateArray(array, 3), "new_num_items 3"),
    ]
    for call, words in bad:
        log.clear()
        assert call() == vx.VX_ERROR_INVALID_PARAMETERS, words
        assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, words), (words, log.entries)
    graph = vx.vxCreateGraph(ctx)
    virtual = vx.vxCreateVirtualArray(graph, vx.VX_TYPE_INVALID, 0)
    assert status_of(virtual) == vx.VX_SUCCESS
    assert vx.vxAddArrayItems(virtual, 1, pointer(data), 2) == vx.VX_ERROR_OPTIMIZED_AWAY
    release(virtual)
    assert vx.vxReleaseGraph(ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    as_array = ffi.cast("vx_array", graph)
    assert vx.vxQueryArray(as_array, vx.VX_ARRAY_NUMITEMS, stride, 8) == vx.VX_ERROR_INVALID_REFERENCE
    release(array)
    assert vx.vxAddArrayItems(array, 1, pointer(data), 2) == vx.VX_ERROR_INVALID_REFERENCE


def test_capacities_and_images_beyond_memory_are_no_memory_and_leak_nothing(ctx, log):
    assert status_of(vx.vxCreateArray(ctx, vx.VX_TYPE_UINT64, 2**61)) == vx.VX_ERROR_NO_MEMORY
    assert log.has(vx.VX_ERROR_NO_MEMORY, "vxCreateArray", "cannot allocate")
    assert status_of(vx.vxCreateImage(ctx, 2**32 - 1, 2**32 - 1, vx.VX_DF_IMAGE_RGBX)) == vx.VX_ERROR_NO_MEMORY
