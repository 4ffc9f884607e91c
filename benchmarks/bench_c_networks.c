/* bench_c_networks.c: a whole ResNet-18 or MobileNet v1 built from C with the standard NN layers, and timed.
 *
 * What a model compiler's C output does: one graph of vxConvolutionLayer, vxActivationLayer, vxPoolingLayer,
 * vxTensorAddNode (the residual sums), vxFullyConnectedLayer and vxSoftmaxLayer nodes, every tensor between
 * two layers virtual, weights copied in with vxCopyTensorPatch before vxVerifyGraph. F32 (VX_TYPE_FLOAT32)
 * or U8 (VX_TYPE_UINT8 with fixed point position 0, the KHR_NN_8 format: plain integers, saturating).
 *
 * The networks (batch norm folded into the convolutions' biases, as a converter does; U8 layers have no
 * biases):
 *   resnet18      conv 7x7/2 64 + ReLU, max pool 3x3/2 pad 1, four stages of two basic blocks (64, 128, 256,
 *                 512 maps; the first block of stages 2-4 strides 2 and projects its shortcut with a 1x1/2
 *                 convolution), each block conv 3x3 + ReLU, conv 3x3, add the shortcut, ReLU; global average
 *                 pool, fully connected 512 -> 1000, softmax.
 *   mobilenet_v1  conv 3x3/2 32 + ReLU, thirteen depthwise-separable blocks (depthwise 3x3 + ReLU, pointwise
 *                 1x1 + ReLU; 64, 128, 128, 256, 256, 512 x6, 1024, 1024 maps, stride 2 at the 2nd, 4th, 6th
 *                 and 12th), global average pool, fully connected 1024 -> 1000, softmax.
 *
 * Depthwise convolution. vxConvolutionLayer has no group parameter: every output map sums over every input
 * map. The standard's only exact expression of a depthwise layer with C maps is C convolutions of one map
 * each: node c reads the view of input map c (vxCreateTensorFromView), its [3, 3, 1, 1] weights (a view of the
 * layer's [3, 3, 1, C] weights) and bias (a view of [C]), and writes the view of output map c. A dense
 * convolution with zero weights off the diagonal gives the same numbers but multiplies C times the work
 * (4.3 GMAC more over the network), so the program builds the per-channel form; MobileNet v1 then has 4,960
 * convolution nodes of one map.
 *
 * SIZE is the input's width and height (224 for the real network) and DIVISOR divides every map count (1 for
 * the real network; the CI's smoke form runs SIZE 64, DIVISOR 16). The classifier always has 1000 outputs.
 * WEIGHTS holds every weight and bias in the order the layers are built, each tensor's bytes in OpenVX order
 * (dim 0 fastest: convolution weights [kx, ky, #IFM, #OFM], fully connected [#IFM, #OFM]); INPUT the input
 * [SIZE, SIZE, 3]. After the first vxProcessGraph the program writes the logits (the fully connected layer's
 * [1000], a non-virtual tensor) followed by the softmax's [1000] to OUTPUT.
 *
 *     bench_c_networks NETWORK FORMAT SIZE DIVISOR WEIGHTS INPUT OUTPUT RUNS
 *
 * RUNS > 0: three warm-up runs, then RUNS timed vxProcessGraph calls; prints "median_ms <ms>".
 * RUNS = 0: serves commands from stdin, one a line, for a driver that takes turns with another runtime:
 *     run N      N back-to-back vxProcessGraph calls; prints "times <ms> <ms> ..."
 *     cpu N      the same, each timed by the calling thread's CPU time (with OPENVX_NN_THREADS=1: the run's)
 *     profile    prints each node's average time ("node <ms> <label>", with VX_DIRECTIVE_ENABLE_PERFORMANCE
 *                on, which times each node and so runs the graph on its per-node path)
 *     quit
 * RUNS = -1 (with main compiled under another name, -Dmain=bench_main, into a library a driver loads): build,
 * process once, write OUTPUT and return, keeping the graph for bench_graph().
 * Every line it prints for a command ends with "ok" or starts with "error". */
#define _POSIX_C_SOURCE 200809L
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CLASSES 1000
#define MAX_NODES 8192

typedef struct {
    vx_tensor tensor;
    vx_size w, h, c;
} Act;

static vx_context context;
static vx_graph graph;
static vx_enum type;
static vx_size elem;
static FILE *weights;
static int failed;
static vx_node nodes[MAX_NODES];
static char labels[MAX_NODES][48];
static int node_count;

