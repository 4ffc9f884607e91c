/* bench_overhead.c: bench_overhead.py's C side, loaded into its process (cffi dlopen).
 *
 * Times calls made from C, as a C program makes them, so no Python call sits
 * in the figure: vxProcessGraph of a verified graph, and the graph's one
 * native kernel entry called with its own argument block (what the kernel
 * itself costs).  Each returns microseconds per call over `calls` calls. */
#define _POSIX_C_SOURCE 200809L
#include <VX/vx.h>
#include <stdint.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_process_graph(vx_graph graph, long calls, int32_t *status)
{
    double start = now();
    long i;
    *status = VX_SUCCESS;
    for (i = 0; i < calls; ++i) {
        vx_status s = vxProcessGraph(graph);
        if (s != VX_SUCCESS)
            *status = s;
    }
    return (now() - start) / (double)calls * 1e6;
}

double bench_entry(int32_t (*entry)(int64_t *), int64_t *block, long calls, int32_t *status)
{
    double start = now();
    long i;
    *status = VX_SUCCESS;
    for (i = 0; i < calls; ++i) {
        int32_t s = entry(block);
        if (s != VX_SUCCESS)
            *status = s;
    }
    return (now() - start) / (double)calls * 1e6;
}
