/* test_api.c: context and references, error objects, log, scalars, LUTs, kernels, parameters,
 * graphs (verify errors, graph parameters, callbacks, scheduling), and the tensor API
 * (views, handles, swap, map, strided copy patches, virtual tensors). Statuses follow
 * docs/decisions.md. */
#include "ct_vx.h"

#include <string.h>

TESTCASE(api);

static vx_uint32 refs_of(vx_context context)
{
    vx_uint32 n = 0;
    VX_CALL(vxQueryContext(context, VX_CONTEXT_REFERENCES, &n, sizeof n));
    return n;
}

/* ---- context ---------------------------------------------------------------------------- */
TEST(context, attributes)
{
    vx_uint16 vendor = 0;
    vx_size max_dims = 0;
    vx_char name[VX_MAX_IMPLEMENTATION_NAME];
    vx_uint32 kernels = 0;
    VX_CALL(vxQueryContext(context, VX_CONTEXT_VENDOR_ID, &vendor, sizeof vendor));
    ASSERT_EQ_INT(VX_ID_USER, vendor);
    VX_CALL(vxQueryContext(context, VX_CONTEXT_MAX_TENSOR_DIMS, &max_dims, sizeof max_dims));
    ASSERT_EQ_INT(6, max_dims);
    VX_CALL(vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, name, sizeof name));
    ASSERT(strcmp(name, "openvx-nn") == 0);
    VX_CALL(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNELS, &kernels, sizeof kernels));
    ASSERT(kernels >= 15);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxQueryContext(context, VX_CONTEXT_VENDOR_ID, &vendor, 1));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryContext(NULL, VX_CONTEXT_VENDOR_ID, &vendor, sizeof vendor));
}

TEST(context, singleton_and_refcount)
{
    vx_uint32 before = refs_of(context);
    vx_context again = vxCreateContext();
    vx_uint32 count = 0;
    ASSERT(again == context);
    VX_CALL(vxQueryReference((vx_reference)context, VX_REFERENCE_COUNT, &count, sizeof count));
    ASSERT(count >= 2);
    VX_CALL(vxReleaseContext(&again));
    ASSERT(again == NULL);
    ASSERT_EQ_INT(before, refs_of(context));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReleaseContext(NULL));
}

TEST(context, set_attribute_hint_directive)
{
    vx_border_t border, back;
    vx_graph graph;
    memset(&border, 0, sizeof border);
    border.mode = VX_BORDER_CONSTANT;
    border.constant_value.U8 = 7;
    VX_CALL(vxSetContextAttribute(context, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border));
    VX_CALL(vxQueryContext(context, VX_CONTEXT_IMMEDIATE_BORDER, &back, sizeof back));
    ASSERT_EQ_INT(VX_BORDER_CONSTANT, back.mode);
    ASSERT_EQ_INT(7, back.constant_value.U8);
    ASSERT_STATUS(VX_ERROR_NOT_SUPPORTED, vxSetContextAttribute(context, VX_CONTEXT_VENDOR_ID, &border, sizeof(vx_uint16)));
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    VX_CALL(vxHint((vx_reference)graph, VX_HINT_PERFORMANCE_DEFAULT, NULL, 0));
    VX_CALL(vxDirective((vx_reference)graph, VX_DIRECTIVE_ENABLE_PERFORMANCE));
    ASSERT(vxHint(NULL, VX_HINT_PERFORMANCE_DEFAULT, NULL, 0) != VX_SUCCESS);
    ASSERT(vxDirective(NULL, VX_DIRECTIVE_ENABLE_PERFORMANCE) != VX_SUCCESS);
    VX_CALL(vxSetImmediateModeTarget(context, VX_TARGET_ANY, NULL));
    VX_CALL(vxSetImmediateModeTarget(context, VX_TARGET_STRING, "cpu"));
    ASSERT(vxSetImmediateModeTarget(context, VX_TARGET_STRING, "no-such-target") != VX_SUCCESS);
    VX_CALL(vxReleaseGraph(&graph));
}

