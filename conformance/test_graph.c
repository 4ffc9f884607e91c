/* test_graph.c: kernels, parameters, generic nodes, graph verification errors, graph
 * parameters, node callbacks and targets, scheduling, performance. */
#include "ct_vx.h"

#include <string.h>

TESTCASE(graph);

static vx_tensor tensor3(vx_context context, vx_size a, vx_size b, const ct_format *f)
{
    vx_size dims[2];
    dims[0] = a;
    dims[1] = b;
    return ct_tensor(context, 2, dims, f);
}

TEST(graph, kernels_and_parameters)
{
    vx_kernel k = vxGetKernelByName(context, "org.khronos.openvx.tensor_add"), k2;
    vx_uint32 nparams = 0;
    vx_enum kenum = 0, dir = 0, type = 0;
    vx_char name[VX_MAX_KERNEL_NAME];
    vx_parameter p;
    vx_uint32 index = 99;
    ASSERT_VX_OBJECT(k);
    VX_CALL(vxQueryKernel(k, VX_KERNEL_PARAMETERS, &nparams, sizeof nparams));
    ASSERT_EQ_INT(4, nparams);
    VX_CALL(vxQueryKernel(k, VX_KERNEL_ENUM, &kenum, sizeof kenum));
    ASSERT_EQ_INT(VX_KERNEL_TENSOR_ADD, kenum);
    VX_CALL(vxQueryKernel(k, VX_KERNEL_NAME, name, sizeof name));
    ASSERT(strcmp(name, "org.khronos.openvx.tensor_add") == 0);
    k2 = vxGetKernelByEnum(context, VX_KERNEL_CONVOLUTION_LAYER);
    ASSERT_VX_OBJECT(k2);
    VX_CALL(vxQueryKernel(k2, VX_KERNEL_PARAMETERS, &nparams, sizeof nparams));
    ASSERT_EQ_INT(5, nparams);
    p = vxGetKernelParameterByIndex(k, 3);
    ASSERT_VX_OBJECT(p);
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_INDEX, &index, sizeof index));
    ASSERT_EQ_INT(3, index);
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_DIRECTION, &dir, sizeof dir));
    ASSERT_EQ_INT(VX_OUTPUT, dir);
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_TYPE, &type, sizeof type));
    ASSERT_EQ_INT(VX_TYPE_TENSOR, type);
    VX_CALL(vxReleaseParameter(&p));
    ASSERT(vxGetStatus((vx_reference)vxGetKernelParameterByIndex(k, 9)) != VX_SUCCESS);
    ASSERT(vxGetStatus((vx_reference)vxGetKernelByName(context, "no.such.kernel")) != VX_SUCCESS);
    VX_CALL(vxReleaseKernel(&k));
    VX_CALL(vxReleaseKernel(&k2));
}

TEST(graph, generic_node_and_parameter_setters)
{
    vx_kernel k = vxGetKernelByEnum(context, VX_KERNEL_TENSOR_SUBTRACT);
    vx_graph graph = vxCreateGraph(context);
    vx_tensor a = tensor3(context, 4, 3, &CT_S8), b = tensor3(context, 4, 3, &CT_S8), out = tensor3(context, 4, 3, &CT_S8);
    vx_enum pol = VX_CONVERT_POLICY_WRAP;
    vx_scalar s = vxCreateScalar(context, VX_TYPE_ENUM, &pol);
    int64_t x[12], y[12], expected[12], actual[12];
    vx_node node;
    vx_parameter p;
    vx_uint32 np = 0;
    vx_reference ref = NULL;
    size_t i;
    ASSERT_VX_OBJECT(k);
    ASSERT_VX_OBJECT(graph);
    ct_fill_format(x, 12, VX_TYPE_INT8);
    ct_fill_format(y, 12, VX_TYPE_INT8);
    for (i = 0; i < 12; i++)
        expected[i] = ct_fit(x[i] - y[i], VX_TYPE_INT8, 0);
    ct_write(a, x);
    ct_write(b, y);
    node = vxCreateGenericNode(graph, k);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)a));
    VX_CALL(vxSetParameterByIndex(node, 2, (vx_reference)s));
    VX_CALL(vxSetParameterByIndex(node, 3, (vx_reference)out));
    p = vxGetParameterByIndex(node, 1);
    ASSERT_VX_OBJECT(p);
    VX_CALL(vxSetParameterByReference(p, (vx_reference)b));
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_REF, &ref, sizeof ref));
    ASSERT(ref == (vx_reference)b);
    VX_CALL(vxReleaseReference(&ref));
    VX_CALL(vxReleaseParameter(&p));
    VX_CALL(vxQueryNode(node, VX_NODE_PARAMETERS, &np, sizeof np));
    ASSERT_EQ_INT(4, np);
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxSetParameterByIndex(node, 7, (vx_reference)a));
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, actual);
    ASSERT_EQ_ARRAY("generic subtract node", expected, actual, 12);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseKernel(&k));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseScalar(&s));
    VX_CALL(vxReleaseTensor(&a));
    VX_CALL(vxReleaseTensor(&b));
    VX_CALL(vxReleaseTensor(&out));
}

