/* test_user_kernel.c: user kernels (a parametric leaky ReLU on Q7.8 tensors between
 * vxConvolutionLayer and vxSoftmaxLayer), validators that reject, kernel functions that fail,
 * meta formats, node local data, parameter checks, kernel modules loaded with vxLoadKernels
 * (built by the Makefile into CT_MODULE_DIR), user structs. */
#include "ct_vx.h"

#include <string.h>

#ifndef CT_MODULE_DIR
#define CT_MODULE_DIR "build"
#endif
#define CT_DIMS 6
#define LEAKY "org.ct.leaky_relu"

TESTCASE(user_kernel);

/* ---- the leaky ReLU: out = in >= 0 ? in : (in * alpha) >> 8, alpha a Q7.8 int16 scalar ------ */
static int leaky_inits, leaky_deinits, leaky_runs;
static vx_status leaky_fail_with; /* the kernel function's status (VX_SUCCESS normally) */

static vx_status VX_CALLBACK leaky_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                            vx_meta_format metas[])
{
    vx_enum type = 0, scalar_type = 0;
    vx_int8 fpp = 0;
    vx_size rank = 0, dims[CT_DIMS], back[CT_DIMS];
    (void)node;
    if (num != 3 || metas[0] != NULL || metas[1] != NULL || metas[2] == NULL)
        return VX_ERROR_INVALID_PARAMETERS;
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_DATA_TYPE, &type, sizeof type);
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_FIXED_POINT_POSITION, &fpp, sizeof fpp);
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank);
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_DIMS, dims, rank * sizeof(vx_size));
    if (type != VX_TYPE_INT16 || fpp != 8)
        return VX_ERROR_INVALID_FORMAT;
    vxQueryScalar((vx_scalar)parameters[1], VX_SCALAR_TYPE, &scalar_type, sizeof scalar_type);
    if (scalar_type != VX_TYPE_INT16)
        return VX_ERROR_INVALID_TYPE;
    if (vxSetMetaFormatAttribute(metas[2], VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[2], VX_TENSOR_DIMS, dims, rank * sizeof(vx_size)) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[2], VX_TENSOR_DATA_TYPE, &type, sizeof type) != VX_SUCCESS ||
        vxSetMetaFormatAttribute(metas[2], VX_TENSOR_FIXED_POINT_POSITION, &fpp, sizeof fpp) != VX_SUCCESS)
        return VX_FAILURE;
    /* what was set reads back */
    if (vxQueryMetaFormatAttribute(metas[2], VX_TENSOR_DIMS, back, rank * sizeof(vx_size)) != VX_SUCCESS ||
        memcmp(back, dims, rank * sizeof(vx_size)) != 0)
        return VX_FAILURE;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK leaky_init(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    (void)node; (void)parameters; (void)num;
    leaky_inits++;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK leaky_deinit(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    (void)node; (void)parameters; (void)num;
    leaky_deinits++;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK leaky_run(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_size rank = 0, dims[CT_DIMS], start[CT_DIMS] = {0}, in_stride[CT_DIMS], out_stride[CT_DIMS];
    vx_size local_size = 0, n = 1, i, d;
    vx_int32 *calls = NULL;
    vx_int16 alpha = 0;
    vx_map_id in_map, out_map;
    void *in_ptr = NULL, *out_ptr = NULL;
    vx_tensor in = (vx_tensor)parameters[0], out = (vx_tensor)parameters[2];
    (void)num;
    leaky_runs++;
    if (leaky_fail_with != VX_SUCCESS)
        return leaky_fail_with;
    /* node local data: VX_KERNEL_LOCAL_DATA_SIZE bytes the library allocated after init */
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &local_size, sizeof local_size) != VX_SUCCESS ||
        vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &calls, sizeof calls) != VX_SUCCESS || local_size != 16 || !calls)
        return VX_ERROR_NO_MEMORY;
    calls[0]++;
    vxCopyScalar((vx_scalar)parameters[1], &alpha, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
    vxQueryTensor(in, VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank);
    vxQueryTensor(in, VX_TENSOR_DIMS, dims, rank * sizeof(vx_size));
    if (vxMapTensorPatch(in, rank, start, dims, &in_map, in_stride, &in_ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) != VX_SUCCESS)
        return VX_FAILURE;
    if (vxMapTensorPatch(out, rank, start, dims, &out_map, out_stride, &out_ptr, VX_WRITE_ONLY,
                         VX_MEMORY_TYPE_HOST) != VX_SUCCESS) {
        vxUnmapTensorPatch(in, in_map);
        return VX_FAILURE;
    }
    for (d = 0; d < rank; d++)
        n *= dims[d];
    for (i = 0; i < n; i++) { /* element i in packed order, addressed through the map's strides */
        size_t rest = i, in_off = 0, out_off = 0;
        int32_t v;
        for (d = 0; d < rank; d++) {
            in_off += (rest % dims[d]) * in_stride[d];
            out_off += (rest % dims[d]) * out_stride[d];
            rest /= dims[d];
        }
        v = *(const vx_int16 *)((const char *)in_ptr + in_off);
        if (v < 0)
            v = (v * alpha) >> 8;
        *(vx_int16 *)((char *)out_ptr + out_off) = (vx_int16)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
    }
    vxUnmapTensorPatch(out, out_map);
    vxUnmapTensorPatch(in, in_map);
    return VX_SUCCESS;
}

