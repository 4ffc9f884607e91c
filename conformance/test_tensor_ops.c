/* test_tensor_ops.c: the seven OpenVX 1.2 tensor operations, each in node and vxu form, in
 * U8, S8 and Q7.8 with both overflow policies (and both rounding policies for Multiply),
 * broadcasting of either input, randomized shapes, against plain C references; ConvertDepth also
 * in the Khronos sample implementation's compatibility mode (Q7.8 to U8/S8 truncates). */
#include "ct_vx.h"

#include <math.h>
#include <string.h>

TESTCASE(tensor_op);

typedef struct {
    const ct_format *fmt, *fmt_out;
    vx_enum overflow, rounding;
    int vxu;    /* 0 graph node, 1 vxu */
    int sample; /* the context in the Khronos sample implementation's compatibility mode */
    int op;     /* operation-specific selector */
    float scale, offset;
    int variant;
} op_arg;

static const vx_enum overflows[2] = {VX_CONVERT_POLICY_SATURATE, VX_CONVERT_POLICY_WRAP};
static const vx_enum roundings[2] = {VX_ROUND_POLICY_TO_ZERO, VX_ROUND_POLICY_TO_NEAREST_EVEN};

static vx_size random_shape(vx_size *dims, int max_rank)
{
    int rank = ct_rand_range(1, max_rank), i;
    for (i = 0; i < rank; i++)
        dims[i] = ct_rand_range(1, 5);
    return (vx_size)rank;
}

/* index into a broadcast input: each dim of `in` equals the output's or is 1 */
static size_t broadcast_index(size_t flat, size_t rank, const vx_size *out, const vx_size *in)
{
    size_t i, idx = 0, mul = 1;
    for (i = 0; i < rank; i++) {
        size_t coord = flat % out[i];
        flat /= out[i];
        idx += (in[i] == 1 ? 0 : coord) * mul;
        mul *= in[i];
    }
    return idx;
}

/* Random shapes of two inputs that broadcast together: each dim of `d2` (and, with `either`, of `d1`)
 * is the full size or 1; `out` gets the broadcast shape (the larger of the two per dim). */
static vx_size broadcast_shapes(vx_size *out, vx_size *d1, vx_size *d2, int either, unsigned one_in /* 0: never */)
{
    vx_size rank = random_shape(out, 4), i;
    for (i = 0; i < rank; i++) {
        d1[i] = either && ct_rand() % 4 == 0 ? 1 : out[i];
        d2[i] = one_in && ct_rand() % one_in == 0 ? 1 : out[i];
        out[i] = d1[i] > d2[i] ? d1[i] : d2[i];
    }
    return rank;
}

static void run_node(vx_graph graph, vx_node node)
{
    ASSERT_VX_OBJECT(node);
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
}

/* ---- add / subtract -------------------------------------------------------------------- */
static void gen_addsub(void)
{
    int op, f, o, m, bc, v;
    char name[96];
    for (op = 0; op < 2; op++)
        for (f = 0; f < 3; f++)
            for (o = 0; o < 2; o++)
                for (m = 0; m < 2; m++)
                    for (bc = 0; bc < 2; bc++)
                        for (v = 0; v < 3; v++) {
                            op_arg a;
                            memset(&a, 0, sizeof a);
                            a.fmt = CT_NN_FORMATS[f];
                            a.overflow = overflows[o];
                            a.vxu = m;
                            a.op = op;
                            a.variant = bc * 10 + v;
                            snprintf(name, sizeof name, "%s/%s/%s/%s/%s/%d", op ? "subtract" : "add", a.fmt->name,
                                     o ? "WRAP" : "SAT", m ? "vxu" : "node", bc ? "broadcast" : "same", v);
                            ct_emit(name, &a);
                        }
}