/* verification errors: each bad graph gives its status and stays unverified */
typedef struct {
    const char *name;
    int kind;
    vx_status expected;
} verr_arg;

static void gen_verify_errors(void)
{
    static const verr_arg list[] = {
        {"shape_mismatch", 0, VX_ERROR_INVALID_DIMENSION},
        {"fixed_point_mismatch", 1, VX_ERROR_INVALID_FORMAT},
        {"unsupported_lut_type", 2, VX_ERROR_INVALID_TYPE},
        {"multiple_writers", 3, VX_ERROR_MULTIPLE_WRITERS},
        {"bad_policy", 4, VX_ERROR_INVALID_VALUE},
        {"conv_no_stride_fits", 5, VX_ERROR_INVALID_DIMENSION},
        {"weights_not_4d", 6, VX_ERROR_INVALID_DIMENSION},
        {"pool_pad_too_large", 7, VX_ERROR_INVALID_VALUE},
    };
    size_t i;
    for (i = 0; i < sizeof list / sizeof list[0]; i++)
        ct_emit(list[i].name, &list[i]);
}

TEST_WITH_ARG(graph, verify_errors, verr_arg, gen_verify_errors)
{
    vx_graph graph = vxCreateGraph(context);
    vx_tensor a = tensor3(context, 4, 3, &CT_Q78), b, out = tensor3(context, 4, 3, &CT_Q78), extra = NULL;
    ct_format q = CT_Q78;
    vx_node n1 = NULL, n2 = NULL;
    vx_lut lut = NULL;
    vx_enum state = 0;
    ASSERT_VX_OBJECT(graph);
    switch (arg->kind) {
    case 0:
        b = tensor3(context, 3, 4, &CT_Q78);
        n1 = vxTensorAddNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
        break;
    case 1:
        q.fpp = 4;
        b = tensor3(context, 4, 3, &q);
        n1 = vxTensorAddNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
        break;
    case 2:
        b = tensor3(context, 4, 3, &CT_Q78);
        lut = vxCreateLUT(context, VX_TYPE_UINT8, 256);
        n1 = vxTensorTableLookupNode(graph, a, lut, out);
        break;
    case 3:
        b = tensor3(context, 4, 3, &CT_Q78);
        n1 = vxTensorAddNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
        n2 = vxTensorSubtractNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
        break;
    case 4:
        b = tensor3(context, 4, 3, &CT_Q78);
        n1 = vxTensorAddNode(graph, a, b, VX_ROUND_POLICY_TO_ZERO, out);
        break;
    case 5: {
        vx_size wd[4] = {3, 3, 1, 1}, id[3] = {4, 3, 1}, od[3] = {5, 1, 1};
        vx_nn_convolution_params_t params;
        memset(&params, 0, sizeof params);
        params.overflow_policy = VX_CONVERT_POLICY_SATURATE;
        params.rounding_policy = VX_ROUND_POLICY_TO_ZERO;
        params.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;
        VX_CALL(vxReleaseTensor(&a));
        VX_CALL(vxReleaseTensor(&out));
        a = ct_tensor(context, 3, id, &CT_Q78);
        b = ct_tensor(context, 4, wd, &CT_Q78);
        out = ct_tensor(context, 3, od, &CT_Q78);
        n1 = vxConvolutionLayer(graph, a, b, NULL, &params, sizeof params, out);
        break;
    }
    case 6: {
        vx_size id[3] = {4, 3, 1}, od[3] = {2, 1, 1};
        vx_nn_convolution_params_t params;
        memset(&params, 0, sizeof params);
        params.overflow_policy = VX_CONVERT_POLICY_SATURATE;
        params.rounding_policy = VX_ROUND_POLICY_TO_ZERO;
        params.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;
        VX_CALL(vxReleaseTensor(&a));
        VX_CALL(vxReleaseTensor(&out));
        a = ct_tensor(context, 3, id, &CT_Q78);
        b = tensor3(context, 3, 3, &CT_Q78);
        out = ct_tensor(context, 3, od, &CT_Q78);
        n1 = vxConvolutionLayer(graph, a, b, NULL, &params, sizeof params, out);
        break;
    }
    default: {
        vx_size id[3] = {4, 4, 1}, od[3] = {2, 2, 1};
        VX_CALL(vxReleaseTensor(&a));
        VX_CALL(vxReleaseTensor(&out));
        a = ct_tensor(context, 3, id, &CT_Q78);
        b = tensor3(context, 1, 1, &CT_Q78);
        out = ct_tensor(context, 3, od, &CT_Q78);
        n1 = vxPoolingLayer(graph, a, VX_NN_POOLING_MAX, 2, 2, 2, 0, VX_NN_DS_SIZE_ROUNDING_FLOOR, out);
        break;
    }
    }
    ASSERT_VX_OBJECT(n1);
    ASSERT_STATUS(arg->expected, vxVerifyGraph(graph));
    ASSERT(vxIsGraphVerified(graph) == vx_false_e);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_STATE, &state, sizeof state));
    ASSERT_EQ_INT(VX_GRAPH_STATE_UNVERIFIED, state);
    ASSERT(vxProcessGraph(graph) != VX_SUCCESS);
    VX_CALL(vxReleaseNode(&n1));
    if (n2)
        VX_CALL(vxReleaseNode(&n2));
    if (lut)
        VX_CALL(vxReleaseLUT(&lut));
    if (extra)
        VX_CALL(vxReleaseTensor(&extra));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&a));
    VX_CALL(vxReleaseTensor(&b));
    VX_CALL(vxReleaseTensor(&out));
}

