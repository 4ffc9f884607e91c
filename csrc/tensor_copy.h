/* tensor_copy.h: vxCopyTensorPatch without Python, for tensors whose layout Python published (tensor_copy.c). */
#ifndef OPENVX_NN_TENSOR_COPY_H
#define OPENVX_NN_TENSOR_COPY_H
#include <VX/vx.h>

/* The copy done here (VX_SUCCESS), or VXNN_NOT_NATIVE: no current layout, or an argument the Python path must
 * judge (it checks everything again and reports the error). */
vx_status vxnn_copy_tensor_natively(uintptr_t tensor, vx_size n, const vx_size *start, const vx_size *end,
                                    const vx_size *user_stride, void *user_ptr, vx_enum usage, vx_enum memory_type);
#endif
