/* api/user_kernel.c: exported user kernel, meta format, kernel module and user struct functions. */
#include "../runtime_internal.h"

#define FPTR(f) ((void *)(uintptr_t)(f))

VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelId(vx_context context, vx_enum *pKernelEnumId)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_allocate_user_kernel_id(__func__, H(context), pKernelEnumId);
}

VX_API_ENTRY vx_status VX_API_CALL vxAllocateUserKernelLibraryId(vx_context context, vx_enum *pLibraryId)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_allocate_user_kernel_library_id(__func__, H(context), pLibraryId);
}

VX_API_ENTRY vx_kernel VX_API_CALL vxAddUserKernel(vx_context context, const vx_char *name, vx_enum enumeration,
                                                   vx_kernel_f func_ptr, vx_uint32 numParams,
                                                   vx_kernel_validate_f validate, vx_kernel_initialize_f init,
                                                   vx_kernel_deinitialize_f deinit)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_kernel)vxnn_add_user_kernel(__func__, H(context), name, enumeration, FPTR(func_ptr), numParams,
                                           FPTR(validate), FPTR(init), FPTR(deinit));
}

VX_API_ENTRY vx_status VX_API_CALL vxAddParameterToKernel(vx_kernel kernel, vx_uint32 index, vx_enum dir,
                                                          vx_enum data_type, vx_enum state)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_add_parameter_to_kernel(__func__, H(kernel), index, dir, data_type, state);
}

VX_API_ENTRY vx_status VX_API_CALL vxFinalizeKernel(vx_kernel kernel)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_finalize_kernel(__func__, H(kernel));
}

VX_API_ENTRY vx_status VX_API_CALL vxRemoveKernel(vx_kernel kernel)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_remove_kernel(__func__, H(kernel));
}

VX_API_ENTRY vx_status VX_API_CALL vxSetKernelAttribute(vx_kernel kernel, vx_enum attribute, const void *ptr,
                                                        vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_attribute(__func__, H(kernel), VX_TYPE_KERNEL, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, const void *ptr,
                                                            vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_meta_format_attribute(__func__, H(meta), attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryMetaFormatAttribute(vx_meta_format meta, vx_enum attribute, void *ptr,
                                                              vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(meta), VX_TYPE_META_FORMAT, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetMetaFormatFromReference(vx_meta_format meta, vx_reference exemplar)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_meta_format_from_reference(__func__, H(meta), H(exemplar));
}

VX_API_ENTRY vx_status VX_API_CALL vxLoadKernels(vx_context context, const vx_char *module)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_load_kernels(__func__, H(context), module);
}

VX_API_ENTRY vx_status VX_API_CALL vxUnloadKernels(vx_context context, const vx_char *module)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_unload_kernels(__func__, H(context), module);
}

VX_API_ENTRY vx_status VX_API_CALL vxRegisterKernelLibrary(vx_context context, const vx_char *module,
                                                           vx_publish_kernels_f publish,
                                                           vx_unpublish_kernels_f unpublish)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_register_kernel_library(__func__, H(context), module, FPTR(publish), FPTR(unpublish));
}

VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStruct(vx_context context, vx_size size)
{
    VXNN_START_OR_RETURN(VX_TYPE_INVALID);
    return vxnn_register_user_struct(__func__, H(context), size, NULL);
}

VX_API_ENTRY vx_enum VX_API_CALL vxRegisterUserStructWithName(vx_context context, vx_size size,
                                                              const vx_char *type_name)
{
    VXNN_START_OR_RETURN(VX_TYPE_INVALID);
    if (!type_name)
        return VX_TYPE_INVALID;
    return vxnn_register_user_struct(__func__, H(context), size, type_name);
}

VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructNameByEnum(vx_context context, vx_enum user_struct_type,
                                                             vx_char *type_name, vx_size name_size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_get_user_struct_name(__func__, H(context), user_struct_type, type_name, name_size);
}

VX_API_ENTRY vx_status VX_API_CALL vxGetUserStructEnumByName(vx_context context, const vx_char *type_name,
                                                             vx_enum *user_struct_type)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_get_user_struct_enum(__func__, H(context), type_name, user_struct_type);
}
