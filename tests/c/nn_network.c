/* nn_network.c: a small Q7.8 network built from the C API:
 *   conv 3x3 (pad 1, bias) -> relu -> max pool 2x2 -> fully connected (bias) -> softmax
 * Usage: nn_network DATA OUT typed|generic
 * DATA holds int16 input [12,12,2], conv weights [3,3,2,4], conv bias [4],
 * FC weights [144,10], FC bias [10], in OpenVX order (dim 0 fastest).
 * OUT receives the int16 softmax output [10].  "generic" builds every node with
 * vxCreateGenericNode and the kernel parameter numbering of the seed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

#define CHECK(cond, what) do { if (!(cond)) { fprintf(stderr, "FAILED: %s (line %d)\n", what, __LINE__); exit(1); } } while (0)

static vx_tensor make(vx_context ctx, vx_size n, const vx_size *dims, const vx_int16 *data)
{
    vx_tensor t = vxCreateTensor(ctx, n, dims, VX_TYPE_INT16, 8);
    vx_size start[4] = {0, 0, 0, 0}, stride[4];
    vx_size i;
    CHECK(vxGetStatus((vx_reference)t) == VX_SUCCESS, "vxCreateTensor");
    if (data) {
        stride[0] = sizeof(vx_int16);
        for (i = 1; i < n; i++)
            stride[i] = stride[i - 1] * dims[i - 1];
        CHECK(vxCopyTensorPatch(t, n, start, dims, stride, (void *)data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS,
              "vxCopyTensorPatch write");
    }
    return t;
}

static vx_scalar scalar(vx_context ctx, vx_enum type, const void *value, vx_size size)
{
    vx_scalar s = vxCreateScalarWithSize(ctx, type, value, size);
    CHECK(vxGetStatus((vx_reference)s) == VX_SUCCESS, "vxCreateScalarWithSize");
    return s;
}

/* A generic node of kernel `kernel` with `count` parameters (NULL = optional, unset). */
static vx_node generic(vx_context ctx, vx_graph graph, vx_enum kernel, vx_reference *params, vx_uint32 count)
{
    vx_kernel k = vxGetKernelByEnum(ctx, kernel);
    vx_node node;
    vx_uint32 i, declared = 0;
    CHECK(vxGetStatus((vx_reference)k) == VX_SUCCESS, "vxGetKernelByEnum");
    CHECK(vxQueryKernel(k, VX_KERNEL_PARAMETERS, &declared, sizeof declared) == VX_SUCCESS && declared == count,
          "kernel parameter count");
    node = vxCreateGenericNode(graph, k);
    CHECK(vxGetStatus((vx_reference)node) == VX_SUCCESS, "vxCreateGenericNode");
    for (i = 0; i < count; i++)
        if (params[i])
            CHECK(vxSetParameterByIndex(node, i, params[i]) == VX_SUCCESS, "vxSetParameterByIndex");
    vxReleaseKernel(&k);
    return node;
}

