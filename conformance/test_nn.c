/* test_nn.c: the eight NN extension layers against plain C references, in U8, S8 and Q7.8,
 * both overflow and both rounding policies (where the layer has them), padding, dilation,
 * down-scale size rounding, bias kinds and batching, with randomized sizes. Convolution and
 * deconvolution also run in the Khronos sample implementation's compatibility mode ("/SAMPLE":
 * dilated taps one dilation further, deconvolution inputs bounded before upsampling). */
#include "ct_vx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TESTCASE(nn);

typedef struct {
    const ct_format *fmt;
    vx_enum overflow, rounding;
    int variant;
    int sample; /* the context in the Khronos sample implementation's compatibility mode */
} nn_arg;

static const char *policy_name(vx_enum overflow, vx_enum rounding)
{
    if (overflow == VX_CONVERT_POLICY_SATURATE)
        return rounding == VX_ROUND_POLICY_TO_ZERO ? "SAT_RTZ" : "SAT_RNE";
    return rounding == VX_ROUND_POLICY_TO_ZERO ? "WRAP_RTZ" : "WRAP_RNE";
}

static void emit_policies(int variants, int modes)
{
    static const vx_enum overflows[2] = {VX_CONVERT_POLICY_SATURATE, VX_CONVERT_POLICY_WRAP};
    static const vx_enum roundings[2] = {VX_ROUND_POLICY_TO_ZERO, VX_ROUND_POLICY_TO_NEAREST_EVEN};
    int f, o, r, v, m;
    char name[64];
    for (m = 0; m < modes; m++)
        for (f = 0; f < 3; f++)
            for (o = 0; o < 2; o++)
                for (r = 0; r < 2; r++)
                    for (v = 0; v < variants; v++) {
                        nn_arg a;
                        a.fmt = CT_NN_FORMATS[f];
                        a.overflow = overflows[o];
                        a.rounding = roundings[r];
                        a.variant = v;
                        a.sample = m;
                        snprintf(name, sizeof name, "%s/%s/%d%s", a.fmt->name, policy_name(a.overflow, a.rounding),
                                 v, m ? "/SAMPLE" : "");
                        ct_emit(name, &a);
                    }
}

static void gen_conv(void) { emit_policies(14, 2); }
static void gen_deconv(void) { emit_policies(10, 2); }
static void gen_fc(void) { emit_policies(10, 1); }

/* value ranges: `small` keeps sums mostly inside the type, otherwise the whole range.
 * Each row gives the small range for UINT8, INT8 and INT16. */
typedef struct { int64_t lo, hi; } fill_range;
static const fill_range DATA_RANGES[3] = {{0, 7}, {-8, 7}, {-512, 511}};
static const fill_range WEIGHT_RANGES[3] = {{0, 2}, {-2, 2}, {-256, 256}};
static const fill_range BIAS_RANGES[3] = {{0, 20}, {-20, 20}, {-2048, 2048}};

static void fill_values(int64_t *x, size_t n, const ct_format *f, int small, const fill_range ranges[3])
{
    int row = f->type == VX_TYPE_UINT8 ? 0 : f->type == VX_TYPE_INT8 ? 1 : 2;
    if (!small)
        ct_fill_format(x, n, f->type);
    else
        ct_fill(x, n, ranges[row].lo, ranges[row].hi);
}

static void fill_data(int64_t *x, size_t n, const ct_format *f, int small)
{
    fill_values(x, n, f, small, DATA_RANGES);
}

static void fill_weights(int64_t *w, size_t n, const ct_format *f, int small)
{
    fill_values(w, n, f, small, WEIGHT_RANGES);
}

static void fill_bias(int64_t *b, size_t n, const ct_format *f, int small)
{
    fill_values(b, n, f, small, BIAS_RANGES);
}

/* biases of a (de)convolution: kind 0 none (NULL), 1 one per OFM [k_out], 2 one per OFM and output
 * location [ow, oh, k_out]; `dims` gets their dims */
static int64_t *make_bias(int kind, const ct_format *f, int small, vx_size k_out, int64_t ow, int64_t oh,
                          vx_size *dims)
{
    int64_t *b;
    size_t n;
    if (!kind)
        return NULL;
    dims[0] = kind == 1 ? k_out : (vx_size)ow; dims[1] = (vx_size)oh; dims[2] = k_out;
    n = kind == 1 ? k_out : ct_count(3, dims);
    b = ct_alloc(n);
    fill_bias(b, n, f, small);
    return b;
}

/* the bias of output (ox, oy, ko) */
static int64_t bias_at(int kind, const int64_t *b, size_t ox, size_t oy, size_t ko, int64_t ow, int64_t oh)
{
    return kind == 1 ? b[ko] : kind == 2 ? b[ox + ow * (oy + oh * ko)] : 0;
}

/* the exact sum (at fpp_sum) plus a bias (at fpp_b), one rounding to fpp_out, the overflow policy */
static int64_t finish(int64_t acc, int fpp_sum, int has_bias, int64_t bias, int fpp_b, int fpp_out,
                      const nn_arg *arg)
{
    int p = has_bias && fpp_b > fpp_sum ? fpp_b : fpp_sum;
    int64_t total = acc * ((int64_t)1 << (p - fpp_sum));
    if (has_bias)
        total += bias * ((int64_t)1 << (p - fpp_b));
    return ct_fit(ct_round_shift(total, p - fpp_out, arg->rounding == VX_ROUND_POLICY_TO_NEAREST_EVEN),
                  arg->fmt->type, arg->overflow == VX_CONVERT_POLICY_SATURATE);
}

