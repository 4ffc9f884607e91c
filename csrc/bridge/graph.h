/* bridge/graph.h: Python-bodied functions behind the graph entry points. */
uintptr_t vxnn_create_graph(const char *fn, uintptr_t context);
