/* thread_stress.c: many pthreads processing graphs of one context at once.
 * Usage: thread_stress [CALLS]   (CALLS per thread, default 2000)
 * Eight threads each process their own graph CALLS times (even: conv 3x3 ->
 * relu; odd: an add -> subtract -> multiply chain whose intermediates are
 * virtual, so the memory plan places them), and two more threads process one
 * shared chain graph at once.  Every status must be VX_SUCCESS and every
 * output read back bit-identical to the graph's single-threaded run.  A
 * watchdog ends a hang with exit status 2.  Prints "thread stress passed". */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

#define THREADS 8
#define FPP 8
#define MAX_OUT (6 * 6 * 4)

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "FAILED: %s (line %d)\n", what, __LINE__);             \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

typedef struct {
    vx_graph graph;
    vx_tensor out;
    vx_size dims[3], n_dims, count;
    vx_int16 expected[MAX_OUT];
    long calls;
    int index, failed;
} job_t;

static unsigned lcg = 12345u;

static vx_int16 next_value(void)
{
    lcg = lcg * 1103515245u + 12345u;
    return (vx_int16)((int)((lcg >> 16) % 1024u) - 512); /* -2.0 .. 2.0 in Q7.8 */
}

static void strides_of(const vx_size *dims, vx_size n, vx_size *stride)
{
    vx_size i;
    stride[0] = sizeof(vx_int16);
    for (i = 1; i < n; i++)
        stride[i] = stride[i - 1] * dims[i - 1];
}

static vx_status copy(vx_tensor t, vx_size n, const vx_size *dims, vx_int16 *data, vx_enum usage)
{
    vx_size start[4] = {0, 0, 0, 0}, stride[4];
    strides_of(dims, n, stride);
    return vxCopyTensorPatch(t, n, start, dims, stride, data, usage, VX_MEMORY_TYPE_HOST);
}

static vx_tensor filled(vx_context ctx, vx_size n, const vx_size *dims)
{
    vx_int16 data[6 * 6 * 4 * 4];
    vx_size i, count = 1;
    vx_tensor t = vxCreateTensor(ctx, n, dims, VX_TYPE_INT16, FPP);
    CHECK(vxGetStatus((vx_reference)t) == VX_SUCCESS, "vxCreateTensor");
    for (i = 0; i < n; i++)
        count *= dims[i];
    for (i = 0; i < count; i++)
        data[i] = next_value();
    CHECK(copy(t, n, dims, data, VX_WRITE_ONLY) == VX_SUCCESS, "write input");
    return t;
}

