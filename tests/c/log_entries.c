/* log_entries.c: vxAddLogEntry and vxRegisterLogCallback as a C application
 * uses them: printf formatting on the C side, dropped VX_SUCCESS entries,
 * truncation, bytes passed through unchanged, the library's own errors, the
 * context and reference given to the callback, removal and replacement of the
 * callback, a callback that itself makes a failing call, and serialisation of
 * a non-reentrant callback across threads.
 * Prints "log checks passed" and exits 0, or names the failed check. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>

static int failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAILED line %d: %s\n", __LINE__, #cond);               \
            failures++;                                                    \
        }                                                                  \
    } while (0)

#define MAX_ENTRIES 64
struct entry {
    vx_context context;
    vx_reference ref;
    vx_status status;
    char text[2 * VX_MAX_LOG_MESSAGE_LEN];
};
static struct entry entries[MAX_ENTRIES];
static int n_entries;
static int n_second;

static void VX_CALLBACK record(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    if (n_entries < MAX_ENTRIES) {
        entries[n_entries].context = context;
        entries[n_entries].ref = ref;
        entries[n_entries].status = status;
        strncpy(entries[n_entries].text, string, sizeof entries[n_entries].text - 1);
    }
    n_entries++;
}

static void VX_CALLBACK second(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context; (void)ref; (void)status; (void)string;
    n_second++;
}

/* A callback that makes a failing OpenVX call of its own. */
static int n_nested;
static void VX_CALLBACK nested(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    vx_uint32 count;
    (void)context; (void)ref; (void)status; (void)string;
    n_nested++;
    if (vxQueryReference(NULL, VX_REFERENCE_COUNT, &count, sizeof count) != VX_ERROR_INVALID_REFERENCE)
        n_nested += 1000;
}

/* A non-reentrant callback must never run twice at once. */
static volatile int inside, overlaps, n_threaded;
static void VX_CALLBACK exclusive(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    volatile int spin;
    (void)context; (void)ref; (void)status; (void)string;
    if (__sync_add_and_fetch(&inside, 1) != 1)
        __sync_add_and_fetch(&overlaps, 1);
    for (spin = 0; spin < 20000; spin++)
        ;
    __sync_add_and_fetch(&n_threaded, 1);
    __sync_sub_and_fetch(&inside, 1);
}

#define THREADS 4
#define PER_THREAD 50
static void *log_from_thread(void *arg)
{
    int i;
    for (i = 0; i < PER_THREAD; i++)
        vxAddLogEntry((vx_reference)arg, VX_FAILURE, "thread entry %d", i);
    return NULL;
}

/* A non-reentrant callback that calls OpenVX, while one thread adds entries
 * and another makes failing calls: no lock-order deadlock. */
static volatile long n_calling_back;
static void VX_CALLBACK calling_back(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    vx_char *name = NULL;
    (void)context; (void)status; (void)string;
    if (ref != NULL && vxQueryReference(ref, VX_REFERENCE_NAME, &name, sizeof name) == VX_SUCCESS && name)
        __sync_add_and_fetch(&n_calling_back, 1);
}

#define MIXED 300
static void *fail_from_thread(void *arg)
{
    int i;
    vx_uint32 count;
    for (i = 0; i < MIXED; i++)
        vxQueryReference((vx_reference)arg, VX_REFERENCE_COUNT, &count, 1);
    return NULL;
}

