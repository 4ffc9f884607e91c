/* bridge/user_kernel.h: Python-bodied functions behind user kernels, meta formats, kernel
 * modules and user structs.  Application callbacks travel as void *; the library calls them
 * through runtime.h's vxnn_call_* helpers. */
int32_t vxnn_allocate_user_kernel_id(const char *fn, uintptr_t context, int32_t *out);
int32_t vxnn_allocate_user_kernel_library_id(const char *fn, uintptr_t context, int32_t *out);
uintptr_t vxnn_add_user_kernel(const char *fn, uintptr_t context, const char *name, int32_t enumeration, void *function, uint32_t count, void *validate, void *init, void *deinit);
int32_t vxnn_add_parameter_to_kernel(const char *fn, uintptr_t kernel, uint32_t index, int32_t direction, int32_t data_type, int32_t state);
int32_t vxnn_finalize_kernel(const char *fn, uintptr_t kernel);
int32_t vxnn_remove_kernel(const char *fn, uintptr_t kernel);
int32_t vxnn_set_meta_format_attribute(const char *fn, uintptr_t meta, int32_t attribute, const void *ptr, size_t size);
int32_t vxnn_set_meta_format_from_reference(const char *fn, uintptr_t meta, uintptr_t exemplar);
int32_t vxnn_load_kernels(const char *fn, uintptr_t context, const char *module);
int32_t vxnn_unload_kernels(const char *fn, uintptr_t context, const char *module);
int32_t vxnn_register_kernel_library(const char *fn, uintptr_t context, const char *module, void *publish, void *unpublish);
int32_t vxnn_register_user_struct(const char *fn, uintptr_t context, size_t size, const char *name);
int32_t vxnn_get_user_struct_name(const char *fn, uintptr_t context, int32_t type, char *name, size_t size);
int32_t vxnn_get_user_struct_enum(const char *fn, uintptr_t context, const char *name, int32_t *type);
