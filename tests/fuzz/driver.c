/* driver.c: a seeded random walk through the C API of libopenvx.so.
 *
 * Each step draws one row of the CALLS table below (weighted) and makes that
 * call with random arguments: live objects of the right type most of the
 * time, otherwise NULL, released handles, live objects of another type or
 * bogus values; sizes, enums, floats and patches that are sometimes valid and
 * sometimes absurd.  Objects the calls create are kept in a pool (with the
 * number of references the application holds) and are arguments of later
 * calls.  Every `--epoch` steps, and at the end, everything is released and
 * VX_CONTEXT_REFERENCES must be back at its value after vxCreateContext.
 *
 * Checked: every vx_status returned is a defined one (VX_ERROR_REFERENCE_NONZERO
 * .. VX_SUCCESS), vx_bool answers are 0 or 1, log entries are well formed, no
 * reference leaks; a crash or a call running past `--timeout` seconds is
 * reported with the call's name.  Exit status: 0 clean, 1 undefined status or
 * leak, 3 hang, the signal for a crash.
 *
 * Usage: driver [--calls N] [--seed S] [--epoch N] [--timeout SECONDS] [--trace]
 *
 * Adding a function to the fuzz is one row of CALLS: ROW(id, weight, expression
 * giving the vx_status), with the pickers below for its arguments; objects are
 * picked by their VX_REFERENCE_TYPE, so a new object type needs no other change:
 *     ROW(create_image, 3, MADE(vxCreateImage(C(), small(), small(), VX_DF_IMAGE_U8)))
 *     ROW(query_image, 2, vxQueryImage((vx_image)pick(VX_TYPE_IMAGE), attribute(VX_IMAGE_WIDTH),
 *                                      query_buf, query_size())) */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <VX/vxu.h>

/* -- random numbers ------------------------------------------------------------------ */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }
static int chance(unsigned percent) { return below(100) < percent; }
static vx_enum one_of(const vx_enum *values, unsigned n)
{
    return chance(92) ? values[below(n)] : (vx_enum)(int32_t)rnd();
}
#define ONE_OF(...) one_of((const vx_enum[]){__VA_ARGS__}, sizeof((vx_enum[]){__VA_ARGS__}) / sizeof(vx_enum))

/* -- statuses and progress ------------------------------------------------------------ */
#define N_STATUS 25 /* VX_ERROR_REFERENCE_NONZERO (-24) .. VX_SUCCESS (0) */
static const char *status_names[N_STATUS] = {
    "VX_SUCCESS", "VX_FAILURE", "VX_ERROR_NOT_IMPLEMENTED", "VX_ERROR_NOT_SUPPORTED",
    "VX_ERROR_NOT_SUFFICIENT", "VX_ERROR_NOT_ALLOCATED", "VX_ERROR_NOT_COMPATIBLE", "VX_ERROR_NO_RESOURCES",
    "VX_ERROR_NO_MEMORY", "VX_ERROR_OPTIMIZED_AWAY", "VX_ERROR_INVALID_PARAMETERS", "VX_ERROR_INVALID_MODULE",
    "VX_ERROR_INVALID_REFERENCE", "VX_ERROR_INVALID_LINK", "VX_ERROR_INVALID_FORMAT",
    "VX_ERROR_INVALID_DIMENSION", "VX_ERROR_INVALID_VALUE", "VX_ERROR_INVALID_TYPE", "VX_ERROR_INVALID_GRAPH",
    "VX_ERROR_INVALID_NODE", "VX_ERROR_INVALID_SCOPE", "VX_ERROR_GRAPH_SCHEDULED", "VX_ERROR_GRAPH_ABANDONED",
    "VX_ERROR_MULTIPLE_WRITERS", "VX_ERROR_REFERENCE_NONZERO"};
static long status_seen[N_STATUS];
static long calls, undefined, leaks, log_entries, bad_log_entries, epochs;
static volatile const char *current = "start"; /* the call in progress, for the crash/hang report */
static volatile long current_step;
static unsigned timeout_seconds = 60;
static int trace; /* --trace: one line per step (row, status) */

static vx_status note(vx_status status)
{
    calls++;
    if (status > 0 || status <= VX_STATUS_MIN) {
        undefined++;
        printf("UNDEFINED status %d from %s (step %ld)\n", (int)status, current, current_step);
    } else {
        status_seen[-status]++;
    }
    return status;
}

/* A vx_bool answer must be 0 or 1; the row itself returns VX_SUCCESS. */
static vx_status check_bool(vx_bool value)
{
    if (value != vx_true_e && value != vx_false_e) {
        undefined++;
        printf("UNDEFINED vx_bool %d from %s (step %ld)\n", (int)value, current, current_step);
    }
    return VX_SUCCESS;
}

static void say(const char *a, const char *b)
{
    ssize_t ignored = write(2, a, strlen(a));
    ignored = write(2, b, strlen(b));
    ignored = write(2, "\n", 1);
    (void)ignored;
}

static void on_alarm(int sig)
{
    (void)sig;
    say("HANG: no return within the timeout from ", (const char *)current);
    _exit(3);
}

static void on_crash(int sig)
{
    say("CRASH in ", (const char *)current);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context;
    (void)ref;
    log_entries++;
    if (!string || strlen(string) >= VX_MAX_LOG_MESSAGE_LEN || status > 0 || status <= VX_STATUS_MIN)
        bad_log_entries++;
}