static void *add_from_thread(void *arg)
{
    int i;
    for (i = 0; i < MIXED; i++)
        vxAddLogEntry((vx_reference)arg, VX_FAILURE, "mixed entry %d", i);
    return NULL;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_graph graph = vxCreateGraph(context);
    vx_uint32 count = 0;
    static char big[3 * VX_MAX_LOG_MESSAGE_LEN];
    pthread_t threads[THREADS];
    int i;

    vxRegisterLogCallback(context, record, vx_false_e);

    /* formatting happens on the C side, exactly once */
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "int %d str %s float %.2f hex %#x pct %%", 42, "abc", 3.25, 255u);
    CHECK(n_entries == 1);
    CHECK(strcmp(entries[0].text, "int 42 str abc float 3.25 hex 0xff pct %") == 0);
    CHECK(entries[0].status == VX_FAILURE);
    CHECK(entries[0].context == context && entries[0].ref == (vx_reference)graph);
    vxAddLogEntry((vx_reference)context, VX_ERROR_INVALID_VALUE, "%s", "50%d %s literal");
    CHECK(n_entries == 2 && strcmp(entries[1].text, "50%d %s literal") == 0);
    CHECK(entries[1].ref == (vx_reference)context && entries[1].status == VX_ERROR_INVALID_VALUE);

    /* VX_SUCCESS entries are dropped; other statuses, even positive ones, are not */
    vxAddLogEntry((vx_reference)graph, VX_SUCCESS, "fine %d", 1);
    CHECK(n_entries == 2);
    vxAddLogEntry((vx_reference)graph, 7, "a positive status");
    CHECK(n_entries == 3 && entries[2].status == 7);

    /* truncated to VX_MAX_LOG_MESSAGE_LEN - 1 characters */
    memset(big, 'a', sizeof big - 1);
    big[0] = '<';
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "%s", big);
    CHECK(n_entries == 4 && strlen(entries[3].text) == VX_MAX_LOG_MESSAGE_LEN - 1);
    CHECK(entries[3].text[0] == '<' && entries[3].text[VX_MAX_LOG_MESSAGE_LEN - 2] == 'a');

    /* bytes are passed through as given, whatever their encoding */
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "caf\xe9 na\xefve \xff");
    CHECK(n_entries == 5 && strcmp(entries[4].text, "caf\xe9 na\xefve \xff") == 0);

    /* entries for no reference, a bogus one, or without a message go nowhere and crash nothing */
    vxAddLogEntry(NULL, VX_FAILURE, "no reference");
    vxAddLogEntry((vx_reference)&count, VX_FAILURE, "bogus reference");
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, NULL);
    CHECK(n_entries == 5);

    /* the library's own errors: the function's name, the context and the reference concerned */
    CHECK(vxQueryReference((vx_reference)graph, VX_REFERENCE_COUNT, &count, 1) == VX_ERROR_INVALID_PARAMETERS);
    CHECK(n_entries == 6 && entries[5].status == VX_ERROR_INVALID_PARAMETERS);
    CHECK(strstr(entries[5].text, "vxQueryReference") != NULL);
    CHECK(entries[5].context == context && entries[5].ref == (vx_reference)graph);
    CHECK(vxDirective((vx_reference)graph, 0x7FFF) == VX_ERROR_NOT_SUPPORTED);
    CHECK(n_entries == 7 && strstr(entries[6].text, "vxDirective") != NULL);
    CHECK(entries[6].ref == (vx_reference)graph && entries[6].status == VX_ERROR_NOT_SUPPORTED);

    /* registering on something that is not a context fails (and says so) and changes nothing */
    vxRegisterLogCallback((vx_context)&count, second, vx_false_e);
    vxRegisterLogCallback((vx_context)graph, second, vx_false_e);
    CHECK(n_entries == 9 && n_second == 0);
    CHECK(entries[7].status == VX_ERROR_INVALID_REFERENCE && strstr(entries[7].text, "vxRegisterLogCallback"));
    CHECK(entries[7].ref == NULL);
    CHECK(entries[8].status == VX_ERROR_INVALID_REFERENCE && strstr(entries[8].text, "vxRegisterLogCallback"));
    CHECK(entries[8].ref == (vx_reference)graph);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "still recorded");
    CHECK(n_entries == 10 && n_second == 0);

    /* replacement, then removal with NULL */
    vxRegisterLogCallback(context, second, vx_false_e);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "to the second callback");
    CHECK(n_entries == 10 && n_second == 1);
    vxRegisterLogCallback(context, NULL, vx_false_e);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "to nobody");
    CHECK(vxQueryReference((vx_reference)graph, VX_REFERENCE_COUNT, &count, 1) == VX_ERROR_INVALID_PARAMETERS);
    CHECK(n_entries == 10 && n_second == 1);

    /* a non-reentrant callback may make failing calls without deadlocking */
    vxRegisterLogCallback(context, nested, vx_false_e);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "outer");
    CHECK(n_nested == 1);
    vxRegisterLogCallback(context, nested, vx_true_e);
    vxAddLogEntry((vx_reference)graph, VX_FAILURE, "outer");
    CHECK(n_nested == 2);

    /* a non-reentrant callback is never entered concurrently */
    vxRegisterLogCallback(context, exclusive, vx_false_e);
    for (i = 0; i < THREADS; i++)
        CHECK(pthread_create(&threads[i], NULL, log_from_thread, graph) == 0);
    for (i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    CHECK(n_threaded == THREADS * PER_THREAD && overlaps == 0);

    /* ... and one that calls back into OpenVX, with entries from two sources at once */
    vxRegisterLogCallback(context, calling_back, vx_false_e);
    CHECK(pthread_create(&threads[0], NULL, add_from_thread, graph) == 0);
    CHECK(pthread_create(&threads[1], NULL, fail_from_thread, graph) == 0);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    CHECK(n_calling_back == 2 * MIXED);

    vxRegisterLogCallback(context, NULL, vx_false_e);
    CHECK(vxReleaseGraph(&graph) == VX_SUCCESS);
    CHECK(vxReleaseContext(&context) == VX_SUCCESS);
    if (failures)
        return 1;
    printf("log checks passed\n");
    return 0;
}