static void check(vx_status status, const char *what)
{
    if (status != VX_SUCCESS && !failed) {
        fprintf(stderr, "bench_c_networks: %s failed with status %d\n", what, (int)status);
        failed = 1;
    }
}

static void add_node(vx_node node, const char *label)
{
    check(vxGetStatus((vx_reference)node), label);
    if (node_count < MAX_NODES) {
        nodes[node_count] = node;
        snprintf(labels[node_count], sizeof labels[0], "%s", label);
        ++node_count;
    } else {
        vxReleaseNode(&node);
    }
}

static vx_tensor real_tensor(vx_size n, const vx_size *dims)
{
    vx_tensor t = vxCreateTensor(context, n, dims, type, 0);
    check(vxGetStatus((vx_reference)t), "vxCreateTensor");
    return t;
}

static Act virtual_act(vx_size w, vx_size h, vx_size c)
{
    vx_size dims[3];
    Act a;
    dims[0] = w;
    dims[1] = h;
    dims[2] = c;
    a.tensor = vxCreateVirtualTensor(graph, 3, dims, type, 0);
    check(vxGetStatus((vx_reference)a.tensor), "vxCreateVirtualTensor");
    a.w = w;
    a.h = h;
    a.c = c;
    return a;
}

/* Copies the next count elements of WEIGHTS (or of `from`) into t, whose dims are dims[0..n). */
static void fill(vx_tensor t, vx_size n, const vx_size *dims, FILE *from)
{
    vx_size start[4] = {0, 0, 0, 0}, stride[4], count = 1, i;
    void *data;
    for (i = 0; i < n; ++i) {
        stride[i] = i == 0 ? elem : stride[i - 1] * dims[i - 1];
        count *= dims[i];
    }
    data = malloc(count * elem);
    if (data == NULL || fread(data, elem, count, from) != count) {
        fprintf(stderr, "bench_c_networks: the weights or input file is shorter than the network\n");
        exit(1);
    }
    check(vxCopyTensorPatch(t, n, start, dims, stride, data, VX_WRITE_ONLY, VX_MEMORY_TYPE_HOST),
          "vxCopyTensorPatch");
    free(data);
}

static vx_tensor loaded(vx_size n, const vx_size *dims)
{
    vx_tensor t = real_tensor(n, dims);
    fill(t, n, dims, weights);
    return t;
}