static volatile int callback_runs;
static vx_action VX_CALLBACK on_node(vx_node node)
{
    (void)node;
    return (++callback_runs % 7 == 0) ? VX_ACTION_ABANDON : VX_ACTION_CONTINUE;
}

/* -- the pool of objects the application holds ------------------------------------------ */
#define POOL 96
#define GONE 64
struct obj {
    vx_reference ref;
    vx_enum type;
    int count; /* application references held */
};
static vx_context ctx;
static struct obj pool[POOL];
static int n_pool;
static vx_reference gone[GONE]; /* released handles: stale from then on */
static long n_gone;
struct map {
    vx_tensor tensor;
    vx_map_id id;
};
static struct map maps[16];
static int n_maps;

/* Every object adopted since the last settle: a leak report lists those still alive. */
#define SEEN 8192
static vx_reference seen[SEEN];
static int n_seen;

static int find(vx_reference ref)
{
    int i;
    for (i = 0; i < n_pool; i++)
        if (pool[i].ref == ref)
            return i;
    return -1;
}

static void unmap_all_of(vx_reference ref)
{
    int i = 0;
    while (i < n_maps) {
        if ((vx_reference)maps[i].tensor == ref) {
            note(vxUnmapTensorPatch(maps[i].tensor, maps[i].id));
            maps[i] = maps[--n_maps];
        } else {
            i++;
        }
    }
}

/* The application lets go of one reference it holds on pool entry i (the status is the
 * caller's to note). */
static vx_status drop_quietly(int i)
{
    vx_reference ref = pool[i].ref;
    vx_status status;
    if (pool[i].count == 1)
        unmap_all_of(ref); /* unmap before the last release: the map's fate is not what we fuzz */
    status = vxReleaseReference(&ref);
    if (--pool[i].count == 0) {
        if (pool[i].ref != (vx_reference)ctx) /* the driver's own reference keeps that one alive */
            gone[n_gone++ % GONE] = pool[i].ref;
        pool[i] = pool[--n_pool];
    }
    return status;
}

static void drop(int i) { note(drop_quietly(i)); }

/* Every reference the application holds on pool entry i. */
static void drop_all(int i)
{
    int count = pool[i].count;
    while (count--)
        drop(i);
}

/* The application now holds one more reference on ref (a creator's result or a retain). */
static void adopt(vx_reference ref)
{
    int i;
    vx_enum type = VX_TYPE_INVALID;
    if (!ref || vxGetStatus(ref) != VX_SUCCESS)
        return;
    i = find(ref);
    if (i >= 0) {
        pool[i].count++;
        return;
    }
    if (n_pool == POOL)
        drop_all((int)below(POOL));
    vxQueryReference(ref, VX_REFERENCE_TYPE, &type, sizeof type);
    if (n_seen < SEEN)
        seen[n_seen++] = ref;
    pool[n_pool].ref = ref;
    pool[n_pool].type = type;
    pool[n_pool].count = 1;
    n_pool++;
}

/* A creator's result: its status, and the object joins the pool. */
static vx_status made(vx_reference ref)
{
    vx_status status = note(vxGetStatus(ref));
    adopt(ref);
    return status;
}
#define MADE(x) made((vx_reference)(x))

/* An argument of type `type`: mostly a live one, sometimes anything else. */
static vx_reference pick(vx_enum type)
{
    unsigned r = below(100);
    int i, n = 0, matches[POOL];
    if (r < 84) {
        for (i = 0; i < n_pool; i++)
            if (pool[i].type == type)
                matches[n++] = i;
        if (n)
            return pool[matches[below((unsigned)n)]].ref;
        if (type == VX_TYPE_CONTEXT)
            return (vx_reference)ctx;
    }
    if (r < 90 && n_pool)
        return pool[below((unsigned)n_pool)].ref;
    if (r < 94)
        return NULL;
    if (r < 98 && n_gone)
        return gone[below(n_gone < GONE ? (unsigned)n_gone : GONE)];
    return (vx_reference)(uintptr_t)(8 * (1 + below(4096))); /* never a handle of this library */
}
#define ANY() pick(VX_TYPE_REFERENCE)
#define T() ((vx_tensor)pick(VX_TYPE_TENSOR))
#define S() ((vx_scalar)pick(VX_TYPE_SCALAR))
#define L() ((vx_lut)pick(VX_TYPE_LUT))
#define N() ((vx_node)pick(VX_TYPE_NODE))
#define K() ((vx_kernel)pick(VX_TYPE_KERNEL))
#define P() ((vx_parameter)pick(VX_TYPE_PARAMETER))
#define C() (chance(97) ? ctx : (vx_context)pick(VX_TYPE_CONTEXT))

/* -- argument pickers -------------------------------------------------------------------- */
static vx_size dims_buf[8], start_buf[8], end_buf[8], stride_buf[8], out_stride[8];
static unsigned char data[1 << 20]; /* big enough for any patch drawn here */
static unsigned char lut_data[1 << 18];
static unsigned char arena[32][1 << 15]; /* memory of tensors made from a handle, handed round */
static char query_buf[1 << 13];

