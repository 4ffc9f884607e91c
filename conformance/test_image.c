/* test_image.c: images (every supported format: create, query, copy with the application's
 * strides, map with patch address arithmetic, application memory, virtual images, errors) and
 * the complete headers (vx_compatibility.h, VX_IMAGEPATCH_ADDR_INIT, stride_x_bits, stubs). */
#include "ct_vx.h"

#include <VX/vx_compatibility.h>
#include <VX/vx_khr_pipelining.h>
#include <VX/vx_khr_user_data_object.h>
#include <string.h>

TESTCASE(image);

typedef struct {
    const char *name;
    vx_df_image format;
    size_t pixel; /* bytes per pixel, from the standard's format table */
} img_format;

static const img_format FORMATS[] = {
    {"U8", VX_DF_IMAGE_U8, 1},   {"S16", VX_DF_IMAGE_S16, 2}, {"U16", VX_DF_IMAGE_U16, 2},
    {"S32", VX_DF_IMAGE_S32, 4}, {"U32", VX_DF_IMAGE_U32, 4}, {"RGB", VX_DF_IMAGE_RGB, 3},
    {"RGBX", VX_DF_IMAGE_RGBX, 4},
};

typedef struct {
    const img_format *fmt;
    int variant;
} i_arg;

static void gen_image(void)
{
    size_t f;
    int v;
    char name[32];
    for (f = 0; f < sizeof FORMATS / sizeof FORMATS[0]; f++)
        for (v = 0; v < 3; v++) {
            i_arg a;
            a.fmt = &FORMATS[f];
            a.variant = v;
            snprintf(name, sizeof name, "%s/%d", a.fmt->name, v);
            ct_emit(name, &a);
        }
}

static void random_bytes(unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = (unsigned char)ct_rand();
}

