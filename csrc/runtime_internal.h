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
#include "bridge/all.h"

/* Start the embedded interpreter if needed; 0 means Python could not start and
 * the caller must return its failure value. */
int vxnn_start(void);

#define VXNN_START_OR_RETURN(failure) do { if (!vxnn_start()) return (failure); } while (0)
#define H(x) ((uintptr_t)(x))
#endif