static vx_size rank(void) { return chance(95) ? 1 + below(4) : below(8); }
static const vx_size *dims(void)
{
    int i;
    for (i = 0; i < 8; i++)
        dims_buf[i] = chance(97) ? 1 + below(i < 4 ? 5 : 2) : below(3) * 1000;
    return chance(98) ? dims_buf : NULL;
}
static vx_enum dtype(void)
{
    return ONE_OF(VX_TYPE_UINT8, VX_TYPE_INT8, VX_TYPE_INT16, VX_TYPE_INT16, VX_TYPE_FLOAT32, VX_TYPE_INT32,
                  VX_TYPE_FLOAT64, VX_TYPE_INVALID);
}
static vx_int8 fpp(void) { return (vx_int8)(chance(60) ? 0 : chance(70) ? 8 : (int)below(20) - 2); }
static vx_size size_of(vx_enum type)
{
    switch (type) {
    case VX_TYPE_UINT8: case VX_TYPE_INT8: return 1;
    case VX_TYPE_INT16: return 2;
    case VX_TYPE_FLOAT64: return 8;
    default: return 4;
    }
}
static vx_size small(void)
{
    return chance(90) ? below(5) : ONE_OF(64, 256, 1000, 65536, 70000, -1) & 0xffffffffu;
}
static vx_size huge(void) { return chance(95) ? small() : (vx_size)rnd(); }
static vx_float32 real(void)
{
    static const vx_float32 odd[] = {-1.0f, 0.0f, 1e30f, -1e-30f, 1.0f / 0.0f};
    if (chance(90))
        return (vx_float32)below(2000) / 1000.0f;
    if (chance(80))
        return odd[below(5)];
    return 0.0f / 0.0f;
}
static vx_enum policy(void) { return ONE_OF(VX_CONVERT_POLICY_WRAP, VX_CONVERT_POLICY_SATURATE); }
static vx_enum rounding(void) { return ONE_OF(VX_ROUND_POLICY_TO_ZERO, VX_ROUND_POLICY_TO_NEAREST_EVEN); }
static vx_enum usage(void) { return ONE_OF(VX_READ_ONLY, VX_WRITE_ONLY, VX_READ_AND_WRITE); }
static vx_enum memory(void) { return chance(95) ? VX_MEMORY_TYPE_HOST : ONE_OF(VX_MEMORY_TYPE_NONE, 0x7777); }
static vx_enum attribute(vx_enum first) { return chance(93) ? first + (vx_enum)below(12) : (vx_enum)(int32_t)rnd(); }
static vx_size query_size(void) { return ONE_OF(1, 2, 4, 8, 8, 16, 48, 256, 1 << 13); }
static vx_uint32 index_(void) { return chance(90) ? below(9) : (vx_uint32)rnd(); }
static const char *text(void)
{
    static const char *texts[] = {"", "fuzzed", "a name that is much longer than sixty-four characters, "
                                  "which the library refuses", "cpu", "any", "openvx-nn", "gpu", NULL};
    return texts[below(8)];
}
static vx_enum scalar_type(void)
{
    return ONE_OF(VX_TYPE_INT32, VX_TYPE_FLOAT32, VX_TYPE_ENUM, VX_TYPE_SIZE, VX_TYPE_BOOL, VX_TYPE_UINT8,
                  VX_TYPE_INT16, VX_TYPE_NN_CONVOLUTION_PARAMS, VX_TYPE_TENSOR_MATRIX_MULTIPLY_PARAMS,
                  VX_TYPE_INVALID);
}
static void *scribble(void)
{
    unsigned i;
    for (i = 0; i < 64; i++)
        data[i] = (unsigned char)(chance(70) ? 0 : rnd());
    return chance(97) ? data : NULL;
}
static vx_enum kernel_enum(void)
{
    return ONE_OF(VX_KERNEL_CONVOLUTION_LAYER, VX_KERNEL_FULLY_CONNECTED_LAYER, VX_KERNEL_POOLING_LAYER,
                  VX_KERNEL_SOFTMAX_LAYER, VX_KERNEL_LOCAL_RESPONSE_NORMALIZATION_LAYER,
                  VX_KERNEL_ACTIVATION_LAYER, VX_KERNEL_ROI_POOLING_LAYER, VX_KERNEL_DECONVOLUTION_LAYER,
                  VX_KERNEL_TENSOR_ADD, VX_KERNEL_TENSOR_SUBTRACT, VX_KERNEL_TENSOR_MULTIPLY,
                  VX_KERNEL_TENSOR_TABLE_LOOKUP, VX_KERNEL_TENSOR_TRANSPOSE, VX_KERNEL_TENSOR_CONVERT_DEPTH,
                  VX_KERNEL_TENSOR_MATRIX_MULTIPLY);
}
static const char *kernel_name(void)
{
    static const char *names[] = {"org.khronos.nn_extension.convolution_layer",
                                  "org.khronos.nn_extension.activation_layer", "org.khronos.openvx.tensor_add",
                                  "org.khronos.openvx.tensor_transpose", "org.khronos.no_such_kernel", "", NULL};
    return names[below(7)];
}

/* The data type of a tensor argument (its element size decides the strides a call must use). */
static vx_enum type_of(vx_tensor t)
{
    vx_enum type = VX_TYPE_UINT8;
    vxQueryTensor(t, VX_TENSOR_DATA_TYPE, &type, sizeof type);
    return type;
}

/* A patch [start, end) of n dims (sometimes out of bounds or reversed) and the packed
 * byte strides of a buffer holding it; returns n. */