static int64_t out_size(int64_t extent, int64_t pad, int64_t k_eff, int64_t stride, int ceiling)
{
    int64_t span = extent + 2 * pad - k_eff;
    return (ceiling ? (span + stride - 1) / stride : span / stride) + 1;
}

/* the smallest stride that reproduces `out` (the NN extension has no stride parameter) */
static int64_t infer_stride(int64_t extent, int64_t pad, int64_t k_eff, int64_t out, int ceiling)
{
    int64_t s;
    for (s = 1; s <= extent + 2 * pad - k_eff + 1; s++)
        if (out_size(extent, pad, k_eff, s, ceiling) == out)
            return s;
    FAIL("no stride reproduces %lld", (long long)out);
}

/* Verify and run a layer's one-node graph, compare its output with the reference,
 * then release the node, the graph and the layer's tensors (NULL entries skipped). */
static void check_layer(const char *what, vx_graph graph, vx_node node, vx_tensor out,
                        const int64_t *expected, int64_t *actual, size_t n, vx_tensor *tensors, size_t count)
{
    size_t i;
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
    ct_read(out, actual);
    ASSERT_EQ_ARRAY(what, expected, actual, n);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    for (i = 0; i < count; i++)
        if (tensors[i])
            VX_CALL(vxReleaseTensor(&tensors[i]));
}