/* ---- references and error objects ---------------------------------------------------------- */
TEST(reference, query_retain_release_name)
{
    vx_size dims[2] = {3, 2};
    vx_tensor t = ct_tensor(context, 2, dims, &CT_U8);
    vx_reference r = (vx_reference)t;
    vx_uint32 count = 0;
    vx_enum type = 0;
    vx_char *name = NULL;
    char long_name[80];
    VX_CALL(vxQueryReference(r, VX_REFERENCE_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(VX_TYPE_TENSOR, type);
    VX_CALL(vxQueryReference(r, VX_REFERENCE_COUNT, &count, sizeof count));
    ASSERT_EQ_INT(1, count);
    VX_CALL(vxRetainReference(r));
    VX_CALL(vxQueryReference(r, VX_REFERENCE_COUNT, &count, sizeof count));
    ASSERT_EQ_INT(2, count);
    VX_CALL(vxSetReferenceName(r, "weights"));
    VX_CALL(vxQueryReference(r, VX_REFERENCE_NAME, &name, sizeof name));
    ASSERT(name && strcmp(name, "weights") == 0);
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxSetReferenceName(r, long_name));
    ASSERT(vxGetContext(r) == context);
    VX_CALL(vxReleaseReference(&r));
    ASSERT(r == NULL);
    VX_CALL(vxReleaseTensor(&t));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReleaseTensor(&t));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxRetainReference(NULL));
}

TEST(reference, stale_handles_are_rejected)
{
    vx_size dims[1] = {4};
    vx_tensor t = ct_tensor(context, 1, dims, &CT_S8), stale = t;
    vx_size n = 0;
    VX_CALL(vxReleaseTensor(&t));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryTensor(stale, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n));
    ASSERT_STATUS(VX_ERROR_NO_RESOURCES, vxGetStatus(NULL)); /* the spec's answer for NULL */
    /* a wrongly typed handle */
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxQueryTensor((vx_tensor)context, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n));
}

TEST(reference, error_objects)
{
    vx_size zero_dims[1] = {0}, dims[1] = {2};
    vx_tensor bad = vxCreateTensor(context, 1, zero_dims, VX_TYPE_UINT8, 0);
    vx_tensor bad2 = vxCreateTensor(context, 1, dims, VX_TYPE_UINT8, 0);
    vx_tensor bad3 = vxCreateTensor(context, 1, dims, VX_TYPE_INT16, 16);
    vx_scalar bad_scalar = vxCreateScalar(context, VX_TYPE_TENSOR, NULL);
    vx_uint32 before = refs_of(context);
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxGetStatus((vx_reference)bad));
    ASSERT_VX_OBJECT(bad2);
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)bad3));
    ASSERT(vxGetStatus((vx_reference)bad_scalar) != VX_SUCCESS);
    ASSERT(vxGetContext((vx_reference)bad) == context);
    {
        vx_enum kind = 0;
        vx_reference r = (vx_reference)bad;
        VX_CALL(vxQueryReference(r, VX_REFERENCE_TYPE, &kind, sizeof kind));
        ASSERT_EQ_INT(VX_TYPE_ERROR, kind);
        /* not a tensor: the typed release refuses it; releasing the reference is a no-op that succeeds */
        ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxReleaseTensor(&bad));
        VX_CALL(vxReleaseReference(&r));
        ASSERT(r == NULL);
        r = (vx_reference)bad_scalar;
        VX_CALL(vxReleaseReference(&r));
    }
    VX_CALL(vxReleaseTensor(&bad2));
    ASSERT_EQ_INT(before - 1, refs_of(context));
}

/* ---- log ------------------------------------------------------------------------------------ */
static int log_calls;
static vx_status log_status;
static char log_text[VX_MAX_LOG_MESSAGE_LEN];

static void VX_CALLBACK on_log(vx_context c, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)c;
    (void)ref;
    log_calls++;
    log_status = status;
    strncpy(log_text, string, sizeof log_text - 1);
}

TEST(log, entries_and_callback)
{
    vx_size dims[1] = {2};
    vx_tensor t = ct_tensor(context, 1, dims, &CT_U8);
    vx_size n = 0;
    log_calls = 0;
    vxRegisterLogCallback(context, on_log, vx_false_e);
    vxAddLogEntry((vx_reference)t, VX_FAILURE, "custom %d", 42);
    ASSERT_EQ_INT(1, log_calls);
    ASSERT_EQ_INT(VX_FAILURE, log_status);
    ASSERT(strstr(log_text, "custom 42") != NULL);
    vxAddLogEntry((vx_reference)t, VX_SUCCESS, "dropped");
    ASSERT_EQ_INT(1, log_calls);
    /* a library error is logged too */
    ASSERT(vxQueryTensor(t, VX_TENSOR_NUMBER_OF_DIMS, &n, 1) != VX_SUCCESS);
    ASSERT_EQ_INT(2, log_calls);
    ASSERT(strstr(log_text, "vxQueryTensor") != NULL);
    vxRegisterLogCallback(context, NULL, vx_false_e);
    VX_CALL(vxReleaseTensor(&t));
}