static vx_size patch(vx_size element)
{
    vx_size i, n = rank();
    for (i = 0; i < 8; i++) {
        start_buf[i] = chance(80) ? 0 : below(3);
        end_buf[i] = chance(97) ? start_buf[i] + 1 + below(i < 4 ? 5 : 2) : below(4);
        if (end_buf[i] <= start_buf[i] || end_buf[i] - start_buf[i] > 5)
            end_buf[i] = start_buf[i]; /* an empty extent: refused, and keeps the strides small */
    }
    stride_buf[0] = chance(95) ? element : element + 1;
    for (i = 1; i < 8; i++)
        stride_buf[i] = stride_buf[i - 1] * (end_buf[i - 1] - start_buf[i - 1] + (chance(95) ? 0 : 1));
    return n;
}

static vx_size packed(vx_size n, const vx_size *extent, vx_size element)
{
    vx_size i;
    stride_buf[0] = chance(95) ? element : element / 2 + 3;
    for (i = 1; i < n && i < 8; i++)
        stride_buf[i] = stride_buf[i - 1] * extent[i - 1];
    return n;
}

/* -- calls that need more than one expression ------------------------------------------------ */
static vx_tensor out_of(vx_graph g)
{
    vx_tensor v;
    if (chance(45))
        return T();
    v = chance(70) ? vxCreateVirtualTensor(g, 0, NULL, VX_TYPE_INVALID, 0)
                   : vxCreateVirtualTensor(g, rank(), dims(), dtype(), fpp());
    made((vx_reference)v);
    return v;
}

static vx_status copy_patch(void)
{
    vx_tensor t = T();
    vx_size n = patch(size_of(type_of(t)));
    return vxCopyTensorPatch(t, n, start_buf, end_buf, stride_buf, chance(98) ? data : NULL, usage(), memory());
}

static vx_status map_patch(void)
{
    vx_tensor t = T();
    vx_map_id id = 0;
    void *ptr = NULL;
    vx_enum use = usage();
    vx_size n = patch(size_of(type_of(t)));
    vx_status status = vxMapTensorPatch(t, n, start_buf, end_buf, chance(98) ? &id : NULL, out_stride,
                                        chance(98) ? &ptr : NULL, use, memory());
    if (status == VX_SUCCESS) {
        volatile unsigned char *p = ptr;
        unsigned char first = p[0]; /* the mapping must be real memory */
        if (use != VX_READ_ONLY)
            p[0] = first;
        if (n_maps < 16) {
            maps[n_maps].tensor = t;
            maps[n_maps++].id = id;
        } else {
            note(vxUnmapTensorPatch(t, id));
        }
    }
    return status;
}

static vx_status unmap_patch(void)
{
    if (n_maps && chance(85)) {
        int i = (int)below((unsigned)n_maps);
        struct map m = maps[i];
        maps[i] = maps[--n_maps];
        return vxUnmapTensorPatch(m.tensor, m.id);
    }
    return vxUnmapTensorPatch(T(), (vx_map_id)below(100));
}

/* An arena block for a tensor of `bytes`, or NULL (legal: no memory until a swap) when it
 * would not fit: the application must never promise memory it does not have. */
static void *block_for(vx_size bytes)
{
    return bytes <= sizeof arena[0] && chance(90) ? arena[below(32)] : NULL;
}

/* The bytes a tensor spans (0 if it is no tensor). */
static vx_size tensor_bytes(vx_tensor t)
{
    vx_size n = 0, i, d[8], bytes;
    if (vxQueryTensor(t, VX_TENSOR_NUMBER_OF_DIMS, &n, sizeof n) != VX_SUCCESS || n > 8 ||
        vxQueryTensor(t, VX_TENSOR_DIMS, d, n * sizeof d[0]) != VX_SUCCESS)
        return 0;
    bytes = size_of(type_of(t));
    for (i = 0; i < n; i++)
        bytes *= d[i];
    return bytes;
}

static vx_status from_handle(void)
{
    vx_size n = rank(), i, bytes;
    vx_enum type = dtype();
    const vx_size *d = dims();
    packed(n, d ? d : dims_buf, size_of(type));
    bytes = size_of(type);
    for (i = 0; i < n; i++)
        bytes *= dims_buf[i];
    return made((vx_reference)vxCreateTensorFromHandle(C(), n, d, type, fpp(), chance(98) ? stride_buf : NULL,
                                                      block_for(bytes), memory()));
}

static vx_status swap_handle(void)
{
    void *previous = NULL;
    vx_tensor t = T();
    return vxSwapTensorHandle(t, chance(60) ? block_for(tensor_bytes(t)) : NULL, chance(70) ? &previous : NULL);
}

static vx_status view(void)
{
    vx_size n = patch(1);
    return made((vx_reference)vxCreateTensorFromView(T(), n, start_buf, end_buf));
}

static vx_status map_lut(void)
{
    vx_lut l = L();
    vx_map_id id = 0;
    void *ptr = NULL;
    vx_status status = vxMapLUT(l, &id, &ptr, usage(), memory(), 0);
    if (status == VX_SUCCESS)
        note(vxUnmapLUT(l, id));
    return status;
}

static vx_status retain(void)
{
    vx_reference ref = ANY();
    vx_status status = vxRetainReference(ref);
    if (status == VX_SUCCESS)
        adopt(ref);
    return status;
}

static vx_status release(void)
{
    vx_reference ref = ANY();
    int i = find(ref);
    return i >= 0 ? drop_quietly(i) : vxReleaseReference(&ref);
}

