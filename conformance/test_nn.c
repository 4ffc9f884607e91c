/* test_nn.c: the eight NN extension layers against plain C references, in U8, S8 and Q7.8,
 * both overflow and both rounding policies (where the layer has them), padding, dilation,
 * down-scale size rounding, bias kinds and batching, with randomized sizes. */
#include "ct_vx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TESTCASE(nn);

typedef struct {
    const ct_format *fmt;
    vx_enum overflow, rounding;
    int variant;
} nn_arg;

static const char *policy_name(vx_enum overflow, vx_enum rounding)
{
    if (overflow == VX_CONVERT_POLICY_SATURATE)
        return rounding == VX_ROUND_POLICY_TO_ZERO ? "SAT_RTZ" : "SAT_RNE";
    return rounding == VX_ROUND_POLICY_TO_ZERO ? "WRAP_RTZ" : "WRAP_RNE";
}

static void emit_policies(int variants)
{
    static const vx_enum overflows[2] = {VX_CONVERT_POLICY_SATURATE, VX_CONVERT_POLICY_WRAP};
    static const vx_enum roundings[2] = {VX_ROUND_POLICY_TO_ZERO, VX_ROUND_POLICY_TO_NEAREST_EVEN};
    int f, o, r, v;
    char name[64];
    for (f = 0; f < 3; f++)
        for (o = 0; o < 2; o++)
            for (r = 0; r < 2; r++)
                for (v = 0; v < variants; v++) {
                    nn_arg a;
                    a.fmt = CT_NN_FORMATS[f];
                    a.overflow = overflows[o];
                    a.rounding = roundings[r];
                    a.variant = v;
                    snprintf(name, sizeof name, "%s/%s/%d", a.fmt->name, policy_name(a.overflow, a.rounding), v);
                    ct_emit(name, &a);
                }
}

static void gen_conv(void) { emit_policies(14); }
static void gen_deconv(void) { emit_policies(10); }
static void gen_fc(void) { emit_policies(10); }

/* value ranges: `small` keeps sums mostly inside the type, otherwise the whole range */
static void fill_data(int64_t *x, size_t n, const ct_format *f, int small)
{
    if (!small)
        ct_fill_format(x, n, f->type);
    else if (f->type == VX_TYPE_UINT8)
        ct_fill(x, n, 0, 7);
    else if (f->type == VX_TYPE_INT8)
        ct_fill(x, n, -8, 7);
    else
        ct_fill(x, n, -512, 511);
}

static void fill_weights(int64_t *w, size_t n, const ct_format *f, int small)
{
    if (!small)
        ct_fill_format(w, n, f->type);
    else if (f->type == VX_TYPE_UINT8)
        ct_fill(w, n, 0, 2);
    else if (f->type == VX_TYPE_INT8)
        ct_fill(w, n, -2, 2);
    else
        ct_fill(w, n, -256, 256);
}

