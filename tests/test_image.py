"""vx_image: creation, queries, copies and maps of patches, application memory,
patch address arithmetic, bad arguments and bad handles."""
from __future__ import annotations

import numpy as np
import pytest
from test_tensor_support import HOST, as_ref, pointer, status_of

from openvx_nn import vx

ffi = vx.ffi
# format -> (channel dtype, channels): written from the standard's format table.
FORMATS = {
    "U8": (vx.VX_DF_IMAGE_U8, np.uint8, 1), "S16": (vx.VX_DF_IMAGE_S16, np.int16, 1),
    "U16": (vx.VX_DF_IMAGE_U16, np.uint16, 1), "S32": (vx.VX_DF_IMAGE_S32, np.int32, 1),
    "U32": (vx.VX_DF_IMAGE_U32, np.uint32, 1), "RGB": (vx.VX_DF_IMAGE_RGB, np.uint8, 3),
    "RGBX": (vx.VX_DF_IMAGE_RGBX, np.uint8, 4),
}


def rect(x0, y0, x1, y1):
    return ffi.new("vx_rectangle_t *", (x0, y0, x1, y1))


def addressing(width, height, stride_x, stride_y):
    addr = ffi.new("vx_imagepatch_addressing_t *")
    addr.dim_x, addr.dim_y, addr.stride_x, addr.stride_y = width, height, stride_x, stride_y
    return addr


def pixels(rng, height, width, dtype, channels):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, (height, width, channels), endpoint=True).astype(dtype)


def copy(image, r, data: np.ndarray, usage) -> int:
    """Copy between the patch ``r`` and ``data`` (height, width, channels), packed rows."""
    h, w, c = data.shape
    addr = addressing(w, h, c * data.itemsize, w * c * data.itemsize)
    return vx.vxCopyImagePatch(image, r, 0, addr, pointer(data), usage, HOST)


def query_u32(image, attribute) -> int:
    out = ffi.new("vx_uint32 *")
    assert vx.vxQueryImage(image, attribute, out, 4) == vx.VX_SUCCESS
    return out[0]


def release(image) -> None:
    assert vx.vxReleaseImage(ffi.new("vx_image *", image)) == vx.VX_SUCCESS