static vx_status remove_node(void)
{
    vx_node node = N();
    int i = find((vx_reference)node);
    vx_status status = vxRemoveNode(&node); /* releases one application reference */
    if (status == VX_SUCCESS && i >= 0 && --pool[i].count == 0) {
        gone[n_gone++ % GONE] = pool[i].ref;
        pool[i] = pool[--n_pool];
    }
    return status;
}

/* VX_PARAMETER_REF hands the application a reference of its own. */
static vx_status query_parameter(void)
{
    vx_enum attr = attribute(VX_PARAMETER_INDEX);
    vx_size size = query_size();
    vx_status status = vxQueryParameter(P(), attr, query_buf, size);
    if (status == VX_SUCCESS && attr == VX_PARAMETER_REF && size == sizeof(vx_reference)) {
        vx_reference ref;
        memcpy(&ref, query_buf, sizeof ref);
        adopt(ref);
    }
    return status;
}

static vx_status schedule_and_wait(vx_graph g)
{
    note(vxScheduleGraph(g));
    return vxWaitGraph(g);
}

static vx_status conv(vx_graph g, int deconvolution)
{
    vx_nn_convolution_params_t c;
    vx_nn_deconvolution_params_t d;
    vx_size size;
    c.padding_x = d.padding_x = small();
    c.padding_y = d.padding_y = small();
    c.overflow_policy = d.overflow_policy = policy();
    c.rounding_policy = d.rounding_policy = rounding();
    c.down_scale_size_rounding = ONE_OF(VX_NN_DS_SIZE_ROUNDING_FLOOR, VX_NN_DS_SIZE_ROUNDING_CEILING);
    c.dilation_x = chance(80) ? 0 : small();
    c.dilation_y = chance(80) ? 0 : small();
    d.a_x = chance(80) ? 0 : small();
    d.a_y = chance(80) ? 0 : small();
    size = deconvolution ? sizeof d : sizeof c;
    if (chance(5))
        size = below(64);
    if (deconvolution)
        return MADE(vxDeconvolutionLayer(g, T(), T(), chance(50) ? T() : NULL, chance(98) ? &d : NULL, size,
                                         out_of(g)));
    return MADE(vxConvolutionLayer(g, T(), T(), chance(50) ? T() : NULL, chance(98) ? &c : NULL, size, out_of(g)));
}

static vx_status roi_pool(vx_graph g)
{
    vx_nn_roi_pool_params_t p;
    p.pool_type = ONE_OF(VX_NN_POOLING_MAX, VX_NN_POOLING_AVG);
    return MADE(vxROIPoolingLayer(g, T(), T(), &p, chance(95) ? sizeof p : below(16), out_of(g)));
}

static vx_status matrix_multiply(vx_graph g, int immediate)
{
    vx_tensor_matrix_multiply_params_t p;
    p.transpose_input1 = (vx_bool)chance(30);
    p.transpose_input2 = (vx_bool)chance(30);
    p.transpose_input3 = (vx_bool)chance(30);
    if (immediate)
        return vxuTensorMatrixMultiply(C(), T(), T(), chance(50) ? T() : NULL, &p, T());
    return MADE(vxTensorMatrixMultiplyNode(g, T(), T(), chance(50) ? T() : NULL, chance(98) ? &p : NULL,
                                           out_of(g)));
}

/* A graph that should verify: a fresh graph, a fresh real tensor [w, h, c] and one or two
 * layers with random (valid) settings writing virtual tensors; then process it. */
static vx_status small_network(void)
{
    static const vx_enum types[] = {VX_TYPE_UINT8, VX_TYPE_INT8, VX_TYPE_INT16, VX_TYPE_FLOAT32};
    vx_size d[3], layers = 1 + below(2), i;
    vx_enum type = types[below(4)];
    vx_graph g = vxCreateGraph(ctx);
    vx_tensor x;
    made((vx_reference)g);
    for (i = 0; i < 3; i++)
        d[i] = 1 + below(5);
    x = vxCreateTensor(ctx, 3, d, type, (vx_int8)(type == VX_TYPE_INT16 && chance(50) ? 8 : 0));
    made((vx_reference)x);
    for (i = 0; i < layers; i++) {
        vx_tensor y = vxCreateVirtualTensor(g, 0, NULL, VX_TYPE_INVALID, 0);
        made((vx_reference)y);
        switch (below(6)) {
        case 0:
            made((vx_reference)vxActivationLayer(g, x, VX_NN_ACTIVATION_LOGISTIC + (vx_enum)below(9), 1.0f, 0.5f, y));
            break;
        case 1:
            made((vx_reference)vxSoftmaxLayer(g, x, y));
            break;
        case 2:
            made((vx_reference)vxPoolingLayer(g, x, chance(50) ? VX_NN_POOLING_MAX : VX_NN_POOLING_AVG, 1 + below(2),
                                              1 + below(2), 0, 0, VX_NN_DS_SIZE_ROUNDING_FLOOR, y));
            break;
        case 3:
            made((vx_reference)vxLocalResponseNormalizationLayer(g, x, VX_NN_NORMALIZATION_SAME_MAP + (vx_enum)below(2),
                                                                 3, 0.5f, 0.75f, 1.0f, y));
            break;
        case 4:
            made((vx_reference)vxTensorAddNode(g, x, x, policy(), y));
            break;
        default:
            made((vx_reference)vxTensorTransposeNode(g, x, y, below(3), below(3)));
            break;
        }
        x = y;
    }
    return chance(80) ? vxProcessGraph(g) : schedule_and_wait(g);
}