/* the plain reference: floor((x * alpha) / 256) for negative x, saturated */
static int64_t leaky_reference(int64_t x, int64_t alpha)
{
    int64_t p = x * alpha, q;
    if (x >= 0)
        return x;
    q = p >= 0 ? p / 256 : -((-p + 255) / 256);
    return q < -32768 ? -32768 : q > 32767 ? 32767 : q;
}

static vx_kernel add_leaky(vx_context context)
{
    vx_enum id = 0;
    vx_kernel kernel;
    vx_size local = 16;
    VX_CALL(vxAllocateUserKernelId(context, &id));
    kernel = vxAddUserKernel(context, LEAKY, id, leaky_run, 3, leaky_validate, leaky_init, leaky_deinit);
    ASSERT_VX_OBJECT(kernel);
    VX_CALL(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 1, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 2, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxSetKernelAttribute(kernel, VX_KERNEL_LOCAL_DATA_SIZE, &local, sizeof local));
    VX_CALL(vxFinalizeKernel(kernel));
    leaky_inits = leaky_deinits = leaky_runs = 0;
    leaky_fail_with = VX_SUCCESS;
    return kernel;
}

static vx_node leaky_node(vx_graph graph, vx_kernel kernel, vx_tensor in, vx_scalar alpha, vx_tensor out)
{
    vx_node node = vxCreateGenericNode(graph, kernel);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)in));
    VX_CALL(vxSetParameterByIndex(node, 1, (vx_reference)alpha));
    VX_CALL(vxSetParameterByIndex(node, 2, (vx_reference)out));
    return node;
}

static int log_calls;
static vx_status log_status;
static char log_text[VX_MAX_LOG_MESSAGE_LEN];

static void VX_CALLBACK on_log(vx_context c, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)c; (void)ref;
    log_calls++;
    log_status = status;
    strncpy(log_text, string, sizeof log_text - 1);
}

/* ---- conv -> user leaky ReLU -> softmax, against conv, the C reference and softmax run apart -- */
typedef struct { int variant; } uk_arg;

static void gen_chain(void)
{
    static const char *names[] = {"0", "1", "2", "3"};
    int i;
    for (i = 0; i < 4; i++) {
        uk_arg a = {i};
        ct_emit(names[i], &a);
    }
}

TEST_WITH_ARG(user_kernel, leaky_relu_between_convolution_and_softmax, uk_arg, gen_chain)
{
    vx_size w = ct_rand_range(2, 6), h = ct_rand_range(2, 6), c = ct_rand_range(1, 3), k = ct_rand_range(2, 4);
    vx_size in_dims[3] = {w, h, c}, w_dims[4] = {1, 1, c, k}, mid_dims[3] = {w, h, k};
    size_t n_in = w * h * c, n_w = c * k, n_mid = w * h * k, i;
    vx_int16 alpha = (vx_int16)ct_rand_range(-300, 300);
    int64_t *x = ct_alloc(n_in), *wt = ct_alloc(n_w), *conv = ct_alloc(n_mid), *leaky = ct_alloc(n_mid);
    int64_t *expected = ct_alloc(n_mid), *actual = ct_alloc(n_mid);
    vx_nn_convolution_params_t params;
    vx_kernel kernel = add_leaky(context);
    vx_scalar s_alpha = vxCreateScalar(context, VX_TYPE_INT16, &alpha);
    vx_tensor tin = ct_tensor(context, 3, in_dims, &CT_Q78), tw = ct_tensor(context, 4, w_dims, &CT_Q78);
    vx_tensor tconv = ct_tensor(context, 3, mid_dims, &CT_Q78), tleaky = ct_tensor(context, 3, mid_dims, &CT_Q78);
    vx_tensor tout = ct_tensor(context, 3, mid_dims, &CT_Q78), v1, v2;
    vx_graph graph;
    vx_node node, conv_node, softmax_node;
    ct_fill(x, n_in, -3 * 256, 3 * 256);
    ct_fill(wt, n_w, -256, 256);
    ct_write(tin, x);
    ct_write(tw, wt);
    memset(&params, 0, sizeof params);
    params.overflow_policy = VX_CONVERT_POLICY_SATURATE;
    params.rounding_policy = VX_ROUND_POLICY_TO_NEAREST_EVEN;
    params.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;

    /* the reference: each step apart, the leaky ReLU in plain C */
    graph = vxCreateGraph(context);
    node = vxConvolutionLayer(graph, tin, tw, NULL, &params, sizeof params, tconv);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxProcessGraph(graph));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    ct_read(tconv, conv);
    for (i = 0; i < n_mid; i++)
        leaky[i] = leaky_reference(conv[i], alpha);
    ct_write(tleaky, leaky);
    graph = vxCreateGraph(context);
    node = vxSoftmaxLayer(graph, tleaky, tout);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxProcessGraph(graph));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    ct_read(tout, expected);

    /* the chain in one graph, the intermediate tensors virtual (variant 1: the first one real,
     * variant 2: unknown dims, filled in by the meta format; variant 3: processed twice) */
    graph = vxCreateGraph(context);
    v1 = arg->variant == 1 ? ct_tensor(context, 3, mid_dims, &CT_Q78)
                           : vxCreateVirtualTensor(graph, 3, mid_dims, VX_TYPE_INT16, 8);
    v2 = arg->variant == 2 ? vxCreateVirtualTensor(graph, 0, NULL, VX_TYPE_INVALID, 0)
                           : vxCreateVirtualTensor(graph, 3, mid_dims, VX_TYPE_INT16, 8);
    ASSERT_VX_OBJECT(v1);
    ASSERT_VX_OBJECT(v2);
    ct_write(tout, leaky); /* garbage the graph must overwrite */
    conv_node = vxConvolutionLayer(graph, tin, tw, NULL, &params, sizeof params, v1);
    ASSERT_VX_OBJECT(conv_node);
    node = leaky_node(graph, kernel, v1, s_alpha, v2);
    softmax_node = vxSoftmaxLayer(graph, v2, tout);
    ASSERT_VX_OBJECT(softmax_node);
    VX_CALL(vxVerifyGraph(graph));
    ASSERT_EQ_INT(1, leaky_inits);
    VX_CALL(vxProcessGraph(graph));
    if (arg->variant == 3)
        VX_CALL(vxProcessGraph(graph));
    ASSERT_EQ_INT(arg->variant == 3 ? 2 : 1, leaky_runs);
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("softmax(leaky(conv)) output", expected, actual, n_mid);
    {
        vx_int32 *calls = NULL;
        VX_CALL(vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &calls, sizeof calls));
        ASSERT(calls != NULL);
        ASSERT_EQ_INT(leaky_runs, calls[0]);
    }
    VX_CALL(vxReleaseNode(&conv_node));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseNode(&softmax_node));
    ASSERT_EQ_INT(0, leaky_deinits);
    VX_CALL(vxReleaseGraph(&graph));
    ASSERT_EQ_INT(1, leaky_deinits); /* the node went with its graph */
    VX_CALL(vxReleaseTensor(&v1));
    VX_CALL(vxReleaseTensor(&v2));
    VX_CALL(vxReleaseScalar(&s_alpha));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tw));
    VX_CALL(vxReleaseTensor(&tconv));
    VX_CALL(vxReleaseTensor(&tleaky));
    VX_CALL(vxReleaseTensor(&tout));
    VX_CALL(vxRemoveKernel(kernel));
}

