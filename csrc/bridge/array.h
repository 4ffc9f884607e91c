/* bridge/array.h: Python-bodied functions behind the array entry points. */
uintptr_t vxnn_create_array(const char *fn, uintptr_t context, int32_t item_type, size_t capacity);
uintptr_t vxnn_create_virtual_array(const char *fn, uintptr_t graph, int32_t item_type, size_t capacity);
int32_t vxnn_add_array_items(const char *fn, uintptr_t array, size_t count, const void *ptr, size_t stride);
int32_t vxnn_truncate_array(const char *fn, uintptr_t array, size_t count);
int32_t vxnn_copy_array_range(const char *fn, uintptr_t array, size_t start, size_t end, size_t stride, void *ptr, int32_t usage, int32_t memory_type);
int32_t vxnn_map_array_range(const char *fn, uintptr_t array, size_t start, size_t end, uintptr_t *map_id, size_t *stride, void **ptr, int32_t usage, int32_t memory_type, uint32_t flags);
int32_t vxnn_unmap_array_range(const char *fn, uintptr_t array, uintptr_t map_id);
