/* plan.c: the table of published native plans and the loop that runs them (see plan.h).
 *
 * The table maps a handle to an int64 block Python published for it: a graph's plan, or a tensor's layout
 * (tensor_copy.c); handles are never reused, so one table serves both.  A lookup takes the bucket's spin
 * lock only to add a reference, so a plan retired meanwhile stays valid until
 * the run that holds it ends; Python frees it when the count is back to 0.
 * The graph's busy cell serialises runs of one graph between the native path
 * and the Python path; different graphs share nothing but the running count. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <VX/vx.h>
#include "plan.h"
#include "plan_helpers.h"
#include "bridge/all.h"

enum { P_REFS, P_STEPS, P_CELLS, P_GRAPH, P_GUARDS, P_FIRST, P_MAILBOX, P_HELPERS, P_GUARD0 = 8 };
enum { S_ENTRY, S_BLOCK, S_NODE, S_WRITES, S_NWRITES, S_WORDS };
enum { C_BUSY, C_STATE, C_SCHEDULED, C_DONE, C_RESULT, C_RUNS };
#define BUCKETS 1024

typedef int32_t (*vxnn_entry)(int64_t *block);

struct slot {
    uintptr_t graph;
    int64_t *plan;
    struct slot *next;
};

static struct bucket {
    int lock;
    struct slot *head;
} __attribute__((aligned(64))) table[BUCKETS]; /* a cache line each: graphs on different cores share none */

/* Native runs in flight, striped over cache lines by thread (a single counter bounced between the cores on
 * every run costs more than a small graph): stripe s is running[s * STRIDE]; Python sums them. */
#define STRIPES 16
#define STRIDE 8
static int64_t own_running[STRIPES * STRIDE] __attribute__((aligned(64)));
static int64_t *running_base = own_running;
static __thread int64_t *running;
static int next_stripe;
static int closing;       /* set once by vxnn_plan_close */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER; /* scheduled runs end under it */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static int64_t *my_stripe(void)
{
    if (!running)
        running = &running_base[(__atomic_fetch_add(&next_stripe, 1, __ATOMIC_RELAXED) % STRIPES) * STRIDE];
    return running;
}

static int64_t in_flight(void)
{
    int64_t total = 0;
    int k;
    for (k = 0; k < STRIPES; k++)
        total += __atomic_load_n(&running_base[k * STRIDE], __ATOMIC_SEQ_CST);
    return total;
}

static struct bucket *bucket_of(uintptr_t graph)
{
    uint64_t h = (uint64_t)graph * 0x9E3779B97F4A7C15ull;
    return &table[h >> 54];
}

static void lock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static void unlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

void vxnn_plan_drop(int64_t *plan)
{
    if (plan)
        __atomic_sub_fetch(&plan[P_REFS], 1, __ATOMIC_RELEASE);
}

void vxnn_plan_publish(uintptr_t graph, uintptr_t address)
{
    struct bucket *b = bucket_of(graph);
    int64_t *plan = (int64_t *)address, *old = NULL;
    struct slot **at, *s, *spare = plan ? malloc(sizeof *spare) : NULL;
    if (plan)
        __atomic_add_fetch(&plan[P_REFS], 1, __ATOMIC_RELAXED);
    lock(&b->lock);
    for (at = &b->head; *at && (*at)->graph != graph; at = &(*at)->next)
        ;
    s = *at;
    if (s) {
        old = s->plan;
        if (plan) {
            s->plan = plan;
        } else {
            *at = s->next;
            spare = s; /* freed below */
        }
    } else if (plan && spare) {
        spare->graph = graph;
        spare->plan = plan;
        spare->next = b->head;
        b->head = spare;
        spare = NULL;
    } else if (plan) {
        vxnn_plan_drop(plan); /* no memory for a slot: the graph stays on the Python path */
    }
    unlock(&b->lock);
    free(spare);
    vxnn_plan_drop(old);
}

int64_t *vxnn_plan_take(uintptr_t graph)
{
    struct bucket *b = bucket_of(graph);
    struct slot *s;
    int64_t *plan = NULL;
    lock(&b->lock);
    for (s = b->head; s; s = s->next)
        if (s->graph == graph) {
            plan = s->plan;
            __atomic_add_fetch(&plan[P_REFS], 1, __ATOMIC_RELAXED);
            break;
        }
    unlock(&b->lock);
    return plan;
}

