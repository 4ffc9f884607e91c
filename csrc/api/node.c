/* api/node.c: exported node, kernel and parameter functions. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_node VX_API_CALL vxCreateGenericNode(vx_graph graph, vx_kernel kernel)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_node)vxnn_create_generic_node(__func__, H(graph), H(kernel));
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryNode(vx_node node, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(node), VX_TYPE_NODE, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetNodeAttribute(vx_node node, vx_enum attribute, const void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_attribute(__func__, H(node), VX_TYPE_NODE, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseNode(vx_node *node)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)node, VX_TYPE_NODE);
}

VX_API_ENTRY vx_status VX_API_CALL vxRemoveNode(vx_node *node)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_remove_node(__func__, (uintptr_t *)node);
}

VX_API_ENTRY vx_status VX_API_CALL vxAssignNodeCallback(vx_node node, vx_nodecomplete_f callback)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_assign_node_callback(__func__, H(node), (void *)(uintptr_t)callback);
}

VX_API_ENTRY vx_nodecomplete_f VX_API_CALL vxRetrieveNodeCallback(vx_node node)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_nodecomplete_f)vxnn_retrieve_node_callback(__func__, H(node));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetNodeTarget(vx_node node, vx_enum target_enum, const char *target_string)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_node_target(__func__, H(node), target_enum, target_string);
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetParameterByIndex(vx_node node, vx_uint32 index)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_parameter)vxnn_get_node_parameter(__func__, H(node), index);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseParameter(vx_parameter *param)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)param, VX_TYPE_PARAMETER);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByIndex(vx_node node, vx_uint32 index, vx_reference value)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_node_parameter(__func__, H(node), index, H(value));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetParameterByReference(vx_parameter parameter, vx_reference value)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_parameter_by_reference(__func__, H(parameter), H(value));
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryParameter(vx_parameter parameter, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(parameter), VX_TYPE_PARAMETER, attribute, ptr, size);
}

VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByName(vx_context context, const vx_char *name)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_kernel)vxnn_get_kernel_by_name(__func__, H(context), name);
}

VX_API_ENTRY vx_kernel VX_API_CALL vxGetKernelByEnum(vx_context context, vx_enum kernel)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_kernel)vxnn_get_kernel_by_enum(__func__, H(context), kernel);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryKernel(vx_kernel kernel, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(kernel), VX_TYPE_KERNEL, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseKernel(vx_kernel *kernel)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)kernel, VX_TYPE_KERNEL);
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetKernelParameterByIndex(vx_kernel kernel, vx_uint32 index)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_parameter)vxnn_get_kernel_parameter(__func__, H(kernel), index);
}

VX_API_ENTRY vx_status VX_API_CALL vxReplicateNode(vx_graph graph, vx_node first_node, vx_bool replicate[],
                                                   vx_uint32 number_of_parameters)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_replicate_node(__func__, H(graph), H(first_node), (const int32_t *)replicate, number_of_parameters);
}
