/* api/scalar.c: exported scalar functions. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalar(vx_context context, vx_enum data_type, const void *ptr)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_scalar)vxnn_create_scalar(__func__, H(context), data_type, ptr);
}

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateScalarWithSize(vx_context context, vx_enum data_type, const void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_scalar)vxnn_create_scalar_with_size(__func__, H(context), data_type, ptr, size);
}

VX_API_ENTRY vx_scalar VX_API_CALL vxCreateVirtualScalar(vx_graph graph, vx_enum data_type)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_scalar)vxnn_create_virtual_scalar(__func__, H(graph), data_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseScalar(vx_scalar *scalar)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)scalar, VX_TYPE_SCALAR);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryScalar(vx_scalar scalar, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(scalar), VX_TYPE_SCALAR, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyScalar(vx_scalar scalar, void *user_ptr, vx_enum usage, vx_enum user_mem_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_copy_scalar(__func__, H(scalar), user_ptr, usage, user_mem_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyScalarWithSize(vx_scalar scalar, vx_size size, void *user_ptr, vx_enum usage, vx_enum user_mem_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_copy_scalar_with_size(__func__, H(scalar), size, user_ptr, usage, user_mem_type);
}