/* -- the calls: ROW(id, weight, expression giving the vx_status) ------------------------------ */
#define CALLS(ROW)                                                                                          \
    ROW(create_tensor, 10, MADE(vxCreateTensor(C(), rank(), dims(), dtype(), fpp())))                      \
    ROW(create_virtual_tensor, 3, MADE(vxCreateVirtualTensor(g, rank(), dims(), dtype(), fpp())))          \
    ROW(create_tensor_from_handle, 2, from_handle())                                                       \
    ROW(create_tensor_from_view, 3, view())                                                                \
    ROW(swap_tensor_handle, 2, swap_handle())                                                              \
    ROW(query_tensor, 4, vxQueryTensor(T(), attribute(VX_TENSOR_NUMBER_OF_DIMS), query_buf, query_size())) \
    ROW(copy_tensor_patch, 6, copy_patch())                                                                \
    ROW(map_tensor_patch, 3, map_patch())                                                                  \
    ROW(unmap_tensor_patch, 3, unmap_patch())                                                              \
    ROW(create_scalar, 4, MADE(vxCreateScalar(C(), scalar_type(), scribble())))                            \
    ROW(create_scalar_with_size, 2, MADE(vxCreateScalarWithSize(C(), scalar_type(), scribble(), below(40)))) \
    ROW(create_virtual_scalar, 1, MADE(vxCreateVirtualScalar(g, scalar_type())))                           \
    ROW(query_scalar, 2, vxQueryScalar(S(), attribute(VX_SCALAR_TYPE), query_buf, query_size()))          \
    ROW(copy_scalar, 2, vxCopyScalar(S(), data, usage(), memory()))                                        \
    ROW(copy_scalar_with_size, 1, vxCopyScalarWithSize(S(), below(40), data, usage(), memory()))           \
    ROW(create_lut, 2, MADE(vxCreateLUT(C(), ONE_OF(VX_TYPE_UINT8, VX_TYPE_INT16), small())))              \
    ROW(create_virtual_lut, 1, MADE(vxCreateVirtualLUT(g, ONE_OF(VX_TYPE_UINT8, VX_TYPE_INT16), small()))) \
    ROW(query_lut, 1, vxQueryLUT(L(), attribute(VX_LUT_TYPE), query_buf, query_size()))                   \
    ROW(copy_lut, 1, vxCopyLUT(L(), lut_data, usage(), memory()))                                          \
    ROW(map_lut, 1, map_lut())                                                                             \
    ROW(create_graph, 3, MADE(vxCreateGraph(C())))                                                         \
    ROW(query_graph, 2, vxQueryGraph(g, attribute(VX_GRAPH_NUMNODES), query_buf, query_size()))           \
    ROW(set_graph_attribute, 1, vxSetGraphAttribute(g, attribute(VX_GRAPH_NUMNODES), scribble(), query_size())) \
    ROW(verify_graph, 4, vxVerifyGraph(g))                                                                 \
    ROW(process_graph, 4, vxProcessGraph(g))                                                               \
    ROW(schedule_and_wait_graph, 1, schedule_and_wait(g))                                                  \
    ROW(small_network, 2, small_network())                                                                 \
    ROW(is_graph_verified, 1, check_bool(vxIsGraphVerified(g)))                      \
    ROW(add_parameter_to_graph, 1, vxAddParameterToGraph(g, P()))                                          \
    ROW(set_graph_parameter, 1, vxSetGraphParameterByIndex(g, index_(), ANY()))                            \
    ROW(get_graph_parameter, 1, MADE(vxGetGraphParameterByIndex(g, index_())))                             \
    ROW(convolution_layer, 2, conv(g, 0))                                                                  \
    ROW(deconvolution_layer, 1, conv(g, 1))                                                                \
    ROW(fully_connected_layer, 2, MADE(vxFullyConnectedLayer(g, T(), T(), chance(50) ? T() : NULL, policy(), \
                                                             rounding(), out_of(g))))                      \
    ROW(pooling_layer, 2, MADE(vxPoolingLayer(g, T(), ONE_OF(VX_NN_POOLING_MAX, VX_NN_POOLING_AVG), small(), \
                                              small(), huge(), small(),                                    \
                                              ONE_OF(VX_NN_DS_SIZE_ROUNDING_FLOOR, VX_NN_DS_SIZE_ROUNDING_CEILING), \
                                              out_of(g))))                                                 \
    ROW(softmax_layer, 2, MADE(vxSoftmaxLayer(g, T(), out_of(g))))                                         \
    ROW(lrn_layer, 2, MADE(vxLocalResponseNormalizationLayer(                                             \
                          g, T(), ONE_OF(VX_NN_NORMALIZATION_SAME_MAP, VX_NN_NORMALIZATION_ACROSS_MAPS),   \
                          ONE_OF(3, 5, 7, 4), real(), real(), real(), out_of(g))))                         \
    ROW(activation_layer, 3, MADE(vxActivationLayer(g, T(), ONE_OF(VX_NN_ACTIVATION_LOGISTIC,             \
                          VX_NN_ACTIVATION_HYPERBOLIC_TAN, VX_NN_ACTIVATION_RELU, VX_NN_ACTIVATION_BRELU,  \
                          VX_NN_ACTIVATION_SOFTRELU, VX_NN_ACTIVATION_ABS, VX_NN_ACTIVATION_SQUARE,        \
                          VX_NN_ACTIVATION_SQRT, VX_NN_ACTIVATION_LINEAR), real(), real(), out_of(g))))    \
    ROW(roi_pooling_layer, 1, roi_pool(g))                                                                 \
    ROW(tensor_add_node, 2, MADE(vxTensorAddNode(g, T(), T(), policy(), out_of(g))))                       \
    ROW(tensor_subtract_node, 1, MADE(vxTensorSubtractNode(g, T(), T(), policy(), out_of(g))))             \
    ROW(tensor_multiply_node, 1, MADE(vxTensorMultiplyNode(g, T(), T(), S(), policy(), rounding(), out_of(g)))) \
    ROW(tensor_table_lookup_node, 1, MADE(vxTensorTableLookupNode(g, T(), L(), out_of(g))))                \
    ROW(tensor_transpose_node, 1, MADE(vxTensorTransposeNode(g, T(), out_of(g), small(), small())))        \
    ROW(tensor_convert_depth_node, 1, MADE(vxTensorConvertDepthNode(g, T(), policy(), S(), S(), out_of(g)))) \
    ROW(tensor_matrix_multiply_node, 1, matrix_multiply(g, 0))                                             \
    ROW(vxu_tensor_add, 1, vxuTensorAdd(C(), T(), T(), policy(), T()))                                     \
    ROW(vxu_tensor_subtract, 1, vxuTensorSubtract(C(), T(), T(), policy(), T()))                           \
    ROW(vxu_tensor_multiply, 1, vxuTensorMultiply(C(), T(), T(), S(), policy(), rounding(), T()))          \
    ROW(vxu_tensor_table_lookup, 1, vxuTensorTableLookup(C(), T(), L(), T()))                              \
    ROW(vxu_tensor_transpose, 1, vxuTensorTranspose(C(), T(), T(), small(), small()))                      \
    ROW(vxu_tensor_convert_depth, 1, vxuTensorConvertDepth(C(), T(), policy(), S(), S(), T()))             \
    ROW(vxu_tensor_matrix_multiply, 1, matrix_multiply(g, 1))                                              \
    ROW(create_generic_node, 2, MADE(vxCreateGenericNode(g, K())))                                         \
    ROW(set_parameter_by_index, 4, vxSetParameterByIndex(N(), index_(), ANY()))                            \
    ROW(set_parameter_by_reference, 1, vxSetParameterByReference(P(), ANY()))                              \
    ROW(get_parameter_by_index, 2, MADE(vxGetParameterByIndex(N(), index_())))                             \
    ROW(query_parameter, 1, query_parameter())                                                             \
    ROW(query_node, 2, vxQueryNode(N(), attribute(VX_NODE_STATUS), query_buf, query_size()))              \
    ROW(set_node_attribute, 1, vxSetNodeAttribute(N(), attribute(VX_NODE_STATUS), scribble(), query_size())) \
    ROW(assign_node_callback, 1, vxAssignNodeCallback(N(), chance(60) ? on_node : NULL))                   \
    ROW(retrieve_node_callback, 1, (vxRetrieveNodeCallback(N()), VX_SUCCESS))                             \
    ROW(set_node_target, 1, vxSetNodeTarget(N(), ONE_OF(VX_TARGET_ANY, VX_TARGET_STRING), text()))         \
    ROW(remove_node, 1, remove_node())                                                                     \
    ROW(get_kernel_by_enum, 2, MADE(vxGetKernelByEnum(C(), kernel_enum())))                                \
    ROW(get_kernel_by_name, 1, MADE(vxGetKernelByName(C(), kernel_name())))                                \
    ROW(query_kernel, 1, vxQueryKernel(K(), attribute(VX_KERNEL_PARAMETERS), query_buf, query_size()))    \
    ROW(get_kernel_parameter, 1, MADE(vxGetKernelParameterByIndex(K(), index_())))                         \
    ROW(create_context, 1, MADE(vxCreateContext()))                                                        \
    ROW(query_context, 2, vxQueryContext(C(), attribute(VX_CONTEXT_VENDOR_ID), query_buf, query_size()))  \
    ROW(set_immediate_mode_target, 1, vxSetImmediateModeTarget(C(), ONE_OF(VX_TARGET_ANY, VX_TARGET_STRING), \
                                                               text()))                                    \
    ROW(query_reference, 2, vxQueryReference(ANY(), attribute(VX_REFERENCE_COUNT), query_buf, query_size())) \
    ROW(set_reference_name, 1, vxSetReferenceName(ANY(), text()))                                          \
    ROW(get_status, 2, vxGetStatus(ANY()))                                                                 \
    ROW(get_context, 1, (vxGetContext(ANY()), VX_SUCCESS))                                                 \
    ROW(directive, 1, vxDirective(ANY(), ONE_OF(VX_DIRECTIVE_ENABLE_LOGGING, VX_DIRECTIVE_ENABLE_PERFORMANCE, \
                                                VX_DIRECTIVE_DISABLE_PERFORMANCE)))                        \
    ROW(hint, 1, vxHint(ANY(), ONE_OF(VX_HINT_PERFORMANCE_DEFAULT, VX_HINT_PERFORMANCE_HIGH_SPEED), NULL, 0)) \
    ROW(add_log_entry, 1, (vxAddLogEntry(ANY(), (vx_status)-(int)below(N_STATUS), "fuzz %d", 1), VX_SUCCESS)) \
    ROW(retain_reference, 2, retain())                                                                     \
    ROW(release_reference, 9, release())

