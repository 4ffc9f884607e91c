/* bridge/scalar.h: Python-bodied functions behind the scalar entry points
 * (vxReleaseScalar and vxQueryScalar use the generic ones of reference.h). */
uintptr_t vxnn_create_scalar(const char *fn, uintptr_t context, int32_t data_type, const void *ptr);
uintptr_t vxnn_create_scalar_with_size(const char *fn, uintptr_t context, int32_t data_type, const void *ptr, size_t size);
uintptr_t vxnn_create_virtual_scalar(const char *fn, uintptr_t graph, int32_t data_type);
int32_t vxnn_copy_scalar(const char *fn, uintptr_t scalar, void *ptr, int32_t usage, int32_t mem_type);
int32_t vxnn_copy_scalar_with_size(const char *fn, uintptr_t scalar, size_t size, void *ptr, int32_t usage, int32_t mem_type);
