/* test_import_kernel.c: vxImportKernelFromURL with NNEF folders written by the case itself (the graph's text;
 * no variables): the kernel's parameters and their meta formats right after the import, a node of it in a graph
 * beside a standard layer, other types and unreadable folders as error objects. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "ct_vx.h"

#include <VX/vx_khr_import_kernel.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TESTCASE(import_kernel);

/* A folder holding graph.nnef with ``text``; its path in ``folder`` (the caller removes it). */
static int write_graph(char *folder, const char *text)
{
    char path[512];
    strcpy(folder, "/tmp/ct_nnef_XXXXXX");
    if (!mkdtemp(folder))
        return 0;
    snprintf(path, sizeof path, "%s/graph.nnef", folder);
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fputs(text, f);
    fclose(f);
    return 1;
}

static void remove_graph(const char *folder)
{
    char path[512];
    snprintf(path, sizeof path, "%s/graph.nnef", folder);
    unlink(path);
    rmdir(folder);
}

static const char *SUM_AND_TRANSPOSE =
    "version 1.0;\ngraph G( a, b ) -> ( s, t )\n{\n"
    "    a = external<scalar>(shape = [2, 3]);\n    b = external<scalar>(shape = [2, 3]);\n"
    "    s = add(a, b);\n    t = transpose(sub(a, b), axes = [1, 0]);\n}\n";

TEST(import_kernel, parameters_and_meta_formats_are_known_right_after_the_import)
{
    char folder[64];
    ASSERT(write_graph(folder, SUM_AND_TRANSPOSE));
    vx_kernel kernel = vxImportKernelFromURL(context, "nnef", folder);
    remove_graph(folder);  /* every file is read during the import */
    ASSERT_VX_OBJECT(kernel);
    vx_uint32 count = 0;
    VX_CALL(vxQueryKernel(kernel, VX_KERNEL_PARAMETERS, &count, sizeof count));
    ASSERT_EQ_INT(4, count);
    const vx_size expected[4][2] = {{2, 3}, {2, 3}, {2, 3}, {3, 2}};
    for (vx_uint32 i = 0; i < count; i++) {
        vx_parameter p = vxGetKernelParameterByIndex(kernel, i);
        ASSERT_VX_OBJECT(p);
        vx_enum direction = 0, type = 0, data_type = 0;
        vx_meta_format meta = NULL;
        vx_size rank = 0, dims[2] = {0, 0};
        VX_CALL(vxQueryParameter(p, VX_PARAMETER_DIRECTION, &direction, sizeof direction));
        VX_CALL(vxQueryParameter(p, VX_PARAMETER_TYPE, &type, sizeof type));
        VX_CALL(vxQueryParameter(p, VX_PARAMETER_META_FORMAT, &meta, sizeof meta));
        ASSERT_EQ_INT(i < 2 ? VX_INPUT : VX_OUTPUT, direction);
        ASSERT_EQ_INT(VX_TYPE_TENSOR, type);
        VX_CALL(vxQueryMetaFormatAttribute(meta, VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank));
        ASSERT_EQ_INT(2, rank);
        VX_CALL(vxQueryMetaFormatAttribute(meta, VX_TENSOR_DIMS, dims, sizeof dims));
        ASSERT_EQ_INT(expected[i][0], dims[0]);
        ASSERT_EQ_INT(expected[i][1], dims[1]);
        VX_CALL(vxQueryMetaFormatAttribute(meta, VX_TENSOR_DATA_TYPE, &data_type, sizeof data_type));
        ASSERT_EQ_INT(VX_TYPE_FLOAT32, data_type);
        VX_CALL(vxReleaseParameter(&p));
    }
    VX_CALL(vxReleaseKernel(&kernel));
}

static vx_tensor float_tensor(vx_context context, vx_size d0, vx_size d1, const vx_float32 *values)
{
    vx_size dims[2] = {d0, d1}, start[2] = {0, 0}, stride[2] = {sizeof(vx_float32), d0 * sizeof(vx_float32)};
    vx_tensor t = vxCreateTensor(context, 2, dims, VX_TYPE_FLOAT32, 0);
    if (values)
        vxCopyTensorPatch(t, 2, start, dims, stride, (void *)values, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST);
    return t;
}

