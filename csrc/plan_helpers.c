/* plan_helpers.c: helper threads that join the shared layers of native runs, without Python.
 *
 * A layer's native entry shares its chunks through the gang's mailbox (openvx_nn/kernels/engine/gang.py):
 * it posts a task record [helper entry, block, chunk counters] when some helper is counted in, claims chunks
 * behind a counter, then retracts the record and waits until no helper is inside.  A helper entry that fails
 * (it raised mid-chunk) adds CHUNK_FAILED to the counters' finished chunks, so the poster stops waiting for the
 * chunk that never finished and returns the failure.  Python's gang helpers join only
 * after Python lent them a task, which a C caller's vxProcessGraph never does; these threads are the C
 * side's helpers: woken when a run of a plan with shared layers begins, counted into the mailbox while
 * they spin on its generation, running each native task posted there, and back to sleep a short while
 * after the last such run ends.  They spin only while that run is the only native run in flight: with two
 * graphs processed on two application threads the cores are taken, and a spinning helper would slow both.
 * Nor do they count in where Python's helpers already make up the number a run wants (NNAPI summons those).
 *
 * The mailbox words (byte offsets in gang.py): [0] generation, [1] helpers counted in, [2] the posted native
 * task's record, [3] helpers inside a native task, [4] native tasks joined so far. */
#include <pthread.h>
#include <sched.h>
#include "plan_helpers.h"

enum { M_GENERATION, M_COUNTED, M_TASK, M_INSIDE, M_JOINED };
#define MAX_HELPERS 8
#define GRACE_CYCLES 400000ull /* spinning after a run ends (about 0.15 ms): the next run finds them awake */

#define CHUNK_FAILED (1LL << 40) /* as atomics.CHUNK_FAILED (openvx_nn/kernels/engine/atomics.py) */

typedef int32_t (*vxnn_entry)(int64_t *block);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static int started;            /* threads made (under lock) */
static int64_t *mailbox;       /* the gang's, from the first run (one per process) */
static int64_t active;         /* runs with shared layers in flight */
static int64_t crowded;        /* 1 while more than one native run was in flight at a run's start */
static uint64_t last_end;      /* time-stamp counter when the last such run ended */
static int64_t sleeping;       /* helpers waiting on wake */
static int64_t want;           /* helpers the running plan wants counted in (Python's spinning ones count) */
static int closing;
static int fork_handler;

static uint64_t cycles(void) { return __builtin_ia32_rdtsc(); }

static int wanted_awake(void)
{
    if (__atomic_load_n(&closing, __ATOMIC_RELAXED) || __atomic_load_n(&crowded, __ATOMIC_RELAXED))
        return 0;
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE) > 0
           || cycles() - __atomic_load_n(&last_end, __ATOMIC_RELAXED) < GRACE_CYCLES;
}

static void run_posted(int64_t task)
{
    __atomic_add_fetch(&mailbox[M_INSIDE], 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&mailbox[M_TASK], __ATOMIC_SEQ_CST) == task) { /* still posted: its poster waits */
        const int64_t *record = (const int64_t *)(uintptr_t)task;
        if (((vxnn_entry)(uintptr_t)record[0])((int64_t *)(uintptr_t)record[1]) != 0)
            __atomic_add_fetch((int64_t *)(uintptr_t)record[2] + 1, CHUNK_FAILED, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&mailbox[M_JOINED], 1, __ATOMIC_SEQ_CST);
    }
    __atomic_sub_fetch(&mailbox[M_INSIDE], 1, __ATOMIC_SEQ_CST);
}

static void *helper(void *unused)
{
    (void)unused;
    for (;;) {
        int64_t seen;
        unsigned rounds = 0;
        pthread_mutex_lock(&lock);
        while (!wanted_awake() || __atomic_load_n(&mailbox[M_COUNTED], __ATOMIC_SEQ_CST) >= want) {
            sleeping++;
            pthread_cond_wait(&wake, &lock);
            sleeping--;
        }
        pthread_mutex_unlock(&lock);
        __atomic_add_fetch(&mailbox[M_COUNTED], 1, __ATOMIC_SEQ_CST);
        seen = __atomic_load_n(&mailbox[M_GENERATION], __ATOMIC_SEQ_CST);
        for (;;) {
            int64_t generation = __atomic_load_n(&mailbox[M_GENERATION], __ATOMIC_SEQ_CST);
            if (generation != seen) {
                int64_t task = __atomic_load_n(&mailbox[M_TASK], __ATOMIC_SEQ_CST);
                seen = generation;
                if (task) /* 0: a Python task, for Python's helpers */
                    run_posted(task);
                continue;
            }
            if ((++rounds & 63) == 0 && !wanted_awake())
                break;
            __builtin_ia32_pause();
        }
        __atomic_sub_fetch(&mailbox[M_COUNTED], 1, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void after_fork_in_child(void)
{
    started = 0; /* a forked child has none of its parent's threads */
    sleeping = 0;
    active = 0;
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&wake, NULL);
}

void vxnn_helpers_begin(int64_t *box, int64_t wanted, int64_t runs_in_flight)
{
    __atomic_store_n(&crowded, runs_in_flight > 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&active, 1, __ATOMIC_RELEASE);
    if (wanted > MAX_HELPERS)
        wanted = MAX_HELPERS;
    __atomic_store_n(&want, wanted, __ATOMIC_RELAXED);
    if (started >= wanted && !__atomic_load_n(&sleeping, __ATOMIC_RELAXED))
        return; /* all awake (the common case of back-to-back runs): no lock */
    pthread_mutex_lock(&lock);
    if (!fork_handler)
        fork_handler = pthread_atfork(NULL, NULL, after_fork_in_child) == 0;
    mailbox = box;
    while (started < wanted && !__atomic_load_n(&crowded, __ATOMIC_RELAXED)) {
        pthread_attr_t attr;
        pthread_t thread;
        int ok;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&thread, &attr, helper, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!ok)
            break; /* no thread: the layers run on the caller alone */
        started++;
    }
    if (sleeping)
        pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
}

void vxnn_helpers_end(void)
{
    __atomic_store_n(&last_end, cycles(), __ATOMIC_RELAXED);
    __atomic_sub_fetch(&active, 1, __ATOMIC_RELEASE);
}

void vxnn_helpers_close(void)
{
    __atomic_store_n(&closing, 1, __ATOMIC_SEQ_CST);
}