TEST(graph, graph_parameters)
{
    vx_graph graph = vxCreateGraph(context);
    vx_tensor a = tensor3(context, 5, 2, &CT_U8), b = tensor3(context, 5, 2, &CT_U8), out = tensor3(context, 5, 2, &CT_U8);
    vx_tensor a2 = tensor3(context, 5, 2, &CT_U8), wrong = tensor3(context, 2, 5, &CT_U8);
    int64_t x[10], y[10], x2[10], expected[10], actual[10];
    vx_node node;
    vx_parameter p;
    vx_uint32 np = 0;
    vx_reference got;
    size_t i;
    ASSERT_VX_OBJECT(graph);
    ct_fill_format(x, 10, VX_TYPE_UINT8);
    ct_fill_format(y, 10, VX_TYPE_UINT8);
    ct_fill_format(x2, 10, VX_TYPE_UINT8);
    ct_write(a, x);
    ct_write(b, y);
    ct_write(a2, x2);
    node = vxTensorAddNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
    ASSERT_VX_OBJECT(node);
    p = vxGetParameterByIndex(node, 0);
    VX_CALL(vxAddParameterToGraph(graph, p));
    VX_CALL(vxReleaseParameter(&p));
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_NUMPARAMETERS, &np, sizeof np));
    ASSERT_EQ_INT(1, np);
    VX_CALL(vxVerifyGraph(graph));
    ASSERT(vxIsGraphVerified(graph) == vx_true_e);
    /* same meta-data, aliasing nothing: stays verified */
    VX_CALL(vxSetGraphParameterByIndex(graph, 0, (vx_reference)a2));
    ASSERT(vxIsGraphVerified(graph) == vx_true_e);
    p = vxGetGraphParameterByIndex(graph, 0);
    ASSERT_VX_OBJECT(p);
    VX_CALL(vxQueryParameter(p, VX_PARAMETER_REF, &got, sizeof got));
    ASSERT(got == (vx_reference)a2);
    VX_CALL(vxReleaseReference(&got));
    VX_CALL(vxReleaseParameter(&p));
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, actual);
    for (i = 0; i < 10; i++)
        expected[i] = ct_fit(x2[i] + y[i], VX_TYPE_UINT8, 1);
    ASSERT_EQ_ARRAY("output with a replaced graph parameter", expected, actual, 10);
    /* other meta-data: back to unverified, and verification fails */
    VX_CALL(vxSetGraphParameterByIndex(graph, 0, (vx_reference)wrong));
    ASSERT(vxIsGraphVerified(graph) == vx_false_e);
    ASSERT_STATUS(VX_ERROR_INVALID_DIMENSION, vxVerifyGraph(graph));
    ASSERT(vxSetGraphParameterByIndex(graph, 3, (vx_reference)a) != VX_SUCCESS);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&a));
    VX_CALL(vxReleaseTensor(&a2));
    VX_CALL(vxReleaseTensor(&wrong));
    VX_CALL(vxReleaseTensor(&b));
    VX_CALL(vxReleaseTensor(&out));
}

