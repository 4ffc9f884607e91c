/* bridge/image.h: Python-bodied functions behind the image entry points.
 * A rectangle travels as uint32_t[4] (start_x, start_y, end_x, end_y: the
 * layout of vx_rectangle_t), an addressing structure as int64_t[4]
 * (dim_x, dim_y, stride_x, stride_y); NULL stays NULL. */
uintptr_t vxnn_create_image(const char *fn, uintptr_t context, uint32_t width, uint32_t height, uint32_t format);
uintptr_t vxnn_create_virtual_image(const char *fn, uintptr_t graph, uint32_t width, uint32_t height, uint32_t format);
uintptr_t vxnn_create_image_from_handle(const char *fn, uintptr_t context, uint32_t format, const int64_t *layout, void *ptr, int32_t memory_type);
int32_t vxnn_copy_image_patch(const char *fn, uintptr_t image, const uint32_t *rect, uint32_t plane, const int64_t *layout, void *ptr, int32_t usage, int32_t memory_type);
int32_t vxnn_map_image_patch(const char *fn, uintptr_t image, const uint32_t *rect, uint32_t plane, uintptr_t *map_id, int64_t *layout, void **ptr, int32_t usage, int32_t memory_type, uint32_t flags);
int32_t vxnn_unmap_image_patch(const char *fn, uintptr_t image, uintptr_t map_id);
