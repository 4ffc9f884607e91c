/* test_tensor_api.c: every tensor API function: creation (and its errors), queries, strided
 * copy patches, views, maps, handles and swaps, virtual tensors. */
#include "ct_vx.h"

#include <stdlib.h>
#include <string.h>

TESTCASE(tensor);

typedef struct {
    const ct_format *fmt;
    int variant;
} t_arg;

static void gen_tensor(void)
{
    int f, v;
    char name[48];
    for (f = 0; f < 3; f++)
        for (v = 0; v < 12; v++) {
            t_arg a;
            a.fmt = CT_NN_FORMATS[f];
            a.variant = v;
            snprintf(name, sizeof name, "%s/%d", a.fmt->name, v);
            ct_emit(name, &a);
        }
}

static size_t random_tensor_dims(vx_size *dims, int max_rank)
{
    int rank = ct_rand_range(1, max_rank), i;
    for (i = 0; i < rank; i++)
        dims[i] = ct_rand_range(1, rank > 4 ? 3 : 5);
    return (size_t)rank;
}

/* padded strides: stride[0] = element size, each at least the previous times its extent */
static void padded_strides(vx_size *stride, size_t rank, const vx_size *extent, size_t es)
{
    size_t i;
    stride[0] = es;
    for (i = 1; i < rank; i++)
        stride[i] = stride[i - 1] * extent[i - 1] + es * ct_rand_range(0, 2);
}

static size_t offset_of(size_t flat, size_t rank, const vx_size *extent, const vx_size *stride)
{
    size_t i, off = 0;
    for (i = 0; i < rank; i++) {
        off += (flat % extent[i]) * stride[i];
        flat /= extent[i];
    }
    return off;
}

/* flat index in the whole tensor of element `flat` of the patch [start, start + extent) */
static size_t patch_to_full(size_t flat, size_t rank, const vx_size *dims, const vx_size *start, const vx_size *extent)
{
    size_t i, idx = 0, mul = 1;
    for (i = 0; i < rank; i++) {
        idx += (start[i] + flat % extent[i]) * mul;
        flat /= extent[i];
        mul *= dims[i];
    }
    return idx;
}

TEST_WITH_ARG(tensor, create_query, t_arg, gen_tensor)
{
    vx_size dims[6], back[6], rank = random_tensor_dims(dims, 6), n = 0, size = 0;
    vx_enum type = 0;
    vx_int8 fpp = -1;
    vx_tensor t = ct_tensor(context, rank, dims, arg->fmt);
    int64_t *zero = ct_alloc(ct_count(rank, dims)), *got = ct_alloc(ct_count(rank, dims));
    VX_CALL(vxQueryTensor(t, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n));
    ASSERT_EQ_INT(rank, n);
    VX_CALL(vxQueryTensor(t, VX_TENSOR_DIMS, back, rank * sizeof(vx_size)));
    ASSERT(memcmp(dims, back, rank * sizeof(vx_size)) == 0);
    VX_CALL(vxQueryTensor(t, VX_TENSOR_DATA_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(arg->fmt->type, type);
    VX_CALL(vxQueryTensor(t, VX_TENSOR_FIXED_POINT_POSITION, &fpp, sizeof fpp));
    ASSERT_EQ_INT(arg->fmt->fpp, fpp);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxQueryTensor(t, VX_TENSOR_DATA_TYPE, &type, 1));
    (void)size;
    ct_read(t, got); /* storage is zeroed at creation */
    ASSERT_EQ_ARRAY("new tensor", zero, got, ct_count(rank, dims));
    VX_CALL(vxReleaseTensor(&t));
}

TEST(tensor, create_errors)
{
    vx_size dims[7] = {2, 2, 2, 2, 2, 2, 2}, zero[2] = {2, 0};
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxGetStatus((vx_reference)vxCreateTensor(context, 7, dims, VX_TYPE_UINT8, 0)));
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxGetStatus((vx_reference)vxCreateTensor(context, 0, dims, VX_TYPE_UINT8, 0)));
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxGetStatus((vx_reference)vxCreateTensor(context, 2, zero, VX_TYPE_UINT8, 0)));
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxGetStatus((vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_FLOAT64, 0)));
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_BOOL, 1)));
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_INT8, 8)));
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_UINT8, 9)));
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)vxCreateTensor(context, 2, dims, VX_TYPE_FLOAT32, 1)));
}

