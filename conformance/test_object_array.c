/* test_object_array.c: arrays (items added with the application's stride, ranges copied and
 * mapped, truncation, capacity) and object arrays (items like an exemplar; images viewing a
 * 3-D tensor, whose writes land in the tensor). */
#include "ct_vx.h"

#include <VX/vx_compatibility.h>
#include <string.h>

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
    /* jump is in bytes: the dim-2 stride of the packed tensor times the slice step */
    array = vxCreateImageObjectArrayFromTensor(tensor, &r, count, jump * dims[0] * dims[1] * ct_elem_size(arg->fmt->type),
                                               arg->format);
    ASSERT_VX_OBJECT(array);
    for (i = 0; i < count; i++) {
        vx_image image = (vx_image)vxGetObjectArrayItem(array, (vx_uint32)i);
        vx_uint32 w = r.end_x - r.start_x, h = r.end_y - r.start_y, qw = 0;
        vx_rectangle_t all = ct_rect(0, 0, w, h);
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
        vx_rectangle_t one = ct_rect(0, 0, 1, 1);
        size_t es = ct_elem_size(arg->fmt->type);
        vx_imagepatch_addressing_t ua = ct_addressing(1, 1, (vx_int32)es, (vx_int32)es);
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
    vx_rectangle_t r = ct_rect(0, 0, 4, 4), big = ct_rect(0, 0, 5, 4);
    vx_tensor t3 = ct_tensor(context, 3, dims3, &CT_U8), t2 = ct_tensor(context, 2, dims2, &CT_U8);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t2, &r, 1, 16, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &r, 1, 16, VX_DF_IMAGE_S16)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &big, 1, 16, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &r, 3, 16, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, &r, 2, 1, VX_DF_IMAGE_U8))); /* not a multiple of the 16-byte dim-2 stride */
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor(t3, NULL, 1, 16, VX_DF_IMAGE_U8)));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxGetStatus((vx_reference)vxCreateImageObjectArrayFromTensor((vx_tensor)context, &r, 1, 16, VX_DF_IMAGE_U8)));
    VX_CALL(vxReleaseTensor(&t3));
    VX_CALL(vxReleaseTensor(&t2));
}

/* ---- vxReplicateNode: a node per item of object arrays -------------------------------------------- */
TEST(object_array, replicated_node_processes_every_item)
{
    vx_size dims[2] = {5, 3};
    vx_size n_items = (vx_size)ct_rand_range(2, 4), i;
    int64_t a[15], b[15], got[15];
    vx_tensor exemplar = ct_tensor(context, 2, dims, &CT_S8);
    vx_object_array in1 = vxCreateObjectArray(context, (vx_reference)exemplar, n_items);
    vx_object_array out = vxCreateObjectArray(context, (vx_reference)exemplar, n_items);
    vx_tensor shared = ct_tensor(context, 2, dims, &CT_S8);
    vx_tensor first_in = (vx_tensor)vxGetObjectArrayItem(in1, 0), first_out = (vx_tensor)vxGetObjectArrayItem(out, 0);
    vx_graph graph = vxCreateGraph(context);
    vx_node node = vxTensorAddNode(graph, first_in, shared, VX_CONVERT_POLICY_SATURATE, first_out);
    vx_bool flags[4] = {vx_true_e, vx_false_e, vx_false_e, vx_true_e}, wrong[4] = {vx_false_e, vx_true_e, vx_false_e, vx_true_e};
    vx_bool back[4] = {vx_false_e, vx_false_e, vx_false_e, vx_false_e}, replicated = vx_false_e;
    vx_uint32 count = 0;
    ASSERT_VX_OBJECT(node);
    ct_fill_format(b, 15, VX_TYPE_INT8);
    ct_write(shared, b);
    for (i = 0; i < n_items; i++) {
        vx_tensor t = (vx_tensor)vxGetObjectArrayItem(in1, (vx_uint32)i);
        ct_fill_format(a, 15, VX_TYPE_INT8);
        ct_write(t, a);
        VX_CALL(vxReleaseTensor(&t));
    }
    /* the statuses for bad references and arguments */
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReplicateNode(NULL, node, flags, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReplicateNode(graph, NULL, flags, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReplicateNode(graph, (vx_node)shared, flags, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReplicateNode((vx_graph)node, node, flags, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxReplicateNode(graph, node, flags, 3));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxReplicateNode(graph, node, NULL, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxReplicateNode(graph, node, wrong, 4)); /* shared is no item */
    VX_CALL(vxReplicateNode(graph, node, flags, 4));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxReplicateNode(graph, node, flags, 4)); /* once only */
    VX_CALL(vxQueryNode(node, VX_NODE_IS_REPLICATED, &replicated, sizeof replicated));
    ASSERT_EQ_INT(vx_true_e, replicated);
    VX_CALL(vxQueryNode(node, VX_NODE_REPLICATE_FLAGS, back, sizeof back));
    ASSERT(memcmp(back, flags, sizeof flags) == 0);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_NUMNODES, &count, sizeof count));
    ASSERT_EQ_INT(n_items, count);
    VX_CALL(vxProcessGraph(graph));
    for (i = 0; i < n_items; i++) { /* item i of out = saturate(item i of in1 + shared) */
        vx_tensor t = (vx_tensor)vxGetObjectArrayItem(in1, (vx_uint32)i), o = (vx_tensor)vxGetObjectArrayItem(out, (vx_uint32)i);
        size_t k;
        ct_read(t, a);
        ct_read(o, got);
        for (k = 0; k < 15; k++)
            a[k] = ct_fit(a[k] + b[k], VX_TYPE_INT8, 1);
        ASSERT_EQ_ARRAY("replica output", a, got, 15);
        VX_CALL(vxReleaseTensor(&t));
        VX_CALL(vxReleaseTensor(&o));
    }
    VX_CALL(vxRemoveNode(&node)); /* its replicas go with it */
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_NUMNODES, &count, sizeof count));
    ASSERT_EQ_INT(0, count);
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&first_in));
    VX_CALL(vxReleaseTensor(&first_out));
    VX_CALL(vxReleaseTensor(&shared));
    VX_CALL(vxReleaseTensor(&exemplar));
    VX_CALL(vxReleaseObjectArray(&in1));
    VX_CALL(vxReleaseObjectArray(&out));
}
