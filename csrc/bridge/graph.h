/* bridge/graph.h: Python-bodied functions behind the graph, node, kernel and
 * parameter entry points, and the one constructor of typed nodes. */


uintptr_t vxnn_create_graph(const char *fn, uintptr_t context);
int32_t vxnn_verify_graph(const char *fn, uintptr_t graph);
int32_t vxnn_process_graph(const char *fn, uintptr_t graph);
/* A kernel of graph's native plan failed (plan.c): record it on node, log it, retire the plan. */
void vxnn_native_failed(uintptr_t graph, uintptr_t node, int32_t status);
int32_t vxnn_schedule_graph(const char *fn, uintptr_t graph);
int32_t vxnn_wait_graph(const char *fn, uintptr_t graph);
int32_t vxnn_is_graph_verified(const char *fn, uintptr_t graph);
int32_t vxnn_add_parameter_to_graph(const char *fn, uintptr_t graph, uintptr_t parameter);
int32_t vxnn_set_graph_parameter(const char *fn, uintptr_t graph, uint32_t index, uintptr_t value);
uintptr_t vxnn_get_graph_parameter(const char *fn, uintptr_t graph, uint32_t index);
uintptr_t vxnn_create_generic_node(const char *fn, uintptr_t graph, uintptr_t kernel);
int32_t vxnn_remove_node(const char *fn, uintptr_t *node);
int32_t vxnn_replicate_node(const char *fn, uintptr_t graph, uintptr_t node, const int32_t *flags, uint32_t count);
int32_t vxnn_assign_node_callback(const char *fn, uintptr_t node, void *callback);
uintptr_t vxnn_retrieve_node_callback(const char *fn, uintptr_t node);
int32_t vxnn_set_node_target(const char *fn, uintptr_t node, int32_t target, const char *target_string);
uintptr_t vxnn_get_kernel_by_name(const char *fn, uintptr_t context, const char *name);
uintptr_t vxnn_get_kernel_by_enum(const char *fn, uintptr_t context, int32_t kernel);
uintptr_t vxnn_get_kernel_parameter(const char *fn, uintptr_t kernel, uint32_t index);
uintptr_t vxnn_get_node_parameter(const char *fn, uintptr_t node, uint32_t index);
int32_t vxnn_set_node_parameter(const char *fn, uintptr_t node, uint32_t index, uintptr_t value);
int32_t vxnn_set_parameter_by_reference(const char *fn, uintptr_t parameter, uintptr_t value);
uintptr_t vxnn_create_node(const char *fn, uintptr_t graph, int32_t kernel, uint32_t count, const vxnn_arg *args);