/* ---- a validator that rejects, a function that fails, a meta format the output contradicts ---- */
TEST(user_kernel, validator_rejection_fails_verification_with_its_status)
{
    vx_size dims[2] = {4, 3};
    vx_int16 alpha = 64;
    vx_kernel kernel = add_leaky(context);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor in = ct_tensor(context, 2, dims, &CT_S8), out = ct_tensor(context, 2, dims, &CT_S8);
    vx_scalar s = vxCreateScalar(context, VX_TYPE_INT16, &alpha);
    vx_node node = leaky_node(graph, kernel, in, s, out);
    log_calls = 0;
    vxRegisterLogCallback(context, on_log, vx_false_e);
    ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxVerifyGraph(graph)); /* S8 input: the validator refuses */
    ASSERT(log_calls > 0);
    ASSERT_EQ_INT(VX_ERROR_INVALID_FORMAT, log_status);
    ASSERT(strstr(log_text, LEAKY) != NULL);
    ASSERT_EQ_INT(0, leaky_inits);
    ASSERT_STATUS(VX_ERROR_INVALID_FORMAT, vxProcessGraph(graph));
    ASSERT_EQ_INT(0, leaky_runs);
    vxRegisterLogCallback(context, NULL, vx_false_e);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&in));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxRemoveKernel(kernel));
}

TEST(user_kernel, real_output_contradicting_the_meta_format_fails_verification)
{
    vx_size dims[2] = {4, 3}, other[2] = {3, 4};
    vx_int16 alpha = 64;
    vx_kernel kernel = add_leaky(context);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor in = ct_tensor(context, 2, dims, &CT_Q78), out = ct_tensor(context, 2, other, &CT_Q78);
    vx_tensor out8 = ct_tensor(context, 2, dims, &CT_S8);
    vx_scalar s = vxCreateScalar(context, VX_TYPE_INT16, &alpha);
    vx_node node = leaky_node(graph, kernel, in, s, out);
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxVerifyGraph(graph));
    VX_CALL(vxSetParameterByIndex(node, 2, (vx_reference)out8));
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxVerifyGraph(graph));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&in));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseTensor(&out8));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxRemoveKernel(kernel));
}

static vx_action VX_CALLBACK never_called(vx_node node)
{
    (void)node;
    return VX_ACTION_ABANDON;
}