static int callback_calls;
static vx_action VX_CALLBACK on_complete(vx_node node)
{
    (void)node;
    callback_calls++;
    return VX_ACTION_CONTINUE;
}

TEST(graph, node_callback_target_schedule_performance)
{
    vx_graph graph = vxCreateGraph(context);
    vx_tensor a = tensor3(context, 3, 3, &CT_S8), b = tensor3(context, 3, 3, &CT_S8), out = tensor3(context, 3, 3, &CT_S8);
    vx_node node, extra;
    vx_status status = -1;
    vx_perf_t perf;
    vx_uint32 nodes = 0;
    ASSERT_VX_OBJECT(graph);
    node = vxTensorAddNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
    ASSERT_VX_OBJECT(node);
    extra = vxTensorSubtractNode(graph, a, b, VX_CONVERT_POLICY_SATURATE, out);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_NUMNODES, &nodes, sizeof nodes));
    ASSERT_EQ_INT(2, nodes);
    VX_CALL(vxRemoveNode(&extra));
    ASSERT(extra == NULL);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_NUMNODES, &nodes, sizeof nodes));
    ASSERT_EQ_INT(1, nodes);
    callback_calls = 0;
    VX_CALL(vxAssignNodeCallback(node, on_complete));
    ASSERT(vxRetrieveNodeCallback(node) == on_complete);
    VX_CALL(vxSetNodeTarget(node, VX_TARGET_STRING, "openvx-nn"));
    VX_CALL(vxSetNodeTarget(node, VX_TARGET_ANY, NULL));
    ASSERT(vxSetNodeTarget(node, VX_TARGET_STRING, "gpu-that-is-not-there") != VX_SUCCESS);
    VX_CALL(vxDirective((vx_reference)graph, VX_DIRECTIVE_ENABLE_PERFORMANCE));
    ASSERT_STATUS(VX_FAILURE, vxWaitGraph(graph)); /* not scheduled */
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxScheduleGraph(graph));
    VX_CALL(vxWaitGraph(graph));
    VX_CALL(vxProcessGraph(graph));
    ASSERT_EQ_INT(2, callback_calls);
    VX_CALL(vxQueryNode(node, VX_NODE_STATUS, &status, sizeof status));
    ASSERT_EQ_INT(VX_SUCCESS, status);
    VX_CALL(vxQueryGraph(graph, VX_GRAPH_PERFORMANCE, &perf, sizeof perf));
    ASSERT(perf.num >= 2);
    VX_CALL(vxQueryNode(node, VX_NODE_PERFORMANCE, &perf, sizeof perf));
    ASSERT(perf.num >= 2);
    ASSERT_STATUS(VX_ERROR_NOT_SUPPORTED, vxSetGraphAttribute(graph, VX_GRAPH_NUMNODES, &nodes, sizeof nodes));
    ASSERT_STATUS(VX_ERROR_NOT_SUPPORTED, vxSetNodeAttribute(node, VX_NODE_STATUS, &status, sizeof status));
    {
        vx_size local = 16;
        vx_status s = vxSetNodeAttribute(node, VX_NODE_LOCAL_DATA_SIZE, &local, sizeof local);
        ASSERT(s == VX_SUCCESS || s == VX_ERROR_NOT_SUPPORTED);
    }
    VX_CALL(vxAssignNodeCallback(node, NULL));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&a));
    VX_CALL(vxReleaseTensor(&b));
    VX_CALL(vxReleaseTensor(&out));
}
