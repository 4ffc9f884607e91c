/* api/graph.c: exported graph functions. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_graph VX_API_CALL vxCreateGraph(vx_context context)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_graph)vxnn_create_graph(__func__, H(context));
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseGraph(vx_graph *graph)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)graph, VX_TYPE_GRAPH);
}

VX_API_ENTRY vx_status VX_API_CALL vxVerifyGraph(vx_graph graph)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_verify_graph(__func__, H(graph));
}

VX_API_ENTRY vx_status VX_API_CALL vxProcessGraph(vx_graph graph)
{
    vx_status status;
    VXNN_START_OR_RETURN(VX_FAILURE);
    status = vxnn_plan_run(H(graph)); /* a verified graph with a native plan: no Python at all */
    if (status != VXNN_NOT_NATIVE)
        return status;
    return vxnn_process_graph(__func__, H(graph));
}

VX_API_ENTRY vx_status VX_API_CALL vxScheduleGraph(vx_graph graph)
{
    vx_status status;
    VXNN_START_OR_RETURN(VX_FAILURE);
    status = vxnn_plan_schedule(H(graph)); /* a pthread runs the native plan */
    if (status != VXNN_NOT_NATIVE)
        return status;
    return vxnn_schedule_graph(__func__, H(graph));
}

VX_API_ENTRY vx_status VX_API_CALL vxWaitGraph(vx_graph graph)
{
    vx_status status;
    VXNN_START_OR_RETURN(VX_FAILURE);
    status = vxnn_plan_wait_graph(H(graph));
    if (status != VXNN_NOT_NATIVE)
        return status;
    return vxnn_wait_graph(__func__, H(graph));
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryGraph(vx_graph graph, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(graph), VX_TYPE_GRAPH, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetGraphAttribute(vx_graph graph, vx_enum attribute, const void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_attribute(__func__, H(graph), VX_TYPE_GRAPH, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToGraph(vx_graph graph, vx_parameter parameter)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_add_parameter_to_graph(__func__, H(graph), H(parameter));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetGraphParameterByIndex(vx_graph graph, vx_uint32 index, vx_reference value)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_graph_parameter(__func__, H(graph), index, H(value));
}

VX_API_ENTRY vx_parameter VX_API_CALL vxGetGraphParameterByIndex(vx_graph graph, vx_uint32 index)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_parameter)vxnn_get_graph_parameter(__func__, H(graph), index);
}

VX_API_ENTRY vx_bool VX_API_CALL vxIsGraphVerified(vx_graph graph)
{
    VXNN_START_OR_RETURN(vx_false_e);
    return vxnn_is_graph_verified(__func__, H(graph)) ? vx_true_e : vx_false_e;
}
