/* bench_threads.c: the C side of bench_threads.py's small-graph row.
 *
 * N graphs, each one relu node on its own 1x1x8 U8 tensors, built and
 * processed once.  Then, in alternating rounds: one thread processes all N in
 * turn REPEATS times ("serial"), and N pthreads each process their own graph
 * for as long as the serial round took ("threaded"), started together at a
 * barrier and stopped together by a flag; the graphs/s counts every call they
 * made meanwhile.  (A fixed count per thread instead measures the slowest
 * thread: on a shared machine one thread gets a core late or loses it for a
 * while, and the others then idle at the join.)  Each round prints one line:
 *     serial <graphs/s> <cpu/wall> threaded <graphs/s> <cpu/wall>
 *
 *     bench_threads GRAPHS REPEATS ROUNDS
 */
#define _POSIX_C_SOURCE 200809L
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_GRAPHS 64

static vx_graph graphs[MAX_GRAPHS];
static long repeats;
static pthread_barrier_t gate;
static int failed;
static int stop;
static struct {
    vx_graph graph;
    long calls;
} __attribute__((aligned(64))) work[MAX_GRAPHS]; /* a cache line per thread */

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check(vx_status status, const char *what)
{
    if (status != VX_SUCCESS) {
        fprintf(stderr, "bench_threads: %s failed with status %d\n", what, (int)status);
        failed = 1;
    }
}

static void *worker(void *arg)
{
    vx_graph graph = work[(long)arg].graph;
    long calls = 0;
    pthread_barrier_wait(&gate);
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        check(vxProcessGraph(graph), "vxProcessGraph");
        ++calls;
    }
    work[(long)arg].calls = calls;
    return NULL;
}

/* Graphs/s and CPU seconds per wall second of one round; its wall time in *took. */
static void round_serial(int count, double *rate, double *cpu, double *took)
{
    double wall = now(CLOCK_MONOTONIC), used = now(CLOCK_PROCESS_CPUTIME_ID);
    long i;
    int g;
    for (i = 0; i < repeats; ++i)
        for (g = 0; g < count; ++g)
            check(vxProcessGraph(graphs[g]), "vxProcessGraph");
    wall = now(CLOCK_MONOTONIC) - wall;
    *rate = (double)count * (double)repeats / wall;
    *cpu = (now(CLOCK_PROCESS_CPUTIME_ID) - used) / wall;
    *took = wall;
}

static void round_threaded(int count, double seconds, double *rate, double *cpu)
{
    pthread_t threads[MAX_GRAPHS];
    struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    double wall, used, calls = 0;
    long g;
    pthread_barrier_init(&gate, NULL, (unsigned)count + 1);
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
    for (g = 0; g < count; ++g) {
        work[g].graph = graphs[g];
        if (pthread_create(&threads[g], NULL, worker, (void *)g) != 0) {
            fprintf(stderr, "bench_threads: pthread_create failed\n");
            exit(1);
        }
    }
    pthread_barrier_wait(&gate);
    wall = now(CLOCK_MONOTONIC);
    used = now(CLOCK_PROCESS_CPUTIME_ID);
    nanosleep(&pause, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    wall = now(CLOCK_MONOTONIC) - wall;
    used = now(CLOCK_PROCESS_CPUTIME_ID) - used;
    for (g = 0; g < count; ++g) {
        pthread_join(threads[g], NULL);
        calls += (double)work[g].calls;
    }
    *rate = calls / wall;
    *cpu = used / wall;
    pthread_barrier_destroy(&gate);
}

int main(int argc, char **argv)
{
    vx_size dims[3] = {8, 1, 1};
    vx_context context;
    int count, rounds, g, r;
    if (argc != 4) {
        fprintf(stderr, "usage: %s GRAPHS REPEATS ROUNDS\n", argv[0]);
        return 2;
    }
    count = atoi(argv[1]);
    repeats = atol(argv[2]);
    rounds = atoi(argv[3]);
    if (count < 1 || count > MAX_GRAPHS || repeats < 1 || rounds < 1) {
        fprintf(stderr, "bench_threads: GRAPHS must be 1..%d, REPEATS and ROUNDS positive\n", MAX_GRAPHS);
        return 2;
    }
    context = vxCreateContext();
    check(vxGetStatus((vx_reference)context), "vxCreateContext");
    for (g = 0; g < count && !failed; ++g) {
        vx_tensor in = vxCreateTensor(context, 3, dims, VX_TYPE_UINT8, 0);
        vx_tensor out = vxCreateTensor(context, 3, dims, VX_TYPE_UINT8, 0);
        vx_node node;
        graphs[g] = vxCreateGraph(context);
        node = vxActivationLayer(graphs[g], in, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, out);
        check(vxGetStatus((vx_reference)node), "vxActivationLayer");
        check(vxProcessGraph(graphs[g]), "the first vxProcessGraph");
        vxReleaseNode(&node);
        vxReleaseTensor(&in);
        vxReleaseTensor(&out);
    }
    for (;;) { /* calibrate REPEATS */
        double rate, cpu, took;
        round_serial(count, &rate, &cpu, &took);
        if (failed || (double)count * (double)repeats / rate >= 0.2 || repeats > (1L << 40))
            break;
        repeats *= 2;
    }
    for (r = 0; r < rounds && !failed; ++r) {
        double serial, serial_cpu, threaded, threaded_cpu, took;
        round_serial(count, &serial, &serial_cpu, &took);
        round_threaded(count, took, &threaded, &threaded_cpu);
        printf("serial %.1f %.3f threaded %.1f %.3f\n", serial, serial_cpu, threaded, threaded_cpu);
        fflush(stdout);
    }
    for (g = 0; g < count; ++g)
        vxReleaseGraph(&graphs[g]);
    vxReleaseContext(&context);
    return failed;
}