/* ---- scalars --------------------------------------------------------------------------------- */
typedef struct {
    vx_enum type;
    size_t size;
    const char *name;
} scalar_arg;

static void gen_scalars(void)
{
    static const scalar_arg list[] = {
        {VX_TYPE_CHAR, sizeof(vx_char), "CHAR"},     {VX_TYPE_INT8, 1, "INT8"},
        {VX_TYPE_UINT8, 1, "UINT8"},                 {VX_TYPE_INT16, 2, "INT16"},
        {VX_TYPE_UINT16, 2, "UINT16"},               {VX_TYPE_INT32, 4, "INT32"},
        {VX_TYPE_UINT32, 4, "UINT32"},               {VX_TYPE_INT64, 8, "INT64"},
        {VX_TYPE_UINT64, 8, "UINT64"},               {VX_TYPE_FLOAT32, 4, "FLOAT32"},
        {VX_TYPE_FLOAT64, 8, "FLOAT64"},             {VX_TYPE_ENUM, sizeof(vx_enum), "ENUM"},
        {VX_TYPE_SIZE, sizeof(vx_size), "SIZE"},     {VX_TYPE_DF_IMAGE, sizeof(vx_df_image), "DF_IMAGE"},
        {VX_TYPE_BOOL, sizeof(vx_bool), "BOOL"},
    };
    size_t i;
    for (i = 0; i < sizeof list / sizeof list[0]; i++)
        ct_emit(list[i].name, &list[i]);
}