int main(int argc, char **argv)
{
    static vx_int16 input[12 * 12 * 2], cw[3 * 3 * 2 * 4], cb[4], fw[144 * 10], fb[10], result[10];
    vx_size d_in[3] = {12, 12, 2}, d_cw[4] = {3, 3, 2, 4}, d_cb[1] = {4}, d_conv[3] = {12, 12, 4};
    vx_size d_pool[3] = {6, 6, 4}, d_fw[2] = {144, 10}, d_fb[1] = {10}, d_out[1] = {10};
    vx_size zero[1] = {0}, one_stride[1] = {sizeof(vx_int16)};
    vx_nn_convolution_params_t cp;
    vx_context ctx;
    vx_graph graph;
    vx_tensor t_in, t_cw, t_cb, t_fw, t_fb, t_out, v_conv, v_act, v_pool, v_fc;
    vx_node nodes[5];
    vx_uint32 baseline = 0, refs = 0;
    int generic_mode, i;
    FILE *f;

    CHECK(argc == 4, "usage: nn_network DATA OUT typed|generic");
    generic_mode = strcmp(argv[3], "generic") == 0;
    f = fopen(argv[1], "rb");
    CHECK(f != NULL, "open data");
    CHECK(fread(input, sizeof input, 1, f) == 1 && fread(cw, sizeof cw, 1, f) == 1 && fread(cb, sizeof cb, 1, f) == 1 &&
          fread(fw, sizeof fw, 1, f) == 1 && fread(fb, sizeof fb, 1, f) == 1, "read data");
    fclose(f);

    ctx = vxCreateContext();
    CHECK(vxGetStatus((vx_reference)ctx) == VX_SUCCESS, "vxCreateContext");
    CHECK(vxQueryContext(ctx, VX_CONTEXT_REFERENCES, &baseline, sizeof baseline) == VX_SUCCESS, "references");
    graph = vxCreateGraph(ctx);
    t_in = make(ctx, 3, d_in, input);
    t_cw = make(ctx, 4, d_cw, cw);
    t_cb = make(ctx, 1, d_cb, cb);
    t_fw = make(ctx, 2, d_fw, fw);
    t_fb = make(ctx, 1, d_fb, fb);
    t_out = make(ctx, 1, d_out, NULL);
    v_conv = vxCreateVirtualTensor(graph, 3, d_conv, VX_TYPE_INT16, 8);
    v_act = vxCreateVirtualTensor(graph, 3, d_conv, VX_TYPE_INT16, 8);
    v_pool = vxCreateVirtualTensor(graph, 3, d_pool, VX_TYPE_INT16, 8);
    v_fc = vxCreateVirtualTensor(graph, 1, d_out, VX_TYPE_INT16, 8);

    memset(&cp, 0, sizeof cp);
    cp.padding_x = cp.padding_y = 1;
    cp.overflow_policy = VX_CONVERT_POLICY_SATURATE;
    cp.rounding_policy = VX_ROUND_POLICY_TO_NEAREST_EVEN;
    cp.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;

    if (!generic_mode) {
        nodes[0] = vxConvolutionLayer(graph, t_in, t_cw, t_cb, &cp, sizeof cp, v_conv);
        nodes[1] = vxActivationLayer(graph, v_conv, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, v_act);
        nodes[2] = vxPoolingLayer(graph, v_act, VX_NN_POOLING_MAX, 2, 2, 0, 0, VX_NN_DS_SIZE_ROUNDING_FLOOR, v_pool);
        nodes[3] = vxFullyConnectedLayer(graph, v_pool, t_fw, t_fb, VX_CONVERT_POLICY_SATURATE,
                                         VX_ROUND_POLICY_TO_NEAREST_EVEN, v_fc);
        nodes[4] = vxSoftmaxLayer(graph, v_fc, t_out);
    } else {
        vx_enum relu = VX_NN_ACTIVATION_RELU, max = VX_NN_POOLING_MAX, floor_ = VX_NN_DS_SIZE_ROUNDING_FLOOR;
        vx_enum sat = VX_CONVERT_POLICY_SATURATE, even = VX_ROUND_POLICY_TO_NEAREST_EVEN;
        vx_float32 zf = 0.0f;
        vx_size two = 2, none = 0;
        vx_scalar s_cp = scalar(ctx, VX_TYPE_NN_CONVOLUTION_PARAMS, &cp, sizeof cp);
        vx_scalar s_relu = scalar(ctx, VX_TYPE_ENUM, &relu, sizeof relu), s_zf = scalar(ctx, VX_TYPE_FLOAT32, &zf, sizeof zf);
        vx_scalar s_max = scalar(ctx, VX_TYPE_ENUM, &max, sizeof max), s_two = scalar(ctx, VX_TYPE_SIZE, &two, sizeof two);
        vx_scalar s_none = scalar(ctx, VX_TYPE_SIZE, &none, sizeof none), s_floor = scalar(ctx, VX_TYPE_ENUM, &floor_, sizeof floor_);
        vx_scalar s_sat = scalar(ctx, VX_TYPE_ENUM, &sat, sizeof sat), s_even = scalar(ctx, VX_TYPE_ENUM, &even, sizeof even);
        vx_reference conv[5] = {(vx_reference)t_in, (vx_reference)t_cw, (vx_reference)t_cb, (vx_reference)s_cp, (vx_reference)v_conv};
        vx_reference act[5] = {(vx_reference)v_conv, (vx_reference)s_relu, (vx_reference)s_zf, (vx_reference)s_zf, (vx_reference)v_act};
        vx_reference pool[8] = {(vx_reference)v_act, (vx_reference)s_max, (vx_reference)s_two, (vx_reference)s_two,
                                (vx_reference)s_none, (vx_reference)s_none, (vx_reference)s_floor, (vx_reference)v_pool};
        vx_reference fc[6] = {(vx_reference)v_pool, (vx_reference)t_fw, (vx_reference)t_fb, (vx_reference)s_sat,
                              (vx_reference)s_even, (vx_reference)v_fc};
        vx_reference soft[2] = {(vx_reference)v_fc, (vx_reference)t_out};
        nodes[0] = generic(ctx, graph, VX_KERNEL_CONVOLUTION_LAYER, conv, 5);
        nodes[1] = generic(ctx, graph, VX_KERNEL_ACTIVATION_LAYER, act, 5);
        nodes[2] = generic(ctx, graph, VX_KERNEL_POOLING_LAYER, pool, 8);
        nodes[3] = generic(ctx, graph, VX_KERNEL_FULLY_CONNECTED_LAYER, fc, 6);
        nodes[4] = generic(ctx, graph, VX_KERNEL_SOFTMAX_LAYER, soft, 2);
        vxReleaseScalar(&s_cp); vxReleaseScalar(&s_relu); vxReleaseScalar(&s_zf); vxReleaseScalar(&s_max);
        vxReleaseScalar(&s_two); vxReleaseScalar(&s_none); vxReleaseScalar(&s_floor); vxReleaseScalar(&s_sat);
        vxReleaseScalar(&s_even);
    }
    for (i = 0; i < 5; i++)
        CHECK(vxGetStatus((vx_reference)nodes[i]) == VX_SUCCESS, "node creation");
    CHECK(vxVerifyGraph(graph) == VX_SUCCESS, "vxVerifyGraph");
    CHECK(vxProcessGraph(graph) == VX_SUCCESS, "vxProcessGraph");
    CHECK(vxCopyTensorPatch(t_out, 1, zero, d_out, one_stride, result, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) == VX_SUCCESS,
          "read result");
    f = fopen(argv[2], "wb");
    CHECK(f != NULL && fwrite(result, sizeof result, 1, f) == 1, "write result");
    fclose(f);

    for (i = 0; i < 5; i++)
        vxReleaseNode(&nodes[i]);
    vxReleaseTensor(&v_conv); vxReleaseTensor(&v_act); vxReleaseTensor(&v_pool); vxReleaseTensor(&v_fc);
    vxReleaseTensor(&t_in); vxReleaseTensor(&t_cw); vxReleaseTensor(&t_cb); vxReleaseTensor(&t_fw);
    vxReleaseTensor(&t_fb); vxReleaseTensor(&t_out);
    vxReleaseGraph(&graph);
    CHECK(vxQueryContext(ctx, VX_CONTEXT_REFERENCES, &refs, sizeof refs) == VX_SUCCESS && refs == baseline,
          "references back to baseline");
    CHECK(vxReleaseContext(&ctx) == VX_SUCCESS, "vxReleaseContext");
    printf("ok\n");
    return 0;
}
