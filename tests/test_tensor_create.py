"""vxCreateTensor, vxCreateVirtualTensor, vxQueryTensor, vxReleaseTensor, and
what every tensor function answers for released and bogus handles."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import TYPES, as_ref, create, query_dims, query_meta, read, release, sizes, status_of

from openvx_nn import vx

SIZE = vx.ffi.sizeof("vx_size")


def context_references(ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def reference_type(handle) -> int:
    out = vx.ffi.new("vx_enum *")
    assert vx.vxQueryReference(as_ref(handle), vx.VX_REFERENCE_TYPE, out, 4) == vx.VX_SUCCESS
    return out[0]


@pytest.mark.parametrize("name", TYPES)
def test_create_reports_its_meta_data_and_starts_zeroed(ctx, name):
    vx_type, fpp, dtype = TYPES[name]
    dims = [3, 2, 4]
    tensor = create(ctx, dims, vx_type, fpp)
    assert reference_type(tensor) == vx.VX_TYPE_TENSOR
    assert query_meta(tensor) == (dims, vx_type, fpp)
    assert not read(tensor, dims, dtype).any()
    release(tensor)


@pytest.mark.parametrize("rank", range(1, 7))
def test_create_accepts_every_rank_up_to_the_context_maximum(ctx, rank):
    most = vx.ffi.new("vx_size *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_MAX_TENSOR_DIMS, most, SIZE) == vx.VX_SUCCESS
    assert most[0] == 6
    dims = list(range(2, 2 + rank))
    tensor = create(ctx, dims)
    assert query_dims(tensor) == dims
    release(tensor)


def test_release_counts_references_and_clears_the_handle(ctx):
    before = context_references(ctx)
    tensor = create(ctx, [4])
    assert context_references(ctx) == before + 1
    assert vx.vxRetainReference(as_ref(tensor)) == vx.VX_SUCCESS
    copy = vx.ffi.new("vx_tensor *", tensor)
    assert vx.vxReleaseTensor(copy) == vx.VX_SUCCESS and copy[0] == vx.ffi.NULL
    assert status_of(tensor) == vx.VX_SUCCESS  # one reference left
    release(tensor)
    assert context_references(ctx) == before


BAD_CREATES = [
    # (rank, dims, type, fpp, status, words in the log line)
    (0, [4], vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_DIMENSION, ["number_of_dims 0", "1..6"]),
    (7, [2] * 7, vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_DIMENSION, ["number_of_dims 7", "1..6"]),
    (2, None, vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_PARAMETERS, ["dims is NULL"]),
    (3, [4, 0, 2], vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_DIMENSION, ["dims[1] is 0"]),
    (1, [4], vx.VX_TYPE_FLOAT64, 0, vx.VX_ERROR_INVALID_TYPE, ["VX_TYPE_FLOAT64", "not a tensor type"]),
    (1, [4], vx.VX_TYPE_UINT16, 0, vx.VX_ERROR_INVALID_TYPE, ["VX_TYPE_UINT16"]),
    (1, [4], vx.VX_TYPE_INVALID, 0, vx.VX_ERROR_INVALID_TYPE, ["VX_TYPE_INVALID"]),
    (1, [4], vx.VX_TYPE_FLOAT32, 1, vx.VX_ERROR_INVALID_VALUE, ["fixed point position 1", "VX_TYPE_FLOAT32"]),
    (1, [4], vx.VX_TYPE_INT16, 16, vx.VX_ERROR_INVALID_VALUE, ["fixed point position 16", "0..15"]),
    (1, [4], vx.VX_TYPE_INT8, -1, vx.VX_ERROR_INVALID_VALUE, ["fixed point position -1"]),
    (2, [2**40, 2**40], vx.VX_TYPE_INT32, 0, vx.VX_ERROR_NO_MEMORY, ["bytes", "address space"]),
]


@pytest.mark.parametrize("rank, dims, vx_type, fpp, status, words", BAD_CREATES)
def test_create_rejects_bad_arguments_with_an_error_object(ctx, log, rank, dims, vx_type, fpp, status, words):
    before = context_references(ctx)
    tensor = vx.vxCreateTensor(ctx, rank, sizes(dims), vx_type, fpp)
    assert tensor != vx.ffi.NULL
    assert status_of(tensor) == status
    assert reference_type(tensor) == vx.VX_TYPE_ERROR
    assert log.has(status, "vxCreateTensor:", *words), log.entries
    assert context_references(ctx) == before


@pytest.mark.parametrize("context", [vx.ffi.NULL, vx.ffi.cast("vx_context", 0x1234)])
def test_create_without_a_context_returns_null(vx, context):
    dims = sizes([4])
    assert vx.vxCreateTensor(context, 1, dims, vx.VX_TYPE_UINT8, 0) == vx.ffi.NULL
    assert vx.vxCreateVirtualTensor(vx.ffi.cast("vx_graph", context), 1, dims, vx.VX_TYPE_UINT8, 0) == vx.ffi.NULL
    assert vx.vxCreateTensorFromHandle(context, 1, dims, vx.VX_TYPE_UINT8, 0, sizes([1]), vx.ffi.NULL,
                                       vx.VX_MEMORY_TYPE_HOST) == vx.ffi.NULL
    assert vx.vxCreateTensorFromView(vx.ffi.cast("vx_tensor", context), 1, dims, dims) == vx.ffi.NULL


def test_query_checks_size_attribute_and_pointer(ctx, log):
    tensor = create(ctx, [2, 3, 4])
    n = vx.ffi.new("vx_size *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_NUMBER_OF_DIMS, n, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryTensor", "size is 4")
    dims = vx.ffi.new("vx_size[8]")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DIMS, dims, 2 * SIZE) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryTensor", "VX_TENSOR_DIMS", "vx_size[3]")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DIMS, dims, 8 * SIZE) == vx.VX_SUCCESS  # larger is fine
    assert list(dims)[:3] == [2, 3, 4]
    fpp = vx.ffi.new("vx_int32 *")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_FIXED_POINT_POSITION, fpp, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_DATA_TYPE, vx.ffi.NULL, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxQueryTensor", "NULL pointer")
    assert vx.vxQueryTensor(tensor, vx.VX_TENSOR_FIXED_POINT_POSITION + 1, n, SIZE) == vx.VX_ERROR_NOT_SUPPORTED
    assert vx.vxQueryTensor(tensor, vx.VX_GRAPH_NUMNODES, n, 4) == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(vx.VX_ERROR_NOT_SUPPORTED, "vxQueryTensor", "not an attribute")
    release(tensor)


def _every_call(tensor) -> dict[str, int]:
    """The status every tensor function answers for ``tensor``."""
    one, two = sizes([0]), sizes([1])
    stride = sizes([2])
    data = np.zeros(4, np.int16)
    ptr = vx.ffi.cast("void *", data.ctypes.data)
    out_id, out_stride, out_ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[1]"), vx.ffi.new("void **")
    value = vx.ffi.new("vx_size *")
    holder = vx.ffi.new("vx_tensor *", tensor)
    return {
        "vxQueryTensor": vx.vxQueryTensor(tensor, vx.VX_TENSOR_NUMBER_OF_DIMS, value, SIZE),
        "vxCopyTensorPatch": vx.vxCopyTensorPatch(tensor, 1, one, two, stride, ptr, vx.VX_READ_ONLY,
                                                  vx.VX_MEMORY_TYPE_HOST),
        "vxMapTensorPatch": vx.vxMapTensorPatch(tensor, 1, one, two, out_id, out_stride, out_ptr,
                                                vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST),
        "vxUnmapTensorPatch": vx.vxUnmapTensorPatch(tensor, 1),
        "vxSwapTensorHandle": vx.vxSwapTensorHandle(tensor, ptr, vx.ffi.NULL),
        "vxReleaseTensor": vx.vxReleaseTensor(holder),
        "vxCreateTensorFromView": status_of(vx.vxCreateTensorFromView(tensor, 1, one, two)),
    }


def test_released_bogus_and_wrongly_typed_handles_are_invalid_references(ctx, log):
    released = create(ctx, [4])
    stale = vx.ffi.cast("vx_tensor", released)
    release(released)
    graph = vx.vxCreateGraph(ctx)
    for handle in (stale, vx.ffi.NULL, vx.ffi.cast("vx_tensor", 0xDEAD0), vx.ffi.cast("vx_tensor", graph)):
        answers = _every_call(handle)
        view = answers.pop("vxCreateTensorFromView")
        assert set(answers.values()) == {vx.VX_ERROR_INVALID_REFERENCE}, answers
        # No tensor, hence no context: NULL (status NO_RESOURCES), except for a
        # live graph, whose context gets the error object.
        assert view in (vx.VX_ERROR_NO_RESOURCES, vx.VX_ERROR_INVALID_REFERENCE)
    for name in ("vxQueryTensor", "vxCopyTensorPatch", "vxMapTensorPatch", "vxSwapTensorHandle"):
        assert log.has(vx.VX_ERROR_INVALID_REFERENCE, name, "is a VX_TYPE_GRAPH, not a tensor"), name
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


# -- virtual tensors -------------------------------------------------------------------
@pytest.fixture
def graph(ctx):
    g = vx.vxCreateGraph(ctx)
    assert status_of(g) == vx.VX_SUCCESS
    yield g
    assert vx.vxReleaseGraph(vx.ffi.new("vx_graph *", g)) == vx.VX_SUCCESS


@pytest.mark.parametrize("rank, dims, vx_type, fpp", [
    (0, None, vx.VX_TYPE_INVALID, 0),
    (3, [4, 0, 2], vx.VX_TYPE_INVALID, 0),
    (2, [0, 0], vx.VX_TYPE_INT16, 8),
    (4, [1, 2, 3, 4], vx.VX_TYPE_FLOAT32, 0),
    (1, [5], vx.VX_TYPE_INVALID, 99),  # fixed point unchecked while the type is unknown
])
def test_virtual_tensor_reports_what_was_declared(graph, rank, dims, vx_type, fpp):
    tensor = vx.vxCreateVirtualTensor(graph, rank, sizes(dims), vx_type, fpp)
    assert status_of(tensor) == vx.VX_SUCCESS
    assert reference_type(tensor) == vx.VX_TYPE_TENSOR
    assert query_meta(tensor) == (dims or [], vx_type, fpp)
    release(tensor)


@pytest.mark.parametrize("rank, dims, vx_type, fpp, status, word", [
    (7, [1] * 7, vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_DIMENSION, "number_of_dims 7"),
    (2, None, vx.VX_TYPE_INT16, 0, vx.VX_ERROR_INVALID_PARAMETERS, "dims is NULL"),
    (1, [4], vx.VX_TYPE_UINT32, 0, vx.VX_ERROR_INVALID_TYPE, "VX_TYPE_UINT32"),
    (1, [4], vx.VX_TYPE_UINT8, 9, vx.VX_ERROR_INVALID_VALUE, "fixed point position 9"),
])
def test_virtual_tensor_rejects_bad_arguments(ctx, graph, log, rank, dims, vx_type, fpp, status, word):
    tensor = vx.vxCreateVirtualTensor(graph, rank, sizes(dims), vx_type, fpp)
    assert status_of(tensor) == status
    assert vx.vxGetContext(as_ref(tensor)) == ctx
    assert log.has(status, "vxCreateVirtualTensor:", word), log.entries


def test_virtual_tensor_data_is_never_the_applications(graph, log):
    tensor = vx.vxCreateVirtualTensor(graph, 2, sizes([4, 4]), vx.VX_TYPE_UINT8, 0)
    data = np.zeros((4, 4), np.uint8, order="F")
    status = vx.vxCopyTensorPatch(tensor, 2, sizes([0, 0]), sizes([4, 4]), sizes(data.strides),
                                  vx.ffi.cast("void *", data.ctypes.data), vx.VX_WRITE_ONLY,
                                  vx.VX_MEMORY_TYPE_HOST)
    assert status == vx.VX_ERROR_OPTIMIZED_AWAY
    assert log.has(vx.VX_ERROR_OPTIMIZED_AWAY, "vxCopyTensorPatch", "virtual")
    out_id, out_stride, out_ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new("vx_size[2]"), vx.ffi.new("void **")
    status = vx.vxMapTensorPatch(tensor, 2, sizes([0, 0]), sizes([4, 4]), out_id, out_stride, out_ptr,
                                 vx.VX_READ_ONLY, vx.VX_MEMORY_TYPE_HOST)
    assert status == vx.VX_ERROR_OPTIMIZED_AWAY
    assert log.has(vx.VX_ERROR_OPTIMIZED_AWAY, "vxMapTensorPatch", "virtual")
    assert vx.vxSwapTensorHandle(tensor, vx.ffi.NULL, vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    release(tensor)
