"""vx_object_array: arrays made from an exemplar, images that view a 3-D tensor
(writes go through both ways), reference accounting and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
from test_image import copy, query_u32, rect
from test_tensor_support import HOST, as_ref, pointer, read, sizes, status_of, write

from openvx_nn import vx

ffi = vx.ffi


def references(ctx) -> int:
    out = ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def query_oa(array) -> tuple[int, int]:
    itype, count = ffi.new("vx_enum *"), ffi.new("vx_size *")
    assert vx.vxQueryObjectArray(array, vx.VX_OBJECT_ARRAY_ITEMTYPE, itype, 4) == vx.VX_SUCCESS
    assert vx.vxQueryObjectArray(array, vx.VX_OBJECT_ARRAY_NUMITEMS, count, 8) == vx.VX_SUCCESS
    return itype[0], count[0]


def release_ref(ref) -> None:
    assert vx.vxReleaseReference(ffi.new("vx_reference *", as_ref(ref))) == vx.VX_SUCCESS


def release_oa(array) -> None:
    assert vx.vxReleaseObjectArray(ffi.new("vx_object_array *", array)) == vx.VX_SUCCESS


EXEMPLARS = {
    "image": lambda ctx: vx.vxCreateImage(ctx, 6, 3, vx.VX_DF_IMAGE_S16),
    "tensor": lambda ctx: vx.vxCreateTensor(ctx, 2, sizes([3, 4]), vx.VX_TYPE_INT16, 8),
    "array": lambda ctx: vx.vxCreateArray(ctx, vx.VX_TYPE_KEYPOINT, 5),
    "scalar": lambda ctx: vx.vxCreateScalar(ctx, vx.VX_TYPE_FLOAT32, ffi.new("vx_float32 *", 2.5)),
    "lut": lambda ctx: vx.vxCreateLUT(ctx, vx.VX_TYPE_UINT8, 256),
}
SAME_META = {
    "image": [(vx.vxQueryImage, vx.VX_IMAGE_WIDTH, "vx_uint32"), (vx.vxQueryImage, vx.VX_IMAGE_FORMAT, "vx_df_image")],
    "tensor": [(vx.vxQueryTensor, vx.VX_TENSOR_FIXED_POINT_POSITION, "vx_int8"),
               (vx.vxQueryTensor, vx.VX_TENSOR_DATA_TYPE, "vx_enum")],
    "array": [(vx.vxQueryArray, vx.VX_ARRAY_CAPACITY, "vx_size"), (vx.vxQueryArray, vx.VX_ARRAY_ITEMTYPE, "vx_enum")],
    "scalar": [(vx.vxQueryScalar, vx.VX_SCALAR_TYPE, "vx_enum")],
    "lut": [(vx.vxQueryLUT, vx.VX_LUT_COUNT, "vx_size"), (vx.vxQueryLUT, vx.VX_LUT_TYPE, "vx_enum")],
}


def _meta(handle, queries, cast_to: str):
    values = []
    for query, attribute, ctype in queries:
        out = ffi.new(f"{ctype} *")
        assert query(ffi.cast(cast_to, handle), attribute, out, ffi.sizeof(ctype)) == vx.VX_SUCCESS
        values.append(out[0])
    return values


@pytest.mark.parametrize("kind", EXEMPLARS)
def test_an_object_array_holds_objects_like_its_exemplar(ctx, kind):
    start = references(ctx)
    exemplar = EXEMPLARS[kind](ctx)
    assert status_of(exemplar) == vx.VX_SUCCESS
    cast_to = vx.ffi.typeof(exemplar).cname
    array = vx.vxCreateObjectArray(ctx, as_ref(exemplar), 3)
    assert status_of(array) == vx.VX_SUCCESS
    vx_type = ffi.new("vx_enum *")
    assert vx.vxQueryReference(as_ref(exemplar), vx.VX_REFERENCE_TYPE, vx_type, 4) == vx.VX_SUCCESS
    assert query_oa(array) == (vx_type[0], 3)
    assert references(ctx) == start + 1 + 1 + 3  # exemplar, array, its items
    expected = _meta(exemplar, SAME_META[kind], cast_to)
    items = [vx.vxGetObjectArrayItem(array, i) for i in range(3)]
    assert len({int(ffi.cast("uintptr_t", i)) for i in items}) == 3
    for item in items:
        assert vx.vxGetStatus(item) == vx.VX_SUCCESS
        assert _meta(item, SAME_META[kind], cast_to) == expected
        count = ffi.new("vx_uint32 *")
        assert vx.vxQueryReference(item, vx.VX_REFERENCE_COUNT, count, 4) == vx.VX_SUCCESS
        assert count[0] == 1  # the application's reference from vxGetObjectArrayItem
    release_oa(array)
    assert vx.vxGetStatus(items[0]) == vx.VX_SUCCESS  # still held by the application
    for item in items:
        release_ref(item)
    release_ref(exemplar)
    assert references(ctx) == start


def test_bad_object_arrays_are_errors(ctx, log):
    image = vx.vxCreateImage(ctx, 2, 2, vx.VX_DF_IMAGE_U8)
    assert status_of(vx.vxCreateObjectArray(ctx, as_ref(image), 0)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateObjectArray", "count 0")
    graph = vx.vxCreateGraph(ctx)
    assert status_of(vx.vxCreateObjectArray(ctx, as_ref(graph), 2)) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxCreateObjectArray", "graph")
    virtual = vx.vxCreateVirtualImage(graph, 0, 0, vx.VX_DF_IMAGE_VIRT)
    assert status_of(vx.vxCreateObjectArray(ctx, as_ref(virtual), 2)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert status_of(vx.vxCreateObjectArray(ctx, as_ref(ffi.NULL), 2)) == vx.VX_ERROR_INVALID_REFERENCE
    array = vx.vxCreateObjectArray(ctx, as_ref(image), 2)
    assert vx.vxGetStatus(vx.vxGetObjectArrayItem(array, 2)) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxGetObjectArrayItem", "index 2")
    wrong = vx.vxGetObjectArrayItem(ffi.cast("vx_object_array", image), 0)
    assert vx.vxGetStatus(wrong) == vx.VX_ERROR_INVALID_REFERENCE  # an error object of the image's context
    out = ffi.new("vx_size *")
    assert vx.vxQueryObjectArray(ffi.cast("vx_object_array", image), vx.VX_OBJECT_ARRAY_NUMITEMS, out, 8) \
        == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxQueryObjectArray(array, vx.VX_OBJECT_ARRAY_NUMITEMS, out, 4) == vx.VX_ERROR_INVALID_PARAMETERS
    release_oa(array)
    assert vx.vxReleaseObjectArray(ffi.new("vx_object_array *", array)) == vx.VX_ERROR_INVALID_REFERENCE
    release_ref(virtual)
    release_ref(image)
    release_ref(graph)


# tensor data type -> (image format, dtype)
TENSOR_IMAGES = {
    "U8": (vx.VX_TYPE_UINT8, vx.VX_DF_IMAGE_U8, np.uint8),
    "S16": (vx.VX_TYPE_INT16, vx.VX_DF_IMAGE_S16, np.int16),
    "S32": (vx.VX_TYPE_INT32, vx.VX_DF_IMAGE_S32, np.int32),
}


def _random(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("name", TENSOR_IMAGES)
def test_images_of_a_tensor_view_its_slices_and_write_through(ctx, name):
    data_type, code, dtype = TENSOR_IMAGES[name]
    rng = np.random.default_rng(len(name) + 7)
    start = references(ctx)
    dims = [7, 5, 6]  # x, y, slices
    tensor = vx.vxCreateTensor(ctx, 3, sizes(dims), data_type, 0)
    model = _random(rng, dims, dtype)
    write(tensor, np.asfortranarray(model))
    x0, y0, x1, y1, count, jump = 1, 2, 6, 5, 3, 2
    stride = dims[0] * dims[1] * np.dtype(dtype).itemsize  # jump is in bytes: a multiple of the dim-2 stride
    array = vx.vxCreateImageObjectArrayFromTensor(tensor, rect(x0, y0, x1, y1), count, jump * stride, code)
    assert status_of(array) == vx.VX_SUCCESS
    assert query_oa(array) == (vx.VX_TYPE_IMAGE, count)
    for i in range(count):
        image = ffi.cast("vx_image", vx.vxGetObjectArrayItem(array, i))
        assert (query_u32(image, vx.VX_IMAGE_WIDTH), query_u32(image, vx.VX_IMAGE_HEIGHT)) == (x1 - x0, y1 - y0)
        assert query_u32(image, vx.VX_IMAGE_FORMAT) == code
        got = np.zeros((y1 - y0, x1 - x0, 1), dtype)  # image rows are y, columns x
        assert copy(image, rect(0, 0, x1 - x0, y1 - y0), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert np.array_equal(got[:, :, 0], model[x0:x1, y0:y1, i * jump].T)
        # the image writes the tensor ...
        patch = _random(rng, (2, 3, 1), dtype)
        assert copy(image, rect(1, 0, 4, 2), patch, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
        model[x0 + 1:x0 + 4, y0:y0 + 2, i * jump] = patch[:, :, 0].T
        assert np.array_equal(read(tensor, dims, dtype), model)
        # ... and a map of it is the tensor's memory
        map_id, addr, ptr = ffi.new("vx_map_id *"), ffi.new("vx_imagepatch_addressing_t *"), ffi.new("void **")
        assert vx.vxMapImagePatch(image, rect(0, 0, x1 - x0, y1 - y0), 0, map_id, addr, ptr,
                                  vx.VX_READ_AND_WRITE, HOST, 0) == vx.VX_SUCCESS
        value = _random(rng, (1,), dtype)
        ffi.memmove(vx.vxFormatImagePatchAddress2d(ptr[0], 4, 2, addr), value.tobytes(), value.itemsize)
        assert vx.vxUnmapImagePatch(image, map_id[0]) == vx.VX_SUCCESS
        model[x0 + 4, y0 + 2, i * jump] = value[0]
        # the tensor writes the image
        model[x0, y0, i * jump] = value[0] // 2
        write(tensor, np.asfortranarray(model))
        got = np.zeros((1, 1, 1), dtype)
        assert copy(image, rect(0, 0, 1, 1), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
        assert got[0, 0, 0] == model[x0, y0, i * jump]
        release_ref(image)
    assert np.array_equal(read(tensor, dims, dtype), model)
    release_oa(array)
    assert vx.vxReleaseTensor(ffi.new("vx_tensor *", tensor)) == vx.VX_SUCCESS
    assert references(ctx) == start


def test_images_of_a_tensor_from_handle_write_the_applications_memory(ctx, log):
    rng = np.random.default_rng(12)
    memory = np.asfortranarray(_random(rng, (4, 3, 2), np.uint8))
    other = np.asfortranarray(_random(rng, (4, 3, 2), np.uint8))
    tensor = vx.vxCreateTensorFromHandle(ctx, 3, sizes([4, 3, 2]), vx.VX_TYPE_UINT8, 0, sizes(memory.strides),
                                         pointer(memory), HOST)
    array = vx.vxCreateImageObjectArrayFromTensor(tensor, rect(0, 0, 4, 3), 2, 12, vx.VX_DF_IMAGE_U8)
    image = ffi.cast("vx_image", vx.vxGetObjectArrayItem(array, 1))
    data = _random(rng, (3, 4, 1), np.uint8)
    assert copy(image, rect(0, 0, 4, 3), data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(memory[:, :, 1], data[:, :, 0].T)
    # an open map of the image pins the tensor's memory against a swap
    map_id, addr, ptr = ffi.new("vx_map_id *"), ffi.new("vx_imagepatch_addressing_t *"), ffi.new("void **")
    assert vx.vxMapImagePatch(image, rect(0, 0, 2, 2), 0, map_id, addr, ptr, vx.VX_READ_ONLY, HOST, 0) == 0
    assert vx.vxSwapTensorHandle(tensor, pointer(other), ffi.NULL) == vx.VX_FAILURE
    assert log.has(vx.VX_FAILURE, "vxSwapTensorHandle", "open mapping")
    assert vx.vxUnmapImagePatch(image, map_id[0]) == vx.VX_SUCCESS
    assert vx.vxSwapTensorHandle(tensor, pointer(other), ffi.NULL) == vx.VX_SUCCESS
    got = np.zeros((3, 4, 1), np.uint8)  # the image follows the swapped memory
    assert copy(image, rect(0, 0, 4, 3), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(got[:, :, 0], other[:, :, 1].T)
    assert vx.vxReleaseTensor(ffi.new("vx_tensor *", tensor)) == vx.VX_SUCCESS  # the images hold it
    assert copy(image, rect(0, 0, 4, 3), data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(other[:, :, 1], data[:, :, 0].T)
    release_ref(image)
    release_oa(array)


BAD_VIEWS = [
    # (dims, data type, rect, count, jump in bytes, format, status, words)
    ([4, 4], vx.VX_TYPE_UINT8, (0, 0, 4, 4), 1, 16, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_PARAMETERS, ["2 dims"]),
    ([4, 4, 2], vx.VX_TYPE_UINT8, (0, 0, 4, 4), 1, 16, vx.VX_DF_IMAGE_S16, vx.VX_ERROR_INVALID_FORMAT,
     ["VX_DF_IMAGE_S16", "VX_TYPE_UINT8"]),
    ([4, 4, 2], vx.VX_TYPE_INT8, (0, 0, 4, 4), 1, 16, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_FORMAT,
     ["VX_TYPE_INT8"]),
    ([4, 4, 2], vx.VX_TYPE_UINT8, (0, 0, 5, 4), 1, 16, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_PARAMETERS,
     ["outside"]),
    ([4, 4, 2], vx.VX_TYPE_UINT8, (0, 0, 4, 4), 2, 32, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_PARAMETERS,
     ["array_size 2 with jump 32 bytes (2 slices)"]),
    ([4, 4, 2], vx.VX_TYPE_UINT8, (0, 0, 4, 4), 2, 1, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_PARAMETERS,
     ["jump 1", "multiple of the dim-2 stride 16 bytes"]),
    ([4, 4, 2], vx.VX_TYPE_INT16, (0, 0, 4, 4), 2, 16, vx.VX_DF_IMAGE_S16, vx.VX_ERROR_INVALID_PARAMETERS,
     ["stride 32 bytes"]),
    ([4, 4, 2], vx.VX_TYPE_UINT8, (0, 0, 4, 4), 0, 16, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_PARAMETERS,
     ["array_size 0"]),
]


@pytest.mark.parametrize("dims, data_type, box, count, jump, code, status, words", BAD_VIEWS)
def test_bad_tensor_views_give_error_objects(ctx, log, dims, data_type, box, count, jump, code, status, words):
    tensor = vx.vxCreateTensor(ctx, len(dims), sizes(dims), data_type, 0)
    array = vx.vxCreateImageObjectArrayFromTensor(tensor, rect(*box), count, jump, code)
    assert status_of(array) == status
    assert log.has(status, "vxCreateImageObjectArrayFromTensor", *words)
    assert vx.vxReleaseTensor(ffi.new("vx_tensor *", tensor)) == vx.VX_SUCCESS


def test_pixels_written_through_images_feed_a_tensor_operation(ctx):
    """A vision pipeline's images are the planes of an NN input: written as images,
    processed as a tensor (saturating U8 add, written from the text: min(a + b, 255))."""
    rng = np.random.default_rng(21)
    dims = [6, 4, 3]  # width, height, channels
    tensor = vx.vxCreateTensor(ctx, 3, sizes(dims), vx.VX_TYPE_UINT8, 0)
    out = vx.vxCreateTensor(ctx, 3, sizes(dims), vx.VX_TYPE_UINT8, 0)
    planes = vx.vxCreateImageObjectArrayFromTensor(tensor, rect(0, 0, 6, 4), 3, 24, vx.VX_DF_IMAGE_U8)
    frames = _random(rng, (3, 4, 6, 1), np.uint8)  # channel, y, x
    for c in range(3):
        image = ffi.cast("vx_image", vx.vxGetObjectArrayItem(planes, c))
        assert copy(image, rect(0, 0, 6, 4), frames[c], vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
        release_ref(image)
    assert vx.vxuTensorAdd(ctx, tensor, tensor, vx.VX_CONVERT_POLICY_SATURATE, out) == vx.VX_SUCCESS
    expected = np.minimum(frames[:, :, :, 0].astype(int) * 2, 255).transpose(2, 1, 0)  # to x, y, channel
    assert np.array_equal(read(out, dims, np.uint8), expected)
    release_oa(planes)
    for t in (tensor, out):
        assert vx.vxReleaseTensor(ffi.new("vx_tensor *", t)) == vx.VX_SUCCESS


def test_weights_written_through_image_views_are_used_by_the_next_run(ctx):
    """A layer plans its packed weights at verify and re-plans when they are written: writes through
    images that view the weights tensor count as writes of the tensor (copy and map/unmap alike).
    Fully connected, written from the text: out[o] = sum_i x[i] * w[i, o], no rounding needed here."""
    rng = np.random.default_rng(22)
    dims = [6, 4, 3]  # [kx, ky, #OFM] weights: leading dims multiply to the 24 input features
    x_values = rng.integers(0, 4, 24).astype(np.uint8)
    x = vx.vxCreateTensor(ctx, 1, sizes([24]), vx.VX_TYPE_UINT8, 0)
    weights = vx.vxCreateTensor(ctx, 3, sizes(dims), vx.VX_TYPE_UINT8, 0)
    out = vx.vxCreateTensor(ctx, 1, sizes([3]), vx.VX_TYPE_UINT8, 0)
    write(x, x_values)
    planes = vx.vxCreateImageObjectArrayFromTensor(weights, rect(0, 0, 6, 4), 3, 24, vx.VX_DF_IMAGE_U8)
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxFullyConnectedLayer(graph, x, weights, ffi.NULL, vx.VX_CONVERT_POLICY_SATURATE,
                                    vx.VX_ROUND_POLICY_TO_ZERO, out)
    for how in ("copy", "map"):
        frames = rng.integers(0, 3, (3, 4, 6)).astype(np.uint8)  # #OFM, y, x
        for o in range(3):
            image = ffi.cast("vx_image", vx.vxGetObjectArrayItem(planes, o))
            if how == "copy":
                assert copy(image, rect(0, 0, 6, 4), frames[o][:, :, None], vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
            else:
                map_id, addr, ptr = ffi.new("vx_map_id *"), ffi.new("vx_imagepatch_addressing_t *"), ffi.new("void **")
                assert vx.vxMapImagePatch(image, rect(0, 0, 6, 4), 0, map_id, addr, ptr, vx.VX_WRITE_ONLY,
                                          vx.VX_MEMORY_TYPE_HOST, 0) == vx.VX_SUCCESS
                view = np.lib.stride_tricks.as_strided(
                    np.frombuffer(ffi.buffer(ptr[0], addr.stride_y * 4), np.uint8), (4, 6),
                    (addr.stride_y, addr.stride_x))
                view[...] = frames[o]
                assert vx.vxUnmapImagePatch(image, map_id[0]) == vx.VX_SUCCESS
            release_ref(image)
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        w = frames.transpose(2, 1, 0).reshape(24, 3, order="F").astype(int)  # [x, y, o] -> [i, o]
        expected = np.minimum(x_values.astype(int) @ w, 255)
        assert np.array_equal(read(out, [3], np.uint8), expected), how
    assert vx.vxReleaseNode(ffi.new("vx_node *", node)) == vx.VX_SUCCESS
    assert vx.vxReleaseGraph(ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS
    release_oa(planes)
    for t in (x, weights, out):
        assert vx.vxReleaseTensor(ffi.new("vx_tensor *", t)) == vx.VX_SUCCESS