TEST_WITH_ARG(scalar, create_copy_query, scalar_arg, gen_scalars)
{
    unsigned char in[16], out[16], zero[16];
    vx_enum type = 0;
    vx_scalar s, z, virt;
    vx_graph graph;
    size_t i;
    memset(in, 0, sizeof in);
    memset(zero, 0, sizeof zero);
    for (i = 0; i < arg->size; i++)
        in[i] = (unsigned char)ct_rand_range(1, 100);
    if (arg->type == VX_TYPE_BOOL) {
        vx_bool t = vx_true_e;
        memcpy(in, &t, sizeof t);
    }
    if (arg->type == VX_TYPE_FLOAT32) {
        vx_float32 fv = 1.5f;
        memcpy(in, &fv, sizeof fv);
    }
    if (arg->type == VX_TYPE_FLOAT64) {
        vx_float64 dv = -2.25;
        memcpy(in, &dv, sizeof dv);
    }
    s = vxCreateScalar(context, arg->type, in);
    ASSERT_VX_OBJECT(s);
    VX_CALL(vxQueryScalar(s, VX_SCALAR_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(arg->type, type);
    memset(out, 0xAB, sizeof out);
    VX_CALL(vxCopyScalar(s, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(in, out, arg->size) == 0);
    VX_CALL(vxCopyScalar(s, zero, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxCopyScalarWithSize(s, arg->size, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(zero, out, arg->size) == 0);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyScalarWithSize(s, arg->size + 1, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxCopyScalar(s, NULL, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxCopyScalarWithSize(s, arg->size, in, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxCopyScalar(s, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(in, out, arg->size) == 0);
    z = vxCreateScalar(context, arg->type, NULL); /* NULL: a zero scalar */
    ASSERT_VX_OBJECT(z);
    memset(out, 0xAB, sizeof out);
    VX_CALL(vxCopyScalar(z, out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(zero, out, arg->size) == 0);
    graph = vxCreateGraph(context);
    virt = vxCreateVirtualScalar(graph, arg->type);
    ASSERT_VX_OBJECT(virt);
    VX_CALL(vxQueryScalar(virt, VX_SCALAR_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(arg->type, type);
    VX_CALL(vxReleaseScalar(&virt));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseScalar(&z));
    VX_CALL(vxReleaseScalar(&s));
}

TEST(scalar, with_size_and_bad_values)
{
    vx_nn_convolution_params_t p, q;
    vx_bool bad = (vx_bool)2;
    vx_scalar s, e;
    memset(&p, 0, sizeof p);
    p.padding_x = 3;
    p.dilation_y = 2;
    s = vxCreateScalarWithSize(context, VX_TYPE_NN_CONVOLUTION_PARAMS, &p, sizeof p);
    ASSERT_VX_OBJECT(s);
    memset(&q, 0, sizeof q);
    VX_CALL(vxCopyScalarWithSize(s, sizeof q, &q, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(&p, &q, sizeof p) == 0);
    e = vxCreateScalarWithSize(context, VX_TYPE_NN_CONVOLUTION_PARAMS, &p, sizeof p - 1);
    ASSERT(vxGetStatus((vx_reference)e) != VX_SUCCESS);
    e = vxCreateScalar(context, VX_TYPE_BOOL, &bad);
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, vxGetStatus((vx_reference)e));
    VX_CALL(vxReleaseScalar(&s));
}

/* ---- LUTs ------------------------------------------------------------------------------------ */
typedef struct {
    vx_enum type;
    vx_size count;
} lut_arg;

static void gen_luts(void)
{
    static const vx_size counts[] = {1, 17, 256, 1000, 65536};
    lut_arg a;
    char name[48];
    size_t i;
    for (i = 0; i < 5; i++) {
        a.type = VX_TYPE_INT16;
        a.count = counts[i];
        snprintf(name, sizeof name, "INT16/%zu", (size_t)a.count);
        ct_emit(name, &a);
        if (counts[i] <= 256) {
            a.type = VX_TYPE_UINT8;
            snprintf(name, sizeof name, "UINT8/%zu", (size_t)a.count);
            ct_emit(name, &a);
        }
    }
}

TEST_WITH_ARG(lut, copy_map_query, lut_arg, gen_luts)
{
    size_t es = ct_elem_size(arg->type), i;
    void *data = ct_alloc(arg->count), *back = ct_alloc(arg->count);
    vx_lut lut = vxCreateLUT(context, arg->type, arg->count), virt;
    vx_size count = 0, size = 0;
    vx_uint32 offset = 99;
    vx_enum type = 0;
    vx_map_id map_id = 0;
    void *ptr = NULL;
    vx_graph graph;
    ASSERT_VX_OBJECT(lut);
    VX_CALL(vxQueryLUT(lut, VX_LUT_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(arg->type, type);
    VX_CALL(vxQueryLUT(lut, VX_LUT_COUNT, &count, sizeof count));
    ASSERT_EQ_INT(arg->count, count);
    VX_CALL(vxQueryLUT(lut, VX_LUT_SIZE, &size, sizeof size));
    ASSERT_EQ_INT(arg->count * es, size);
    VX_CALL(vxQueryLUT(lut, VX_LUT_OFFSET, &offset, sizeof offset));
    ASSERT_EQ_INT(arg->type == VX_TYPE_UINT8 ? 0 : arg->count / 2, offset);
    for (i = 0; i < arg->count; i++)
        ct_set(data, arg->type, i, (int64_t)ct_rand_range(-32768, 32767));
    VX_CALL(vxCopyLUT(lut, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxCopyLUT(lut, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(data, back, arg->count * es) == 0);
    VX_CALL(vxMapLUT(lut, &map_id, &ptr, VX_READ_AND_WRITE, VX_MEMORY_TYPE_HOST, 0));
    ASSERT(ptr != NULL);
    ASSERT(memcmp(ptr, data, arg->count * es) == 0);
    ct_set(ptr, arg->type, 0, 5);
    VX_CALL(vxUnmapLUT(lut, map_id));
    VX_CALL(vxCopyLUT(lut, back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT_EQ_INT(5, ct_get(back, arg->type, 0));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxQueryLUT(lut, VX_LUT_COUNT, &count, 1));
    graph = vxCreateGraph(context);
    virt = vxCreateVirtualLUT(graph, arg->type, arg->count);
    ASSERT_VX_OBJECT(virt);
    VX_CALL(vxReleaseLUT(&virt));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseLUT(&lut));
}

TEST(lut, bad_creation)
{
    vx_lut l = vxCreateLUT(context, VX_TYPE_UINT8, 257);
    ASSERT(vxGetStatus((vx_reference)l) != VX_SUCCESS);
    l = vxCreateLUT(context, VX_TYPE_FLOAT32, 16);
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxGetStatus((vx_reference)l));
    l = vxCreateLUT(context, VX_TYPE_INT16, 65537);
    ASSERT(vxGetStatus((vx_reference)l) != VX_SUCCESS);
}
