/* ct_vx.h: formats, the reference arithmetic helpers and tensor I/O shared by the tests. */
#ifndef CT_VX_H
#define CT_VX_H

#include "engine.h"

typedef struct {
    const char *name;
    vx_enum type;
    int fpp;
} ct_format;

extern const ct_format CT_U8, CT_S8, CT_Q78;
extern const ct_format *const CT_NN_FORMATS[3]; /* U8, S8, Q7.8 */

int64_t ct_lo(vx_enum type);
int64_t ct_hi(vx_enum type);
size_t ct_elem_size(vx_enum type);
/* the overflow policy: clamp (saturate) or keep the low bits (wrap) */
int64_t ct_fit(int64_t v, vx_enum type, int saturate);
/* v / 2^shift rounded by the policy (shift <= 0: exact left shift) */
int64_t ct_round_shift(int64_t v, int shift, int nearest_even);
/* n / d (d > 0) rounded by the policy */
int64_t ct_round_div(int64_t n, int64_t d, int nearest_even);
/* a real value to a raw integer at position fpp: nearest-even, saturated, NaN -> 0 */
int64_t ct_quantize(double v, int fpp, vx_enum type);
/* set by CT_BREAK_ROUNDING=1 in the environment: every reference rounds the other way
 * (nearest-even <-> toward zero), to show the suite catches a broken kernel */
int ct_break_rounding(void);

/* put the context in the Khronos sample implementation's compatibility mode (sample = 1) or the
 * standard's (0), by the vendor attribute VX_CONTEXT_OPENVX_NN_COMPAT */
void ct_set_compat(vx_context context, int sample);

size_t ct_count(size_t ndims, const vx_size *dims);
vx_tensor ct_tensor(vx_context context, size_t ndims, const vx_size *dims, const ct_format *f);
void ct_write(vx_tensor t, const int64_t *values);            /* whole tensor, packed */
void ct_read(vx_tensor t, int64_t *values);                   /* whole tensor, packed */
void ct_fill(int64_t *values, size_t n, int64_t lo, int64_t hi); /* uniform in lo..hi */
void ct_fill_format(int64_t *values, size_t n, vx_enum type);   /* the whole range */
int64_t *ct_alloc(size_t n);
/* element i of a packed host buffer of `type` */
int64_t ct_get(const void *buf, vx_enum type, size_t i);
void ct_set(void *buf, vx_enum type, size_t i, int64_t v);

/* images: a rectangle, and an addressing structure with the given size and strides */
vx_rectangle_t ct_rect(vx_uint32 x0, vx_uint32 y0, vx_uint32 x1, vx_uint32 y1);
vx_imagepatch_addressing_t ct_addressing(vx_uint32 w, vx_uint32 h, vx_int32 stride_x, vx_int32 stride_y);

#endif