#define DEFINE(id, weight, expression)                                                                      \
    static vx_status call_##id(void)                                                                       \
    {                                                                                                       \
        vx_graph g = (vx_graph)pick(VX_TYPE_GRAPH);                                                         \
        (void)g;                                                                                            \
        return (expression);                                                                               \
    }
CALLS(DEFINE)

struct row {
    const char *name;
    unsigned weight;
    vx_status (*call)(void);
    long count;
};
#define ENTRY(id, weight, expression) {#id, weight, call_##id, 0},
static struct row rows[] = {CALLS(ENTRY)};
#define N_ROWS (sizeof rows / sizeof rows[0])

static vx_uint32 context_references(void)
{
    vx_uint32 count = 0;
    vxQueryContext(ctx, VX_CONTEXT_REFERENCES, &count, sizeof count);
    return count;
}

/* Release everything the application holds; the count must be back at `baseline` (a
 * leak is reported once, with the last call before it). */
static void settle(vx_uint32 *baseline, long step)
{
    const char *last = (const char *)current;
    int i;
    vx_uint32 now;
    current = "release everything";
    while (n_maps) {
        n_maps--;
        note(vxUnmapTensorPatch(maps[n_maps].tensor, maps[n_maps].id));
    }
    while (n_pool)
        drop_all(n_pool - 1);
    epochs++;
    now = context_references();
    if (now != *baseline) {
        leaks++;
        printf("LEAK after step %ld (%s): VX_CONTEXT_REFERENCES is %u, expected %u\n", step, last, now,
               *baseline);
        *baseline = now;
        for (i = 0; i < n_seen; i++) {
            vx_enum type = 0;
            vx_uint32 count = 0;
            if (seen[i] != (vx_reference)ctx &&
                vxQueryReference(seen[i], VX_REFERENCE_TYPE, &type, sizeof type) == VX_SUCCESS) {
                vxQueryReference(seen[i], VX_REFERENCE_COUNT, &count, sizeof count);
                printf("  still alive: %p of type %#x, application count %u\n", (void *)seen[i], (unsigned)type,
                       count);
            }
        }
    }
    n_seen = 0;
}

