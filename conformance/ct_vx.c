#include "ct_vx.h"

#include <VX/vx_ext_openvx_nn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const ct_format CT_U8 = {"U8", VX_TYPE_UINT8, 0};
const ct_format CT_S8 = {"S8", VX_TYPE_INT8, 0};
const ct_format CT_Q78 = {"Q78", VX_TYPE_INT16, 8};
const ct_format *const CT_NN_FORMATS[3] = {&CT_U8, &CT_S8, &CT_Q78};

void ct_set_compat(vx_context context, int sample)
{
    vx_enum mode = sample ? VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE : VX_OPENVX_NN_COMPAT_STANDARD;
    VX_CALL(vxSetContextAttribute(context, VX_CONTEXT_OPENVX_NN_COMPAT, &mode, sizeof mode));
}

int ct_break_rounding(void)
{
    static int state = -1;
    if (state < 0) {
        const char *e = getenv("CT_BREAK_ROUNDING");
        state = e && *e && strcmp(e, "0") != 0;
    }
    return state;
}

int64_t ct_lo(vx_enum type)
{
    switch (type) {
    case VX_TYPE_UINT8: return 0;
    case VX_TYPE_INT8: return -128;
    case VX_TYPE_INT16: return -32768;
    case VX_TYPE_UINT16: return 0;
    case VX_TYPE_INT32: return INT32_MIN;
    default: return 0;
    }
}

int64_t ct_hi(vx_enum type)
{
    switch (type) {
    case VX_TYPE_UINT8: return 255;
    case VX_TYPE_INT8: return 127;
    case VX_TYPE_INT16: return 32767;
    case VX_TYPE_UINT16: return 65535;
    case VX_TYPE_INT32: return INT32_MAX;
    default: return 0;
    }
}

size_t ct_elem_size(vx_enum type)
{
    switch (type) {
    case VX_TYPE_UINT8: case VX_TYPE_INT8: return 1;
    case VX_TYPE_INT16: case VX_TYPE_UINT16: return 2;
    case VX_TYPE_INT32: case VX_TYPE_UINT32: case VX_TYPE_FLOAT32: return 4;
    default: return 8;
    }
}

int64_t ct_fit(int64_t v, vx_enum type, int saturate)
{
    int64_t lo = ct_lo(type), hi = ct_hi(type);
    if (saturate)
        return v < lo ? lo : v > hi ? hi : v;
    {
        uint64_t span = (uint64_t)(hi - lo) + 1; /* a power of two */
        uint64_t u = ((uint64_t)v - (uint64_t)lo) & (span - 1);
        return lo + (int64_t)u;
    }
}

int64_t ct_round_div(int64_t n, int64_t d, int nearest_even)
{
    int64_t q, r;
    if (ct_break_rounding())
        nearest_even = !nearest_even;
    q = n / d; /* C99: toward zero */
    r = n % d;
    if (!nearest_even || r == 0)
        return q;
    {
        int64_t twice = 2 * (r < 0 ? -r : r);
        int sign = (n < 0) ? -1 : 1;
        if (twice > d || (twice == d && (q % 2 != 0)))
            q += sign;
    }
    return q;
}

int64_t ct_round_shift(int64_t v, int shift, int nearest_even)
{
    if (shift <= 0)
        return v * ((int64_t)1 << -shift);
    return ct_round_div(v, (int64_t)1 << shift, nearest_even);
}

int64_t ct_quantize(double v, int fpp, vx_enum type)
{
    double t, lo = (double)ct_lo(type), hi = (double)ct_hi(type);
    if (isnan(v))
        return 0;
    t = ldexp(v, fpp);
    t = ct_break_rounding() ? trunc(t) : nearbyint(t);
    if (t < lo)
        return (int64_t)lo;
    if (t > hi)
        return (int64_t)hi;
    return (int64_t)t;
}

size_t ct_count(size_t ndims, const vx_size *dims)
{
    size_t n = 1, i;
    for (i = 0; i < ndims; i++)
        n *= dims[i];
    return n;
}

vx_tensor ct_tensor(vx_context context, size_t ndims, const vx_size *dims, const ct_format *f)
{
    vx_tensor t = vxCreateTensor(context, ndims, dims, f->type, (vx_int8)f->fpp);
    ASSERT_VX_OBJECT(t);
    return t;
}

int64_t ct_get(const void *buf, vx_enum type, size_t i)
{
    switch (type) {
    case VX_TYPE_UINT8: return ((const vx_uint8 *)buf)[i];
    case VX_TYPE_INT8: return ((const vx_int8 *)buf)[i];
    case VX_TYPE_INT16: return ((const vx_int16 *)buf)[i];
    case VX_TYPE_UINT16: return ((const vx_uint16 *)buf)[i];
    case VX_TYPE_INT32: return ((const vx_int32 *)buf)[i];
    default: return 0;
    }
}

