/* nnapi/bridge.h: Python-bodied functions behind libneuralnetworks.so's entry points
 * (openvx_nn/nnapi/capi).  Plain C types only: objects travel as uintptr_t handles,
 * 'fn' is the exported function's name for log lines, 'out' receives a new handle.
 * Declared to cffi as extern "Python+C"; keep to declarations cffi can parse. */
int32_t nnapi_memory_create(const char *fn, size_t size, int32_t protect, int32_t fd, size_t offset, uintptr_t *out);
void nnapi_free(const char *fn, uintptr_t handle, int32_t kind);
int32_t nnapi_model_create(const char *fn, uintptr_t *out);
int32_t nnapi_model_finish(const char *fn, uintptr_t model);
int32_t nnapi_model_add_operand(const char *fn, uintptr_t model, int32_t type, uint32_t count, const uint32_t *dims, float scale, int32_t zero_point);
int32_t nnapi_model_set_value(const char *fn, uintptr_t model, int32_t index, const void *buffer, size_t length);
int32_t nnapi_model_set_value_from_memory(const char *fn, uintptr_t model, int32_t index, uintptr_t memory, size_t offset, size_t length);
int32_t nnapi_model_add_operation(const char *fn, uintptr_t model, int32_t type, uint32_t n_in, const uint32_t *ins, uint32_t n_out, const uint32_t *outs);
int32_t nnapi_model_set_channel_quant(const char *fn, uintptr_t model, int32_t index, uint32_t channel_dim, uint32_t count, const float *scales);
int32_t nnapi_model_relax(const char *fn, uintptr_t model, int32_t allow);
int32_t nnapi_model_identify(const char *fn, uintptr_t model, uint32_t n_in, const uint32_t *ins, uint32_t n_out, const uint32_t *outs);
int32_t nnapi_compilation_create(const char *fn, uintptr_t model, int32_t for_devices, uintptr_t *out);
int32_t nnapi_model_supported(const char *fn, uintptr_t model, _Bool *supported);
int32_t nnapi_device_version(const char *fn, char *buffer, size_t size);
int32_t nnapi_compilation_set_preference(const char *fn, uintptr_t compilation, int32_t preference);
int32_t nnapi_compilation_finish(const char *fn, uintptr_t compilation);
int32_t nnapi_execution_create(const char *fn, uintptr_t compilation, uintptr_t *out);
int32_t nnapi_execution_set(const char *fn, uintptr_t execution, int32_t output, int32_t index, int32_t typed, int32_t type, uint32_t count, const uint32_t *dims, float scale, int32_t zero_point, void *buffer, uintptr_t memory, size_t offset, size_t length);
int32_t nnapi_execution_compute(const char *fn, uintptr_t execution);
int32_t nnapi_execution_measure(const char *fn, uintptr_t execution, int32_t measure);
int32_t nnapi_execution_duration(const char *fn, uintptr_t execution, int32_t code, uint64_t *duration);
int32_t nnapi_execution_output_rank(const char *fn, uintptr_t execution, int32_t index, uint32_t *rank);
int32_t nnapi_execution_output_dimensions(const char *fn, uintptr_t execution, int32_t index, uint32_t *dimensions);
int32_t nnapi_burst_create(const char *fn, uintptr_t compilation, uintptr_t *out);
int32_t nnapi_burst_compute(const char *fn, uintptr_t execution, uintptr_t burst);
int32_t nnapi_execution_start(const char *fn, uintptr_t execution, uintptr_t *event);
int32_t nnapi_event_wait(const char *fn, uintptr_t event);
