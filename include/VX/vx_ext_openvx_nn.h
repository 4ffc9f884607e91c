/* vx_ext_openvx_nn.h: openvx-nn's own extensions to the OpenVX API (vendor VX_ID_USER).
 * Written by hand (not generated): nothing here is part of the Khronos standard. */
#ifndef _OPENVX_NN_VX_EXT_OPENVX_NN_H
#define _OPENVX_NN_VX_EXT_OPENVX_NN_H

#include <VX/vx.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OPENVX_EXT_OPENVX_NN "vx_ext_openvx_nn"

/* Vendor values do not fit a positive int (VX_ID_USER << 20 is 0xFFE00000), so each is written as the
 * vx_enum (32-bit two's complement) it is: the header stays valid ISO C and C++ with -pedantic.
 * (No comments inside the enum bodies: openvx_nn/headers.py reads them.) */

/* Context attribute VX_CONTEXT_OPENVX_NN_COMPAT: VX_ATTRIBUTE_BASE(VX_ID_USER, VX_TYPE_CONTEXT) + 0x0
 * (0xFFE80100). A vx_enum, read-write: the arithmetic conventions the NN layers and tensor operations
 * follow (a vx_ext_openvx_nn_compat_e). The mode is taken when a graph is verified (vxVerifyGraph, or a
 * vxu call): changing it later does not change graphs already verified. A query answers the mode a
 * verification would use now (STANDARD or KHRONOS_SAMPLE). */
enum vx_ext_openvx_nn_context_attribute_e {
    VX_CONTEXT_OPENVX_NN_COMPAT = -0x17FF00
};

/* Its values, VX_ENUM_BASE(VX_ID_USER, 0x1) + n (0xFFE01000 + n):
 * - STANDARD: the standard's text (the default);
 * - KHRONOS_SAMPLE: the Khronos sample implementation's conventions where they differ from the text
 *   (the dilation offset, the deconvolution input bound, ConvertDepth INT16 to 8-bit truncation;
 *   docs/decisions.md gives the formulas);
 * - ENVIRONMENT (set only, the state of a new context): follow the environment variable
 *   OPENVX_NN_COMPAT (khronos-sample, or standard when unset or empty) at each verification. */
enum vx_ext_openvx_nn_compat_e {
    VX_OPENVX_NN_COMPAT_STANDARD = -0x1FF000,
    VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE = -0x1FEFFF,
    VX_OPENVX_NN_COMPAT_ENVIRONMENT = -0x1FEFFE
};

#ifdef __cplusplus
}
#endif

#endif