TEST_WITH_ARG(tensor, copy_patch_strided, t_arg, gen_tensor)
{
    const ct_format *f = arg->fmt;
    size_t es = ct_elem_size(f->type), i;
    vx_size dims[6], start[6], end[6], extent[6], stride[6], rank = random_tensor_dims(dims, 6), bytes;
    size_t n = ct_count(rank, dims), np;
    int64_t *model = ct_alloc(n), *got = ct_alloc(n), *patch;
    unsigned char *buf;
    vx_tensor t = ct_tensor(context, rank, dims, f);

    ct_fill_format(model, n, f->type);
    ct_write(t, model);
    for (i = 0; i < rank; i++) {
        start[i] = ct_rand_range(0, (int)dims[i] - 1);
        end[i] = ct_rand_range((int)start[i] + 1, (int)dims[i]);
        extent[i] = end[i] - start[i];
    }
    padded_strides(stride, rank, extent, es);
    np = ct_count(rank, extent);
    bytes = stride[rank - 1] * extent[rank - 1];
    buf = (unsigned char *)ct_alloc(bytes / 8 + 1);
    patch = ct_alloc(np);
    ct_fill_format(patch, np, f->type);
    for (i = 0; i < np; i++) {
        ct_set(buf + offset_of(i, rank, extent, stride), f->type, 0, patch[i]);
        model[patch_to_full(i, rank, dims, start, extent)] = patch[i];
    }
    VX_CALL(vxCopyTensorPatch(t, rank, start, end, stride, buf, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    ct_read(t, got);
    ASSERT_EQ_ARRAY("tensor after a strided patch write", model, got, n);
    /* read the patch back through other padded strides */
    padded_strides(stride, rank, extent, es);
    memset(buf, 0, bytes);
    buf = (unsigned char *)ct_alloc(stride[rank - 1] * extent[rank - 1] / 8 + 1);
    VX_CALL(vxCopyTensorPatch(t, rank, start, end, stride, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    for (i = 0; i < np; i++)
        got[i] = ct_get(buf + offset_of(i, rank, extent, stride), f->type, 0);
    ASSERT_EQ_ARRAY("strided patch read", patch, got, np);
    /* bad bounds and strides */
    end[0] = dims[0] + 1;
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyTensorPatch(t, rank, start, end, stride, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    end[0] = start[0] + extent[0];
    stride[0] = es + 1;
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyTensorPatch(t, rank, start, end, stride, buf, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxReleaseTensor(&t));
}

TEST_WITH_ARG(tensor, view_and_map, t_arg, gen_tensor)
{
    const ct_format *f = arg->fmt;
    vx_size dims[6], start[6], end[6], extent[6], zero[6] = {0}, stride[6], rank = random_tensor_dims(dims, 6), vr = 0;
    vx_size view_rank = ct_rand_range(1, (int)rank), vdims[6], i;
    size_t n = ct_count(rank, dims), np;
    int64_t *model = ct_alloc(n), *got = ct_alloc(n);
    vx_tensor t = ct_tensor(context, rank, dims, f), view;
    vx_map_id map_id = 0;
    void *ptr = NULL;

    ct_fill_format(model, n, f->type);
    ct_write(t, model);
    for (i = 0; i < rank; i++) {
        start[i] = i < view_rank ? (vx_size)ct_rand_range(0, (int)dims[i] - 1) : 0;
        end[i] = i < view_rank ? (vx_size)ct_rand_range((int)start[i] + 1, (int)dims[i]) : dims[i];
        extent[i] = end[i] - start[i];
    }
    /* fewer dims than the tensor: the higher dims are taken whole */
    view = vxCreateTensorFromView(t, view_rank, start, end);
    ASSERT_VX_OBJECT(view);
    VX_CALL(vxQueryTensor(view, VX_TENSOR_NUMBER_OF_DIMS, &vr, sizeof vr));
    ASSERT_EQ_INT(rank, vr);
    VX_CALL(vxQueryTensor(view, VX_TENSOR_DIMS, vdims, rank * sizeof(vx_size)));
    for (i = 0; i < rank; i++)
        ASSERT_EQ_INT(extent[i], vdims[i]);
    np = ct_count(rank, extent);
    /* map the whole view, negate-ish every element through the map */
    VX_CALL(vxMapTensorPatch(view, rank, zero, extent, &map_id, stride, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST));
    ASSERT(ptr != NULL);
    ASSERT_EQ_INT(ct_elem_size(f->type), stride[0]);
    for (i = 0; i < np; i++) {
        unsigned char *p = (unsigned char *)ptr + offset_of(i, rank, extent, stride);
        size_t full = patch_to_full(i, rank, dims, start, extent);
        int64_t value = ct_get(p, f->type, 0);
        ASSERT_EQ_INT(model[full], value);
        model[full] = ct_fit(ct_hi(f->type) - value, f->type, 0);
        ct_set(p, f->type, 0, model[full]);
    }
    VX_CALL(vxUnmapTensorPatch(view, map_id));
    ct_read(t, got);
    ASSERT_EQ_ARRAY("parent after writing a mapped view", model, got, n);
    /* a view of bad bounds */
    end[0] = dims[0] + 1;
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)vxCreateTensorFromView(t, 1, start, end)));
    VX_CALL(vxReleaseTensor(&view));
    VX_CALL(vxReleaseTensor(&t));
}

TEST_WITH_ARG(tensor, handle_and_swap, t_arg, gen_tensor)
{
    const ct_format *f = arg->fmt;
    size_t es = ct_elem_size(f->type), i;
    vx_size dims[6], stride[6], rank = random_tensor_dims(dims, 4), bytes;
    size_t n = ct_count(rank, dims);
    int64_t *vals = ct_alloc(n), *vals2 = ct_alloc(n), *got = ct_alloc(n);
    unsigned char *mem1, *mem2;
    void *prev = NULL;
    vx_tensor t;

    padded_strides(stride, rank, dims, es);
    bytes = stride[rank - 1] * dims[rank - 1];
    mem1 = (unsigned char *)ct_alloc(bytes / 8 + 1);
    mem2 = (unsigned char *)ct_alloc(bytes / 8 + 1);
    ct_fill_format(vals, n, f->type);
    ct_fill_format(vals2, n, f->type);
    for (i = 0; i < n; i++) {
        ct_set(mem1 + offset_of(i, rank, dims, stride), f->type, 0, vals[i]);
        ct_set(mem2 + offset_of(i, rank, dims, stride), f->type, 0, vals2[i]);
    }
    t = vxCreateTensorFromHandle(context, rank, dims, f->type, (vx_int8)f->fpp, stride, mem1, VX_MEMORY_TYPE_HOST);
    ASSERT_VX_OBJECT(t);
    ct_read(t, got);
    ASSERT_EQ_ARRAY("tensor from handle", vals, got, n);
    VX_CALL(vxSwapTensorHandle(t, mem2, &prev));
    ASSERT(prev == mem1);
    ct_read(t, got);
    ASSERT_EQ_ARRAY("tensor after swap", vals2, got, n);
    /* write through the library: the application's memory sees it */
    ct_write(t, vals);
    for (i = 0; i < n; i++)
        got[i] = ct_get(mem2 + offset_of(i, rank, dims, stride), f->type, 0);
    ASSERT_EQ_ARRAY("application memory after a write", vals, got, n);
    /* take the memory back: no access until the next swap */
    VX_CALL(vxSwapTensorHandle(t, NULL, &prev));
    ASSERT(prev == mem2);
    {
        vx_size zero[6] = {0};
        ASSERT_STATUS(VX_ERROR_NO_MEMORY, vxCopyTensorPatch(t, rank, zero, dims, stride, mem1, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    }
    VX_CALL(vxSwapTensorHandle(t, mem1, NULL));
    ct_read(t, got);
    ASSERT_EQ_ARRAY("tensor after swapping back", vals, got, n);
    VX_CALL(vxReleaseTensor(&t));
    /* a vxCreateTensor tensor swaps too (packed strides); the previous pointer is its
     * own memory, which keeps its data until the tensor is released */
    t = ct_tensor(context, rank, dims, f);
    ct_write(t, vals);
    {
        vx_size packed[6], zero[6] = {0};
        unsigned char *mem3;
        packed[0] = es;
        for (i = 1; i < rank; i++)
            packed[i] = packed[i - 1] * dims[i - 1];
        mem3 = (unsigned char *)ct_alloc(packed[rank - 1] * dims[rank - 1] / 8 + 1);
        for (i = 0; i < n; i++)
            ct_set(mem3, f->type, i, vals2[i]);
        VX_CALL(vxSwapTensorHandle(t, mem3, &prev));
        ASSERT(prev != NULL && prev != (void *)mem3);
        for (i = 0; i < n; i++)
            got[i] = ct_get(prev, f->type, i);
        ASSERT_EQ_ARRAY("the library's memory returned by the swap", vals, got, n);
        ct_read(t, got);
        ASSERT_EQ_ARRAY("created tensor after a swap", vals2, got, n);
        ASSERT_STATUS(VX_SUCCESS, vxCopyTensorPatch(t, rank, zero, dims, packed, prev, VX_WRITE_ONLY,
                                                    VX_MEMORY_TYPE_HOST));
        for (i = 0; i < n; i++)
            got[i] = ct_get(mem3, f->type, i);
        ASSERT_EQ_ARRAY("application memory written through the swapped tensor", vals, got, n);
    }
    VX_CALL(vxReleaseTensor(&t));
    /* a NULL pointer is accepted: no memory until a swap */
    t = vxCreateTensorFromHandle(context, rank, dims, f->type, (vx_int8)f->fpp, stride, NULL, VX_MEMORY_TYPE_HOST);
    ASSERT_VX_OBJECT(t);
    VX_CALL(vxSwapTensorHandle(t, mem2, NULL));
    ct_read(t, got);
    ASSERT_EQ_ARRAY("tensor from a NULL handle after a swap", vals, got, n);
    VX_CALL(vxReleaseTensor(&t));
}

TEST_WITH_ARG(tensor, virtual_between_nodes, t_arg, gen_tensor)
{
    const ct_format *f = arg->fmt;
    vx_size dims[6], rank = random_tensor_dims(dims, 4), got_rank = 0, got_dims[6], zero[6] = {0}, stride[6], i;
    size_t n = ct_count(rank, dims);
    int64_t *a = ct_alloc(n), *b = ct_alloc(n), *expected = ct_alloc(n), *actual = ct_alloc(n), *tmp = ct_alloc(n);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor ta = ct_tensor(context, rank, dims, f), tb = ct_tensor(context, rank, dims, f);
    vx_tensor out = ct_tensor(context, rank, dims, f), virt;
    vx_node n1, n2;
    int unknown = arg->variant % 2;

    ASSERT_VX_OBJECT(graph);
    /* unknown rank, dims and type when `unknown`: verification infers them */
    virt = unknown ? vxCreateVirtualTensor(graph, 0, NULL, VX_TYPE_INVALID, 0)
                   : vxCreateVirtualTensor(graph, rank, dims, f->type, (vx_int8)f->fpp);
    ASSERT_VX_OBJECT(virt);
    ct_fill_format(a, n, f->type);
    ct_fill_format(b, n, f->type);
    for (i = 0; i < n; i++)
        expected[i] = ct_fit(ct_fit(a[i] + b[i], f->type, 1) - b[i], f->type, 0);
    ct_write(ta, a);
    ct_write(tb, b);
    n1 = vxTensorAddNode(graph, ta, tb, VX_CONVERT_POLICY_SATURATE, virt);
    n2 = vxTensorSubtractNode(graph, virt, tb, VX_CONVERT_POLICY_WRAP, out);
    ASSERT_VX_OBJECT(n1);
    ASSERT_VX_OBJECT(n2);
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxQueryTensor(virt, VX_TENSOR_NUMBER_OF_DIMS, &got_rank, sizeof got_rank));
    ASSERT_EQ_INT(rank, got_rank);
    VX_CALL(vxQueryTensor(virt, VX_TENSOR_DIMS, got_dims, rank * sizeof(vx_size)));
    ASSERT(memcmp(got_dims, dims, rank * sizeof(vx_size)) == 0);
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, actual);
    ASSERT_EQ_ARRAY("output through a virtual tensor", expected, actual, n);
    stride[0] = ct_elem_size(f->type);
    for (i = 1; i < rank; i++)
        stride[i] = stride[i - 1] * dims[i - 1];
    ASSERT_STATUS(VX_ERROR_OPTIMIZED_AWAY, vxCopyTensorPatch(virt, rank, zero, dims, stride, tmp, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxReleaseNode(&n1));
    VX_CALL(vxReleaseNode(&n2));
    VX_CALL(vxReleaseTensor(&virt));
    VX_CALL(vxReleaseTensor(&ta));
    VX_CALL(vxReleaseTensor(&tb));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseGraph(&graph));
}