TEST(user_kernel, failing_function_fails_the_graph_with_its_status)
{
    vx_size dims[2] = {4, 3};
    vx_int16 alpha = 64;
    vx_kernel kernel = add_leaky(context);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor in = ct_tensor(context, 2, dims, &CT_Q78), out = ct_tensor(context, 2, dims, &CT_Q78);
    vx_tensor final_out = ct_tensor(context, 2, dims, &CT_Q78);
    vx_scalar s = vxCreateScalar(context, VX_TYPE_INT16, &alpha);
    vx_node node = leaky_node(graph, kernel, in, s, out), after;
    vx_status node_status = VX_SUCCESS;
    vx_enum state = 0;
    after = vxSoftmaxLayer(graph, out, final_out);
    ASSERT_VX_OBJECT(after);
    VX_CALL(vxAssignNodeCallback(node, never_called));
    VX_CALL(vxVerifyGraph(graph));
    leaky_fail_with = VX_ERROR_NO_RESOURCES;
    log_calls = 0;
    vxRegisterLogCallback(context, on_log, vx_false_e);
    ASSERT_STATUS(VX_ERROR_NO_RESOURCES, vxProcessGraph(graph));
    ASSERT(log_calls > 0);
    ASSERT_EQ_INT(VX_ERROR_NO_RESOURCES, log_status);
    ASSERT(strstr(log_text, LEAKY) != NULL);
    VX_CALL(vxQueryNode(node, VX_NODE_STATUS, &node_status, sizeof node_status));
    ASSERT_EQ_INT(VX_ERROR_NO_RESOURCES, node_status);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_STATE, &state, sizeof state));
    ASSERT_EQ_INT(VX_GRAPH_STATE_ABANDONED, state);
    leaky_fail_with = VX_SUCCESS; /* the same graph runs again once the kernel succeeds */
    VX_CALL(vxAssignNodeCallback(node, NULL));
    VX_CALL(vxProcessGraph(graph));
    vxRegisterLogCallback(context, NULL, vx_false_e);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseNode(&after));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&in));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseTensor(&final_out));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxRemoveKernel(kernel));
}

/* ---- the API's checks ------------------------------------------------------------------------ */
static vx_status VX_CALLBACK noop_run(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    (void)node; (void)parameters; (void)num;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK accept_all(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                        vx_meta_format metas[])
{
    (void)node; (void)parameters; (void)num; (void)metas;
    return VX_SUCCESS;
}

TEST(user_kernel, registration_checks_and_queries)
{
    vx_enum id = 0, id2 = 0, lib = 0, kenum = 0, dir = 0, type = 0, state = 0;
    vx_uint32 count = 0;
    vx_size local = 0;
    vx_char name[VX_MAX_KERNEL_NAME];
    vx_kernel kernel, found;
    vx_parameter p;
    VX_CALL(vxAllocateUserKernelId(context, &id));
    VX_CALL(vxAllocateUserKernelId(context, &id2));
    ASSERT(id != id2);
    ASSERT_EQ_INT(VX_KERNEL_BASE(VX_ID_USER, 0), id & ~VX_KERNEL_MASK);
    VX_CALL(vxAllocateUserKernelLibraryId(context, &lib));
    ASSERT(lib > 0 && lib <= 0xFF);
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxAllocateUserKernelId(NULL, &id));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxAllocateUserKernelId(context, NULL));

    ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS,
                  vxGetStatus((vx_reference)vxAddUserKernel(context, NULL, id, noop_run, 1, accept_all, NULL, NULL)));
    ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS,
                  vxGetStatus((vx_reference)vxAddUserKernel(context, "org.ct.k", id, NULL, 1, accept_all, NULL, NULL)));
    ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS,
                  vxGetStatus((vx_reference)vxAddUserKernel(context, "org.ct.k", id, noop_run, 0, accept_all, NULL, NULL)));
    ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS,      /* a built-in kernel's name */
                  vxGetStatus((vx_reference)vxAddUserKernel(context, "org.khronos.nn_extension.softmax_layer", id,
                                                            noop_run, 1, accept_all, NULL, NULL)));
    kernel = vxAddUserKernel(context, "org.ct.k", id, noop_run, 2, accept_all, NULL, NULL);
    ASSERT_VX_OBJECT(kernel);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxAddParameterToKernel(kernel, 2, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxAddParameterToKernel(kernel, 0, VX_OUTPUT + 1 /* the old VX_BIDIRECTIONAL */, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, 12345));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_CONTEXT, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxFinalizeKernel(kernel)); /* parameter 1 is missing */
    /* not finalized: not found by name */
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.k")) != VX_SUCCESS);
    VX_CALL(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_OPTIONAL));
    local = 24;
    VX_CALL(vxSetKernelAttribute(kernel, VX_KERNEL_LOCAL_DATA_SIZE, &local, sizeof local));
    VX_CALL(vxFinalizeKernel(kernel));
    ASSERT(vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_OPTIONAL) != VX_SUCCESS);
    ASSERT(vxSetKernelAttribute(kernel, VX_KERNEL_LOCAL_DATA_SIZE, &local, sizeof local) != VX_SUCCESS);
    VX_CALL(vxReleaseKernel(&kernel));

    found = vxGetKernelByName(context, "org.ct.k");
    ASSERT_VX_OBJECT(found);
    VX_CALL(vxQueryKernel(found, VX_KERNEL_PARAMETERS, &count, sizeof count));
    ASSERT_EQ_INT(2, count);
    VX_CALL(vxQueryKernel(found, VX_KERNEL_ENUM, &kenum, sizeof kenum));
    ASSERT_EQ_INT(id, kenum);
    VX_CALL(vxQueryKernel(found, VX_KERNEL_NAME, name, sizeof name));
    ASSERT(strcmp(name, "org.ct.k") == 0);
    VX_CALL(vxQueryKernel(found, VX_KERNEL_LOCAL_DATA_SIZE, &local, sizeof local));
    ASSERT_EQ_INT(24, local);
    p = vxGetKernelParameterByIndex(found, 1);
    ASSERT_VX_OBJECT(p);
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_DIRECTION, &dir, sizeof dir));
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_TYPE, &type, sizeof type));
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_STATE, &state, sizeof state));
    ASSERT_EQ_INT(VX_OUTPUT, dir);
    ASSERT_EQ_INT(VX_TYPE_TENSOR, type);
    ASSERT_EQ_INT(VX_PARAMETER_STATE_OPTIONAL, state);
    VX_CALL(vxReleaseParameter(&p));
    {   /* the same enum again is refused; a built-in kernel cannot be removed */
        vx_kernel again = vxAddUserKernel(context, "org.ct.k2", id, noop_run, 1, accept_all, NULL, NULL);
        vx_kernel builtin = vxGetKernelByEnum(context, VX_KERNEL_SOFTMAX_LAYER);
        ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)again));
        ASSERT(vxRemoveKernel(builtin) != VX_SUCCESS);
        VX_CALL(vxReleaseKernel(&builtin));
    }
    VX_CALL(vxRemoveKernel(found));
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.k")) != VX_SUCCESS);
}