void ct_set(void *buf, vx_enum type, size_t i, int64_t v)
{
    switch (type) {
    case VX_TYPE_UINT8: ((vx_uint8 *)buf)[i] = (vx_uint8)v; break;
    case VX_TYPE_INT8: ((vx_int8 *)buf)[i] = (vx_int8)v; break;
    case VX_TYPE_INT16: ((vx_int16 *)buf)[i] = (vx_int16)v; break;
    case VX_TYPE_UINT16: ((vx_uint16 *)buf)[i] = (vx_uint16)v; break;
    case VX_TYPE_INT32: ((vx_int32 *)buf)[i] = (vx_int32)v; break;
    default: break;
    }
}

static void tensor_geometry(vx_tensor t, size_t *ndims, vx_size *dims, vx_enum *type)
{
    vx_size n = 0;
    VX_CALL(vxQueryTensor(t, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n));
    VX_CALL(vxQueryTensor(t, VX_TENSOR_DIMS, dims, n * sizeof(vx_size)));
    VX_CALL(vxQueryTensor(t, VX_TENSOR_DATA_TYPE, type, sizeof *type));
    *ndims = n;
}

static void copy(vx_tensor t, int64_t *values, vx_enum usage)
{
    size_t ndims, i, n;
    vx_size dims[8], start[8] = {0}, stride[8];
    vx_enum type = 0;
    void *buf;
    tensor_geometry(t, &ndims, dims, &type);
    n = ct_count(ndims, dims);
    stride[0] = ct_elem_size(type);
    for (i = 1; i < ndims; i++)
        stride[i] = stride[i - 1] * dims[i - 1];
    buf = malloc(n * stride[0] + 1);
    if (usage == VX_WRITE_ONLY)
        for (i = 0; i < n; i++)
            ct_set(buf, type, i, values[i]);
    if (vxCopyTensorPatch(t, ndims, start, dims, stride, buf, usage, VX_MEMORY_TYPE_HOST) != VX_SUCCESS) {
        free(buf);
        FAIL("vxCopyTensorPatch(%s) failed", usage == VX_WRITE_ONLY ? "write" : "read");
    }
    if (usage == VX_READ_ONLY)
        for (i = 0; i < n; i++)
            values[i] = ct_get(buf, type, i);
    free(buf);
}

void ct_write(vx_tensor t, const int64_t *values) { copy(t, (int64_t *)values, VX_WRITE_ONLY); }
void ct_read(vx_tensor t, int64_t *values) { copy(t, values, VX_READ_ONLY); }

void ct_fill(int64_t *values, size_t n, int64_t lo, int64_t hi)
{
    size_t i;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    for (i = 0; i < n; i++) {
        uint64_t r = ((uint64_t)ct_rand() << 32) | ct_rand();
        values[i] = lo + (int64_t)(r % span);
    }
}

void ct_fill_format(int64_t *values, size_t n, vx_enum type) { ct_fill(values, n, ct_lo(type), ct_hi(type)); }

/* allocations live until the case ends: a failing case longjmps past any free() */
#define CT_POOL 256
static void *pool[CT_POOL];
static size_t pooled;
static const char *pool_owner;

int64_t *ct_alloc(size_t n)
{
    int64_t *p;
    if (pool_owner != ct_case_name()) {
        size_t i;
        for (i = 0; i < pooled; i++)
            free(pool[i]);
        pooled = 0;
        pool_owner = ct_case_name();
    }
    p = calloc(n ? n : 1, sizeof *p);
    if (!p || pooled == CT_POOL)
        FAIL("out of memory");
    pool[pooled++] = p;
    return p;
}

vx_rectangle_t ct_rect(vx_uint32 x0, vx_uint32 y0, vx_uint32 x1, vx_uint32 y1)
{
    vx_rectangle_t r;
    r.start_x = x0;
    r.start_y = y0;
    r.end_x = x1;
    r.end_y = y1;
    return r;
}

vx_imagepatch_addressing_t ct_addressing(vx_uint32 w, vx_uint32 h, vx_int32 stride_x, vx_int32 stride_y)
{
    vx_imagepatch_addressing_t a = VX_IMAGEPATCH_ADDR_INIT;
    a.dim_x = w;
    a.dim_y = h;
    a.stride_x = stride_x;
    a.stride_y = stride_y;
    return a;
}
