/* bridge/lut.h: Python-bodied functions behind the lut entry points
 * (vxReleaseLUT and vxQueryLUT use the generic ones of reference.h). */
uintptr_t vxnn_create_lut(const char *fn, uintptr_t context, int32_t data_type, size_t count);
uintptr_t vxnn_create_virtual_lut(const char *fn, uintptr_t graph, int32_t data_type, size_t count);
int32_t vxnn_copy_lut(const char *fn, uintptr_t lut, void *ptr, int32_t usage, int32_t mem_type);
int32_t vxnn_map_lut(const char *fn, uintptr_t lut, uintptr_t *map_id, void **ptr, int32_t usage, int32_t mem_type, uint32_t flags);
int32_t vxnn_unmap_lut(const char *fn, uintptr_t lut, uintptr_t map_id);