TEST(user_kernel, parameter_checks_as_for_built_in_kernels)
{
    vx_enum id = 0;
    vx_size dims[2] = {2, 2};
    vx_kernel kernel;
    vx_graph graph = vxCreateGraph(context);
    vx_tensor t = ct_tensor(context, 2, dims, &CT_Q78), out = ct_tensor(context, 2, dims, &CT_Q78);
    vx_int32 v = 3;
    vx_scalar s = vxCreateScalar(context, VX_TYPE_INT32, &v);
    vx_node node;
    VX_CALL(vxAllocateUserKernelId(context, &id));
    kernel = vxAddUserKernel(context, "org.ct.optional", id, noop_run, 3, accept_all, NULL, NULL);
    ASSERT_VX_OBJECT(kernel);
    VX_CALL(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 1, VX_INPUT, VX_TYPE_INT32, VX_PARAMETER_STATE_OPTIONAL));
    VX_CALL(vxAddParameterToKernel(kernel, 2, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxFinalizeKernel(kernel));
    node = vxCreateGenericNode(graph, kernel);
    ASSERT_VX_OBJECT(node);
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxSetParameterByIndex(node, 0, (vx_reference)s));
    ASSERT_STATUS(VX_ERROR_INVALID_TYPE, vxSetParameterByIndex(node, 1, (vx_reference)t));
    VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)t));
    ASSERT_STATUS(VX_ERROR_NOT_SUFFICIENT, vxVerifyGraph(graph)); /* required output missing */
    VX_CALL(vxSetParameterByIndex(node, 2, (vx_reference)out));
    VX_CALL(vxVerifyGraph(graph)); /* optional scalar absent: fine; the validator set no meta format */
    VX_CALL(vxSetParameterByIndex(node, 1, (vx_reference)s));
    VX_CALL(vxProcessGraph(graph));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&t));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxRemoveKernel(kernel));
}

/* ---- vxSetMetaFormatFromReference: the output like an exemplar -------------------------------- */
static vx_status VX_CALLBACK like_input(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                        vx_meta_format metas[])
{
    vx_status status;
    (void)node;
    (void)num;
    /* a scalar cannot describe a tensor output: refused, and the validator passes that on */
    status = vxSetMetaFormatFromReference(metas[2], parameters[1]);
    if (status != VX_ERROR_INVALID_PARAMETERS)
        return VX_FAILURE;
    return vxSetMetaFormatFromReference(metas[2], parameters[0]);
}

static vx_status VX_CALLBACK copy_run(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_size rank = 0, dims[CT_DIMS], start[CT_DIMS] = {0}, stride[CT_DIMS], n = 1, d;
    vx_int16 buffer[256];
    (void)node;
    (void)num;
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank);
    vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_DIMS, dims, rank * sizeof(vx_size));
    for (d = 0; d < rank; d++) {
        stride[d] = n * sizeof(vx_int16);
        n *= dims[d];
    }
    if (n > 256)
        return VX_ERROR_NO_MEMORY;
    if (vxCopyTensorPatch((vx_tensor)parameters[0], rank, start, dims, stride, buffer, VX_READ_ONLY,
                          VX_MEMORY_TYPE_HOST) != VX_SUCCESS)
        return VX_FAILURE;
    return vxCopyTensorPatch((vx_tensor)parameters[2], rank, start, dims, stride, buffer, VX_WRITE_ONLY,
                             VX_MEMORY_TYPE_HOST);
}