static void fill_bias(int64_t *b, size_t n, const ct_format *f, int small)
{
    if (!small)
        ct_fill_format(b, n, f->type);
    else if (f->type == VX_TYPE_UINT8)
        ct_fill(b, n, 0, 20);
    else if (f->type == VX_TYPE_INT8)
        ct_fill(b, n, -20, 20);
    else
        ct_fill(b, n, -2048, 2048);
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

static void process(vx_graph graph)
{
    VX_CALL(vxVerifyGraph(graph));
    VX_CALL(vxProcessGraph(graph));
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
    size_t n_in, n_w, n_b = 0, n_out, ox, oy, ko, bi, c, mx, my;
    vx_tensor tin, tw, tb = NULL, tout;
    vx_graph graph;
    vx_node node;
    vx_nn_convolution_params_t params;

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
    if (bias_kind == 1) {
        b_dims[0] = k_out;
        n_b = k_out;
    } else if (bias_kind == 2) {
        b_dims[0] = ow; b_dims[1] = oh; b_dims[2] = k_out;
        n_b = ct_count(3, b_dims);
    }
    if (bias_kind) {
        b = ct_alloc(n_b);
        fill_bias(b, n_b, f, small);
    }

    for (bi = 0; bi < nb; bi++)
        for (ko = 0; ko < k_out; ko++)
            for (oy = 0; oy < (size_t)oh; oy++)
                for (ox = 0; ox < (size_t)ow; ox++) {
                    int64_t acc = 0, bias = 0;
                    for (c = 0; c < c_in; c++)
                        for (my = 0; my < ky; my++)
                            for (mx = 0; mx < kx; mx++) {
                                int64_t ix = (int64_t)(ox * sx) - (int64_t)px + (int64_t)(mx * (dx + 1));
                                int64_t iy = (int64_t)(oy * sy) - (int64_t)py + (int64_t)(my * (dy + 1));
                                if (ix < 0 || iy < 0 || ix >= (int64_t)w_in || iy >= (int64_t)h_in)
                                    continue;
                                acc += x[ix + w_in * (iy + h_in * (c + c_in * bi))] *
                                       w[mx + kx * (my + ky * (c + c_in * ko))];
                            }
                    if (bias_kind == 1)
                        bias = b[ko];
                    else if (bias_kind == 2)
                        bias = b[ox + ow * (oy + oh * ko)];
                    expected[ox + ow * (oy + oh * (ko + k_out * bi))] =
                        finish(acc, 2 * f->fpp, bias_kind != 0, bias, fb, fo, arg);
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
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxConvolutionLayer(graph, tin, tw, tb, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    process(graph);
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("convolution output", expected, actual, n_out);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tw));
    if (tb)
        VX_CALL(vxReleaseTensor(&tb));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- deconvolution -------------------------------------------------------------------- */
TEST_WITH_ARG(nn, deconvolution, nn_arg, gen_deconv)
{
    const ct_format *f = arg->fmt;
    int v = arg->variant;
    int has_bias = v % 2, batched = v % 3 == 2, small = v % 4 < 2;
    vx_size kx = ct_rand_range(1, 3), ky = ct_rand_range(1, 3);
    vx_size ax = v % 5 == 1 ? 1 : 0, ay = v % 5 == 3 ? 1 : 0;
    vx_size ux = ax + ct_rand_range(1, 2), uy = ay + ct_rand_range(1, 2);
    vx_size w_in = ct_rand_range(1, 4), h_in = ct_rand_range(1, 4);
    vx_size c_in = ct_rand_range(1, 3), k_out = ct_rand_range(1, 3), nb = batched ? 2 : 1;
    int64_t pxs = ct_rand_range(0, (int)kx), pys = ct_rand_range(0, (int)ky);
    int64_t ow, oh, ppx, ppy;
    vx_size in_dims[4], w_dims[4], b_dims[1], out_dims[4];
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
    b_dims[0] = k_out;
    n_in = ct_count(4, in_dims); n_w = ct_count(4, w_dims); n_out = ct_count(4, out_dims);
    x = ct_alloc(n_in); w = ct_alloc(n_w); expected = ct_alloc(n_out); actual = ct_alloc(n_out);
    fill_data(x, n_in, f, small);
    fill_weights(w, n_w, f, small);
    if (has_bias) {
        b = ct_alloc(k_out);
        fill_bias(b, k_out, f, small);
    }
    /* the seed's way: upsample with zeros, pad by K - pad - 1, correlate with stride 1 */
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
                                if (sxp / (int64_t)ux >= (int64_t)w_in || syp / (int64_t)uy >= (int64_t)h_in)
                                    continue;
                                acc += x[sxp / ux + w_in * (syp / uy + h_in * (c + c_in * bi))] *
                                       w[mx + kx * (my + ky * (c + c_in * ko))];
                            }
                    expected[ox + ow * (oy + oh * (ko + k_out * bi))] =
                        finish(acc, 2 * f->fpp, has_bias, has_bias ? b[ko] : 0, f->fpp, f->fpp, arg);
                }
    tin = ct_tensor(context, batched ? 4 : 3, in_dims, f);
    tw = ct_tensor(context, 4, w_dims, f);
    tout = ct_tensor(context, batched ? 4 : 3, out_dims, f);
    ct_write(tin, x);
    ct_write(tw, w);
    if (has_bias) {
        tb = ct_tensor(context, 1, b_dims, f);
        ct_write(tb, b);
    }
    memset(&params, 0, sizeof params);
    params.padding_x = (vx_size)pxs; params.padding_y = (vx_size)pys;
    params.overflow_policy = arg->overflow; params.rounding_policy = arg->rounding;
    params.a_x = ax; params.a_y = ay;
    graph = vxCreateGraph(context);
    ASSERT_VX_OBJECT(graph);
    node = vxDeconvolutionLayer(graph, tin, tw, tb, &params, sizeof params, tout);
    ASSERT_VX_OBJECT(node);
    process(graph);
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("deconvolution output", expected, actual, n_out);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tw));
    if (tb)
        VX_CALL(vxReleaseTensor(&tb));
    VX_CALL(vxReleaseTensor(&tout));
}

/* ---- fully connected ------------------------------------------------------------------ */
TEST_WITH_ARG(nn, fully_connected, nn_arg, gen_fc)
{
    const ct_format *f = arg->fmt;
    int v = arg->variant;
    int layout = v % 4; /* 0 [IFM], 1 [IFM, batch], 2 [W, H, C], 3 [W, H, C, batch] */
    int has_bias = v % 3 != 0, small = v < 6;
    vx_size in_dims[4], w_dims[2], out_dims[2], nd_in, ifm, ofm = ct_rand_range(1, 6), nb = 1;
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
    w_dims[0] = ifm; w_dims[1] = ofm;
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
    tw = ct_tensor(context, 2, w_dims, f);
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
    process(graph);
    ct_read(tout, actual);
    ASSERT_EQ_ARRAY("fully connected output", expected, actual, ofm * nb);
    VX_CALL(vxReleaseNode(&node));
    VX_CALL(vxReleaseGraph(&graph));
    VX_CALL(vxReleaseTensor(&tin));
    VX_CALL(vxReleaseTensor(&tw));
    if (tb)
        VX_CALL(vxReleaseTensor(&tb));
    VX_CALL(vxReleaseTensor(&tout));
}
