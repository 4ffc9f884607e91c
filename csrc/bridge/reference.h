/* bridge/reference.h: Python-bodied functions behind the context, reference,
 * error and log entry points.  Plain C types only: handles travel as
 * uintptr_t, 'fn' is the exported function's name for log lines.
 * Every file in csrc/bridge/ except all.h is declared to cffi as
 * extern "Python+C"; keep to declarations cffi can parse. */
uintptr_t vxnn_create_context(const char *fn);
uintptr_t vxnn_get_context(const char *fn, uintptr_t ref);
int32_t vxnn_release(const char *fn, uintptr_t *handle, int32_t vx_type);
int32_t vxnn_retain(const char *fn, uintptr_t ref);
int32_t vxnn_query(const char *fn, uintptr_t ref, int32_t vx_type, int32_t attribute, void *ptr, size_t size);
int32_t vxnn_set_attribute(const char *fn, uintptr_t ref, int32_t vx_type, int32_t attribute, const void *ptr, size_t size);
int32_t vxnn_get_status(const char *fn, uintptr_t ref);
int32_t vxnn_set_name(const char *fn, uintptr_t ref, const char *name);
int32_t vxnn_hint(const char *fn, uintptr_t ref, int32_t hint, const void *data, size_t size);
int32_t vxnn_directive(const char *fn, uintptr_t ref, int32_t directive);
int32_t vxnn_set_immediate_target(const char *fn, uintptr_t context, int32_t target, const char *target_string);
void vxnn_add_log_entry(const char *fn, uintptr_t ref, int32_t status, const char *text);
void vxnn_register_log_callback(const char *fn, uintptr_t context, void *callback, int32_t reentrant);
