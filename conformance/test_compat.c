/* test_compat.c: the compatibility mode of openvx-nn (VX/vx_ext_openvx_nn.h): the vendor context
 * attribute VX_CONTEXT_OPENVX_NN_COMPAT, the environment variable OPENVX_NN_COMPAT, and that a graph
 * takes the mode when it is verified. The layers' arithmetic in both modes is in test_nn.c and
 * test_tensor_ops.c (cases named "/SAMPLE"). */
#define _POSIX_C_SOURCE 200112L /* setenv, unsetenv */
#include "ct_vx.h"

#include <VX/vx_ext_openvx_nn.h>
#include <stdlib.h>
#include <string.h>

TESTCASE(compat);

static vx_enum query_mode(vx_context context)
{
    vx_enum mode = 0;
    VX_CALL(vxQueryContext(context, VX_CONTEXT_OPENVX_NN_COMPAT, &mode, sizeof mode));
    return mode;
}

static vx_status set_mode(vx_context context, vx_enum mode)
{
    return vxSetContextAttribute(context, VX_CONTEXT_OPENVX_NN_COMPAT, &mode, sizeof mode);
}

TEST(compat, attribute)
{
    vx_enum bad = 7;
    vx_int64 wide = VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE;
    /* an enumerator of our vendor range: VX_ATTRIBUTE_BASE(VX_ID_USER, VX_TYPE_CONTEXT) + 0 */
    ASSERT_EQ_INT(((vx_uint32)VX_ID_USER << 20) | ((vx_uint32)VX_TYPE_CONTEXT << 8),
                  (vx_uint32)VX_CONTEXT_OPENVX_NN_COMPAT);
    unsetenv("OPENVX_NN_COMPAT");
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_STANDARD, query_mode(context));
    VX_CALL(set_mode(context, VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE));
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE, query_mode(context));
    ASSERT_STATUS(VX_ERROR_INVALID_VALUE, set_mode(context, bad));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS,
                  vxSetContextAttribute(context, VX_CONTEXT_OPENVX_NN_COMPAT, &wide, sizeof wide));
    ASSERT_STATUS(VX_ERROR_INVALID_PARAMETERS, vxSetContextAttribute(context, VX_CONTEXT_OPENVX_NN_COMPAT, NULL, 4));
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE, query_mode(context)); /* unchanged */
    VX_CALL(set_mode(context, VX_OPENVX_NN_COMPAT_STANDARD));
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_STANDARD, query_mode(context));
}

TEST(compat, environment)
{
    ASSERT(setenv("OPENVX_NN_COMPAT", "khronos-sample", 1) == 0);
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE, query_mode(context));
    VX_CALL(set_mode(context, VX_OPENVX_NN_COMPAT_STANDARD)); /* an explicit setting wins */
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_STANDARD, query_mode(context));
    VX_CALL(set_mode(context, VX_OPENVX_NN_COMPAT_ENVIRONMENT));
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE, query_mode(context));
    ASSERT(setenv("OPENVX_NN_COMPAT", "standard", 1) == 0);
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_STANDARD, query_mode(context));
    ASSERT(setenv("OPENVX_NN_COMPAT", "sample", 1) == 0); /* not a mode */
    {
        vx_enum mode;
        ASSERT_STATUS(VX_ERROR_INVALID_VALUE,
                      vxQueryContext(context, VX_CONTEXT_OPENVX_NN_COMPAT, &mode, sizeof mode));
    }
    ASSERT(unsetenv("OPENVX_NN_COMPAT") == 0);
    ASSERT_EQ_INT(VX_OPENVX_NN_COMPAT_STANDARD, query_mode(context));
}

/* Two taps of weight 1 with dilation 1 over [10 20 30 40 50]: the text reads x[o] + x[o + 2],
 * the sample x[o + 1] + x[o + 3] (the last output's second tap falls past the input). */
TEST(compat, mode_taken_at_verify)
{
    static const int64_t x[5] = {10, 20, 30, 40, 50}, ones[2] = {1, 1};
    static const int64_t standard[3] = {40, 60, 80}, sample[3] = {60, 80, 40};
    vx_size in_dims[3] = {5, 1, 1}, w_dims[4] = {2, 1, 1, 1}, out_dims[3] = {3, 1, 1};
    int64_t actual[3];
    vx_tensor tin = ct_tensor(context, 3, in_dims, &CT_U8), tw = ct_tensor(context, 4, w_dims, &CT_U8);
    vx_tensor tout = ct_tensor(context, 3, out_dims, &CT_U8);
    vx_graph graph = vxCreateGraph(context);
    vx_node node;
    vx_nn_convolution_params_t params;

    unsetenv("OPENVX_NN_COMPAT");
    ct_write(tin, x);
    ct_write(tw, ones);
    memset(&params, 0, sizeof params);
    params.overflow_policy = VX_CONVERT_POLICY_SATURATE;
    params.rounding_policy = VX_ROUND_POLICY_TO_ZERO;
    params.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;
    params.dilation_x = 1;
    ASSERT_VX_OBJECT(graph);
    node = vxConvolutionLayer(graph, tin, tw, NULL, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(set_mode(context, VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE)); /* after verification: no effect yet */
    VX_CALL(vxProcessGraph(graph));
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("verified in the standard mode", standard, actual, 3);
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("verified again in the sample mode", sample, actual, 3);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tw));
    VX_CALL(vxReleaseTensor(&tout));
}