TEST(user_kernel, meta_format_from_an_exemplar_fills_a_virtual_output)
{
    vx_enum id = 0;
    vx_size dims[3] = {(vx_size)ct_rand_range(1, 6), (vx_size)ct_rand_range(1, 6), 2};
    vx_int32 v = 1;
    int64_t x[72], got[72];
    size_t n = dims[0] * dims[1] * dims[2];
    vx_kernel kernel;
    vx_graph graph = vxCreateGraph(context);
    vx_tensor in = ct_tensor(context, 3, dims, &CT_Q78), out = ct_tensor(context, 3, dims, &CT_Q78), middle;
    vx_scalar s = vxCreateScalar(context, VX_TYPE_INT32, &v);
    vx_node copy1, copy2;
    VX_CALL(vxAllocateUserKernelId(context, &id));
    kernel = vxAddUserKernel(context, "org.ct.copy", id, copy_run, 3, like_input, NULL, NULL);
    ASSERT_VX_OBJECT(kernel);
    VX_CALL(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 1, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxAddParameterToKernel(kernel, 2, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED));
    VX_CALL(vxFinalizeKernel(kernel));
    middle = vxCreateVirtualTensor(graph, 0, NULL, VX_TYPE_INVALID, 0); /* all unknown: the exemplar fills it */
    copy1 = vxCreateGenericNode(graph, kernel);
    copy2 = vxCreateGenericNode(graph, kernel);
    VX_CALL(vxSetParameterByIndex(copy1, 0, (vx_reference)in));
    VX_CALL(vxSetParameterByIndex(copy1, 1, (vx_reference)s));
    VX_CALL(vxSetParameterByIndex(copy1, 2, (vx_reference)middle));
    VX_CALL(vxSetParameterByIndex(copy2, 0, (vx_reference)middle));
    VX_CALL(vxSetParameterByIndex(copy2, 1, (vx_reference)s));
    VX_CALL(vxSetParameterByIndex(copy2, 2, (vx_reference)out));
    ct_fill_format(x, n, VX_TYPE_INT16);
    ct_write(in, x);
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, got);
    ASSERT_EQ_ARRAY("copied twice", x, got, n);
    VX_CALL(vxReleaseNode(&copy1));
    VX_CALL(vxReleaseNode(&copy2));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&middle));
    VX_CALL(vxReleaseTensor(&in));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxRemoveKernel(kernel));
}

/* ---- kernel modules ---------------------------------------------------------------------------- */
static void run_module_kernel(vx_context context)
{
    vx_size dims[2] = {5, 2};
    int64_t x[10], expected[10], actual[10];
    int i;
    vx_kernel kernel = vxGetKernelByName(context, "org.ct.module.double");
    vx_graph graph = vxCreateGraph(context);
    vx_tensor in = ct_tensor(context, 2, dims, &CT_Q78), out = ct_tensor(context, 2, dims, &CT_Q78);
    vx_node node;
    ASSERT_VX_OBJECT(kernel);
    ct_fill_format(x, 10, VX_TYPE_INT16);
    for (i = 0; i < 10; i++)
        expected[i] = 2 * x[i] > 32767 ? 32767 : 2 * x[i] < -32768 ? -32768 : 2 * x[i];
    ct_write(in, x);
    node = vxCreateGenericNode(graph, kernel);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)in));
    VX_CALL(vxSetParameterByIndex(node, 1, (vx_reference)out));
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, actual);
    ASSERT_EQ_ARRAY("module kernel output", expected, actual, 10);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&in));
    VX_CALL(vxReleaseTensor(&out));
    VX_CALL(vxReleaseKernel(&kernel));
}

TEST(user_kernel, module_loads_unloads_and_loads_again)
{
    const char *module = CT_MODULE_DIR "/libct_module.so";
    vx_uint32 kernels_before = 0, kernels_loaded = 0;
    VX_CALL(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNELS, &kernels_before, sizeof kernels_before));
    VX_CALL(vxLoadKernels(context, module));
    VX_CALL(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNELS, &kernels_loaded, sizeof kernels_loaded));
    ASSERT_EQ_INT(kernels_before + 1, kernels_loaded);
    run_module_kernel(context);
    ASSERT_STATUS(VX_ERROR_INVALID_MODULE, vxLoadKernels(context, module)); /* already loaded */
    VX_CALL(vxUnloadKernels(context, module));
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.module.double")) != VX_SUCCESS);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxUnloadKernels(context, module)); /* not loaded */
    VX_CALL(vxLoadKernels(context, module));
    run_module_kernel(context);
    VX_CALL(vxUnloadKernels(context, module));
}

TEST(user_kernel, module_errors_have_their_own_status)
{
    log_calls = 0;
    vxRegisterLogCallback(context, on_log, vx_false_e);
    ASSERT_STATUS(VX_ERROR_INVALID_MODULE, vxLoadKernels(context, "ct_no_such_module"));
    ASSERT(strstr(log_text, "libct_no_such_module.so") != NULL);
    /* a shared object without vxPublishKernels */
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxLoadKernels(context, CT_MODULE_DIR "/libct_no_entry.so"));
    ASSERT(strstr(log_text, "vxPublishKernels") != NULL);
    /* a publish that fails: its status, and the kernel it added is taken back */
    ASSERT_STATUS(VX_ERROR_NO_RESOURCES, vxLoadKernels(context, CT_MODULE_DIR "/libct_module_fails.so"));
    ASSERT(strstr(log_text, "failed") != NULL);
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.module.double")) != VX_SUCCESS);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxLoadKernels(context, NULL));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxLoadKernels(NULL, "ct_module"));
    ASSERT_STATUS(VX_ERROR_INVALID_REFERENCE, vxUnloadKernels(NULL, "ct_module"));
    ASSERT(log_calls >= 5); /* one line per failure at least */
    vxRegisterLogCallback(context, NULL, vx_false_e);
}

