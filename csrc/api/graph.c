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