/* ---- images ------------------------------------------------------------------------------- */
TEST_WITH_ARG(image, create_copy_map, i_arg, gen_image)
{
    size_t px = arg->fmt->pixel, x, y;
    vx_uint32 w = (vx_uint32)ct_rand_range(1, 9), h = (vx_uint32)ct_rand_range(1, 9), qw = 0, qh = 0;
    vx_df_image qf = 0;
    vx_size planes = 0;
    vx_int32 sx = (vx_int32)(px + (size_t)ct_rand_range(0, 2)), sy = sx * (vx_int32)w + ct_rand_range(0, 5);
    unsigned char *user = (unsigned char *)ct_alloc((size_t)sy * h / 8 + 1);
    unsigned char *back = (unsigned char *)ct_alloc((size_t)sy * h / 8 + 1);
    vx_imagepatch_addressing_t ua = ct_addressing(w, h, sx, sy), addr = VX_IMAGEPATCH_ADDR_INIT;
    vx_rectangle_t all = ct_rect(0, 0, w, h), part;
    vx_map_id map_id;
    void *ptr = NULL;
    vx_image image = vxCreateImage(context, w, h, arg->fmt->format);

    ASSERT_VX_OBJECT(image);
    VX_CALL(vxQueryImage(image, VX_IMAGE_WIDTH, &qw, sizeof qw));
    VX_CALL(vxQueryImage(image, VX_IMAGE_HEIGHT, &qh, sizeof qh));
    VX_CALL(vxQueryImage(image, VX_IMAGE_FORMAT, &qf, sizeof qf));
    VX_CALL(vxQueryImage(image, VX_IMAGE_PLANES, &planes, sizeof planes));
    ASSERT(qw == w && qh == h && qf == arg->fmt->format && planes == 1);
    random_bytes(user, (size_t)sy * h);
    VX_CALL(vxCopyImagePatch(image, &all, 0, &ua, user, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));

    /* a random patch, mapped: each pixel where vxFormatImagePatchAddress2d says */
    part.start_x = (vx_uint32)ct_rand_range(0, (int)w - 1);
    part.start_y = (vx_uint32)ct_rand_range(0, (int)h - 1);
    part.end_x = (vx_uint32)ct_rand_range((int)part.start_x + 1, (int)w);
    part.end_y = (vx_uint32)ct_rand_range((int)part.start_y + 1, (int)h);
    VX_CALL(vxMapImagePatch(image, &part, 0, &map_id, &addr, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    ASSERT(addr.dim_x == part.end_x - part.start_x && addr.dim_y == part.end_y - part.start_y);
    ASSERT(addr.stride_x == (vx_int32)px && addr.scale_x == VX_SCALE_UNITY && addr.step_y == 1);
    ASSERT(addr.stride_x_bits == px * 8);
    for (y = 0; y < addr.dim_y; y++)
        for (x = 0; x < addr.dim_x; x++) {
            unsigned char *p = (unsigned char *)vxFormatImagePatchAddress2d(ptr, (vx_uint32)x, (vx_uint32)y, &addr);
            const unsigned char *u = user + (part.start_y + y) * (size_t)sy + (part.start_x + x) * (size_t)sx;
            ASSERT(p == vxFormatImagePatchAddress1d(ptr, (vx_uint32)(y * addr.dim_x + x), &addr));
            ASSERT(memcmp(p, u, px) == 0);
            p[0] ^= 0x5a; /* written through the map */
        }
    ASSERT(vxFormatImagePatchAddress2d(ptr, addr.dim_x, 0, &addr) == NULL);
    VX_CALL(vxUnmapImagePatch(image, map_id));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxUnmapImagePatch(image, map_id));

    VX_CALL(vxCopyImagePatch(image, &all, 0, &ua, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++) {
            const unsigned char *u = user + y * (size_t)sy + x * (size_t)sx;
            const unsigned char *b = back + y * (size_t)sy + x * (size_t)sx;
            int inside = x >= part.start_x && x < part.end_x && y >= part.start_y && y < part.end_y;
            ASSERT(b[0] == (unsigned char)(inside ? u[0] ^ 0x5a : u[0]));
            ASSERT(memcmp(b + 1, u + 1, px - 1) == 0);
        }
    VX_CALL(vxReleaseImage(&image));
    ASSERT(image == NULL);
}

TEST_WITH_ARG(image, from_handle, i_arg, gen_image)
{
    size_t px = arg->fmt->pixel, y;
    vx_uint32 w = (vx_uint32)ct_rand_range(1, 7), h = (vx_uint32)ct_rand_range(1, 7);
    vx_int32 sx = (vx_int32)px, sy = (vx_int32)(px * w) + ct_rand_range(0, 6);
    unsigned char *memory = (unsigned char *)ct_alloc((size_t)sy * h / 8 + 1);
    unsigned char *copy = (unsigned char *)ct_alloc((size_t)sy * h / 8 + 1);
    unsigned char *data = (unsigned char *)ct_alloc(px * w * h / 8 + 1);
    vx_imagepatch_addressing_t addr = ct_addressing(w, h, sx, sy), packed = ct_addressing(w, h, sx, (vx_int32)(px * w));
    void *ptrs[1];
    vx_rectangle_t all = ct_rect(0, 0, w, h);
    vx_enum memory_type = 0;
    vx_image image;

    random_bytes(memory, (size_t)sy * h);
    memcpy(copy, memory, (size_t)sy * h);
    ptrs[0] = memory;
    image = vxCreateImageFromHandle(context, arg->fmt->format, &addr, ptrs, VX_MEMORY_TYPE_HOST);
    ASSERT_VX_OBJECT(image);
    VX_CALL(vxQueryImage(image, VX_IMAGE_MEMORY_TYPE, &memory_type, sizeof memory_type));
    ASSERT_EQ_INT(VX_MEMORY_TYPE_HOST, memory_type);
    random_bytes(data, px * w * h);
    VX_CALL(vxCopyImagePatch(image, &all, 0, &packed, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    for (y = 0; y < h; y++) { /* rows land in the application's memory, the padding stays */
        ASSERT(memcmp(memory + y * (size_t)sy, data + y * px * w, px * w) == 0);
        ASSERT(memcmp(memory + y * (size_t)sy + px * w, copy + y * (size_t)sy + px * w, (size_t)sy - px * w) == 0);
    }
    VX_CALL(vxReleaseImage(&image));
}

TEST(image, attributes_virtual_and_errors)
{
    vx_image image = vxCreateImage(context, 4, 3, VX_DF_IMAGE_U8), virt;
    vx_graph graph = vxCreateGraph(context);
    vx_enum space = VX_COLOR_SPACE_BT601_525, got = 0;
    vx_uint32 width = 0;
    vx_rectangle_t r = ct_rect(0, 0, 4, 3), outside = ct_rect(0, 0, 5, 3), region;
    vx_imagepatch_addressing_t a = ct_addressing(4, 3, 1, 4);
    unsigned char buf[12];
    void *null_ptrs[1] = {NULL};

    ASSERT_VX_OBJECT(image);
    VX_CALL(vxSetImageAttribute(image, VX_IMAGE_SPACE, &space, sizeof space));
    VX_CALL(vxQueryImage(image, VX_IMAGE_SPACE, &got, sizeof got));
    ASSERT_EQ_INT(VX_COLOR_SPACE_BT601_525, got);
    ASSERT_STATUS(VX_ERROR_NOT_SUPPORTED, vxSetImageAttribute(image, VX_IMAGE_WIDTH, &width, sizeof width));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxQueryImage(image, VX_IMAGE_WIDTH, &width, 2));
    VX_CALL(vxGetValidRegionImage(image, &region));
    ASSERT(region.end_x == 4 && region.end_y == 3 && region.start_x == 0);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyImagePatch(image, &outside, 0, &a, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyImagePatch(image, &r, 1, &a, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyImagePatch(image, &r, 0, &a, NULL, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyImagePatch(image, NULL, 0, &a, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryImage((vx_image)graph, VX_IMAGE_WIDTH, &width, sizeof width));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryImage(NULL, VX_IMAGE_WIDTH, &width, sizeof width));

    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxGetStatus((vx_reference)vxCreateImage(context, 0, 3, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_NOT_SUPPORTED, vxGetStatus((vx_reference)vxCreateImage(context, 4, 4, VX_DF_IMAGE_IYUV)));
    ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxGetStatus((vx_reference)vxCreateImage(context, 4, 4, VX_DF_IMAGE('A', 'B', 'C', 'D'))));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxGetStatus((vx_reference)vxCreateImageFromHandle(context, VX_DF_IMAGE_U8, &a, null_ptrs, VX_MEMORY_TYPE_HOST)));

    virt = vxCreateVirtualImage(graph, 0, 0, VX_DF_IMAGE_VIRT);
    ASSERT_VX_OBJECT(virt);
    ASSERT_STATUS(VX_ERROR_OPTIMIZED_AWAY, vxCopyImagePatch(virt, &r, 0, &a, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxReleaseImage(&virt));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseImage(&image));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReleaseImage(&image));
}

/* ---- the complete headers ----------------------------------------------------------------- */
TESTCASE(headers);

TEST(headers, compatibility_names_and_unimplemented_functions)
{
    vx_imagepatch_addressing_t a = VX_IMAGEPATCH_ADDR_INIT;
    vx_graph_parameter_queue_params_t q;
    vx_user_data_object udo;
    vx_reference pyramid;
    ASSERT(a.stride_x_bits == 0 && a.dim_x == 0);
    ASSERT(offsetof(vx_imagepatch_addressing_t, stride_x_bits) == 30 && sizeof a == 32);
    ASSERT(VX_IMAGE_ATTRIBUTE_WIDTH == VX_IMAGE_WIDTH && VX_REF_ATTRIBUTE_COUNT == VX_REFERENCE_COUNT);
    ASSERT(VX_BORDER_MODE_CONSTANT == VX_BORDER_CONSTANT);
    memset(&q, 0, sizeof q);
    /* functions of the standard the library does not implement: declared, linked, refused */
    pyramid = (vx_reference)vxCreatePyramid(context, 2, VX_SCALE_PYRAMID_HALF, 8, 8, VX_DF_IMAGE_U8);
    ASSERT(pyramid != NULL);
    ASSERT_STATUS(VX_ERROR_NOT_IMPLEMENTED, vxGetStatus(pyramid));
    udo = vxCreateUserDataObject(context, "x", 4, NULL);
    ASSERT_STATUS(VX_ERROR_NOT_IMPLEMENTED, vxGetStatus((vx_reference)udo));
    ASSERT_STATUS(VX_ERROR_NOT_IMPLEMENTED, vxEnableEvents(context));
    ASSERT_STATUS(VX_ERROR_NOT_IMPLEMENTED, vxReadScalarValue(NULL, NULL));
}