TEST_WITH_ARG(tensor_op, add_subtract, op_arg, gen_addsub)
{
    const ct_format *f = arg->fmt;
    int broadcast = arg->variant >= 10; /* either input broadcasts (a superset of input2 only) */
    vx_size dims[4], dims1[4], dims2[4];
    vx_size rank = broadcast_shapes(dims, dims1, dims2, broadcast, broadcast ? 2 : 0), i;
    size_t n, n1, n2;
    int64_t *a, *b, *expected, *actual;
    int saturate = arg->overflow == VX_CONVERT_POLICY_SATURATE;
    vx_tensor t1, t2, tout;

    n = ct_count(rank, dims);
    n1 = ct_count(rank, dims1);
    n2 = ct_count(rank, dims2);
    a = ct_alloc(n1); b = ct_alloc(n2); expected = ct_alloc(n); actual = ct_alloc(n);
    ct_fill_format(a, n1, f->type);
    ct_fill_format(b, n2, f->type);
    for (i = 0; i < n; i++) {
        int64_t x = a[broadcast_index(i, rank, dims, dims1)], y = b[broadcast_index(i, rank, dims, dims2)];
        expected[i] = ct_fit(arg->op ? x - y : x + y, f->type, saturate);
    }
    t1 = ct_tensor(context, rank, dims1, f);
    t2 = ct_tensor(context, rank, dims2, f);
    tout = ct_tensor(context, rank, dims, f);
    ct_write(t1, a);
    ct_write(t2, b);
    if (arg->vxu) {
        if (arg->op)
            VX_CALL(vxuTensorSubtract(context, t1, t2, arg->overflow, tout));
        else
            VX_CALL(vxuTensorAdd(context, t1, t2, arg->overflow, tout));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = arg->op ? vxTensorSubtractNode(graph, t1, t2, arg->overflow, tout)
                       : vxTensorAddNode(graph, t1, t2, arg->overflow, tout);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY(arg->op ? "subtract output" : "add output", expected, actual, n);
    VX_CALL(vxReleaseTensor(&t1));
    VX_CALL(vxReleaseTensor(&t2));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- multiply ---------------------------------------------------------------------------- */
static void gen_multiply(void)
{
    static const float scales[6] = {1.0f, 0.5f, 0.375f, 1.0f / 255.0f, 3.0f, 0.1f};
    static const char *const scale_names[6] = {"1", "0.5", "0.375", "1_255", "3", "0.1"};
    int f, o, r, m, s;
    char name[96];
    for (f = 0; f < 3; f++)
        for (o = 0; o < 2; o++)
            for (r = 0; r < 2; r++)
                for (s = 0; s < 6; s++)
                    for (m = 0; m < 2; m++) {
                        op_arg a;
                        memset(&a, 0, sizeof a);
                        a.fmt = CT_NN_FORMATS[f];
                        a.overflow = overflows[o];
                        a.rounding = roundings[r];
                        a.scale = scales[s];
                        a.vxu = m;
                        a.op = s == 3; /* exactly 1/255 */
                        snprintf(name, sizeof name, "%s/%s/%s/scale_%s/%s", a.fmt->name, o ? "WRAP" : "SAT",
                                 r ? "RNE" : "RTZ", scale_names[s], m ? "vxu" : "node");
                        ct_emit(name, &a);
                    }
}

TEST_WITH_ARG(tensor_op, multiply, op_arg, gen_multiply)
{
    const ct_format *f = arg->fmt;
    vx_size dims[4], dims1[4], dims2[4];
    vx_size rank = broadcast_shapes(dims, dims1, dims2, 1, 3), i;
    size_t n, n1, n2;
    int64_t *a, *b, *expected, *actual, mant, div;
    int e, shift, nearest = arg->rounding == VX_ROUND_POLICY_TO_NEAREST_EVEN;
    int saturate = arg->overflow == VX_CONVERT_POLICY_SATURATE;
    vx_tensor t1, t2, tout;
    vx_scalar scale;

    n = ct_count(rank, dims);
    n1 = ct_count(rank, dims1);
    n2 = ct_count(rank, dims2);
    a = ct_alloc(n1); b = ct_alloc(n2); expected = ct_alloc(n); actual = ct_alloc(n);
    ct_fill_format(a, n1, f->type);
    ct_fill_format(b, n2, f->type);
    /* the exact value in1 * in2 * scale / 2^(p1 + p2 - p_out), scale = mant * 2^e (or exactly 1/255) */
    if (arg->op) {
        mant = 1;
        e = 0;
        div = 255;
    } else {
        double frac = frexp((double)arg->scale, &e);
        mant = (int64_t)ldexp(frac, 24);
        e -= 24;
        div = 1;
    }
    shift = f->fpp - e; /* p1 + p2 - p_out = p */
    for (i = 0; i < n; i++) {
        int64_t num = a[broadcast_index(i, rank, dims, dims1)] * b[broadcast_index(i, rank, dims, dims2)] * mant;
        int64_t q;
        if (shift >= 0)
            q = ct_round_div(num, div << shift, nearest);
        else
            q = ct_round_div(num * ((int64_t)1 << -shift), div, nearest);
        expected[i] = ct_fit(q, f->type, saturate);
    }
    t1 = ct_tensor(context, rank, dims1, f);
    t2 = ct_tensor(context, rank, dims2, f);
    tout = ct_tensor(context, rank, dims, f);
    ct_write(t1, a);
    ct_write(t2, b);
    scale = vxCreateScalar(context, VX_TYPE_FLOAT32, &arg->scale);
    ASSERT_VX_OBJECT(scale);
    if (arg->vxu) {
        VX_CALL(vxuTensorMultiply(context, t1, t2, scale, arg->overflow, arg->rounding, tout));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = vxTensorMultiplyNode(graph, t1, t2, scale, arg->overflow, arg->rounding, tout);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("multiply output", expected, actual, n);
    VX_CALL(vxReleaseScalar(&scale));
    VX_CALL(vxReleaseTensor(&t1));
    VX_CALL(vxReleaseTensor(&t2));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- table lookup --------------------------------------------------------------------------- */
static const ct_format CT_S16 = {"S16", VX_TYPE_INT16, 0};

static void gen_lookup(void)
{
    static const ct_format *const fmts[3] = {&CT_U8, &CT_S16, &CT_Q78};
    int f, m, c, v;
    char name[96];
    for (f = 0; f < 3; f++)
        for (c = 0; c < 2; c++)
            for (m = 0; m < 2; m++)
                for (v = 0; v < 4; v++) {
                    op_arg a;
                    memset(&a, 0, sizeof a);
                    a.fmt = fmts[f];
                    a.vxu = m;
                    a.op = c; /* 0 full table, 1 a shorter one */
                    a.variant = v;
                    snprintf(name, sizeof name, "%s/%s/%s/%d", a.fmt->name, c ? "short_lut" : "full_lut",
                             m ? "vxu" : "node", v);
                    ct_emit(name, &a);
                }
}

TEST_WITH_ARG(tensor_op, table_lookup, op_arg, gen_lookup)
{
    const ct_format *f = arg->fmt;
    int is_u8 = f->type == VX_TYPE_UINT8;
    vx_size count = is_u8 ? (arg->op ? (vx_size)ct_rand_range(1, 255) : 256)
                          : (arg->op ? (vx_size)ct_rand_range(2, 3000) : 65536);
    vx_size dims[4], rank = random_shape(dims, 4), i, offset = is_u8 ? 0 : count / 2;
    size_t n = ct_count(rank, dims);
    int64_t *x = ct_alloc(n), *expected = ct_alloc(n), *actual = ct_alloc(n), *table = ct_alloc(count);
    void *raw = ct_alloc(count);
    vx_tensor tin, tout;
    vx_lut lut;
    vx_uint32 lut_offset = 0;

    ct_fill_format(table, count, f->type);
    if (is_u8 || !arg->op)
        ct_fill_format(x, n, f->type);
    else
        ct_fill(x, n, -(int64_t)offset - 5, (int64_t)(count - offset) + 5); /* some fall outside: 0 */
    for (i = 0; i < count; i++)
        ct_set(raw, f->type, i, table[i]);
    for (i = 0; i < n; i++) {
        int64_t index = x[i] + (int64_t)offset;
        expected[i] = index >= 0 && index < (int64_t)count ? table[index] : 0;
    }
    lut = vxCreateLUT(context, f->type, count);
    ASSERT_VX_OBJECT(lut);
    VX_CALL(vxCopyLUT(lut, raw, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST));
    VX_CALL(vxQueryLUT(lut, VX_LUT_OFFSET, &lut_offset, sizeof lut_offset));
    ASSERT_EQ_INT(offset, lut_offset);
    tin = ct_tensor(context, rank, dims, f);
    tout = ct_tensor(context, rank, dims, f);
    ct_write(tin, x);
    if (arg->vxu) {
        VX_CALL(vxuTensorTableLookup(context, tin, lut, tout));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = vxTensorTableLookupNode(graph, tin, lut, tout);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("table lookup output", expected, actual, n);
    VX_CALL(vxReleaseLUT(&lut));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- transpose ----------------------------------------------------------------------------- */
static void gen_transpose(void)
{
    int f, m, v;
    char name[96];
    for (f = 0; f < 3; f++)
        for (m = 0; m < 2; m++)
            for (v = 0; v < 8; v++) {
                op_arg a;
                memset(&a, 0, sizeof a);
                a.fmt = CT_NN_FORMATS[f];
                a.vxu = m;
                a.variant = v;
                snprintf(name, sizeof name, "%s/%s/%d", a.fmt->name, m ? "vxu" : "node", v);
                ct_emit(name, &a);
            }
}

TEST_WITH_ARG(tensor_op, transpose, op_arg, gen_transpose)
{
    const ct_format *f = arg->fmt;
    vx_size dims[6], out_dims[6], rank = ct_rand_range(2, 5), i, d1, d2, tmp;
    size_t n;
    int64_t *x, *expected, *actual;
    vx_tensor tin, tout;

    for (i = 0; i < rank; i++)
        dims[i] = ct_rand_range(1, 4);
    d1 = ct_rand_range(0, (int)rank - 1);
    d2 = ct_rand_range(0, (int)rank - 1);
    if (d1 == d2 && arg->variant != 7)
        d2 = (d1 + 1) % rank;
    memcpy(out_dims, dims, sizeof dims);
    tmp = out_dims[d1]; out_dims[d1] = out_dims[d2]; out_dims[d2] = tmp;
    n = ct_count(rank, dims);
    x = ct_alloc(n); expected = ct_alloc(n); actual = ct_alloc(n);
    ct_fill_format(x, n, f->type);
    for (i = 0; i < n; i++) {
        vx_size coord[6], rest = i, k, o = 0, mul = 1;
        for (k = 0; k < rank; k++) {
            coord[k] = rest % dims[k];
            rest /= dims[k];
        }
        tmp = coord[d1]; coord[d1] = coord[d2]; coord[d2] = tmp;
        for (k = 0; k < rank; k++) {
            o += coord[k] * mul;
            mul *= out_dims[k];
        }
        expected[o] = x[i];
    }
    tin = ct_tensor(context, rank, dims, f);
    tout = ct_tensor(context, rank, out_dims, f);
    ct_write(tin, x);
    if (arg->vxu) {
        VX_CALL(vxuTensorTranspose(context, tin, tout, d1, d2));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = vxTensorTransposeNode(graph, tin, tout, d1, d2);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("transpose output", expected, actual, n);
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- convert depth --------------------------------------------------------------------------- */
static void gen_convert(void)
{
    static const float norms[4] = {1.0f, 0.5f, 3.0f, 0.1f}, offsets[4] = {0.0f, 10.0f, -3.5f, 0.25f};
    int f, g, o, m, v, sample;
    char name[96];
    for (sample = 0; sample < 2; sample++)
        for (f = 0; f < 3; f++)
            for (g = 0; g < 3; g++)
                for (o = 0; o < 2; o++)
                    for (m = 0; m < 2; m++)
                        for (v = 0; v < 4; v++) {
                            op_arg a;
                            if (sample && (f != 2 || g == 2))
                                continue; /* the sample's mode differs from Q7.8 to U8/S8 only */
                            memset(&a, 0, sizeof a);
                            a.fmt = CT_NN_FORMATS[f];
                            a.fmt_out = CT_NN_FORMATS[g];
                            a.overflow = overflows[o];
                            a.vxu = m;
                            a.sample = sample;
                            a.scale = norms[v];
                            a.offset = offsets[(v + f) % 4];
                            snprintf(name, sizeof name, "%s_to_%s/%s/%s/norm%g_offset%g%s", a.fmt->name,
                                     a.fmt_out->name, o ? "WRAP" : "SAT", m ? "vxu" : "node", a.scale, a.offset,
                                     sample ? "/SAMPLE" : "");
                            ct_emit(name, &a);
                        }
}

/* to nearest, ties to even (the text), or toward zero (`truncate`: the sample's C cast) */
static int64_t float_to_int(double v, vx_enum type, int saturate, int truncate)
{
    double r = (truncate != ct_break_rounding()) ? trunc(v) : nearbyint(v), span;
    if (isnan(r))
        return 0;
    if (saturate) {
        if (r >= (double)ct_hi(type))
            return ct_hi(type);
        if (r <= (double)ct_lo(type))
            return ct_lo(type);
        return (int64_t)r;
    }
    if (!isfinite(r))
        return 0;
    span = (double)(ct_hi(type) - ct_lo(type) + 1);
    return ct_fit((int64_t)fmod(r, span), type, 0);
}

TEST_WITH_ARG(tensor_op, convert_depth, op_arg, gen_convert)
{
    const ct_format *f = arg->fmt, *g = arg->fmt_out;
    vx_size dims[4], rank = random_shape(dims, 4), i;
    size_t n = ct_count(rank, dims);
    int64_t *x = ct_alloc(n), *expected = ct_alloc(n), *actual = ct_alloc(n);
    int saturate = arg->overflow == VX_CONVERT_POLICY_SATURATE;
    int truncate = arg->sample && f->type == VX_TYPE_INT16 && g->type != VX_TYPE_INT16;
    vx_tensor tin, tout;
    vx_scalar norm, offset;

    ct_fill_format(x, n, f->type);
    for (i = 0; i < n; i++) {
        double v = (ldexp((double)x[i], -f->fpp) - (double)arg->offset) / (double)arg->scale;
        expected[i] = float_to_int(v * ldexp(1.0, g->fpp), g->type, saturate, truncate);
    }
    ct_set_compat(context, arg->sample);
    tin = ct_tensor(context, rank, dims, f);
    tout = ct_tensor(context, rank, dims, g);
    ct_write(tin, x);
    norm = vxCreateScalar(context, VX_TYPE_FLOAT32, &arg->scale);
    offset = vxCreateScalar(context, VX_TYPE_FLOAT32, &arg->offset);
    ASSERT_VX_OBJECT(norm);
    ASSERT_VX_OBJECT(offset);
    if (arg->vxu) {
        VX_CALL(vxuTensorConvertDepth(context, tin, arg->overflow, norm, offset, tout));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = vxTensorConvertDepthNode(graph, tin, arg->overflow, norm, offset, tout);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("convert depth output", expected, actual, n);
    VX_CALL(vxReleaseScalar(&norm));
    VX_CALL(vxReleaseScalar(&offset));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- matrix multiply ------------------------------------------------------------------------ */
static void gen_matmul(void)
{
    int f, t, c, m;
    char name[96];
    for (f = 0; f < 3; f++)
        for (t = 0; t < 8; t++)
            for (c = 0; c < 2; c++)
                for (m = 0; m < 2; m++) {
                    op_arg a;
                    memset(&a, 0, sizeof a);
                    a.fmt = CT_NN_FORMATS[f];
                    a.op = t | (c << 3);
                    a.vxu = m;
                    snprintf(name, sizeof name, "%s/T%d%d%d/%s/%s", a.fmt->name, t & 1, (t >> 1) & 1, (t >> 2) & 1,
                             c ? "with_c" : "no_c", m ? "vxu" : "node");
                    ct_emit(name, &a);
                }
}

/* element (i, j) of the matrix of a 2-D tensor with dims [d0, d1] (d0 columns), transposed if t */
static int64_t mat(const int64_t *x, vx_size d0, int t, size_t i, size_t j)
{
    return t ? x[i + d0 * j] : x[j + d0 * i];
}

TEST_WITH_ARG(tensor_op, matrix_multiply, op_arg, gen_matmul)
{
    const ct_format *f = arg->fmt;
    vx_tensor_matrix_multiply_params_t params;
    int ta = arg->op & 1, tb = (arg->op >> 1) & 1, tc = (arg->op >> 2) & 1, with_c = (arg->op >> 3) & 1;
    vx_size M = ct_rand_range(1, 5), K = ct_rand_range(1, 6), N = ct_rand_range(1, 5);
    vx_size a_dims[2], b_dims[2], c_dims[2], o_dims[2], i, j, k;
    int64_t *a, *b, *c = NULL, *expected, *actual;
    vx_tensor t1, t2, t3 = NULL, tout;

    a_dims[0] = ta ? M : K; a_dims[1] = ta ? K : M;
    b_dims[0] = tb ? K : N; b_dims[1] = tb ? N : K;
    c_dims[0] = tc ? M : N; c_dims[1] = tc ? N : M;
    o_dims[0] = N; o_dims[1] = M;
    a = ct_alloc(M * K); b = ct_alloc(K * N); expected = ct_alloc(M * N); actual = ct_alloc(M * N);
    ct_fill_format(a, M * K, f->type);
    ct_fill_format(b, K * N, f->type);
    if (with_c) {
        c = ct_alloc(M * N);
        ct_fill_format(c, M * N, f->type);
    }
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            int64_t acc = 0, total;
            for (k = 0; k < K; k++)
                acc += mat(a, a_dims[0], ta, i, k) * mat(b, b_dims[0], tb, k, j);
            total = acc;
            if (with_c)
                total += mat(c, c_dims[0], tc, i, j) * ((int64_t)1 << f->fpp);
            expected[j + N * i] = ct_fit(ct_round_shift(total, f->fpp, 1), f->type, 1);
        }
    t1 = ct_tensor(context, 2, a_dims, f);
    t2 = ct_tensor(context, 2, b_dims, f);
    tout = ct_tensor(context, 2, o_dims, f);
    ct_write(t1, a);
    ct_write(t2, b);
    if (with_c) {
        t3 = ct_tensor(context, 2, c_dims, f);
        ct_write(t3, c);
    }
    params.transpose_input1 = ta ? vx_true_e : vx_false_e;
    params.transpose_input2 = tb ? vx_true_e : vx_false_e;
    params.transpose_input3 = tc ? vx_true_e : vx_false_e;
    if (arg->vxu) {
        VX_CALL(vxuTensorMatrixMultiply(context, t1, t2, t3, &params, tout));
    } else {
        vx_graph graph = vxCreateGraph(context);
        vx_node node;
        ASSERT_VX_OBJECT(graph);
        node = vxTensorMatrixMultiplyNode(graph, t1, t2, t3, &params, tout);
        run_node(graph, node);
        VX_CALL(vxReleaseNode(&node));
        VX_CALL(vxReleaseGraph(&graph));
    }
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("matrix multiply output", expected, actual, M * N);
    VX_CALL(vxReleaseTensor(&t1));
    VX_CALL(vxReleaseTensor(&t2));
    if (t3)
        VX_CALL(vxReleaseTensor(&t3));
    VX_CALL(vxReleaseTensor(&tout));
}
