/* bridge_types.h: plain C types the bridge functions use (declared to cffi
 * before the extern "Python+C" block, which may only hold functions). */
#ifndef OPENVX_NN_BRIDGE_TYPES_H
#define OPENVX_NN_BRIDGE_TYPES_H
#include <stdint.h>
#include <stddef.h>

/* One C argument of a typed node constructor (vxTensorAddNode, vxConvolutionLayer...):
 * kind 0 a reference (ref), 1 a vx_enum (i), 2 a vx_size (i), 3 a vx_float32 (f),
 * 4 a struct (p, size).  Non-reference arguments become scalars. */
typedef struct vxnn_arg {
    int32_t kind;
    uintptr_t ref;
    int64_t i;
    double f;
    const void *p;
    size_t size;
} vxnn_arg;

#endif
