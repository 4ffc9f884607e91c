/* test_image.c: images (every supported format: create, query, copy with the application's
 * strides, map with patch address arithmetic, application memory, virtual images, errors),
 * arrays, object arrays (exemplars, images viewing a 3-D tensor that write through), and the
 * complete headers (vx_compatibility.h, VX_IMAGEPATCH_ADDR_INIT, stride_x_bits, stubs). */
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

static vx_rectangle_t make_rect(vx_uint32 x0, vx_uint32 y0, vx_uint32 x1, vx_uint32 y1)
{
    vx_rectangle_t r;
    r.start_x = x0;
    r.start_y = y0;
    r.end_x = x1;
    r.end_y = y1;
    return r;
}

static vx_imagepatch_addressing_t layout(vx_uint32 w, vx_uint32 h, vx_int32 sx, vx_int32 sy)
{
    vx_imagepatch_addressing_t a = VX_IMAGEPATCH_ADDR_INIT;
    a.dim_x = w;
    a.dim_y = h;
    a.stride_x = sx;
    a.stride_y = sy;
    return a;
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
    vx_imagepatch_addressing_t ua = layout(w, h, sx, sy), addr = VX_IMAGEPATCH_ADDR_INIT;
    vx_rectangle_t all = make_rect(0, 0, w, h), part;
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
    vx_imagepatch_addressing_t addr = layout(w, h, sx, sy), packed = layout(w, h, sx, (vx_int32)(px * w));
    void *ptrs[1];
    vx_rectangle_t all = make_rect(0, 0, w, h);
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
    vx_rectangle_t r = make_rect(0, 0, 4, 3), outside = make_rect(0, 0, 5, 3), region;
    vx_imagepatch_addressing_t a = layout(4, 3, 1, 4);
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

/* ---- arrays ------------------------------------------------------------------------------- */
TESTCASE(array);

TEST(array, add_copy_map_truncate)
{
    vx_size capacity = (vx_size)ct_rand_range(3, 12), stride = sizeof(vx_coordinates2d_t) + 4, i, n = 0;
    vx_size item_size = 0, got_stride = 0;
    vx_size count = capacity - 1;
    unsigned char *items = (unsigned char *)ct_alloc(stride * capacity / 8 + 1);
    vx_coordinates2d_t *back = (vx_coordinates2d_t *)ct_alloc(capacity);
    vx_array array = vxCreateArray(context, VX_TYPE_COORDINATES2D, capacity);
    vx_map_id map_id;
    void *ptr = NULL;

    ASSERT_VX_OBJECT(array);
    VX_CALL(vxQueryArray(array, VX_ARRAY_ITEMSIZE, &item_size, sizeof item_size));
    ASSERT_EQ_INT(sizeof(vx_coordinates2d_t), item_size);
    for (i = 0; i < capacity; i++) {
        vx_coordinates2d_t c;
        c.x = ct_rand();
        c.y = ct_rand();
        memcpy(items + i * stride, &c, sizeof c);
    }
    VX_CALL(vxAddArrayItems(array, count, items, stride));
    ASSERT_STATUS(VX_FAILURE, vxAddArrayItems(array, 2, items, stride)); /* past the capacity */
    VX_CALL(vxQueryArray(array, VX_ARRAY_NUMITEMS, &n, sizeof n));
    ASSERT_EQ_INT(count, n);
    VX_CALL(vxCopyArrayRange(array, 0, count, sizeof(vx_coordinates2d_t), back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    for (i = 0; i < count; i++)
        ASSERT(memcmp(&back[i], items + i * stride, sizeof back[i]) == 0);
    VX_CALL(vxMapArrayRange(array, 1, count, &map_id, &got_stride, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    ASSERT_EQ_INT(sizeof(vx_coordinates2d_t), got_stride);
    ASSERT(vxAccessArrayItem(vx_coordinates2d_t, ptr, 0, got_stride).x == back[1].x);
    vxAccessArrayItem(vx_coordinates2d_t, ptr, count - 2, got_stride).y = 77;
    VX_CALL(vxUnmapArrayRange(array, map_id));
    VX_CALL(vxCopyArrayRange(array, count - 1, count, sizeof(vx_coordinates2d_t), back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_EQ_INT(77, back[0].y);
    VX_CALL(vxTruncateArray(array, 1));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxCopyArrayRange(array, 0, 2, sizeof(vx_coordinates2d_t), back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxAddArrayItems(array, 1, items, 1));
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxGetStatus((vx_reference)vxCreateArray(context, VX_TYPE_GRAPH, 4)));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryArray((vx_array)context, VX_ARRAY_NUMITEMS, &n, sizeof n));
    VX_CALL(vxReleaseArray(&array));
    {   /* a virtual array is the graph's: the application cannot fill it */
        vx_graph graph = vxCreateGraph(context);
        vx_array virt = vxCreateVirtualArray(graph, VX_TYPE_INVALID, 0);
        ASSERT_VX_OBJECT(virt);
        ASSERT_STATUS(VX_ERROR_OPTIMIZED_AWAY, vxAddArrayItems(virt, 1, items, stride));
        VX_CALL(vxReleaseArray(&virt));
        VX_CALL(vxReleaseGraph(&graph));
    }
}

/* ---- object arrays ------------------------------------------------------------------------ */
TESTCASE(object_array);

TEST(object_array, items_like_the_exemplar)
{
    vx_size dims[2] = {3, 5}, numitems = 0, i;
    vx_enum itemtype = 0;
    vx_reference exemplars[3];
    vx_enum types[3] = {VX_TYPE_IMAGE, VX_TYPE_TENSOR, VX_TYPE_ARRAY};
    int e;
    exemplars[0] = (vx_reference)vxCreateImage(context, 5, 2, VX_DF_IMAGE_RGBX);
    exemplars[1] = (vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_INT16, 8);
    exemplars[2] = (vx_reference)vxCreateArray(context, VX_TYPE_RECTANGLE, 4);
    for (e = 0; e < 3; e++) {
        vx_size count = (vx_size)ct_rand_range(1, 4);
        vx_object_array array = vxCreateObjectArray(context, exemplars[e], count);
        ASSERT_VX_OBJECT(array);
        VX_CALL(vxQueryObjectArray(array, VX_OBJECT_ARRAY_ITEMTYPE, &itemtype, sizeof itemtype));
        VX_CALL(vxQueryObjectArray(array, VX_OBJECT_ARRAY_NUMITEMS, &numitems, sizeof numitems));
        ASSERT(itemtype == types[e] && numitems == count);
        for (i = 0; i < count; i++) {
            vx_reference item = vxGetObjectArrayItem(array, (vx_uint32)i);
            vx_enum type = 0;
            ASSERT_VX_OBJECT(item);
            VX_CALL(vxQueryReference(item, VX_REFERENCE_TYPE, &type, sizeof type));
            ASSERT_EQ_INT(types[e], type);
            if (e == 0) {
                vx_df_image format = 0;
                VX_CALL(vxQueryImage((vx_image)item, VX_IMAGE_FORMAT, &format, sizeof format));
                ASSERT(format == VX_DF_IMAGE_RGBX);
            } else if (e == 1) {
                vx_int8 fpp = 0;
                VX_CALL(vxQueryTensor((vx_tensor)item, VX_TENSOR_FIXED_POINT_POSITION, &fpp, sizeof fpp));
                ASSERT_EQ_INT(8, fpp);
            }
            VX_CALL(vxReleaseReference(&item));
        }
        ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus(vxGetObjectArrayItem(array, (vx_uint32)count)));
        VX_CALL(vxReleaseObjectArray(&array));
        VX_CALL(vxReleaseReference(&exemplars[e]));
    }
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxGetStatus((vx_reference)vxCreateObjectArray(context, NULL, 2)));
}

typedef struct {
    const ct_format *fmt;
    vx_df_image format;
    int variant;
} t_img_arg;

static void gen_tensor_images(void)
{
    static const ct_format S16 = {"S16", VX_TYPE_INT16, 0};
    int v;
    char name[32];
    for (v = 0; v < 6; v++) {
        t_img_arg a;
        a.fmt = v % 2 ? &S16 : &CT_U8;
        a.format = v % 2 ? VX_DF_IMAGE_S16 : VX_DF_IMAGE_U8;
        a.variant = v;
        snprintf(name, sizeof name, "%s/%d", a.fmt->name, v);
        ct_emit(name, &a);
    }
}

/* images of a 3-D tensor (x, y, slice) view a rectangle of every jump-th slice */
TEST_WITH_ARG(object_array, images_of_a_tensor, t_img_arg, gen_tensor_images)
{
    vx_size dims[3], jump, count, i;
    vx_uint32 x, y;
    vx_rectangle_t r;
    size_t n;
    int64_t *model, *got;
    vx_tensor tensor;
    vx_object_array array;

    dims[0] = (vx_size)ct_rand_range(1, 8);
    dims[1] = (vx_size)ct_rand_range(1, 8);
    dims[2] = (vx_size)ct_rand_range(1, 6);
    jump = (vx_size)ct_rand_range(1, 3);
    count = (dims[2] - 1) / jump + 1;
    r.start_x = (vx_uint32)ct_rand_range(0, (int)dims[0] - 1);
    r.start_y = (vx_uint32)ct_rand_range(0, (int)dims[1] - 1);
    r.end_x = (vx_uint32)ct_rand_range((int)r.start_x + 1, (int)dims[0]);
    r.end_y = (vx_uint32)ct_rand_range((int)r.start_y + 1, (int)dims[1]);
    n = ct_count(3, dims);
    model = ct_alloc(n);
    got = ct_alloc(n);
    tensor = ct_tensor(context, 3, dims, arg->fmt);
    ct_fill_format(model, n, arg->fmt->type);
    ct_write(tensor, model);
    array = vxCreateImageObjectArrayFromTensor(tensor, &r, count, jump, arg->format);
    ASSERT_VX_OBJECT(array);
    for (i = 0; i < count; i++) {
        vx_image image = (vx_image)vxGetObjectArrayItem(array, (vx_uint32)i);
        vx_uint32 w = r.end_x - r.start_x, h = r.end_y - r.start_y, qw = 0;
        vx_rectangle_t all = make_rect(0, 0, w, h);
        vx_imagepatch_addressing_t addr = VX_IMAGEPATCH_ADDR_INIT;
        vx_map_id map_id;
        void *ptr = NULL;
        size_t z = i * jump;
        ASSERT_VX_OBJECT(image);
        VX_CALL(vxQueryImage(image, VX_IMAGE_WIDTH, &qw, sizeof qw));
        ASSERT_EQ_INT(w, qw);
        VX_CALL(vxMapImagePatch(image, &all, 0, &map_id, &addr, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++) {
                size_t at = (r.start_x + x) + dims[0] * ((r.start_y + y) + dims[1] * z);
                void *p = vxFormatImagePatchAddress2d(ptr, x, y, &addr);
                ASSERT_EQ_INT(model[at], ct_get(p, arg->fmt->type, 0));
                model[at] = (model[at] + 3) % 100; /* write the tensor through the image */
                ct_set(p, arg->fmt->type, 0, model[at]);
            }
        VX_CALL(vxUnmapImagePatch(image, map_id));
        VX_CALL(vxReleaseImage(&image));
    }
    ct_read(tensor, got); /* every write through an image is in the tensor, nothing else moved */
    ASSERT_EQ_ARRAY("tensor after writes through its images", model, got, n);
    VX_CALL(vxReleaseTensor(&tensor)); /* the images hold it */
    {
        vx_image first = (vx_image)vxGetObjectArrayItem(array, 0);
        vx_rectangle_t one = make_rect(0, 0, 1, 1);
        size_t es = ct_elem_size(arg->fmt->type);
        vx_imagepatch_addressing_t ua = layout(1, 1, (vx_int32)es, (vx_int32)es);
        int64_t pixel[1];
        VX_CALL(vxCopyImagePatch(first, &one, 0, &ua, pixel, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
        ASSERT_EQ_INT(model[r.start_x + dims[0] * r.start_y], ct_get(pixel, arg->fmt->type, 0));
        VX_CALL(vxReleaseImage(&first));
    }
    VX_CALL(vxReleaseObjectArray(&array));
}

TEST(object_array, tensor_view_errors)
{
    vx_size dims3[3] = {4, 4, 2}, dims2[2] = {4, 4};
    vx_rectangle_t r = make_rect(0, 0, 4, 4), big = make_rect(0, 0, 5, 4);
    vx_tensor t3 = ct_tensor(context, 3, dims3, &CT_U8), t2 = ct_tensor(context, 2, dims2, &CT_U8);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t2, &r, 1, 1, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &r, 1, 1, VX_DF_IMAGE_S16)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &big, 1, 1, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &r, 3, 1, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, NULL, 1, 1, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor((vx_tensor)context, &r, 1, 1, VX_DF_IMAGE_U8)));
    VX_CALL(vxReleaseTensor(&t3));
    VX_CALL(vxReleaseTensor(&t2));
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
