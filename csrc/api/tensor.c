/* api/tensor.c: exported tensor functions. */
#include "../runtime_internal.h"
#include "../tensor_copy.h"

VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensor(vx_context context, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_tensor)vxnn_create_tensor(__func__, H(context), number_of_dims, dims, data_type, fixed_point_position);
}

VX_API_ENTRY vx_tensor VX_API_CALL vxCreateVirtualTensor(vx_graph graph, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_tensor)vxnn_create_virtual_tensor(__func__, H(graph), number_of_dims, dims, data_type, fixed_point_position);
}

VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromView(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_tensor)vxnn_create_tensor_from_view(__func__, H(tensor), number_of_dims, view_start, view_end);
}

VX_API_ENTRY vx_tensor VX_API_CALL vxCreateTensorFromHandle(vx_context context, vx_size number_of_dims, const vx_size *dims, vx_enum data_type, vx_int8 fixed_point_position, const vx_size *stride, void *ptr, vx_enum memory_type)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_tensor)vxnn_create_tensor_from_handle(__func__, H(context), number_of_dims, dims, data_type, fixed_point_position, stride, ptr, memory_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxSwapTensorHandle(vx_tensor tensor, void *new_ptr, void **prev_ptr)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_swap_tensor_handle(__func__, H(tensor), new_ptr, prev_ptr);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end, const vx_size *user_stride, void *user_ptr, vx_enum usage, vx_enum user_memory_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    if (vxnn_copy_tensor_natively(H(tensor), number_of_dims, view_start, view_end, user_stride, user_ptr, usage,
                                  user_memory_type) == VX_SUCCESS)
        return VX_SUCCESS; /* a published tensor and a well-formed call: no Python */
    return vxnn_copy_tensor_patch(__func__, H(tensor), number_of_dims, view_start, view_end, user_stride, user_ptr, usage, user_memory_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxMapTensorPatch(vx_tensor tensor, vx_size number_of_dims, const vx_size *view_start, const vx_size *view_end, vx_map_id *map_id, vx_size *stride, void **ptr, vx_enum usage, vx_enum mem_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_map_tensor_patch(__func__, H(tensor), number_of_dims, view_start, view_end, map_id, stride, ptr, usage, mem_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapTensorPatch(vx_tensor tensor, const vx_map_id map_id)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_unmap_tensor_patch(__func__, H(tensor), map_id);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryTensor(vx_tensor tensor, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(tensor), VX_TYPE_TENSOR, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseTensor(vx_tensor *tensor)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)tensor, VX_TYPE_TENSOR);
}
