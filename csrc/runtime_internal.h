/* runtime_internal.h: what the exported C wrappers in csrc/api/ share. */
#ifndef OPENVX_NN_RUNTIME_INTERNAL_H
#define OPENVX_NN_RUNTIME_INTERNAL_H
/* The library is compiled with hidden visibility; the standard entry points
 * (and, through exports.map, only they) are exported. */
#define VX_API_ENTRY __attribute__((visibility("default")))
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <VX/vxu.h>
#include "runtime.h"
#include "plan.h"
#include "bridge/all.h"

/* Start the embedded interpreter if needed; 0 means Python could not start and
 * the caller must return its failure value. */
int vxnn_start(void);

#define VXNN_START_OR_RETURN(failure) do { if (!vxnn_start()) return (failure); } while (0)
#define H(x) ((uintptr_t)(x))

/* Arguments of typed node constructors (see bridge/graph.h). */
#define ARG_REF(x) {0, (uintptr_t)(x), 0, 0.0, NULL, 0}
#define ARG_ENUM(x) {1, 0, (int64_t)(x), 0.0, NULL, 0}
#define ARG_SIZE(x) {2, 0, (int64_t)(x), 0.0, NULL, 0}
#define ARG_FLOAT32(x) {3, 0, 0, (double)(x), NULL, 0}
#define ARG_STRUCT(p, size) {4, 0, 0, 0.0, (const void *)(p), (size)}
#define VXNN_NODE(graph, kernel, args) \
    (vx_node)vxnn_create_node(__func__, H(graph), (kernel), (uint32_t)(sizeof(args) / sizeof((args)[0])), (args))

/* The immediate (vxu) form of a node: a one-node graph, verified, run, released. */
#define VXNN_IMMEDIATE(context, make_node)                                   \
    do {                                                                     \
        vx_status status_;                                                   \
        vx_graph graph = vxCreateGraph(context);                             \
        vx_node node_;                                                       \
        status_ = vxGetStatus((vx_reference)graph);                          \
        if (status_ != VX_SUCCESS)                                           \
            return status_;                                                  \
        node_ = (make_node);                                                 \
        status_ = vxGetStatus((vx_reference)node_);                          \
        if (status_ == VX_SUCCESS)                                           \
            status_ = vxProcessGraph(graph);                                 \
        if (vxGetStatus((vx_reference)node_) == VX_SUCCESS)                  \
            vxReleaseNode(&node_);                                           \
        vxReleaseGraph(&graph);                                              \
        return status_;                                                      \
    } while (0)
#endif