static void conv_relu(vx_context ctx, job_t *job)
{
    vx_size in_dims[3] = {6, 6, 2}, w_dims[4] = {3, 3, 2, 4}, out_dims[3] = {6, 6, 4};
    vx_nn_convolution_params_t params = {1, 1, VX_CONVERT_POLICY_SATURATE, VX_ROUND_POLICY_TO_ZERO,
                                         VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    vx_tensor x = filled(ctx, 3, in_dims), w = filled(ctx, 4, w_dims), v;
    vx_node nodes[2];
    job->graph = vxCreateGraph(ctx);
    job->out = vxCreateTensor(ctx, 3, out_dims, VX_TYPE_INT16, FPP);
    v = vxCreateVirtualTensor(job->graph, 3, out_dims, VX_TYPE_INT16, FPP);
    nodes[0] = vxConvolutionLayer(job->graph, x, w, NULL, &params, sizeof params, v);
    nodes[1] = vxActivationLayer(job->graph, v, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, job->out);
    CHECK(vxGetStatus((vx_reference)nodes[0]) == VX_SUCCESS && vxGetStatus((vx_reference)nodes[1]) == VX_SUCCESS,
          "conv/relu nodes");
    memcpy(job->dims, out_dims, sizeof out_dims);
    job->n_dims = 3;
    vxReleaseNode(&nodes[0]);
    vxReleaseNode(&nodes[1]);
    vxReleaseTensor(&x);
    vxReleaseTensor(&w);
    vxReleaseTensor(&v);
}

static void chain(vx_context ctx, job_t *job)
{
    vx_size dims[2] = {5, 7};
    vx_float32 one = 1.0f;
    vx_tensor a = filled(ctx, 2, dims), b = filled(ctx, 2, dims), c = filled(ctx, 2, dims), v[2];
    vx_scalar scale = vxCreateScalar(ctx, VX_TYPE_FLOAT32, &one);
    vx_node nodes[3];
    int i;
    job->graph = vxCreateGraph(ctx);
    job->out = vxCreateTensor(ctx, 2, dims, VX_TYPE_INT16, FPP);
    for (i = 0; i < 2; i++)
        v[i] = vxCreateVirtualTensor(job->graph, 2, dims, VX_TYPE_INT16, FPP);
    nodes[0] = vxTensorAddNode(job->graph, a, b, VX_CONVERT_POLICY_SATURATE, v[0]);
    nodes[1] = vxTensorSubtractNode(job->graph, v[0], c, VX_CONVERT_POLICY_WRAP, v[1]);
    nodes[2] = vxTensorMultiplyNode(job->graph, v[1], a, scale, VX_CONVERT_POLICY_SATURATE,
                                    VX_ROUND_POLICY_TO_NEAREST_EVEN, job->out);
    for (i = 0; i < 3; i++) {
        CHECK(vxGetStatus((vx_reference)nodes[i]) == VX_SUCCESS, "chain node");
        vxReleaseNode(&nodes[i]);
    }
    for (i = 0; i < 2; i++)
        vxReleaseTensor(&v[i]);
    memcpy(job->dims, dims, sizeof dims);
    job->n_dims = 2;
    vxReleaseScalar(&scale);
    vxReleaseTensor(&a);
    vxReleaseTensor(&b);
    vxReleaseTensor(&c);
}

static void *run(void *arg)
{
    job_t *job = arg;
    vx_int16 got[MAX_OUT];
    long k;
    for (k = 0; k < job->calls; k++) {
        vx_status status = vxProcessGraph(job->graph);
        if (status != VX_SUCCESS) {
            fprintf(stderr, "thread %d call %ld: vxProcessGraph returned %d\n", job->index, k, status);
            job->failed = 1;
            return NULL;
        }
        if (copy(job->out, job->n_dims, job->dims, got, VX_READ_ONLY) != VX_SUCCESS ||
            memcmp(got, job->expected, job->count * sizeof got[0]) != 0) {
            fprintf(stderr, "thread %d call %ld: output differs from the single-threaded run\n", job->index, k);
            job->failed = 1;
            return NULL;
        }
    }
    return NULL;
}

/* The shared graph: outputs are compared once both threads are done, since a
 * read between two runs of another thread may race with its write. */
static void *run_shared(void *arg)
{
    job_t *job = arg;
    long k;
    for (k = 0; k < job->calls; k++) {
        vx_status status = vxProcessGraph(job->graph);
        if (status != VX_SUCCESS) {
            fprintf(stderr, "shared graph, call %ld: vxProcessGraph returned %d\n", k, status);
            job->failed = 1;
            return NULL;
        }
    }
    return NULL;
}

static void on_alarm(int sig)
{
    static const char text[] = "FAILED: timed out (deadlock?)\n";
    (void)sig;
    (void)!write(2, text, sizeof text - 1);
    _exit(2);
}

int main(int argc, char **argv)
{
    static job_t jobs[THREADS + 2];
    static vx_int16 zeros[MAX_OUT], got[MAX_OUT];
    pthread_t threads[THREADS + 2];
    long calls = argc > 1 ? atol(argv[1]) : 2000;
    vx_context ctx;
    int i, d, failed = 0;

    signal(SIGALRM, on_alarm);
    alarm(240);
    ctx = vxCreateContext();
    CHECK(vxGetStatus((vx_reference)ctx) == VX_SUCCESS, "vxCreateContext");
    for (i = 0; i < THREADS + 1; i++) { /* job THREADS is the shared graph; THREADS + 1 its second thread */
        job_t *job = &jobs[i];
        if (i % 2 == 0 && i < THREADS)
            conv_relu(ctx, job);
        else
            chain(ctx, job);
        job->index = i;
        job->calls = calls;
        job->count = 1;
        for (d = 0; d < (int)job->n_dims; d++)
            job->count *= job->dims[d];
        CHECK(vxVerifyGraph(job->graph) == VX_SUCCESS, "vxVerifyGraph");
        /* the single-threaded reference */
        CHECK(vxProcessGraph(job->graph) == VX_SUCCESS, "single-threaded vxProcessGraph");
        CHECK(copy(job->out, job->n_dims, job->dims, job->expected, VX_READ_ONLY) == VX_SUCCESS, "read reference");
        /* the threaded runs must write the output again */
        CHECK(copy(job->out, job->n_dims, job->dims, zeros, VX_WRITE_ONLY) == VX_SUCCESS, "clear output");
    }
    jobs[THREADS + 1] = jobs[THREADS];
    jobs[THREADS + 1].index = THREADS + 1;
    for (i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, run, &jobs[i]) == 0, "pthread_create");
    for (i = THREADS; i < THREADS + 2; i++)
        CHECK(pthread_create(&threads[i], NULL, run_shared, &jobs[i]) == 0, "pthread_create");
    for (i = 0; i < THREADS + 2; i++) {
        pthread_join(threads[i], NULL);
        failed |= jobs[i].failed;
    }
    CHECK(!failed, "a thread failed");
    CHECK(copy(jobs[THREADS].out, jobs[THREADS].n_dims, jobs[THREADS].dims, got, VX_READ_ONLY) == VX_SUCCESS &&
              memcmp(got, jobs[THREADS].expected, jobs[THREADS].count * sizeof got[0]) == 0,
          "shared graph output differs from the single-threaded run");
    for (i = 0; i < THREADS + 1; i++) {
        vxReleaseGraph(&jobs[i].graph);
        vxReleaseTensor(&jobs[i].out);
    }
    CHECK(vxReleaseContext(&ctx) == VX_SUCCESS, "vxReleaseContext");
    printf("thread stress passed\n");
    return 0;
}