static vx_status VX_CALLBACK publish_in_process(vx_context context)
{
    vx_kernel kernel = vxAddUserKernel(context, "org.ct.registered", VX_KERNEL_BASE(VX_ID_USER, 0x80) + 1, noop_run, 1,
                                       accept_all, NULL, NULL);
    vx_status status = vxGetStatus((vx_reference)kernel);
    if (status == VX_SUCCESS)
        status = vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED);
    if (status == VX_SUCCESS)
        status = vxFinalizeKernel(kernel);
    if (vxGetStatus((vx_reference)kernel) == VX_SUCCESS)
        vxReleaseKernel(&kernel);
    return status;
}

static vx_status VX_CALLBACK unpublish_in_process(vx_context context)
{
    return vxRemoveKernel(vxGetKernelByName(context, "org.ct.registered"));
}

TEST(user_kernel, registered_library_loads_by_its_name)
{
    vx_kernel kernel;
    VX_CALL(vxRegisterKernelLibrary(context, "ct_registered", publish_in_process, unpublish_in_process));
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.registered")) != VX_SUCCESS);
    VX_CALL(vxLoadKernels(context, "ct_registered"));
    kernel = vxGetKernelByName(context, "org.ct.registered");
    ASSERT_VX_OBJECT(kernel);
    VX_CALL(vxReleaseKernel(&kernel));
    VX_CALL(vxUnloadKernels(context, "ct_registered"));
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.registered")) != VX_SUCCESS);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxRegisterKernelLibrary(context, "x", NULL, NULL));
}

/* ---- user structs -------------------------------------------------------------------------------- */
typedef struct { vx_int32 id; vx_float32 score; vx_uint8 tag[6]; } ct_detection;

TEST(user_kernel, user_structs_in_arrays_and_scalars)
{
    vx_enum type = vxRegisterUserStructWithName(context, sizeof(ct_detection), "ct_detection"), back = 0, plain;
    vx_enum item_type = 0;
    vx_char name[32];
    ct_detection items[3], out[3], one = {7, 0.5f, {1, 2, 3, 4, 5, 6}}, one_back;
    vx_array array;
    vx_scalar scalar;
    vx_size item_size = 0;
    int i;
    ASSERT(type >= VX_TYPE_USER_STRUCT_START && type <= VX_TYPE_USER_STRUCT_END);
    plain = vxRegisterUserStruct(context, 12);
    ASSERT(plain >= VX_TYPE_USER_STRUCT_START && plain != type);
    ASSERT_EQ_INT(VX_TYPE_INVALID, vxRegisterUserStructWithName(context, 8, "ct_detection")); /* name taken */
    ASSERT_EQ_INT(VX_TYPE_INVALID, vxRegisterUserStruct(context, 0));
    VX_CALL(vxGetUserStructEnumByName(context, "ct_detection", &back));
    ASSERT_EQ_INT(type, back);
    ASSERT_STATUS(VX_FAILURE, vxGetUserStructEnumByName(context, "ct_nothing", &back));
    VX_CALL(vxGetUserStructNameByEnum(context, type, name, sizeof name));
    ASSERT(strcmp(name, "ct_detection") == 0);
    ASSERT_STATUS(VX_ERROR_NO_MEMORY, vxGetUserStructNameByEnum(context, type, name, 4));
    ASSERT_STATUS(VX_FAILURE, vxGetUserStructNameByEnum(context, plain, name, sizeof name)); /* no name */

    array = vxCreateArray(context, type, 3);
    ASSERT_VX_OBJECT(array);
    VX_CALL(vxQueryArray(array, VX_ARRAY_ITEMTYPE, &item_type, sizeof item_type));
    VX_CALL(vxQueryArray(array, VX_ARRAY_ITEMSIZE, &item_size, sizeof item_size));
    ASSERT_EQ_INT(type, item_type);
    ASSERT_EQ_INT(sizeof(ct_detection), item_size);
    for (i = 0; i < 3; i++) {
        memset(&items[i], 0, sizeof items[i]);
        items[i].id = ct_rand_range(-1000, 1000);
        items[i].score = (vx_float32)ct_rand_unit();
        items[i].tag[i] = (vx_uint8)i;
    }
    VX_CALL(vxAddArrayItems(array, 3, items, sizeof(ct_detection)));
    VX_CALL(vxCopyArrayRange(array, 0, 3, sizeof(ct_detection), out, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(items, out, sizeof items) == 0);
    scalar = vxCreateScalarWithSize(context, type, &one, sizeof one);
    ASSERT_VX_OBJECT(scalar);
    VX_CALL(vxCopyScalarWithSize(scalar, sizeof one_back, &one_back, VX_READ_ONLY, VX_MEMORY_TYPE_HOST));
    ASSERT(memcmp(&one, &one_back, sizeof one) == 0);
    ASSERT(vxGetStatus((vx_reference)vxCreateScalarWithSize(context, type, &one, 4)) != VX_SUCCESS);
    VX_CALL(vxReleaseScalar(&scalar));
    VX_CALL(vxReleaseArray(&array));
}

TEST(user_kernel, user_struct_lookups_without_a_context_or_a_name)
{
    vx_enum type = vxRegisterUserStructWithName(context, sizeof(ct_detection), "ct_detection"), back = 0;
    vx_char name[32];
    ASSERT(type >= VX_TYPE_USER_STRUCT_START && type <= VX_TYPE_USER_STRUCT_END);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxGetUserStructNameByEnum(NULL, type, name, sizeof name));
    ASSERT_STATUS(VX_FAILURE, vxGetUserStructEnumByName(context, NULL, &back));
    VX_CALL(vxGetUserStructNameByEnum(context, type, name, sizeof name)); /* both still work with them */
    ASSERT(strcmp(name, "ct_detection") == 0);
    VX_CALL(vxGetUserStructEnumByName(context, name, &back));
    ASSERT_EQ_INT(type, back);
}

