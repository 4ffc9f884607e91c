/* api/reference.c: exported context, reference, error and log functions. */
#include <stdarg.h>
#include <stdio.h>
#include "../runtime_internal.h"

VX_API_ENTRY vx_context VX_API_CALL vxCreateContext(void)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_context)vxnn_create_context(__func__);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseContext(vx_context *context)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)context, VX_TYPE_CONTEXT);
}

VX_API_ENTRY vx_context VX_API_CALL vxGetContext(vx_reference reference)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_context)vxnn_get_context(__func__, H(reference));
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryContext(vx_context context, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(context), VX_TYPE_CONTEXT, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetContextAttribute(vx_context context, vx_enum attribute, const void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_attribute(__func__, H(context), VX_TYPE_CONTEXT, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxHint(vx_reference reference, vx_enum hint, const void *data, vx_size data_size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_hint(__func__, H(reference), hint, data, data_size);
}

VX_API_ENTRY vx_status VX_API_CALL vxDirective(vx_reference reference, vx_enum directive)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_directive(__func__, H(reference), directive);
}

VX_API_ENTRY vx_status VX_API_CALL vxGetStatus(vx_reference reference)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_get_status(__func__, H(reference));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImmediateModeTarget(vx_context context, vx_enum target_enum, const char *target_string)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_immediate_target(__func__, H(context), target_enum, target_string);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryReference(vx_reference ref, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(ref), VX_TYPE_REFERENCE, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseReference(vx_reference *ref_ptr)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)ref_ptr, VX_TYPE_REFERENCE);
}

VX_API_ENTRY vx_status VX_API_CALL vxRetainReference(vx_reference ref)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_retain(__func__, H(ref));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetReferenceName(vx_reference ref, const vx_char *name)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_name(__func__, H(ref), name);
}

VX_API_ENTRY void VX_API_CALL vxAddLogEntry(vx_reference ref, vx_status status, const char *message, ...)
{
    char text[VX_MAX_LOG_MESSAGE_LEN];
    va_list ap;
    if (!message || !vxnn_start())
        return;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
    vxnn_add_log_entry(__func__, H(ref), status, text);
}

VX_API_ENTRY void VX_API_CALL vxRegisterLogCallback(vx_context context, vx_log_callback_f callback, vx_bool reentrant)
{
    if (!vxnn_start())
        return;
    vxnn_register_log_callback(__func__, H(context), (void *)(uintptr_t)callback, reentrant);
}
