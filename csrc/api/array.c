/* api/array.c: exported array and object array functions. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_array VX_API_CALL vxCreateArray(vx_context context, vx_enum item_type, vx_size capacity)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_array)vxnn_create_array(__func__, H(context), item_type, capacity);
}

VX_API_ENTRY vx_array VX_API_CALL vxCreateVirtualArray(vx_graph graph, vx_enum item_type, vx_size capacity)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_array)vxnn_create_virtual_array(__func__, H(graph), item_type, capacity);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseArray(vx_array *arr)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)arr, VX_TYPE_ARRAY);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryArray(vx_array arr, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(arr), VX_TYPE_ARRAY, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxAddArrayItems(vx_array arr, vx_size count, const void *ptr, vx_size stride)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_add_array_items(__func__, H(arr), count, ptr, stride);
}

VX_API_ENTRY vx_status VX_API_CALL vxTruncateArray(vx_array arr, vx_size new_num_items)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_truncate_array(__func__, H(arr), new_num_items);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyArrayRange(vx_array array, vx_size range_start, vx_size range_end, vx_size user_stride, void *user_ptr, vx_enum usage, vx_enum user_mem_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_copy_array_range(__func__, H(array), range_start, range_end, user_stride, user_ptr, usage, user_mem_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxMapArrayRange(vx_array array, vx_size range_start, vx_size range_end, vx_map_id *map_id, vx_size *stride, void **ptr, vx_enum usage, vx_enum mem_type, vx_uint32 flags)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_map_array_range(__func__, H(array), range_start, range_end, (uintptr_t *)map_id, stride, ptr,
                                usage, mem_type, flags);
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapArrayRange(vx_array array, vx_map_id map_id)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_unmap_array_range(__func__, H(array), map_id);
}

VX_API_ENTRY vx_object_array VX_API_CALL vxCreateObjectArray(vx_context context, vx_reference exemplar, vx_size count)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_object_array)vxnn_create_object_array(__func__, H(context), H(exemplar), count);
}

VX_API_ENTRY vx_object_array VX_API_CALL vxCreateImageObjectArrayFromTensor(vx_tensor tensor, const vx_rectangle_t *rect, vx_size array_size, vx_size jump, vx_df_image image_format)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_object_array)vxnn_create_image_object_array_from_tensor(
        __func__, H(tensor), (const uint32_t *)(const void *)rect, array_size, jump, image_format);
}

VX_API_ENTRY vx_reference VX_API_CALL vxGetObjectArrayItem(vx_object_array arr, vx_uint32 index)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_reference)vxnn_get_object_array_item(__func__, H(arr), index);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryObjectArray(vx_object_array arr, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(arr), VX_TYPE_OBJECT_ARRAY, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseObjectArray(vx_object_array *arr)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)arr, VX_TYPE_OBJECT_ARRAY);
}