static vx_size out_size(vx_size in, vx_size k, vx_size stride, vx_size pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

static Act relu(Act x)
{
    Act y = virtual_act(x.w, x.h, x.c);
    add_node(vxActivationLayer(graph, x.tensor, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, y.tensor), "relu");
    vxReleaseTensor(&x.tensor);
    return y;
}

static vx_nn_convolution_params_t conv_params(vx_size pad)
{
    vx_nn_convolution_params_t p;
    memset(&p, 0, sizeof p);
    p.padding_x = pad;
    p.padding_y = pad;
    p.overflow_policy = VX_CONVERT_POLICY_SATURATE;
    p.rounding_policy = VX_ROUND_POLICY_TO_NEAREST_EVEN;
    p.down_scale_size_rounding = VX_NN_DS_SIZE_ROUNDING_FLOOR;
    return p;
}

/* A k x k convolution to `maps` maps; x is kept (the caller releases it). F32 layers have a bias. */
static Act conv(Act x, vx_size maps, vx_size k, vx_size stride, vx_size pad, int with_relu)
{
    vx_size wdims[4], bdims[1];
    vx_tensor w, b = NULL;
    vx_nn_convolution_params_t p = conv_params(pad);
    Act y = virtual_act(out_size(x.w, k, stride, pad), out_size(x.h, k, stride, pad), maps);
    char label[48];
    wdims[0] = k;
    wdims[1] = k;
    wdims[2] = x.c;
    wdims[3] = maps;
    bdims[0] = maps;
    w = loaded(4, wdims);
    if (type == VX_TYPE_FLOAT32)
        b = loaded(1, bdims);
    snprintf(label, sizeof label, "conv %lux%lu/%lu %lu->%lu %lux%lu", (unsigned long)k, (unsigned long)k,
             (unsigned long)stride, (unsigned long)x.c, (unsigned long)maps, (unsigned long)y.w,
             (unsigned long)y.h);
    add_node(vxConvolutionLayer(graph, x.tensor, w, b, &p, sizeof p, y.tensor), label);
    vxReleaseTensor(&w);
    if (b != NULL)
        vxReleaseTensor(&b);
    return with_relu ? relu(y) : y;
}

/* A 3x3 depthwise convolution as one single-map convolution per map, on views (see the top comment). */
static Act depthwise(Act x, vx_size stride)
{
    vx_size wdims[4], bdims[1], c;
    vx_tensor w, b = NULL;
    vx_nn_convolution_params_t p = conv_params(1);
    Act y = virtual_act(out_size(x.w, 3, stride, 1), out_size(x.h, 3, stride, 1), x.c);
    char label[48];
    wdims[0] = 3;
    wdims[1] = 3;
    wdims[2] = 1;
    wdims[3] = x.c;
    bdims[0] = x.c;
    w = loaded(4, wdims);
    if (type == VX_TYPE_FLOAT32)
        b = loaded(1, bdims);
    snprintf(label, sizeof label, "depthwise map 3x3/%lu %lux%lu", (unsigned long)stride, (unsigned long)y.w,
             (unsigned long)y.h);
    for (c = 0; c < x.c && !failed; ++c) {
        vx_size in_start[3] = {0, 0, c}, in_end[3] = {x.w, x.h, c + 1};
        vx_size out_start[3] = {0, 0, c}, out_end[3] = {y.w, y.h, c + 1};
        vx_size w_start[4] = {0, 0, 0, c}, w_end[4] = {3, 3, 1, c + 1};
        vx_size b_start[1] = {c}, b_end[1] = {c + 1};
        vx_tensor xin = vxCreateTensorFromView(x.tensor, 3, in_start, in_end);
        vx_tensor yout = vxCreateTensorFromView(y.tensor, 3, out_start, out_end);
        vx_tensor wc = vxCreateTensorFromView(w, 4, w_start, w_end);
        vx_tensor bc = b != NULL ? vxCreateTensorFromView(b, 1, b_start, b_end) : NULL;
        check(vxGetStatus((vx_reference)xin), "vxCreateTensorFromView");
        add_node(vxConvolutionLayer(graph, xin, wc, bc, &p, sizeof p, yout), label);
        vxReleaseTensor(&xin);
        vxReleaseTensor(&yout);
        vxReleaseTensor(&wc);
        if (bc != NULL)
            vxReleaseTensor(&bc);
    }
    vxReleaseTensor(&w);
    if (b != NULL)
        vxReleaseTensor(&b);
    return relu(y);
}

static Act pool(Act x, vx_enum kind, vx_size k, vx_size stride, vx_size pad)
{
    Act y = virtual_act(out_size(x.w, k, stride, pad), out_size(x.h, k, stride, pad), x.c);
    char label[48];
    snprintf(label, sizeof label, "%s pool %lux%lu %lu maps", kind == VX_NN_POOLING_MAX ? "max" : "avg",
             (unsigned long)k, (unsigned long)k, (unsigned long)x.c);
    add_node(vxPoolingLayer(graph, x.tensor, kind, k, k, pad, pad, VX_NN_DS_SIZE_ROUNDING_FLOOR, y.tensor), label);
    vxReleaseTensor(&x.tensor);
    return y;
}

/* ResNet's basic block: relu(conv3x3(relu(conv3x3/stride(x))) + shortcut). */
static Act basic_block(Act x, vx_size maps, vx_size stride)
{
    Act a = conv(x, maps, 3, stride, 1, 1), b, shortcut = x, sum;
    b = conv(a, maps, 3, 1, 1, 0);
    vxReleaseTensor(&a.tensor);
    if (stride != 1 || maps != x.c)
        shortcut = conv(x, maps, 1, stride, 0, 0);
    sum = virtual_act(b.w, b.h, b.c);
    add_node(vxTensorAddNode(graph, b.tensor, shortcut.tensor, VX_CONVERT_POLICY_SATURATE, sum.tensor), "add");
    vxReleaseTensor(&b.tensor);
    if (shortcut.tensor != x.tensor)
        vxReleaseTensor(&shortcut.tensor);
    vxReleaseTensor(&x.tensor);
    return relu(sum);
}

static Act resnet18(Act x, vx_size divisor)
{
    static const vx_size maps[4] = {64, 128, 256, 512};
    int stage, block;
    Act y = conv(x, 64 / divisor, 7, 2, 3, 1);
    y = pool(y, VX_NN_POOLING_MAX, 3, 2, 1);
    for (stage = 0; stage < 4; ++stage)
        for (block = 0; block < 2; ++block)
            y = basic_block(y, maps[stage] / divisor, stage > 0 && block == 0 ? 2 : 1);
    return y;
}

static Act mobilenet_v1(Act x, vx_size divisor)
{
    static const vx_size maps[13] = {64, 128, 128, 256, 256, 512, 512, 512, 512, 512, 512, 1024, 1024};
    static const vx_size strides[13] = {1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
    int i;
    Act y = conv(x, 32 / divisor, 3, 2, 1, 1);
    for (i = 0; i < 13; ++i) {
        Act d = depthwise(y, strides[i]);
        vxReleaseTensor(&y.tensor);
        y = conv(d, maps[i] / divisor, 1, 1, 0, 1);
        vxReleaseTensor(&d.tensor);
    }
    return y;
}

/* Global average pool, fully connected to the logits, softmax; returns the two output tensors. */
static void classifier(Act x, vx_tensor *logits, vx_tensor *probabilities)
{
    vx_size wdims[2], bdims[1] = {CLASSES}, odims[1] = {CLASSES};
    vx_tensor w, b = NULL;
    Act pooled = pool(x, VX_NN_POOLING_AVG, x.w, 1, 0);
    wdims[0] = pooled.c;
    wdims[1] = CLASSES;
    w = loaded(2, wdims);
    if (type == VX_TYPE_FLOAT32)
        b = loaded(1, bdims);
    *logits = real_tensor(1, odims);
    *probabilities = real_tensor(1, odims);
    add_node(vxFullyConnectedLayer(graph, pooled.tensor, w, b, VX_CONVERT_POLICY_SATURATE,
                                   VX_ROUND_POLICY_TO_NEAREST_EVEN, *logits), "fully connected");
    add_node(vxSoftmaxLayer(graph, *logits, *probabilities), "softmax");
    vxReleaseTensor(&pooled.tensor);
    vxReleaseTensor(&w);
    if (b != NULL)
        vxReleaseTensor(&b);
}

static double clock_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* One vxProcessGraph: its wall time, or the calling thread's CPU time. */
static double timed_run(clockid_t clock)
{
    double start = clock_ms(clock);
    check(vxProcessGraph(graph), "vxProcessGraph");
    return clock_ms(clock) - start;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void write_outputs(vx_tensor logits, vx_tensor probabilities, const char *path)
{
    vx_size start[1] = {0}, end[1] = {CLASSES}, stride[1];
    unsigned char *data = malloc(2 * CLASSES * elem);
    FILE *out = fopen(path, "wb");
    stride[0] = elem;
    if (data == NULL || out == NULL) {
        fprintf(stderr, "bench_c_networks: cannot write %s\n", path);
        exit(1);
    }
    check(vxCopyTensorPatch(logits, 1, start, end, stride, data, VX_READ_ONLY, VX_MEMORY_TYPE_HOST),
          "vxCopyTensorPatch (logits)");
    check(vxCopyTensorPatch(probabilities, 1, start, end, stride, data + CLASSES * elem, VX_READ_ONLY,
                            VX_MEMORY_TYPE_HOST), "vxCopyTensorPatch (softmax)");
    fwrite(data, elem, 2 * CLASSES, out);
    fclose(out);
    free(data);
}

static void profile(void)
{
    int i;
    check(vxDirective((vx_reference)context, VX_DIRECTIVE_ENABLE_PERFORMANCE), "vxDirective");
    for (i = 0; i < 5 && !failed; ++i)
        check(vxProcessGraph(graph), "vxProcessGraph");
    for (i = 0; i < node_count && !failed; ++i) {
        vx_perf_t perf;
        check(vxQueryNode(nodes[i], VX_NODE_PERFORMANCE, &perf, sizeof perf), "vxQueryNode");
        printf("node %.4f %s\n", 1e-6 * (double)perf.avg, labels[i]);
    }
    check(vxDirective((vx_reference)context, VX_DIRECTIVE_DISABLE_PERFORMANCE), "vxDirective");
}

/* The graph, for a driver that loads this file as a shared library (main renamed) and runs RUNS = -1. */
vx_graph bench_graph(void)
{
    return graph;
}

static void serve(void)
{
    char line[64];
    while (fgets(line, sizeof line, stdin) != NULL && !failed) {
        long n;
        int cpu = sscanf(line, "cpu %ld", &n) == 1;
        if ((cpu || sscanf(line, "run %ld", &n) == 1) && n > 0) {
            long i;
            printf("times");
            for (i = 0; i < n && !failed; ++i)
                printf(" %.4f", timed_run(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC));
            printf("\n");
        } else if (strncmp(line, "profile", 7) == 0) {
            profile();
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        } else {
            printf("error: unknown command %s", line);
        }
        printf(failed ? "error\n" : "ok\n");
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    vx_size dims[3], size, divisor;
    vx_tensor input, logits, probabilities;
    FILE *input_file;
    long runs, i;
    Act x;
    double build;
    if (argc != 9) {
        fprintf(stderr, "usage: %s resnet18|mobilenet_v1 f32|u8 SIZE DIVISOR WEIGHTS INPUT OUTPUT RUNS\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "f32") == 0) {
        type = VX_TYPE_FLOAT32;
        elem = 4;
    } else if (strcmp(argv[2], "u8") == 0) {
        type = VX_TYPE_UINT8;
        elem = 1;
    } else {
        fprintf(stderr, "bench_c_networks: FORMAT must be f32 or u8, got %s\n", argv[2]);
        return 2;
    }
    size = (vx_size)atol(argv[3]);
    divisor = (vx_size)atol(argv[4]);
    runs = atol(argv[8]);
    if (size < 1 || divisor < 1 || 32 % divisor != 0 || runs < -1) {
        fprintf(stderr, "bench_c_networks: SIZE must be positive, DIVISOR divide 32, RUNS be 0 or more\n");
        return 2;
    }
    weights = fopen(argv[5], "rb");
    input_file = fopen(argv[6], "rb");
    if (weights == NULL || input_file == NULL) {
        fprintf(stderr, "bench_c_networks: cannot read %s or %s\n", argv[5], argv[6]);
        return 1;
    }
    build = now_ms();
    node_count = 0; /* a driver may run main more than once in one process */
    failed = 0;
    context = vxCreateContext();
    check(vxGetStatus((vx_reference)context), "vxCreateContext");
    graph = vxCreateGraph(context);
    check(vxGetStatus((vx_reference)graph), "vxCreateGraph");
    dims[0] = size;
    dims[1] = size;
    dims[2] = 3;
    input = real_tensor(3, dims);
    fill(input, 3, dims, input_file);
    x.tensor = input;
    x.w = size;
    x.h = size;
    x.c = 3;
    if (strcmp(argv[1], "resnet18") == 0) {
        x = resnet18(x, divisor);
    } else if (strcmp(argv[1], "mobilenet_v1") == 0) {
        x = mobilenet_v1(x, divisor);
    } else {
        fprintf(stderr, "bench_c_networks: NETWORK must be resnet18 or mobilenet_v1, got %s\n", argv[1]);
        return 2;
    }
    if (failed)
        return 1;
    classifier(x, &logits, &probabilities);
    if (fgetc(weights) != EOF) {
        fprintf(stderr, "bench_c_networks: the weights file is longer than the network\n");
        return 1;
    }
    check(vxVerifyGraph(graph), "vxVerifyGraph");
    if (failed)
        return 1;
    check(vxProcessGraph(graph), "the first vxProcessGraph");
    build = now_ms() - build;
    write_outputs(logits, probabilities, argv[7]);
    printf("nodes %d build_and_first_run_s %.3f\n", node_count, 1e-3 * build);
    fflush(stdout);
    if (runs == -1) /* built and run once; the graph stays for bench_graph() */
        return failed;
    if (runs == 0) {
        serve();
    } else {
        double *times = malloc((size_t)runs * sizeof *times);
        for (i = 0; i < 3; ++i)
            timed_run(CLOCK_MONOTONIC);
        for (i = 0; i < runs; ++i)
            times[i] = timed_run(CLOCK_MONOTONIC);
        qsort(times, (size_t)runs, sizeof *times, by_value);
        printf("median_ms %.4f\n", times[runs / 2]);
        free(times);
    }
    for (i = 0; i < node_count; ++i)
        vxReleaseNode(&nodes[i]);
    vxReleaseTensor(&input);
    vxReleaseTensor(&logits);
    vxReleaseTensor(&probabilities);
    vxReleaseGraph(&graph);
    vxReleaseContext(&context);
    fclose(weights);
    fclose(input_file);
    return failed;
}
