/* tensor_roundtrip.c: fill a tensor, map a view of it and change the data
 * through the map, read it back with a padded (strided) copy, check every
 * element, release everything and check that no reference is left. */
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

#define W 5
#define H 4
#define C 3

/* The value first written at (x, y, c). */
static vx_int16 initial(vx_size x, vx_size y, vx_size c)
{
    return (vx_int16)(x + 10 * y + 100 * c - 150);
}

static int fail(const char *what, vx_status status)
{
    fprintf(stderr, "tensor_roundtrip: %s (status %d)\n", what, status);
    return 1;
}

static vx_uint32 references(vx_context context)
{
    vx_uint32 count = 0;
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &count, sizeof count);
    return count;
}

int main(void)
{
    vx_context context = vxCreateContext();
    const vx_size dims[3] = {W, H, C};
    const vx_size zero[3] = {0, 0, 0};
    const vx_size packed[3] = {sizeof(vx_int16), W * sizeof(vx_int16), W * H * sizeof(vx_int16)};
    /* The view covers x 1..3, y 1..2 and every channel. */
    const vx_size view_start[2] = {1, 1}, view_end[2] = {4, 3};
    const vx_size view_dims[3] = {3, 2, C};
    /* Padded user layout for the view: rows of 4 elements, planes of 3 rows. */
    const vx_size padded[3] = {sizeof(vx_int16), 4 * sizeof(vx_int16), 12 * sizeof(vx_int16)};
    vx_int16 data[C][H][W], back[C][3][4];
    vx_size x, y, c, n = 0, stride[3] = {0, 0, 0};
    vx_map_id map_id = 0;
    void *ptr = NULL;
    vx_tensor tensor, view;
    vx_enum data_type = 0;
    vx_uint32 baseline;
    vx_status status;

    if (vxGetStatus((vx_reference)context) != VX_SUCCESS)
        return fail("vxCreateContext failed", vxGetStatus((vx_reference)context));
    baseline = references(context);

    tensor = vxCreateTensor(context, 3, dims, VX_TYPE_INT16, 8);
    if ((status = vxGetStatus((vx_reference)tensor)) != VX_SUCCESS)
        return fail("vxCreateTensor failed", status);
    for (c = 0; c < C; c++)
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++)
                data[c][y][x] = initial(x, y, c);
    status = vxCopyTensorPatch(tensor, 3, zero, dims, packed, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
    if (status != VX_SUCCESS)
        return fail("writing the tensor failed", status);

    view = vxCreateTensorFromView(tensor, 2, view_start, view_end);
    if ((status = vxGetStatus((vx_reference)view)) != VX_SUCCESS)
        return fail("vxCreateTensorFromView failed", status);
    if (vxQueryTensor(view, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n) != VX_SUCCESS || n != 3 ||
        vxQueryTensor(view, VX_TENSOR_DATA_TYPE, &data_type, sizeof data_type) != VX_SUCCESS ||
        data_type != VX_TYPE_INT16)
        return fail("the view does not report rank 3 and VX_TYPE_INT16", VX_FAILURE);

    /* Map the whole view and negate it in place. */
    status = vxMapTensorPatch(view, 3, zero, view_dims, &map_id, stride, &ptr, VX_READ_AND_WRITE,
                              VX_MEMORY_TYPE_HOST);
    if (status != VX_SUCCESS)
        return fail("vxMapTensorPatch failed", status);
    if (stride[0] != packed[0] || stride[1] != packed[1] || stride[2] != packed[2])
        return fail("the map's strides are not the tensor's packed strides", VX_FAILURE);
    for (c = 0; c < C; c++)
        for (y = 0; y < 2; y++)
            for (x = 0; x < 3; x++) {
                vx_int16 *element = (vx_int16 *)((char *)ptr + x * stride[0] + y * stride[1] + c * stride[2]);
                if (*element != initial(x + 1, y + 1, c))
                    return fail("a mapped element differs from what was written", VX_FAILURE);
                *element = (vx_int16)-*element;
            }
    if ((status = vxUnmapTensorPatch(view, map_id)) != VX_SUCCESS)
        return fail("vxUnmapTensorPatch failed", status);

    /* Read the view back into the padded layout; the padding must stay as it was. */
    memset(back, 0x5A, sizeof back);
    status = vxCopyTensorPatch(view, 3, zero, view_dims, padded, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    if (status != VX_SUCCESS)
        return fail("the strided read of the view failed", status);
    for (c = 0; c < C; c++)
        for (y = 0; y < 3; y++)
            for (x = 0; x < 4; x++) {
                int inside = x < 3 && y < 2;
                vx_int16 expected = inside ? (vx_int16)-initial(x + 1, y + 1, c) : (vx_int16)0x5A5A;
                if (back[c][y][x] != expected) {
                    fprintf(stderr, "tensor_roundtrip: at (%d, %d, %d) read %d, expected %d\n",
                            (int)x, (int)y, (int)c, back[c][y][x], expected);
                    return 1;
                }
            }

    /* The parent outside the view is untouched. */
    status = vxCopyTensorPatch(tensor, 3, zero, dims, packed, data, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    if (status != VX_SUCCESS)
        return fail("reading the tensor failed", status);
    for (c = 0; c < C; c++)
        for (y = 0; y < H; y++)
            for (x = 0; x < W; x++) {
                int inside = x >= 1 && x < 4 && y >= 1 && y < 3;
                if (data[c][y][x] != (inside ? -initial(x, y, c) : initial(x, y, c)))
                    return fail("the tensor does not hold what the view wrote", VX_FAILURE);
            }

    if (vxReleaseTensor(&tensor) != VX_SUCCESS || vxReleaseTensor(&view) != VX_SUCCESS || tensor || view)
        return fail("releasing the tensors failed", VX_FAILURE);
    if (references(context) != baseline) {
        fprintf(stderr, "tensor_roundtrip: %u references left, %u expected\n", references(context), baseline);
        return 1;
    }
    printf("tensor_roundtrip: ok\n");
    return vxReleaseContext(&context) == VX_SUCCESS ? 0 : 1;
}
