/* test_color_convert.c: org.khronos.openvx.color_convert for the formats the library has (RGB <-> RGBX,
 * node and vxu forms, a virtual output that takes the input's size), other pairs failing
 * verification with VX_ERROR_INVALID_FORMAT, and the kernel found by name. */
#include "ct_vx.h"

#include <string.h>

TESTCASE(color_convert);

typedef struct {
    vx_df_image from, to;
    size_t from_px, to_px;
    int immediate;
} cc_arg;

static void gen_cc(void)
{
    cc_arg a;
    int immediate;
    for (immediate = 0; immediate < 2; immediate++) {
        a.immediate = immediate;
        a.from = VX_DF_IMAGE_RGB; a.to = VX_DF_IMAGE_RGBX; a.from_px = 3; a.to_px = 4;
        ct_emit(immediate ? "RGB_to_RGBX/vxu" : "RGB_to_RGBX/node", &a);
        a.from = VX_DF_IMAGE_RGBX; a.to = VX_DF_IMAGE_RGB; a.from_px = 4; a.to_px = 3;
        ct_emit(immediate ? "RGBX_to_RGB/vxu" : "RGBX_to_RGB/node", &a);
    }
}

static void fill(vx_image image, vx_uint32 w, vx_uint32 h, size_t px, unsigned char *pixels, vx_enum usage)
{
    vx_rectangle_t all = ct_rect(0, 0, w, h);
    vx_imagepatch_addressing_t addr = ct_addressing(w, h, (vx_int32)px, (vx_int32)(px * w));
    VX_CALL(vxCopyImagePatch(image, &all, 0, &addr, pixels, usage, VX_MEMORY_TYPE_HOST));
}

TEST_WITH_ARG(color_convert, converts_and_matches_the_reference, cc_arg, gen_cc)
{
    vx_uint32 w = (vx_uint32)ct_rand_range(1, 9), h = (vx_uint32)ct_rand_range(1, 9), x, y, c;
    unsigned char src[9 * 9 * 4], got[9 * 9 * 4], expected[9 * 9 * 4];
    vx_image in = vxCreateImage(context, w, h, arg->from), out = vxCreateImage(context, w, h, arg->to);
    ASSERT_VX_OBJECT(in);
    ASSERT_VX_OBJECT(out);
    for (x = 0; x < w * h * arg->from_px; x++)
        src[x] = (unsigned char)ct_rand();
    /* the reference: the color channels copied, X opaque (255) */
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            for (c = 0; c < arg->to_px; c++)
                expected[(y * w + x) * arg->to_px + c] = c < 3 ? src[(y * w + x) * arg->from_px + c] : 255;
    fill(in, w, h, arg->from_px, src, VX_WRITE_ONLY);
    if (arg->immediate) {
        VX_CALL(vxuColorConvert(context, in, out));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_image middle = vxCreateVirtualImage(graph, 0, 0, arg->to); /* takes the input's size */
        vx_image back = vxCreateImage(context, w, h, arg->from);
        vx_node n1 = vxColorConvertNode(graph, in, middle), n2 = vxColorConvertNode(graph, middle, back);
        unsigned char round_trip[9 * 9 * 4];
        vx_node n3;
        ASSERT_VX_OBJECT(n1);
        ASSERT_VX_OBJECT(n2);
        n3 = vxColorConvertNode(graph, middle, out); /* the same format: refused below, then replaced */
        ASSERT_VX_OBJECT(n3);
        ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxVerifyGraph(graph));
        VX_CALL(vxRemoveNode(&n3));
        VX_CALL(vxProcessGraph(graph));
        fill(back, w, h, arg->from_px, round_trip, VX_READ_ONLY);
        if (arg->from == VX_DF_IMAGE_RGB) /* RGB -> RGBX -> RGB is the identity */
            ASSERT(memcmp(round_trip, src, w * h * 3) == 0);
        VX_CALL(vxReleaseNode(&n1));
        VX_CALL(vxReleaseNode(&n2));
        VX_CALL(vxReleaseGraph(&graph));
        VX_CALL(vxReleaseImage(&middle));
        VX_CALL(vxReleaseImage(&back));
        VX_CALL(vxuColorConvert(context, in, out));
    }
    fill(out, w, h, arg->to_px, got, VX_READ_ONLY);
    {
        size_t i, n = (size_t)w * h * arg->to_px;
        for (i = 0; i < n; i++)
            if (got[i] != expected[i])
                FAIL("byte %zu of %zu: expected %d, got %d", i, n, expected[i], got[i]);
    }
    VX_CALL(vxReleaseImage(&in));
    VX_CALL(vxReleaseImage(&out));
}

TEST(color_convert, other_pairs_fail_verification_with_invalid_format)
{
    vx_df_image pairs[][2] = {{VX_DF_IMAGE_U8, VX_DF_IMAGE_RGB}, {VX_DF_IMAGE_RGB, VX_DF_IMAGE_U8},
                              {VX_DF_IMAGE_RGB, VX_DF_IMAGE_RGB}, {VX_DF_IMAGE_S16, VX_DF_IMAGE_RGBX}};
    size_t i;
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        vx_image in = vxCreateImage(context, 4, 3, pairs[i][0]), out = vxCreateImage(context, 4, 3, pairs[i][1]);
        ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxuColorConvert(context, in, out));
        VX_CALL(vxReleaseImage(&in));
        VX_CALL(vxReleaseImage(&out));
    }
    {   /* sizes must agree */
        vx_image in = vxCreateImage(context, 4, 3, VX_DF_IMAGE_RGB), out = vxCreateImage(context, 3, 4, VX_DF_IMAGE_RGBX);
        ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxuColorConvert(context, in, out));
        VX_CALL(vxReleaseImage(&in));
        VX_CALL(vxReleaseImage(&out));
    }
}

TEST(color_convert, kernel_is_found_by_name_and_enum)
{
    vx_kernel by_name = vxGetKernelByName(context, "org.khronos.openvx.color_convert");
    vx_kernel by_enum = vxGetKernelByEnum(context, VX_KERNEL_COLOR_CONVERT);
    vx_uint32 count = 0;
    vx_enum kenum = 0;
    ASSERT_VX_OBJECT(by_name);
    ASSERT_VX_OBJECT(by_enum);
    VX_CALL(vxQueryKernel(by_name, VX_KERNEL_PARAMETERS, &count, sizeof count));
    VX_CALL(vxQueryKernel(by_name, VX_KERNEL_ENUM, &kenum, sizeof kenum));
    ASSERT_EQ_INT(2, count);
    ASSERT_EQ_INT(VX_KERNEL_COLOR_CONVERT, kenum);
    VX_CALL(vxReleaseKernel(&by_name));
    VX_CALL(vxReleaseKernel(&by_enum));
}