int32_t vxnn_plan_execute(uintptr_t address, int64_t *failed)
{
    int64_t *plan = (int64_t *)address, *cells = (int64_t *)plan[P_CELLS];
    int64_t k, j, steps = plan[P_STEPS];
    int32_t status = VX_SUCCESS;
    __atomic_add_fetch(my_stripe(), 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&closing, __ATOMIC_SEQ_CST)) {
        __atomic_sub_fetch(my_stripe(), 1, __ATOMIC_SEQ_CST);
        return VXNN_NOT_NATIVE; /* the Python path refuses it and says why */
    }
    for (k = 0; k < plan[P_GUARDS]; k++) {
        const int64_t *guard = &plan[P_GUARD0 + 2 * k];
        if (__atomic_load_n((int64_t *)guard[0], __ATOMIC_ACQUIRE) != guard[1]) {
            __atomic_sub_fetch(my_stripe(), 1, __ATOMIC_SEQ_CST);
            return VXNN_NOT_NATIVE; /* storage moved, weights written, ...: Python rebinds */
        }
    }
    cells[C_STATE] = VX_GRAPH_STATE_RUNNING;
    if (plan[P_MAILBOX])
        vxnn_helpers_begin((int64_t *)plan[P_MAILBOX], plan[P_HELPERS], in_flight());
    for (k = 0; k < steps; k++) {
        const int64_t *step = &plan[plan[P_FIRST] + S_WORDS * k];
        if (__atomic_load_n(&closing, __ATOMIC_RELAXED)) {
            status = VX_ERROR_GRAPH_ABANDONED;
            break;
        }
        status = ((vxnn_entry)(uintptr_t)step[S_ENTRY])((int64_t *)step[S_BLOCK]);
        for (j = 0; j < step[S_NWRITES]; j++)
            __atomic_add_fetch((int64_t *)plan[step[S_WRITES] + j], 1, __ATOMIC_RELAXED);
        if (status != VX_SUCCESS)
            break;
    }
    if (plan[P_MAILBOX])
        vxnn_helpers_end();
    *failed = k;
    cells[C_STATE] = status == VX_SUCCESS ? VX_GRAPH_STATE_COMPLETED : VX_GRAPH_STATE_ABANDONED;
    __atomic_sub_fetch(my_stripe(), 1, __ATOMIC_SEQ_CST);
    return status;
}