static void read_tensor(vx_tensor t, vx_size d0, vx_size d1, vx_float32 *values)
{
    vx_size dims[2] = {d0, d1}, start[2] = {0, 0}, stride[2] = {sizeof(vx_float32), d0 * sizeof(vx_float32)};
    vxCopyTensorPatch(t, 2, start, dims, stride, values, VX_READ_ONLY, VX_MEMORY_TYPE_HOST);
}

TEST(import_kernel, a_node_runs_the_graph_on_nnef_data_beside_a_standard_layer)
{
    char folder[64];
    ASSERT(write_graph(folder, SUM_AND_TRANSPOSE));
    vx_kernel kernel = vxImportKernelFromURL(context, "vx_khr_nnef", folder);
    remove_graph(folder);
    ASSERT_VX_OBJECT(kernel);
    /* NNEF's layout: a [2, 3] tensor's bytes are its rows one after the other */
    vx_float32 a[6], b[6], s[6], t[6], r[6];
    for (int i = 0; i < 6; i++) {
        a[i] = (vx_float32)(ct_rand_range(-100, 100)) / 16.0f;
        b[i] = (vx_float32)(ct_rand_range(-100, 100)) / 16.0f;
    }
    vx_graph graph = vxCreateGraph(context);
    vx_tensor ta = float_tensor(context, 2, 3, a), tb = float_tensor(context, 2, 3, b);
    vx_tensor ts = float_tensor(context, 2, 3, NULL), tt = vxCreateVirtualTensor(graph, 0, NULL, 0, 0);
    vx_tensor relu = float_tensor(context, 3, 2, NULL);
    vx_node node = vxCreateGenericNode(graph, kernel);
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxSetParameterByIndex(node, 0, (vx_reference)ta));
    VX_CALL(vxSetParameterByIndex(node, 1, (vx_reference)tb));
    VX_CALL(vxSetParameterByIndex(node, 2, (vx_reference)ts));
    VX_CALL(vxSetParameterByIndex(node, 3, (vx_reference)tt));
    vx_node layer = vxActivationLayer(graph, tt, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, relu);
    ASSERT_VX_OBJECT(layer);
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
    read_tensor(ts, 2, 3, s);
    read_tensor(relu, 3, 2, r);
    for (int row = 0; row < 2; row++)
        for (int col = 0; col < 3; col++) {
            int i = row * 3 + col;
            ASSERT(s[i] == a[i] + b[i]);
            t[col * 2 + row] = a[i] - b[i];  /* transposed: [3, 2] */
        }
    for (int i = 0; i < 6; i++)
        ASSERT(r[i] == (t[i] > 0 ? t[i] : 0.0f));
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseNode(&layer));
    VX_CALL(vxReleaseTensor(&ta));
    VX_CALL(vxReleaseTensor(&tb));
    VX_CALL(vxReleaseTensor(&ts));
    VX_CALL(vxReleaseTensor(&tt));
    VX_CALL(vxReleaseTensor(&relu));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseKernel(&kernel));
}

TEST(import_kernel, other_types_and_unreadable_folders_give_error_objects)
{
    char folder[64];
    ASSERT(write_graph(folder, SUM_AND_TRANSPOSE));
    vx_kernel other = vxImportKernelFromURL(context, "onnx", folder);
    ASSERT_EQ_INT(VX_ERROR_NOT_SUPPORTED, vxGetStatus((vx_reference)other));
    remove_graph(folder);
    vx_kernel gone = vxImportKernelFromURL(context, "nnef", folder);
    ASSERT_EQ_INT(VX_FAILURE, vxGetStatus((vx_reference)gone));
    vx_kernel none = vxImportKernelFromURL(context, "nnef", NULL);
    ASSERT_EQ_INT(VX_ERROR_INVALID_PARAMETERS, vxGetStatus((vx_reference)none));
    ASSERT(vxImportKernelFromURL(NULL, "nnef", folder) == NULL);
}
