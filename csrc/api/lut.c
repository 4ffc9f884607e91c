/* api/lut.c: exported LUT functions. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_lut VX_API_CALL vxCreateLUT(vx_context context, vx_enum data_type, vx_size count)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_lut)vxnn_create_lut(__func__, H(context), data_type, count);
}

VX_API_ENTRY vx_lut VX_API_CALL vxCreateVirtualLUT(vx_graph graph, vx_enum data_type, vx_size count)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_lut)vxnn_create_virtual_lut(__func__, H(graph), data_type, count);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseLUT(vx_lut *lut)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)lut, VX_TYPE_LUT);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryLUT(vx_lut lut, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(lut), VX_TYPE_LUT, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyLUT(vx_lut lut, void *user_ptr, vx_enum usage, vx_enum user_mem_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_copy_lut(__func__, H(lut), user_ptr, usage, user_mem_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxMapLUT(vx_lut lut, vx_map_id *map_id, void **ptr, vx_enum usage, vx_enum mem_type, vx_bitfield flags)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_map_lut(__func__, H(lut), (uintptr_t *)map_id, ptr, usage, mem_type, flags);
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapLUT(vx_lut lut, vx_map_id map_id)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_unmap_lut(__func__, H(lut), map_id);
}