int main(int argc, char **argv)
{
    long steps = 10000, epoch = 2500, step;
    unsigned long long seed = 1;
    unsigned total = 0, i;
    vx_uint32 baseline;
    struct sigaction sa;
    int a;

    for (a = 1; a < argc; a += 2) {
        if (!strcmp(argv[a], "--trace")) {
            trace = 1;
            a--;
        } else if (a + 1 == argc) {
            break;
        } else if (!strcmp(argv[a], "--calls"))
            steps = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "--seed"))
            seed = strtoull(argv[a + 1], NULL, 0);
        else if (!strcmp(argv[a], "--epoch"))
            epoch = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "--timeout"))
            timeout_seconds = (unsigned)atoi(argv[a + 1]);
        else {
            fprintf(stderr, "usage: %s [--calls N] [--seed S] [--epoch N] [--timeout SECONDS] [--trace]\n", argv[0]);
            return 2;
        }
    }
    rng ^= seed * 0x2545F4914F6CDD1Dull;
    if (!rng)
        rng = 1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_crash;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    for (i = 0; i < N_ROWS; i++)
        total += rows[i].weight;

    alarm(timeout_seconds * 4); /* the first call starts Python */
    ctx = vxCreateContext();
    if (vxGetStatus((vx_reference)ctx) != VX_SUCCESS) {
        printf("vxCreateContext failed\n");
        return 1;
    }
    vxRegisterLogCallback(ctx, on_log, vx_false_e);
    baseline = context_references();

    for (step = 0; calls < steps; step++) {
        unsigned r = below(total);
        for (i = 0; r >= rows[i].weight; i++)
            r -= rows[i].weight;
        current = rows[i].name;
        current_step = step;
        rows[i].count++;
        alarm(timeout_seconds);
        if (trace)
            printf("step %ld %s -> %d\n", step, rows[i].name, (int)note(rows[i].call()));
        else
            note(rows[i].call());
        if (epoch > 0 && (step + 1) % epoch == 0)
            settle(&baseline, step);
    }
    settle(&baseline, step);
    alarm(0);
    current = "vxReleaseContext";
    vxRegisterLogCallback(ctx, NULL, vx_false_e);
    if (vxReleaseContext(&ctx) != VX_SUCCESS) {
        printf("vxReleaseContext failed\n");
        leaks++;
    }

    printf("calls=%ld steps=%ld seed=%llu epochs=%ld undefined=%ld leaks=%ld log_entries=%ld bad_log_entries=%ld\n",
           calls, step, seed, epochs, undefined, leaks, log_entries, bad_log_entries);
    for (i = 0; i < N_STATUS; i++)
        if (status_seen[i])
            printf("status %s=%ld\n", status_names[i], status_seen[i]);
    for (i = 0; i < N_ROWS; i++)
        printf("row %s=%ld\n", rows[i].name, rows[i].count);
    return undefined || leaks || bad_log_entries ? 1 : 0;
}
