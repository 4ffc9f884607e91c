/* ct_module.c: a kernel module for the user-kernel cases (test_user_kernel.c).
 * vxPublishKernels adds org.ct.module.double (out = saturate(2 * in) on INT16 tensors of any
 * fixed point position); vxUnpublishKernels removes it.  Built with -DCT_PUBLISH_FAILS, its
 * publish fails with VX_ERROR_NO_RESOURCES after adding the kernel (the library takes it back);
 * with -DCT_NO_ENTRY it exports neither function.  With -DCT_RELEASE_FIRST it handles its references as
 * the Khronos conformance tests' module does: publish keeps the handle vxAddUserKernel gave, and unpublish
 * releases the handle it got by name before it removes the kernel through that same handle. */
#include <VX/vx.h>

#define CT_MODULE_KERNEL "org.ct.module.double"
#define CT_DIMS 6

#ifndef CT_NO_ENTRY

static vx_status VX_CALLBACK double_validate(vx_node node, const vx_reference parameters[], vx_uint32 num,
                                             vx_meta_format metas[])
{
    vx_enum type = 0;
    (void)node;
    if (num != 2)
        return VX_ERROR_INVALID_PARAMETERS;
    if (vxQueryTensor((vx_tensor)parameters[0], VX_TENSOR_DATA_TYPE, &type, sizeof type) != VX_SUCCESS)
        return VX_ERROR_INVALID_PARAMETERS;
    if (type != VX_TYPE_INT16)
        return VX_ERROR_INVALID_TYPE;
    return vxSetMetaFormatFromReference(metas[1], parameters[0]);
}

static vx_status VX_CALLBACK double_run(vx_node node, const vx_reference *parameters, vx_uint32 num)
{
    vx_size dims[CT_DIMS], start[CT_DIMS] = {0};
    vx_size in_stride[CT_DIMS], out_stride[CT_DIMS], rank = 0, n = 1, i;
    vx_map_id in_map, out_map;
    void *in_ptr = NULL, *out_ptr = NULL;
    vx_tensor in = (vx_tensor)parameters[0], out = (vx_tensor)parameters[1];
    (void)node;
    (void)num;
    vxQueryTensor(in, VX_TENSOR_NUMBER_OF_DIMS, &rank, sizeof rank);
    vxQueryTensor(in, VX_TENSOR_DIMS, dims, rank * sizeof(vx_size));
    for (i = 0; i < rank; i++)
        n *= dims[i];
    if (vxMapTensorPatch(in, rank, start, dims, &in_map, in_stride, &in_ptr, VX_READ_ONLY, VX_MEMORY_TYPE_HOST) != VX_SUCCESS)
        return VX_FAILURE;
    if (vxMapTensorPatch(out, rank, start, dims, &out_map, out_stride, &out_ptr, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST) != VX_SUCCESS) {
        vxUnmapTensorPatch(in, in_map);
        return VX_FAILURE;
    }
    for (i = 0; i < n; i++) { /* both tensors are packed: the library's own memory */
        int v = 2 * ((const vx_int16 *)in_ptr)[i];
        ((vx_int16 *)out_ptr)[i] = (vx_int16)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
    }
    vxUnmapTensorPatch(out, out_map);
    vxUnmapTensorPatch(in, in_map);
    return VX_SUCCESS;
}

VX_API_ENTRY vx_status VX_API_CALL vxPublishKernels(vx_context context)
{
    vx_enum id = 0;
    vx_kernel kernel;
    vx_status status = vxAllocateUserKernelId(context, &id);
    if (status != VX_SUCCESS)
        return status;
    kernel = vxAddUserKernel(context, CT_MODULE_KERNEL, id, double_run, 2, double_validate, NULL, NULL);
    status = vxGetStatus((vx_reference)kernel);
    if (status != VX_SUCCESS)
        return status;
    if ((status = vxAddParameterToKernel(kernel, 0, VX_INPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED)) != VX_SUCCESS ||
        (status = vxAddParameterToKernel(kernel, 1, VX_OUTPUT, VX_TYPE_TENSOR, VX_PARAMETER_STATE_REQUIRED)) != VX_SUCCESS ||
        (status = vxFinalizeKernel(kernel)) != VX_SUCCESS) {
        vxRemoveKernel(kernel);
        return status;
    }
#ifndef CT_RELEASE_FIRST
    vxReleaseKernel(&kernel);
#endif
#ifdef CT_PUBLISH_FAILS
    return VX_ERROR_NO_RESOURCES;
#else
    return VX_SUCCESS;
#endif
}

VX_API_ENTRY vx_status VX_API_CALL vxUnpublishKernels(vx_context context)
{
    vx_kernel kernel = vxGetKernelByName(context, CT_MODULE_KERNEL);
    vx_status status = vxGetStatus((vx_reference)kernel);
#ifdef CT_RELEASE_FIRST
    vx_kernel copy = kernel;
    if (status == VX_SUCCESS)
        status = vxReleaseKernel(&copy);
#endif
    return status == VX_SUCCESS ? vxRemoveKernel(kernel) : status;
}
#else
int ct_module_without_entry_points;
#endif