@pytest.mark.parametrize("name", FORMATS)
def test_an_image_is_created_queried_written_read_and_released(ctx, name):
    code, dtype, channels = FORMATS[name]
    rng = np.random.default_rng(len(name))
    width, height = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    image = vx.vxCreateImage(ctx, width, height, code)
    assert status_of(image) == vx.VX_SUCCESS
    assert (query_u32(image, vx.VX_IMAGE_WIDTH), query_u32(image, vx.VX_IMAGE_HEIGHT)) == (width, height)
    assert query_u32(image, vx.VX_IMAGE_FORMAT) == code
    planes = ffi.new("vx_size *")
    assert vx.vxQueryImage(image, vx.VX_IMAGE_PLANES, planes, ffi.sizeof("vx_size")) == vx.VX_SUCCESS
    assert planes[0] == 1
    assert query_u32(image, vx.VX_IMAGE_MEMORY_TYPE) == vx.VX_MEMORY_TYPE_NONE
    zeros = np.ones((height, width, channels), dtype)
    assert copy(image, rect(0, 0, width, height), zeros, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert not zeros.any()  # created zeroed
    whole = pixels(rng, height, width, dtype, channels)
    assert copy(image, rect(0, 0, width, height), whole, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
    x1, y1 = int(rng.integers(x0 + 1, width + 1)), int(rng.integers(y0 + 1, height + 1))
    got = np.zeros((y1 - y0, x1 - x0, channels), dtype)
    assert copy(image, rect(x0, y0, x1, y1), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(got, whole[y0:y1, x0:x1])
    release(image)


@pytest.mark.parametrize("name", FORMATS)
def test_a_mapped_patch_is_the_images_memory_with_its_addressing(ctx, name):
    code, dtype, channels = FORMATS[name]
    rng = np.random.default_rng(10 + len(name))
    width, height = 7, 5
    image = vx.vxCreateImage(ctx, width, height, code)
    whole = pixels(rng, height, width, dtype, channels)
    assert copy(image, rect(0, 0, width, height), whole, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    map_id, addr, ptr = ffi.new("vx_map_id *"), ffi.new("vx_imagepatch_addressing_t *"), ffi.new("void **")
    assert vx.vxMapImagePatch(image, rect(2, 1, 6, 4), 0, map_id, addr, ptr, vx.VX_READ_AND_WRITE, HOST,
                              vx.VX_NOGAP_X) == vx.VX_SUCCESS
    pixel = np.dtype(dtype).itemsize * channels
    assert (addr.dim_x, addr.dim_y, addr.stride_x, addr.stride_y) == (4, 3, pixel, width * pixel)
    assert (addr.scale_x, addr.scale_y, addr.step_x, addr.step_y) == (vx.VX_SCALE_UNITY, vx.VX_SCALE_UNITY, 1, 1)
    assert addr.stride_x_bits == pixel * 8
    for y in range(3):
        for x in range(4):
            at = vx.vxFormatImagePatchAddress2d(ptr[0], x, y, addr)
            assert at == vx.vxFormatImagePatchAddress1d(ptr[0], y * 4 + x, addr)
            value = np.frombuffer(ffi.buffer(at, pixel), dtype)
            assert np.array_equal(value, whole[1 + y, 2 + x])
    fresh = pixels(rng, 1, 1, dtype, channels)[0, 0]
    ffi.memmove(vx.vxFormatImagePatchAddress2d(ptr[0], 3, 2, addr), fresh.tobytes(), pixel)
    assert vx.vxFormatImagePatchAddress2d(ptr[0], 4, 0, addr) == ffi.NULL  # outside the patch
    assert vx.vxFormatImagePatchAddress1d(ptr[0], 12, addr) == ffi.NULL
    assert vx.vxUnmapImagePatch(image, map_id[0]) == vx.VX_SUCCESS
    got = np.zeros((height, width, channels), dtype)
    assert copy(image, rect(0, 0, width, height), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    whole[3, 5] = fresh
    assert np.array_equal(got, whole)
    assert vx.vxUnmapImagePatch(image, map_id[0]) == vx.VX_ERROR_INVALID_PARAMETERS  # closed already
    release(image)


def test_patch_address_arithmetic_follows_scale_and_strides():
    """vxFormatImagePatchAddress2d: ptr + stride_y * (scale_y * y / unity) + stride_x * (scale_x * x / unity)."""
    base = ffi.new("char[4096]")
    addr = addressing(10, 6, 4, 64)
    addr.scale_x, addr.scale_y = vx.VX_SCALE_UNITY // 2, vx.VX_SCALE_UNITY
    for x, y in ((0, 0), (3, 2), (9, 5)):
        expected = 64 * y + 4 * ((x * (vx.VX_SCALE_UNITY // 2)) // vx.VX_SCALE_UNITY)
        got = vx.vxFormatImagePatchAddress2d(base, x, y, addr)
        assert int(ffi.cast("uintptr_t", got)) - int(ffi.cast("uintptr_t", base)) == expected
    assert vx.vxFormatImagePatchAddress2d(ffi.NULL, 0, 0, addr) == ffi.NULL
    assert vx.vxFormatImagePatchAddress1d(base, 0, ffi.NULL) == ffi.NULL


def test_an_image_from_handle_reads_and_writes_padded_application_memory(ctx):
    rng = np.random.default_rng(3)
    width, height = 5, 4
    buffer = np.zeros((height, 32), np.int16)  # rows of 64 bytes, pixels 4 bytes apart
    memory = buffer[:, : 2 * width : 2]
    memory[...] = rng.integers(-1000, 1000, memory.shape)
    addr = addressing(width, height, 4, 64)
    image = vx.vxCreateImageFromHandle(ctx, vx.VX_DF_IMAGE_S16, addr, ffi.new("void *[1]", [pointer(buffer)]), HOST)
    assert status_of(image) == vx.VX_SUCCESS
    assert query_u32(image, vx.VX_IMAGE_MEMORY_TYPE) == vx.VX_MEMORY_TYPE_HOST
    got = np.zeros((height, width, 1), np.int16)
    assert copy(image, rect(0, 0, width, height), got, vx.VX_READ_ONLY) == vx.VX_SUCCESS
    assert np.array_equal(got[:, :, 0], memory)
    before = buffer.copy()
    data = rng.integers(-1000, 1000, (2, 3, 1)).astype(np.int16)
    assert copy(image, rect(1, 2, 4, 4), data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    before[2:4, 2:8:2] = data[:, :, 0]
    assert np.array_equal(buffer, before)  # the patch landed, the gaps did not move
    release(image)


def test_a_copy_with_the_applications_own_strides(ctx):
    rng = np.random.default_rng(4)
    image = vx.vxCreateImage(ctx, 4, 3, vx.VX_DF_IMAGE_U8)
    data = rng.integers(0, 255, (3, 4, 1)).astype(np.uint8)
    assert copy(image, rect(0, 0, 4, 3), data, vx.VX_WRITE_ONLY) == vx.VX_SUCCESS
    user = np.zeros((3, 10), np.uint8)  # stride_x 2, stride_y 10
    addr = addressing(4, 3, 2, 10)
    assert vx.vxCopyImagePatch(image, rect(0, 0, 4, 3), 0, addr, pointer(user), vx.VX_READ_ONLY, HOST) == 0
    assert np.array_equal(user[:, 0:8:2], data[:, :, 0]) and not user[:, 1:8:2].any()
    release(image)


def test_color_space_is_settable_and_other_attributes_are_not(ctx, log):
    image = vx.vxCreateImage(ctx, 2, 2, vx.VX_DF_IMAGE_U8)
    space = ffi.new("vx_enum *", vx.VX_COLOR_SPACE_BT601_625)
    assert vx.vxSetImageAttribute(image, vx.VX_IMAGE_SPACE, space, 4) == vx.VX_SUCCESS
    assert query_u32(image, vx.VX_IMAGE_SPACE) == vx.VX_COLOR_SPACE_BT601_625
    space[0] = 12345
    assert vx.vxSetImageAttribute(image, vx.VX_IMAGE_SPACE, space, 4) == vx.VX_ERROR_INVALID_VALUE
    width = ffi.new("vx_uint32 *", 9)
    assert vx.vxSetImageAttribute(image, vx.VX_IMAGE_WIDTH, width, 4) == vx.VX_ERROR_NOT_SUPPORTED
    assert log.has(vx.VX_ERROR_NOT_SUPPORTED, "vxSetImageAttribute", "read-only")
    assert vx.vxQueryImage(image, vx.VX_IMAGE_WIDTH, width, 8) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxQueryImage(image, vx.VX_TENSOR_DIMS, width, 4) == vx.VX_ERROR_NOT_SUPPORTED
    region = ffi.new("vx_rectangle_t *")
    assert vx.vxGetValidRegionImage(image, region) == vx.VX_SUCCESS
    assert (region.start_x, region.start_y, region.end_x, region.end_y) == (0, 0, 2, 2)
    assert vx.vxGetValidRegionImage(image, ffi.NULL) == vx.VX_ERROR_INVALID_PARAMETERS
    release(image)


def test_virtual_images_have_no_application_access(ctx, log):
    graph = vx.vxCreateGraph(ctx)
    image = vx.vxCreateVirtualImage(graph, 0, 0, vx.VX_DF_IMAGE_VIRT)
    assert status_of(image) == vx.VX_SUCCESS
    assert query_u32(image, vx.VX_IMAGE_FORMAT) == vx.VX_DF_IMAGE_VIRT
    sized = vx.vxCreateVirtualImage(graph, 4, 4, vx.VX_DF_IMAGE_U8)
    data = np.zeros((4, 4, 1), np.uint8)
    assert copy(sized, rect(0, 0, 4, 4), data, vx.VX_READ_ONLY) == vx.VX_ERROR_OPTIMIZED_AWAY
    assert log.has(vx.VX_ERROR_OPTIMIZED_AWAY, "vxCopyImagePatch", "virtual")
    release(sized)
    release(image)
    assert vx.vxReleaseGraph(ffi.new("vx_graph *", graph)) == vx.VX_SUCCESS


BAD_CREATES = [
    # (width, height, format, status, words in the log line)
    (0, 4, vx.VX_DF_IMAGE_U8, vx.VX_ERROR_INVALID_DIMENSION, ["0x4"]),
    (4, 4, vx.VX_DF_IMAGE_NV12, vx.VX_ERROR_NOT_SUPPORTED, ["VX_DF_IMAGE_NV12"]),
    (4, 4, vx.VX_DF_IMAGE_VIRT, vx.VX_ERROR_INVALID_FORMAT, ["VX_DF_IMAGE_VIRT"]),
    (4, 4, 0x12345678, vx.VX_ERROR_INVALID_FORMAT, ["0x12345678"]),
]


@pytest.mark.parametrize("width, height, code, status, words", BAD_CREATES)
def test_bad_image_creations_give_error_objects(ctx, log, width, height, code, status, words):
    image = vx.vxCreateImage(ctx, width, height, code)
    assert status_of(image) == status
    assert log.has(status, "vxCreateImage", *words)


def test_bad_patches_and_handles_are_errors(ctx, log):
    image = vx.vxCreateImage(ctx, 4, 4, vx.VX_DF_IMAGE_U16)
    data = np.zeros((4, 4, 1), np.uint16)
    map_id, addr, ptr = ffi.new("vx_map_id *"), ffi.new("vx_imagepatch_addressing_t *"), ffi.new("void **")
    bad = [
        (lambda: copy(image, rect(0, 0, 5, 4), np.zeros((4, 5, 1), np.uint16), vx.VX_READ_ONLY), "outside"),
        (lambda: copy(image, rect(2, 0, 2, 4), data[:, :0], vx.VX_READ_ONLY), "empty"),
        (lambda: copy(image, ffi.NULL, data, vx.VX_READ_ONLY), "rect is NULL"),
        (lambda: copy(image, rect(0, 0, 4, 4), data, vx.VX_READ_AND_WRITE), "usage"),
        (lambda: vx.vxCopyImagePatch(image, rect(0, 0, 4, 4), 1, addressing(4, 4, 2, 8), pointer(data),
                                     vx.VX_READ_ONLY, HOST), "plane_index 1"),
        (lambda: vx.vxCopyImagePatch(image, rect(0, 0, 4, 4), 0, addressing(4, 4, 1, 8), pointer(data),
                                     vx.VX_READ_ONLY, HOST), "stride_x 1"),
        (lambda: vx.vxCopyImagePatch(image, rect(0, 0, 4, 4), 0, addressing(4, 4, 2, 6), pointer(data),
                                     vx.VX_READ_ONLY, HOST), "stride_y 6"),
        (lambda: vx.vxCopyImagePatch(image, rect(0, 0, 4, 4), 0, addressing(4, 4, 2, 8), ffi.NULL,
                                     vx.VX_READ_ONLY, HOST), "user_ptr is NULL"),
        (lambda: vx.vxMapImagePatch(image, rect(0, 0, 4, 4), 0, map_id, ffi.NULL, ptr, vx.VX_READ_ONLY, HOST, 0),
         "addr is NULL"),
        (lambda: vx.vxMapImagePatch(image, rect(0, 0, 4, 4), 0, map_id, addr, ptr, vx.VX_READ_ONLY, HOST, 2),
         "flags"),
    ]
    for call, words in bad:
        log.clear()
        assert call() == vx.VX_ERROR_INVALID_PARAMETERS, words
        assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, words), (words, log.entries)
    tensor = vx.vxCreateTensor(ctx, 1, ffi.new("vx_size[1]", [4]), vx.VX_TYPE_UINT8, 0)
    as_image = ffi.cast("vx_image", tensor)
    assert vx.vxQueryImage(as_image, vx.VX_IMAGE_WIDTH, ffi.new("vx_uint32 *"), 4) == \
        vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxReleaseImage(ffi.new("vx_image *", as_image)) == vx.VX_ERROR_INVALID_REFERENCE
    assert vx.vxReleaseTensor(ffi.new("vx_tensor *", tensor)) == vx.VX_SUCCESS
    release(image)
    assert copy(image, rect(0, 0, 4, 4), data, vx.VX_READ_ONLY) == vx.VX_ERROR_INVALID_REFERENCE  # released
    assert vx.vxQueryImage(ffi.NULL, vx.VX_IMAGE_WIDTH, ffi.new("vx_uint32 *"), 4) == vx.VX_ERROR_INVALID_REFERENCE
    null = vx.vxCreateImageFromHandle(ctx, vx.VX_DF_IMAGE_U8, addressing(4, 4, 1, 4), ffi.new("void *[1]"), HOST)
    assert status_of(null) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxCreateImageFromHandle", "ptrs[0] is NULL")
    assert status_of(vx.vxCreateImage(ffi.NULL, 4, 4, vx.VX_DF_IMAGE_U8)) != vx.VX_SUCCESS
    assert vx.vxGetStatus(as_ref(ffi.NULL)) == vx.VX_ERROR_NO_RESOURCES