int32_t vxnn_plan_run(uintptr_t graph)
{
    int64_t *plan = vxnn_plan_take(graph), *cells, free_ = 0, failed = 0, node;
    int32_t status;
    if (!plan)
        return VXNN_NOT_NATIVE;
    cells = (int64_t *)plan[P_CELLS];
    if (!__atomic_compare_exchange_n(&cells[C_BUSY], &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        vxnn_plan_drop(plan); /* another run has the graph: the Python path waits for it */
        return VXNN_NOT_NATIVE;
    }
    if (cells[C_SCHEDULED]) { /* scheduled and not collected by vxWaitGraph: the Python path refuses */
        __atomic_store_n(&cells[C_BUSY], 0, __ATOMIC_RELEASE);
        vxnn_plan_drop(plan);
        return VXNN_NOT_NATIVE;
    }
    status = vxnn_plan_execute((uintptr_t)plan, &failed);
    node = status == VX_SUCCESS || status == VXNN_NOT_NATIVE ? 0 : plan[plan[P_FIRST] + S_WORDS * failed + S_NODE];
    __atomic_store_n(&cells[C_BUSY], 0, __ATOMIC_RELEASE);
    vxnn_plan_drop(plan);
    if (status == VX_SUCCESS)
        __atomic_add_fetch(&cells[C_RUNS], 1, __ATOMIC_RELAXED);
    else if (status != VXNN_NOT_NATIVE && !__atomic_load_n(&closing, __ATOMIC_SEQ_CST))
        vxnn_native_failed(graph, (uintptr_t)node, status); /* Python: node status, log line, retire */
    return status;
}

static int current(const int64_t *plan)
{
    int64_t k;
    for (k = 0; k < plan[P_GUARDS]; k++) {
        const int64_t *guard = &plan[P_GUARD0 + 2 * k];
        if (__atomic_load_n((int64_t *)guard[0], __ATOMIC_ACQUIRE) != guard[1])
            return 0;
    }
    return 1;
}

struct job {
    uintptr_t graph;
    int64_t *plan;
};

static void *scheduled_run(void *arg)
{
    struct job *job = arg;
    int64_t *plan = job->plan, *cells = (int64_t *)plan[P_CELLS], failed = 0, node = 0;
    int32_t status = vxnn_plan_execute((uintptr_t)plan, &failed);
    if (status == VXNN_NOT_NATIVE) /* changed or exiting since vxScheduleGraph: not run */
        status = VX_ERROR_GRAPH_ABANDONED;
    else if (status != VX_SUCCESS)
        node = plan[plan[P_FIRST] + S_WORDS * failed + S_NODE];
    __atomic_store_n(&cells[C_BUSY], 0, __ATOMIC_RELEASE);
    if (node && !__atomic_load_n(&closing, __ATOMIC_SEQ_CST))
        vxnn_native_failed(job->graph, (uintptr_t)node, status); /* logged before vxWaitGraph returns */
    if (status == VX_SUCCESS)
        __atomic_add_fetch(&cells[C_RUNS], 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&done_lock);
    cells[C_RESULT] = status;
    cells[C_DONE] = 1;
    pthread_cond_broadcast(&done);
    pthread_mutex_unlock(&done_lock);
    vxnn_plan_drop(plan);
    free(job);
    return NULL;
}

int32_t vxnn_plan_schedule(uintptr_t graph)
{
    int64_t *plan = vxnn_plan_take(graph), *cells, free_ = 0;
    struct job *job;
    pthread_attr_t attr;
    pthread_t thread;
    int started;
    if (!plan)
        return VXNN_NOT_NATIVE;
    cells = (int64_t *)plan[P_CELLS];
    if (!__atomic_compare_exchange_n(&cells[C_BUSY], &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        vxnn_plan_drop(plan);
        return VXNN_NOT_NATIVE;
    }
    job = malloc(sizeof *job);
    if (!job || cells[C_SCHEDULED] || !current(plan) || __atomic_load_n(&closing, __ATOMIC_SEQ_CST)) {
        free(job); /* the Python path refuses, rebinds or reports */
        __atomic_store_n(&cells[C_BUSY], 0, __ATOMIC_RELEASE);
        vxnn_plan_drop(plan);
        return VXNN_NOT_NATIVE;
    }
    job->graph = graph;
    job->plan = plan; /* the thread owns this reference */
    cells[C_DONE] = 0;
    cells[C_SCHEDULED] = 1;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&thread, &attr, scheduled_run, job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
        cells[C_SCHEDULED] = 0;
        __atomic_store_n(&cells[C_BUSY], 0, __ATOMIC_RELEASE);
        vxnn_plan_drop(plan);
        free(job);
        return VXNN_NOT_NATIVE;
    }
    return VX_SUCCESS;
}

int32_t vxnn_plan_wait(uintptr_t address)
{
    int64_t *cells = (int64_t *)address;
    int32_t status;
    pthread_mutex_lock(&done_lock);
    if (!cells[C_SCHEDULED]) {
        pthread_mutex_unlock(&done_lock);
        return VXNN_NOT_NATIVE;
    }
    while (!cells[C_DONE])
        pthread_cond_wait(&done, &done_lock);
    status = (int32_t)cells[C_RESULT];
    cells[C_SCHEDULED] = 0;
    pthread_mutex_unlock(&done_lock);
    return status;
}

int32_t vxnn_plan_wait_graph(uintptr_t graph)
{
    int64_t *plan = vxnn_plan_take(graph);
    int32_t status;
    if (!plan)
        return VXNN_NOT_NATIVE;
    status = vxnn_plan_wait(plan[P_CELLS]);
    vxnn_plan_drop(plan);
    return status;
}

void vxnn_plan_claim(uintptr_t address)
{
    int64_t *busy = &((int64_t *)address)[C_BUSY], free_ = 0;
    while (!__atomic_compare_exchange_n(busy, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        free_ = 0;
        sched_yield();
    }
}

void vxnn_plan_unclaim(uintptr_t address)
{
    __atomic_store_n(&((int64_t *)address)[C_BUSY], 0, __ATOMIC_RELEASE);
}

void vxnn_plan_close(void)
{
    __atomic_store_n(&closing, 1, __ATOMIC_SEQ_CST);
    vxnn_helpers_close();
    while (in_flight())
        sched_yield();
}

void vxnn_plan_count_runs_in(uintptr_t address)
{
    if (address)
        running_base = (int64_t *)address; /* once, at start-up, before any plan is published */
}