/* ---- a module that releases its handle before removing the kernel (the Khronos suite's module) ---- */
TEST(user_kernel, module_unloads_by_the_name_it_was_loaded_with_leaving_no_reference)
{
    const char *module = CT_MODULE_DIR "/libct_module_release_first.so";
    vx_uint32 references = 0, loaded = 0, after = 0;
    vx_kernel kernel;
    VX_CALL(vxQueryContext(context, VX_CONTEXT_REFERENCES, &references, sizeof references));
    VX_CALL(vxLoadKernels(context, module));
    VX_CALL(vxQueryContext(context, VX_CONTEXT_REFERENCES, &loaded, sizeof loaded));
    ASSERT_EQ_INT(references + 1, loaded); /* the handle its publish kept */
    kernel = vxGetKernelByName(context, "org.ct.module.double");
    ASSERT_VX_OBJECT(kernel);
    VX_CALL(vxReleaseKernel(&kernel));
    run_module_kernel(context);
    VX_CALL(vxUnloadKernels(context, module));
    VX_CALL(vxQueryContext(context, VX_CONTEXT_REFERENCES, &after, sizeof after));
    ASSERT_EQ_INT(references, after);
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "org.ct.module.double")) != VX_SUCCESS);
    VX_CALL(vxLoadKernels(context, module)); /* and loads again */
    run_module_kernel(context);
    VX_CALL(vxUnloadKernels(context, module));
}

/* ---- VX_KERNEL_LOCAL_DATA_SIZE is what the node reports, whatever its initializer left ---------- */
static vx_size local_seen_in_init, local_seen_in_run;
static int local_init_clears; /* the initializer sets size 0 and pointer NULL, as the Khronos suite's does */

static vx_status VX_CALLBACK local_init(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_size zero = 0;
    void *none = NULL;
    (void)parameters; (void)num;
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &local_seen_in_init, sizeof local_seen_in_init) != VX_SUCCESS)
        return VX_FAILURE;
    if (local_init_clears &&
        (vxSetNodeAttribute(node, VX_NODE_LOCAL_DATA_SIZE, &zero, sizeof zero) != VX_SUCCESS ||
         vxSetNodeAttribute(node, VX_NODE_LOCAL_DATA_PTR, &none, sizeof none) != VX_SUCCESS))
        return VX_FAILURE;
    return VX_SUCCESS;
}

static vx_status VX_CALLBACK local_run(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    void *pointer = NULL;
    (void)parameters; (void)num;
    if (vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &local_seen_in_run, sizeof local_seen_in_run) != VX_SUCCESS ||
        vxQueryNode(node, VX_NODE_LOCAL_DATA_PTR, &pointer, sizeof pointer) != VX_SUCCESS)
        return VX_FAILURE;
    if (local_seen_in_run && !pointer)
        return VX_ERROR_NO_MEMORY;
    if (local_seen_in_run)
        memset(pointer, 0x5A, local_seen_in_run); /* all of it is ours */
    return VX_SUCCESS;
}

TEST(user_kernel, kernel_local_data_size_is_what_the_node_reports)
{
    int clears;
    for (clears = 0; clears < 2; clears++) {
        vx_enum id = 0;
        vx_size size = 40 + 8 * (vx_size)clears, node_size = 0;
        vx_kernel kernel;
        vx_graph graph;
        vx_node node;
        vx_int32 value = 1;
        vx_scalar scalar = vxCreateScalar(context, VX_TYPE_INT32, &value);
        local_init_clears = clears;
        local_seen_in_init = local_seen_in_run = 12345;
        VX_CALL(vxAllocateUserKernelId(context, &id));
        kernel = vxAddUserKernel(context, clears ? "org.ct.local.cleared" : "org.ct.local", id, local_run, 1,
                                 accept_all, local_init, NULL);
        ASSERT_VX_OBJECT(kernel);
        VX_CALL(vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_SCALAR, VX_PARAMETER_STATE_REQUIRED));
        VX_CALL(vxSetKernelAttribute(kernel, VX_KERNEL_LOCAL_DATA_SIZE, &size, sizeof size));
        VX_CALL(vxFinalizeKernel(kernel));
        graph = vxCreateGraph(context);
        node = vxCreateGenericNode(graph, kernel);
        ASSERT_VX_OBJECT(node);
        VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)scalar));
        VX_CALL(vxProcessGraph(graph));
        ASSERT_EQ_INT((int)size, (int)local_seen_in_init);
        ASSERT_EQ_INT((int)size, (int)local_seen_in_run);
        VX_CALL(vxQueryNode(node, VX_NODE_LOCAL_DATA_SIZE, &node_size, sizeof node_size));
        ASSERT_EQ_INT((int)size, (int)node_size);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
        VX_CALL(vxReleaseScalar(&scalar));
        VX_CALL(vxRemoveKernel(kernel));
    }
}
