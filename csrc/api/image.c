/* api/image.c: exported image functions.  Patch address arithmetic is plain C. */
#include "../runtime_internal.h"

/* vx_rectangle_t is four vx_uint32 in the order the bridge expects. */
#define RECT(r) ((const uint32_t *)(const void *)(r))

static void layout_of(const vx_imagepatch_addressing_t *addr, int64_t layout[4])
{
    layout[0] = addr->dim_x;
    layout[1] = addr->dim_y;
    layout[2] = addr->stride_x;
    layout[3] = addr->stride_y;
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateImage(vx_context context, vx_uint32 width, vx_uint32 height, vx_df_image color)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_image)vxnn_create_image(__func__, H(context), width, height, color);
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateVirtualImage(vx_graph graph, vx_uint32 width, vx_uint32 height, vx_df_image color)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_image)vxnn_create_virtual_image(__func__, H(graph), width, height, color);
}

VX_API_ENTRY vx_image VX_API_CALL vxCreateImageFromHandle(vx_context context, vx_df_image color, const vx_imagepatch_addressing_t addrs[], void *const ptrs[], vx_enum memory_type)
{
    int64_t layout[4];
    VXNN_START_OR_RETURN(NULL);
    if (addrs)
        layout_of(&addrs[0], layout);
    return (vx_image)vxnn_create_image_from_handle(__func__, H(context), color, addrs ? layout : NULL,
                                                   ptrs ? ptrs[0] : NULL, memory_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxQueryImage(vx_image image, vx_enum attribute, void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_query(__func__, H(image), VX_TYPE_IMAGE, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxSetImageAttribute(vx_image image, vx_enum attribute, const void *ptr, vx_size size)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_set_attribute(__func__, H(image), VX_TYPE_IMAGE, attribute, ptr, size);
}

VX_API_ENTRY vx_status VX_API_CALL vxReleaseImage(vx_image *image)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_release(__func__, (uintptr_t *)image, VX_TYPE_IMAGE);
}

VX_API_ENTRY vx_status VX_API_CALL vxCopyImagePatch(vx_image image, const vx_rectangle_t *image_rect, vx_uint32 image_plane_index, const vx_imagepatch_addressing_t *user_addr, void *user_ptr, vx_enum usage, vx_enum user_mem_type)
{
    int64_t layout[4];
    VXNN_START_OR_RETURN(VX_FAILURE);
    if (user_addr)
        layout_of(user_addr, layout);
    return vxnn_copy_image_patch(__func__, H(image), RECT(image_rect), image_plane_index,
                                 user_addr ? layout : NULL, user_ptr, usage, user_mem_type);
}

VX_API_ENTRY vx_status VX_API_CALL vxMapImagePatch(vx_image image, const vx_rectangle_t *rect, vx_uint32 plane_index, vx_map_id *map_id, vx_imagepatch_addressing_t *addr, void **ptr, vx_enum usage, vx_enum mem_type, vx_uint32 flags)
{
    int64_t layout[4] = {0, 0, 0, 0};
    vx_status status;
    VXNN_START_OR_RETURN(VX_FAILURE);
    status = vxnn_map_image_patch(__func__, H(image), RECT(rect), plane_index, (uintptr_t *)map_id,
                                  addr ? layout : NULL, ptr, usage, mem_type, flags);
    if (status == VX_SUCCESS) {
        addr->dim_x = (vx_uint32)layout[0];
        addr->dim_y = (vx_uint32)layout[1];
        addr->stride_x = (vx_int32)layout[2];
        addr->stride_y = (vx_int32)layout[3];
        addr->scale_x = VX_SCALE_UNITY;
        addr->scale_y = VX_SCALE_UNITY;
        addr->step_x = 1;
        addr->step_y = 1;
        addr->stride_x_bits = (vx_uint16)(layout[2] * 8);
    }
    return status;
}

VX_API_ENTRY vx_status VX_API_CALL vxUnmapImagePatch(vx_image image, vx_map_id map_id)
{
    VXNN_START_OR_RETURN(VX_FAILURE);
    return vxnn_unmap_image_patch(__func__, H(image), map_id);
}

VX_API_ENTRY vx_status VX_API_CALL vxGetValidRegionImage(vx_image image, vx_rectangle_t *rect)
{
    vx_uint32 width = 0, height = 0;
    vx_status status;
    status = vxQueryImage(image, VX_IMAGE_WIDTH, &width, sizeof width);
    if (status == VX_SUCCESS && !rect) {
        vxAddLogEntry((vx_reference)image, VX_ERROR_INVALID_PARAMETERS, "%s: rect is NULL", __func__);
        return VX_ERROR_INVALID_PARAMETERS;
    }
    if (status == VX_SUCCESS)
        status = vxQueryImage(image, VX_IMAGE_HEIGHT, &height, sizeof height);
    if (status == VX_SUCCESS) {
        rect->start_x = 0;
        rect->start_y = 0;
        rect->end_x = width;
        rect->end_y = height;
    }
    return status;
}

/* Byte offset of pixel (x, y) of a patch, scaled as the standard defines it. */
static vx_size patch_offset(vx_uint32 x, vx_uint32 y, const vx_imagepatch_addressing_t *addr)
{
    return (vx_size)addr->stride_y * ((addr->scale_y * (vx_size)y) / VX_SCALE_UNITY) +
           (vx_size)addr->stride_x * ((addr->scale_x * (vx_size)x) / VX_SCALE_UNITY);
}

VX_API_ENTRY void *VX_API_CALL vxFormatImagePatchAddress1d(void *ptr, vx_uint32 index, const vx_imagepatch_addressing_t *addr)
{
    if (!ptr || !addr || addr->dim_x == 0 || (vx_size)index >= (vx_size)addr->dim_x * addr->dim_y)
        return NULL;
    return (vx_uint8 *)ptr + patch_offset(index % addr->dim_x, index / addr->dim_x, addr);
}

VX_API_ENTRY void *VX_API_CALL vxFormatImagePatchAddress2d(void *ptr, vx_uint32 x, vx_uint32 y, const vx_imagepatch_addressing_t *addr)
{
    if (!ptr || !addr || x >= addr->dim_x || y >= addr->dim_y)
        return NULL;
    return (vx_uint8 *)ptr + patch_offset(x, y, addr);
}

VX_API_ENTRY vx_node VX_API_CALL vxColorConvertNode(vx_graph graph, vx_image input, vx_image output)
{
    vxnn_arg args[] = {ARG_REF(input), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_COLOR_CONVERT, args);
}

VX_API_ENTRY vx_status VX_API_CALL vxuColorConvert(vx_context context, vx_image input, vx_image output)
{
    VXNN_IMMEDIATE(context, vxColorConvertNode(graph, input, output));
}
