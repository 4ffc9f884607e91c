/* runtime.h: C helpers of libopenvx.so that Python calls (declared to cffi as
 * ordinary C functions) and the start-up guard every exported entry point uses. */
#ifndef OPENVX_NN_RUNTIME_H
#define OPENVX_NN_RUNTIME_H
#include <stdint.h>
#include <stddef.h>

/* Directory holding libopenvx.so (empty string if unknown). */
const char *vxnn_library_dir(void);
/* Call an application log callback (a vx_log_callback_f) with plain values. */
void vxnn_emit_log(void *callback, uintptr_t context, uintptr_t ref, int32_t status, const char *text);
/* Call an application node-completion callback (a vx_nodecomplete_f). */
int32_t vxnn_call_node_callback(void *callback, uintptr_t node);
/* Copy n bytes between raw addresses (used where Python holds integers, not pointers). */
void vxnn_memcpy(uintptr_t dst, uintptr_t src, size_t n);
/* Register the exit handler that waits for running graphs (again after new libraries
 * were loaded, so that it runs before their destructors); no-op in a Python host. */
void vxnn_register_exit(void);
/* 1 when this library started the interpreter (a C host), 0 in a Python host. */
int vxnn_hosts_python(void);
/* Call an application's kernel function, initializer or deinitializer (vx_kernel_f and kin). */
int32_t vxnn_call_kernel(void *function, uintptr_t node, const uintptr_t *parameters, uint32_t count);
/* Call an application's validator (vx_kernel_validate_f) with one meta format per parameter (0 for inputs). */
int32_t vxnn_call_validator(void *function, uintptr_t node, const uintptr_t *parameters, uint32_t count,
                            const uintptr_t *metas);
/* Kernel modules: dlopen (NULL on failure, the reason in error), dlsym, dlclose, and a
 * vxPublishKernels/vxUnpublishKernels call. */
void *vxnn_module_open(const char *path, char *error, size_t size);
void *vxnn_module_symbol(void *module, const char *name);
void vxnn_module_close(void *module);
int32_t vxnn_call_publish(void *function, uintptr_t context);

#endif
