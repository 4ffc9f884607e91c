/* bridge/tensor.h: Python-bodied functions behind the tensor entry points.
 * vx_size arrays travel as size_t pointers, map ids as uintptr_t. */
uintptr_t vxnn_create_tensor(const char *fn, uintptr_t context, size_t n, const size_t *dims, int32_t data_type, int8_t fpp);
uintptr_t vxnn_create_virtual_tensor(const char *fn, uintptr_t graph, size_t n, const size_t *dims, int32_t data_type, int8_t fpp);
uintptr_t vxnn_create_tensor_from_view(const char *fn, uintptr_t tensor, size_t n, const size_t *start, const size_t *end);
uintptr_t vxnn_create_tensor_from_handle(const char *fn, uintptr_t context, size_t n, const size_t *dims, int32_t data_type, int8_t fpp, const size_t *stride, void *ptr, int32_t memory_type);
int32_t vxnn_swap_tensor_handle(const char *fn, uintptr_t tensor, void *new_ptr, void **prev_ptr);
int32_t vxnn_copy_tensor_patch(const char *fn, uintptr_t tensor, size_t n, const size_t *start, const size_t *end, const size_t *user_stride, void *ptr, int32_t usage, int32_t memory_type);
int32_t vxnn_map_tensor_patch(const char *fn, uintptr_t tensor, size_t n, const size_t *start, const size_t *end, uintptr_t *map_id, size_t *stride, void **ptr, int32_t usage, int32_t memory_type);
int32_t vxnn_unmap_tensor_patch(const char *fn, uintptr_t tensor, uintptr_t map_id);