/* ---- convolution ---------------------------------------------------------------------- */
TEST_WITH_ARG(nn, convolution, nn_arg, gen_conv)
{
    const ct_format *f = arg->fmt;
    int v = arg->variant;
    int bias_kind = v % 3;            /* 0 none, 1 per OFM, 2 per OFM and location */
    int ceiling = (v / 3) % 2;
    int batched = v % 4 == 3;
    int small = v % 2 == 0;
    vx_size kx = ct_rand_range(1, 3), ky = ct_rand_range(1, 3);
    vx_size dx = (v / 2) % 2 ? ct_rand_range(1, 2) : 0, dy = (v / 2) % 2 ? ct_rand_range(0, 1) : 0;
    vx_size px = ct_rand_range(0, 2), py = ct_rand_range(0, 1);
    vx_size c_in = ct_rand_range(1, 3), k_out = ct_rand_range(1, 3), nb = batched ? ct_rand_range(2, 3) : 1;
    vx_size kex = kx + (kx - 1) * dx, key = ky + (ky - 1) * dy;
    vx_size w_in = kex + ct_rand_range(0, 5), h_in = key + ct_rand_range(0, 4);
    int64_t sx, sy, ow, oh;
    vx_size in_dims[4], w_dims[4], b_dims[3], out_dims[4];
    int fb = f->fpp, fo = f->fpp;
    int64_t *x, *w, *b = NULL, *expected, *actual;
    size_t n_in, n_w, n_out, ox, oy, ko, bi, c, mx, my;
    vx_tensor tin, tw, tb = NULL, tout;
    vx_graph graph;
    vx_node node;
    vx_nn_convolution_params_t params;
    /* the sample places tap m at x*stride + m*(d + 1) + d: one dilation further than the text */
    int64_t extra_x = arg->sample ? (int64_t)dx : 0, extra_y = arg->sample ? (int64_t)dy : 0;

    if (w_in + 2 * px < kex)
        px = 0;
    ow = out_size(w_in, px, kex, ct_rand_range(1, 3), ceiling);
    oh = out_size(h_in, py, key, ct_rand_range(1, 2), ceiling);
    sx = infer_stride(w_in, px, kex, ow, ceiling);
    sy = infer_stride(h_in, py, key, oh, ceiling);
    if (f->type == VX_TYPE_INT16 && v % 5 == 4)
        fb = 4; /* a bias at its own position */
    in_dims[0] = w_in; in_dims[1] = h_in; in_dims[2] = c_in; in_dims[3] = nb;
    w_dims[0] = kx; w_dims[1] = ky; w_dims[2] = c_in; w_dims[3] = k_out;
    out_dims[0] = ow; out_dims[1] = oh; out_dims[2] = k_out; out_dims[3] = nb;
    n_in = ct_count(4, in_dims); n_w = ct_count(4, w_dims); n_out = ct_count(4, out_dims);
    x = ct_alloc(n_in); w = ct_alloc(n_w); expected = ct_alloc(n_out); actual = ct_alloc(n_out);
    fill_data(x, n_in, f, small);
    fill_weights(w, n_w, f, small);
    b = make_bias(bias_kind, f, small, k_out, ow, oh, b_dims);

    for (bi = 0; bi < nb; bi++)
        for (ko = 0; ko < k_out; ko++)
            for (oy = 0; oy < (size_t)oh; oy++)
                for (ox = 0; ox < (size_t)ow; ox++) {
                    int64_t acc = 0;
                    for (c = 0; c < c_in; c++)
                        for (my = 0; my < ky; my++)
                            for (mx = 0; mx < kx; mx++) {
                                int64_t ix = (int64_t)(ox * sx) - (int64_t)px + (int64_t)(mx * (dx + 1)) + extra_x;
                                int64_t iy = (int64_t)(oy * sy) - (int64_t)py + (int64_t)(my * (dy + 1)) + extra_y;
                                if (ix < 0 || iy < 0 || ix >= (int64_t)w_in || iy >= (int64_t)h_in)
                                    continue;
                                acc += x[ix + w_in * (iy + h_in * (c + c_in * bi))] *
                                       w[mx + kx * (my + ky * (c + c_in * ko))];
                            }
                    expected[ox + ow * (oy + oh * (ko + k_out * bi))] =
                        finish(acc, 2 * f->fpp, bias_kind != 0, bias_at(bias_kind, b, ox, oy, ko, ow, oh), fb, fo, arg);
                }

    tin = ct_tensor(context, batched ? 4 : 3, in_dims, f);
    tw = ct_tensor(context, 4, w_dims, f);
    tout = ct_tensor(context, batched ? 4 : 3, out_dims, f);
    ct_write(tin, x);
    ct_write(tw, w);
    if (bias_kind) {
        ct_format bf = *f;
        bf.fpp = fb;
        tb = ct_tensor(context, bias_kind == 1 ? 1 : 3, b_dims, &bf);
        ct_write(tb, b);
    }
    memset(&params, 0, sizeof params);
    params.padding_x = px; params.padding_y = py;
    params.overflow_policy = arg->overflow; params.rounding_policy = arg->rounding;
    params.down_scale_size_rounding = ceiling ? VX_NN_DS_SIZE_ROUNDING_CEILING : VX_NN_DS_SIZE_ROUNDING_FLOOR;
    params.dilation_x = dx; params.dilation_y = dy;
    ct_set_compat(context, arg->sample);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxConvolutionLayer(graph, tin, tw, tb, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tw, tb, tout};
        check_layer("convolution output", graph, node, tout, expected, actual, n_out, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- deconvolution -------------------------------------------------------------------- */
TEST_WITH_ARG(nn, deconvolution, nn_arg, gen_deconv)
{
    const ct_format *f = arg->fmt;
    int v = arg->variant;
    int bias_kind = (v / 2) % 3; /* 0 none, 1 per OFM, 2 per OFM and output location (a superset) */
    int batched = v % 3 == 2, small = v % 4 < 2;
    vx_size kx = ct_rand_range(1, 3), ky = ct_rand_range(1, 3);
    vx_size ax = v % 5 == 1 ? 1 : 0, ay = v % 5 == 3 ? 1 : 0;
    vx_size ux = ax + ct_rand_range(1, 2), uy = ay + ct_rand_range(1, 2);
    vx_size w_in = ct_rand_range(1, 4), h_in = ct_rand_range(1, 4);
    vx_size c_in = ct_rand_range(1, 3), k_out = ct_rand_range(1, 3), nb = batched ? 2 : 1;
    int64_t pxs = ct_rand_range(0, (int)kx), pys = ct_rand_range(0, (int)ky);
    int64_t ow, oh, ppx, ppy;
    vx_size in_dims[4], w_dims[4], b_dims[3], out_dims[4];
    int64_t *x, *w, *b = NULL, *expected, *actual;
    size_t n_in, n_w, n_out, ox, oy, ko, bi, c, mx, my;
    vx_tensor tin, tw, tb = NULL, tout;
    vx_graph graph;
    vx_node node;
    vx_nn_deconvolution_params_t params;

    if (w_in == 1)
        ux = ax + 1; /* one input: the upscale cannot be told from the size, the smallest is taken */
    if (h_in == 1)
        uy = ay + 1;
    ow = (int64_t)((w_in - 1) * ux + kx + ax) - 2 * pxs;
    oh = (int64_t)((h_in - 1) * uy + ky + ay) - 2 * pys;
    while (ow < 1) { pxs--; ow += 2; }
    while (oh < 1) { pys--; oh += 2; }
    ppx = (int64_t)kx - pxs - 1;
    ppy = (int64_t)ky - pys - 1;
    in_dims[0] = w_in; in_dims[1] = h_in; in_dims[2] = c_in; in_dims[3] = nb;
    w_dims[0] = kx; w_dims[1] = ky; w_dims[2] = c_in; w_dims[3] = k_out;
    out_dims[0] = ow; out_dims[1] = oh; out_dims[2] = k_out; out_dims[3] = nb;
    n_in = ct_count(4, in_dims); n_w = ct_count(4, w_dims); n_out = ct_count(4, out_dims);
    x = ct_alloc(n_in); w = ct_alloc(n_w); expected = ct_alloc(n_out); actual = ct_alloc(n_out);
    fill_data(x, n_in, f, small);
    fill_weights(w, n_w, f, small);
    b = make_bias(bias_kind, f, small, k_out, ow, oh, b_dims);
    /* the seed's way: upsample with zeros, pad by K - pad - 1, correlate with stride 1. A sample at
     * zero-inserted position s counts while s / upscale < W (the text), or while s < W (the sample's
     * bound, before upsampling) */
    for (bi = 0; bi < nb; bi++)
        for (ko = 0; ko < k_out; ko++)
            for (oy = 0; oy < (size_t)oh; oy++)
                for (ox = 0; ox < (size_t)ow; ox++) {
                    int64_t acc = 0;
                    for (c = 0; c < c_in; c++)
                        for (my = 0; my < ky; my++)
                            for (mx = 0; mx < kx; mx++) {
                                int64_t sxp = (int64_t)(ox + mx) - ppx, syp = (int64_t)(oy + my) - ppy;
                                if (sxp < 0 || syp < 0 || sxp % (int64_t)ux || syp % (int64_t)uy)
                                    continue;
                                if (arg->sample ? sxp >= (int64_t)w_in || syp >= (int64_t)h_in
                                                : sxp / (int64_t)ux >= (int64_t)w_in || syp / (int64_t)uy >= (int64_t)h_in)
                                    continue;
                                acc += x[sxp / ux + w_in * (syp / uy + h_in * (c + c_in * bi))] *
                                       w[mx + kx * (my + ky * (c + c_in * ko))];
                            }
                    expected[ox + ow * (oy + oh * (ko + k_out * bi))] = finish(
                        acc, 2 * f->fpp, bias_kind != 0, bias_at(bias_kind, b, ox, oy, ko, ow, oh), f->fpp, f->fpp, arg);
                }
    tin = ct_tensor(context, batched ? 4 : 3, in_dims, f);
    tw = ct_tensor(context, 4, w_dims, f);
    tout = ct_tensor(context, batched ? 4 : 3, out_dims, f);
    ct_write(tin, x);
    ct_write(tw, w);
    if (bias_kind) {
        tb = ct_tensor(context, bias_kind == 1 ? 1 : 3, b_dims, f);
        ct_write(tb, b);
    }
    memset(&params, 0, sizeof params);
    params.padding_x = (vx_size)pxs; params.padding_y = (vx_size)pys;
    params.overflow_policy = arg->overflow; params.rounding_policy = arg->rounding;
    params.a_x = ax; params.a_y = ay;
    ct_set_compat(context, arg->sample);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxDeconvolutionLayer(graph, tin, tw, tb, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tw, tb, tout};
        check_layer("deconvolution output", graph, node, tout, expected, actual, n_out, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- fully connected ------------------------------------------------------------------ */
TEST_WITH_ARG(nn, fully_connected, nn_arg, gen_fc)
{
    const ct_format *f = arg->fmt;
    int v = arg->variant;
    int layout = v % 4; /* 0 [IFM], 1 [IFM, batch], 2 [W, H, C], 3 [W, H, C, batch] */
    int has_bias = v % 3 != 0, small = v < 6;
    int nd_weights = layout >= 2 && v >= 6; /* weights [W, H, C, OFM] (a superset of [IFM, OFM]) */
    vx_size in_dims[4], w_dims[4], out_dims[2], nd_in, ifm, ofm = ct_rand_range(1, 6), nb = 1;
    int64_t *x, *w, *b = NULL, *expected, *actual;
    size_t i, j, bi;
    vx_tensor tin, tw, tb = NULL, tout;
    vx_graph graph;
    vx_node node;

    if (layout < 2) {
        in_dims[0] = ifm = ct_rand_range(1, 12);
        nd_in = 1;
        if (layout == 1) {
            in_dims[1] = nb = ct_rand_range(2, 3);
            nd_in = 2;
        }
    } else {
        in_dims[0] = ct_rand_range(2, 3); in_dims[1] = ct_rand_range(2, 3); in_dims[2] = ct_rand_range(1, 3);
        ifm = in_dims[0] * in_dims[1] * in_dims[2];
        nd_in = 3;
        if (layout == 3) {
            in_dims[3] = nb = ct_rand_range(2, 3);
            nd_in = 4;
        }
    }
    if (nd_weights) { /* the same elements in the same order: the input's [W, H, C] flattening */
        w_dims[0] = in_dims[0]; w_dims[1] = in_dims[1]; w_dims[2] = in_dims[2]; w_dims[3] = ofm;
    } else {
        w_dims[0] = ifm; w_dims[1] = ofm;
    }
    out_dims[0] = ofm; out_dims[1] = nb;
    x = ct_alloc(ifm * nb); w = ct_alloc(ifm * ofm);
    expected = ct_alloc(ofm * nb); actual = ct_alloc(ofm * nb);
    fill_data(x, ifm * nb, f, small);
    fill_weights(w, ifm * ofm, f, small);
    if (has_bias) {
        b = ct_alloc(ofm);
        fill_bias(b, ofm, f, small);
    }
    for (bi = 0; bi < nb; bi++)
        for (i = 0; i < ofm; i++) {
            int64_t acc = 0;
            for (j = 0; j < ifm; j++)
                acc += x[j + ifm * bi] * w[j + ifm * i];
            expected[i + ofm * bi] = finish(acc, 2 * f->fpp, has_bias, has_bias ? b[i] : 0, f->fpp, f->fpp, arg);
        }
    tin = ct_tensor(context, nd_in, in_dims, f);
    tw = ct_tensor(context, nd_weights ? 4 : 2, w_dims, f);
    tout = ct_tensor(context, nb > 1 ? 2 : 1, out_dims, f);
    ct_write(tin, x);
    ct_write(tw, w);
    if (has_bias) {
        tb = ct_tensor(context, 1, &ofm, f);
        ct_write(tb, b);
    }
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxFullyConnectedLayer(graph, tin, tw, tb, arg->overflow, arg->rounding, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tw, tb, tout};
        check_layer("fully connected output", graph, node, tout, expected, actual, ofm * nb, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- pooling ---------------------------------------------------------------------------- */
typedef struct {
    const ct_format *fmt;
    vx_enum type, ds;
    int variant;
} pool_arg;

static void gen_pool(void)
{
    int f, t, d, v;
    char name[64];
    for (f = 0; f < 3; f++)
        for (t = 0; t < 2; t++)
            for (d = 0; d < 2; d++)
                for (v = 0; v < 10; v++) {
                    pool_arg a;
                    a.fmt = CT_NN_FORMATS[f];
                    a.type = t ? VX_NN_POOLING_AVG : VX_NN_POOLING_MAX;
                    a.ds = d ? VX_NN_DS_SIZE_ROUNDING_CEILING : VX_NN_DS_SIZE_ROUNDING_FLOOR;
                    a.variant = v;
                    snprintf(name, sizeof name, "%s/%s/%s/%d", a.fmt->name, t ? "AVG" : "MAX", d ? "CEIL" : "FLOOR", v);
                    ct_emit(name, &a);
                }
}

TEST_WITH_ARG(nn, pooling, pool_arg, gen_pool)
{
    const ct_format *f = arg->fmt;
    int ceiling = arg->ds == VX_NN_DS_SIZE_ROUNDING_CEILING, is_max = arg->type == VX_NN_POOLING_MAX;
    int batched = arg->variant % 3 == 2;
    vx_size kx = ct_rand_range(1, 3), ky = ct_rand_range(1, 3);
    vx_size px = ct_rand_range(0, (int)kx - 1), py = ct_rand_range(0, (int)ky - 1);
    vx_size w_in = kx + ct_rand_range(0, 5), h_in = ky + ct_rand_range(0, 5);
    vx_size planes = ct_rand_range(1, 3), nb = batched ? 2 : 1;
    int64_t ow = out_size(w_in, px, kx, ct_rand_range(1, 3), ceiling);
    int64_t oh = out_size(h_in, py, ky, ct_rand_range(1, 3), ceiling);
    int64_t sx = infer_stride(w_in, px, kx, ow, ceiling), sy = infer_stride(h_in, py, ky, oh, ceiling);
    vx_size in_dims[4], out_dims[4];
    int64_t *x, *expected, *actual;
    size_t n_in, n_out, p, ox, oy;
    vx_tensor tin, tout;
    vx_graph graph;
    vx_node node;

    in_dims[0] = w_in; in_dims[1] = h_in; in_dims[2] = planes; in_dims[3] = nb;
    out_dims[0] = ow; out_dims[1] = oh; out_dims[2] = planes; out_dims[3] = nb;
    n_in = ct_count(4, in_dims); n_out = ct_count(4, out_dims);
    x = ct_alloc(n_in); expected = ct_alloc(n_out); actual = ct_alloc(n_out);
    ct_fill_format(x, n_in, f->type);
    for (p = 0; p < planes * nb; p++)
        for (oy = 0; oy < (size_t)oh; oy++)
            for (ox = 0; ox < (size_t)ow; ox++) {
                int64_t x0 = (int64_t)ox * sx - (int64_t)px, y0 = (int64_t)oy * sy - (int64_t)py;
                int64_t best = 0, sum = 0, xi, yi;
                int any = 0;
                for (yi = y0; yi < y0 + (int64_t)ky; yi++)
                    for (xi = x0; xi < x0 + (int64_t)kx; xi++) {
                        int64_t val;
                        if (xi < 0 || yi < 0 || xi >= (int64_t)w_in || yi >= (int64_t)h_in)
                            continue;
                        val = x[xi + w_in * (yi + h_in * p)];
                        if (!any || val > best)
                            best = val;
                        any = 1;
                        sum += val;
                    }
                expected[ox + ow * (oy + oh * p)] = is_max ? best : ct_round_div(sum, (int64_t)(kx * ky), 1);
            }
    tin = ct_tensor(context, batched ? 4 : 3, in_dims, f);
    tout = ct_tensor(context, batched ? 4 : 3, out_dims, f);
    ct_write(tin, x);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxPoolingLayer(graph, tin, arg->type, kx, ky, px, py, arg->ds, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tout};
        check_layer("pooling output", graph, node, tout, expected, actual, n_out, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- nonlinear layers: the output has its own fixed point position ------------------------ */
typedef struct {
    const ct_format *fmt;
    int fpp_out;
    vx_enum function; /* activation function or LRN type */
    int size;         /* LRN size */
    float a, b, c;
    int variant;
} nl_arg;

static int out_fpp_choice(const ct_format *f, int which)
{
    if (f->type == VX_TYPE_UINT8)
        return which ? 8 : 0;
    if (f->type == VX_TYPE_INT8)
        return which ? 7 : 0;
    return which ? 12 : 8;
}

static void gen_softmax(void)
{
    int f, o, v;
    char name[64];
    for (f = 0; f < 3; f++)
        for (o = 0; o < 2; o++)
            for (v = 0; v < 8; v++) {
                nl_arg a;
                memset(&a, 0, sizeof a);
                a.fmt = CT_NN_FORMATS[f];
                a.fpp_out = out_fpp_choice(a.fmt, o);
                a.variant = v;
                snprintf(name, sizeof name, "%s/out_fpp%d/%d", a.fmt->name, a.fpp_out, v);
                ct_emit(name, &a);
            }
}

static double real_of(int64_t raw, int fpp) { return ldexp((double)raw, -fpp); }

static vx_size random_dims(vx_size *dims, int rank, int max_extent)
{
    int i;
    for (i = 0; i < rank; i++)
        dims[i] = ct_rand_range(1, max_extent);
    return ct_count(rank, dims);
}

TEST_WITH_ARG(nn, softmax, nl_arg, gen_softmax)
{
    const ct_format *f = arg->fmt;
    ct_format fo = *f;
    int rank = 1 + arg->variant % 4, axis = rank <= 2 ? 0 : 2;
    vx_size dims[4];
    size_t n = random_dims(dims, rank, 5), i, k, inner = 1, len, outer;
    int64_t *x, *expected, *actual;
    double *e;
    vx_tensor tin, tout;
    vx_graph graph;
    vx_node node;

    fo.fpp = arg->fpp_out;
    if (dims[axis] == 1)
        dims[axis] = 3, n = ct_count(rank, dims);
    for (k = 0; k < (size_t)axis; k++)
        inner *= dims[k];
    len = dims[axis];
    outer = n / (inner * len);
    x = ct_alloc(n); expected = ct_alloc(n); actual = ct_alloc(n);
    e = (double *)ct_alloc(len);
    if (arg->variant >= 4)
        ct_fill_format(x, n, f->type);
    else
        ct_fill(x, n, f->type == VX_TYPE_UINT8 ? 0 : -(4 << f->fpp), 4 << f->fpp);
    for (k = 0; k < outer; k++)
        for (i = 0; i < inner; i++) {
            size_t base = i + k * inner * len, j;
            double m = real_of(x[base], f->fpp), s = 0.0;
            for (j = 1; j < len; j++)
                if (real_of(x[base + j * inner], f->fpp) > m)
                    m = real_of(x[base + j * inner], f->fpp);
            for (j = 0; j < len; j++) {
                e[j] = exp(real_of(x[base + j * inner], f->fpp) - m);
                s += e[j];
            }
            for (j = 0; j < len; j++)
                expected[base + j * inner] = ct_quantize(e[j] / s, fo.fpp, fo.type);
        }
    tin = ct_tensor(context, rank, dims, f);
    tout = ct_tensor(context, rank, dims, &fo);
    ct_write(tin, x);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxSoftmaxLayer(graph, tin, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tout};
        check_layer("softmax output", graph, node, tout, expected, actual, n, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- activation --------------------------------------------------------------------------- */
static const vx_enum activations[9] = {
    VX_NN_ACTIVATION_LOGISTIC, VX_NN_ACTIVATION_HYPERBOLIC_TAN, VX_NN_ACTIVATION_RELU,
    VX_NN_ACTIVATION_BRELU, VX_NN_ACTIVATION_SOFTRELU, VX_NN_ACTIVATION_ABS,
    VX_NN_ACTIVATION_SQUARE, VX_NN_ACTIVATION_SQRT, VX_NN_ACTIVATION_LINEAR};
static const char *const activation_names[9] = {"logistic", "tanh", "relu", "brelu", "softrelu",
                                                "abs", "square", "sqrt", "linear"};

static void gen_activation(void)
{
    static const float as[3] = {1.0f, 0.5f, 6.0f}, bs[3] = {1.0f, 2.0f, 0.25f};
    int f, o, fn, p;
    char name[80];
    for (fn = 0; fn < 9; fn++)
        for (f = 0; f < 3; f++)
            for (o = 0; o < 2; o++)
                for (p = 0; p < 3; p++) {
                    nl_arg a;
                    memset(&a, 0, sizeof a);
                    a.fmt = CT_NN_FORMATS[f];
                    a.fpp_out = out_fpp_choice(a.fmt, o);
                    a.function = activations[fn];
                    a.a = as[p];
                    a.b = bs[p];
                    a.variant = p;
                    snprintf(name, sizeof name, "%s/%s/out_fpp%d/a%g_b%g", activation_names[fn], a.fmt->name,
                             a.fpp_out, a.a, a.b);
                    ct_emit(name, &a);
                }
}

static double activation_value(vx_enum fn, double v, double a, double b)
{
    double r;
    switch (fn) {
    case VX_NN_ACTIVATION_LOGISTIC: return 1.0 / (1.0 + exp(-v));
    case VX_NN_ACTIVATION_HYPERBOLIC_TAN: return a * tanh(b * v);
    case VX_NN_ACTIVATION_RELU: return v <= 0.0 ? 0.0 : v;
    case VX_NN_ACTIVATION_BRELU: r = v <= 0.0 ? 0.0 : v; return r > a ? a : r;
    case VX_NN_ACTIVATION_SOFTRELU: return (v > 0.0 ? v : 0.0) + log1p(exp(-fabs(v)));
    case VX_NN_ACTIVATION_ABS: return fabs(v);
    case VX_NN_ACTIVATION_SQUARE: return v * v;
    case VX_NN_ACTIVATION_SQRT: return sqrt(v);
    default: return a * v + b;
    }
}

TEST_WITH_ARG(nn, activation, nl_arg, gen_activation)
{
    const ct_format *f = arg->fmt;
    ct_format fo = *f;
    vx_size dims[3];
    size_t n, i;
    int64_t *x, *expected, *actual;
    vx_tensor tin, tout;
    vx_graph graph;
    vx_node node;

    fo.fpp = arg->fpp_out;
    if (f->type == VX_TYPE_INT16) {
        dims[0] = 32; dims[1] = 16; dims[2] = ct_rand_range(1, 3); /* random raw values and the extremes */
    } else {
        dims[0] = 16; dims[1] = 16; dims[2] = 1; /* every raw value */
    }
    n = ct_count(3, dims);
    x = ct_alloc(n); expected = ct_alloc(n); actual = ct_alloc(n);
    if (f->type == VX_TYPE_INT16) {
        ct_fill_format(x, n, f->type);
        for (i = 0; i < 64 && i < n; i++)
            x[i] = i % 2 ? -32768 + (int64_t)(i * (i < 32 ? 1 : 97)) : 32767 - (int64_t)(i * (i < 32 ? 1 : 97));
    } else {
        for (i = 0; i < n; i++)
            x[i] = ct_lo(f->type) + (int64_t)i;
    }
    for (i = 0; i < n; i++)
        expected[i] = ct_quantize(activation_value(arg->function, real_of(x[i], f->fpp), (double)arg->a,
                                                   (double)arg->b), fo.fpp, fo.type);
    tin = ct_tensor(context, 3, dims, f);
    tout = ct_tensor(context, 3, dims, &fo);
    ct_write(tin, x);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxActivationLayer(graph, tin, arg->function, arg->a, arg->b, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tout};
        check_layer("activation output", graph, node, tout, expected, actual, n, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- local response normalization --------------------------------------------------------- */
static void gen_lrn(void)
{
    static const float alphas[2] = {1.0f, 0.0001f}, betas[2] = {0.75f, 0.5f}, biases[2] = {1.0f, 2.0f};
    int f, t, s, o, p;
    char name[96];
    for (t = 0; t < 2; t++)
        for (s = 0; s < 3; s++)
            for (f = 0; f < 3; f++)
                for (o = 0; o < 2; o++)
                    for (p = 0; p < 2; p++) {
                        nl_arg a;
                        memset(&a, 0, sizeof a);
                        a.fmt = CT_NN_FORMATS[f];
                        a.fpp_out = out_fpp_choice(a.fmt, o);
                        a.function = t ? VX_NN_NORMALIZATION_ACROSS_MAPS : VX_NN_NORMALIZATION_SAME_MAP;
                        a.size = 3 + 2 * s;
                        a.a = alphas[p]; a.b = betas[p]; a.c = biases[p];
                        a.variant = p;
                        snprintf(name, sizeof name, "%s/size%d/%s/out_fpp%d/%d", t ? "ACROSS" : "SAME", a.size,
                                 a.fmt->name, a.fpp_out, p);
                        ct_emit(name, &a);
                    }
}

TEST_WITH_ARG(nn, lrn, nl_arg, gen_lrn)
{
    const ct_format *f = arg->fmt;
    ct_format fo = *f;
    int across = arg->function == VX_NN_NORMALIZATION_ACROSS_MAPS, h = arg->size / 2;
    int rank = ct_rand_range(3, 4);
    vx_size dims[4];
    size_t n, idx;
    int64_t W, H, C, *x, *expected, *actual;
    int nwin = across ? arg->size : arg->size * arg->size;
    vx_tensor tin, tout;
    vx_graph graph;
    vx_node node;

    fo.fpp = arg->fpp_out;
    dims[0] = ct_rand_range(1, 5); dims[1] = ct_rand_range(1, 5); dims[2] = ct_rand_range(1, 8);
    dims[3] = rank == 4 ? 2 : 1;
    W = dims[0]; H = dims[1]; C = dims[2];
    n = ct_count(4, dims);
    x = ct_alloc(n); expected = ct_alloc(n); actual = ct_alloc(n);
    ct_fill_format(x, n, f->type);
    for (idx = 0; idx < n; idx++) {
        int64_t i = idx % W, y = (idx / W) % H, c = (idx / (W * H)) % C, b = idx / (W * H * C), k, j, ii;
        double s = 0.0, d;
        if (across) {
            for (k = c - h; k <= c + h; k++)
                if (k >= 0 && k < C) {
                    double w = real_of(x[i + W * (y + H * (k + C * b))], f->fpp);
                    s += w * w;
                }
        } else {
            for (j = y - h; j <= y + h; j++)
                for (ii = i - h; ii <= i + h; ii++)
                    if (j >= 0 && j < H && ii >= 0 && ii < W) {
                        double w = real_of(x[ii + W * (j + H * (c + C * b))], f->fpp);
                        s += w * w;
                    }
        }
        d = pow((double)arg->c + ((double)arg->a / nwin) * s, (double)arg->b);
        expected[idx] = ct_quantize(real_of(x[idx], f->fpp) / d, fo.fpp, fo.type);
    }
    tin = ct_tensor(context, rank, dims, f);
    tout = ct_tensor(context, rank, dims, &fo);
    ct_write(tin, x);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxLocalResponseNormalizationLayer(graph, tin, arg->function, arg->size, arg->a, arg->b, arg->c, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, tout};
        check_layer("LRN output", graph, node, tout, expected, actual, n, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}

/* ---- ROI pooling -------------------------------------------------------------------------- */
typedef struct {
    const ct_format *fmt;
    vx_enum roi_type;
    int variant;
    int sample; /* the compatibility mode: a malformed ROI has no pixels, all its bins are 0 */
} roi_arg;

static void gen_roi(void)
{
    static const ct_format r_u8 = {"U8", VX_TYPE_UINT8, 0}, r_s8 = {"S8", VX_TYPE_INT8, 0},
                           r_s16 = {"S16", VX_TYPE_INT16, 0}, r_s32 = {"S32", VX_TYPE_INT32, 0};
    static const ct_format *const rois[4] = {&r_u8, &r_s8, &r_s16, &r_s32};
    int f, r, v;
    char name[64];
    for (f = 0; f < 3; f++)
        for (r = 0; r < 4; r++)
            for (v = 0; v < 5; v++) {
                roi_arg a;
                a.fmt = CT_NN_FORMATS[f];
                a.roi_type = rois[r]->type;
                a.variant = v;
                a.sample = 0;
                snprintf(name, sizeof name, "%s/rois_%s/%d", a.fmt->name, rois[r]->name, v);
                ct_emit(name, &a);
                if (v >= 3) { /* the variants with malformed ROIs, in the sample's mode too */
                    a.sample = 1;
                    snprintf(name, sizeof name, "%s/rois_%s/%d/SAMPLE", a.fmt->name, rois[r]->name, v);
                    ct_emit(name, &a);
                }
            }
}

/* bin i of the span start..stop; a reversed span (stop < start) is the one pixel at start */
static void roi_bin(int64_t start, int64_t stop, int64_t bins, int64_t i, int64_t extent, int64_t *lo, int64_t *hi)
{
    int64_t size = (stop > start ? stop - start : 0) + 1;
    *lo = start + (i * size) / bins;
    *hi = start + ((i + 1) * size + bins - 1) / bins;
    if (*lo < 0)
        *lo = 0;
    if (*hi > extent)
        *hi = extent;
}

TEST_WITH_ARG(nn, roi_pooling, roi_arg, gen_roi)
{
    const ct_format *f = arg->fmt;
    ct_format rf = {"roi", arg->roi_type, 0};
    int batched = arg->variant % 2;
    vx_size in_dims[4], roi_dims[3], out_dims[5];
    int64_t W = ct_rand_range(2, 8), H = ct_rand_range(2, 8), C = ct_rand_range(1, 3), B = batched ? 2 : 1;
    int64_t R = ct_rand_range(1, 3), PW = ct_rand_range(1, 3), PH = ct_rand_range(1, 3);
    int64_t *x, *rois, *expected, *actual, b, r, c, ox, oy;
    size_t n_in, n_out;
    vx_tensor tin, troi, tout;
    vx_graph graph;
    vx_node node;
    vx_nn_roi_pool_params_t params;

    in_dims[0] = W; in_dims[1] = H; in_dims[2] = C; in_dims[3] = B;
    roi_dims[0] = 4; roi_dims[1] = R; roi_dims[2] = B;
    out_dims[0] = PW; out_dims[1] = PH; out_dims[2] = C; out_dims[3] = R; out_dims[4] = B;
    n_in = ct_count(4, in_dims); n_out = ct_count(5, out_dims);
    x = ct_alloc(n_in); rois = ct_alloc(4 * R * B); expected = ct_alloc(n_out); actual = ct_alloc(n_out);
    ct_fill_format(x, n_in, f->type);
    for (b = 0; b < B; b++)
        for (r = 0; r < R; r++) {
            int64_t *q = rois + 4 * (r + R * b);
            q[0] = ct_rand_range(0, (int)W - 1); q[2] = ct_rand_range((int)q[0], (int)W - 1);
            q[1] = ct_rand_range(0, (int)H - 1); q[3] = ct_rand_range((int)q[1], (int)H - 1);
            if (arg->variant >= 3 && ct_rand() % 2) { /* malformed: x1 < x0 and/or y1 < y0 */
                int64_t t = q[0];
                if (q[2] > q[0]) { q[0] = q[2]; q[2] = t; }
                if (ct_rand() % 2 && q[3] > q[1]) { t = q[1]; q[1] = q[3]; q[3] = t; }
            }
        }
    for (b = 0; b < B; b++)
        for (r = 0; r < R; r++) {
            const int64_t *q = rois + 4 * (r + R * b);
            int no_pixels = arg->sample && (q[2] < q[0] || q[3] < q[1]);
            for (c = 0; c < C; c++)
                for (oy = 0; oy < PH; oy++)
                    for (ox = 0; ox < PW; ox++) {
                        int64_t xl, xh, yl, yh, xi, yi, best = 0;
                        int any = 0;
                        roi_bin(q[0], q[2], PW, ox, W, &xl, &xh);
                        roi_bin(q[1], q[3], PH, oy, H, &yl, &yh);
                        for (yi = yl; yi < yh; yi++)
                            for (xi = xl; xi < xh; xi++) {
                                int64_t val = x[xi + W * (yi + H * (c + C * b))];
                                if (!any || val > best)
                                    best = val;
                                any = 1;
                            }
                        expected[ox + PW * (oy + PH * (c + C * (r + R * b)))] = no_pixels ? 0 : best;
                    }
        }
    tin = ct_tensor(context, batched ? 4 : 3, in_dims, f);
    troi = ct_tensor(context, batched ? 3 : 2, roi_dims, &rf);
    tout = ct_tensor(context, batched ? 5 : 4, out_dims, f);
    ct_write(tin, x);
    ct_write(troi, rois);
    params.pool_type = VX_NN_POOLING_MAX;
    ct_set_compat(context, arg->sample);
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxROIPoolingLayer(graph, tin, troi, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    {
        vx_tensor layer_tensors[] = {tin, troi, tout};
        check_layer("ROI pooling output", graph, node, tout, expected, actual, n_out, layer_tensors,
                    sizeof layer_tensors / sizeof layer_tensors[0]);
    }
}
