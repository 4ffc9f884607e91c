/* engine.c: registration, filtering, seeding, timing, leak checks and the summary line. */
#define _POSIX_C_SOURCE 200809L
#include "engine.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *testcase, *name;
    ct_body body;
    ct_gen gen;
    size_t arg_size;
} ct_test;

typedef struct {
    const ct_test *test;
    char *full_name;
    void *arg;
} ct_case;

static ct_test tests[512];
static size_t n_tests;
static ct_case *cases;
static size_t n_cases, cap_cases;
static const ct_test *generating;

uint64_t ct_seed = 1;
static uint64_t rng_state;
static const char *current_name = "";
static jmp_buf case_jump;
static int verbose = 1;

void ct_register(const char *testcase, const char *name, ct_body body, ct_gen gen, size_t arg_size)
{
    if (n_tests == sizeof tests / sizeof tests[0]) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[n_tests].testcase = testcase;
    tests[n_tests].name = name;
    tests[n_tests].body = body;
    tests[n_tests].gen = gen;
    tests[n_tests].arg_size = arg_size;
    n_tests++;
}

static void add_case(const ct_test *test, const char *suffix, const void *arg)
{
    size_t len = strlen(test->testcase) + strlen(test->name) + (suffix ? strlen(suffix) : 0) + 4;
    ct_case *c;
    if (n_cases == cap_cases) {
        cap_cases = cap_cases ? 2 * cap_cases : 1024;
        cases = realloc(cases, cap_cases * sizeof *cases);
        if (!cases)
            exit(2);
    }
    c = &cases[n_cases++];
    c->test = test;
    c->full_name = malloc(len);
    if (suffix && *suffix)
        snprintf(c->full_name, len, "%s.%s/%s", test->testcase, test->name, suffix);
    else
        snprintf(c->full_name, len, "%s.%s", test->testcase, test->name);
    c->arg = NULL;
    if (test->arg_size) {
        c->arg = malloc(test->arg_size);
        memcpy(c->arg, arg, test->arg_size);
    }
}

void ct_emit(const char *suffix, const void *arg)
{
    add_case(generating, suffix, arg);
}

const char *ct_case_name(void) { return current_name; }

void ct_fail_here(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("FAILED %s: %s:%d: ", current_name, file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    longjmp(case_jump, 1);
}

void ct_skip_here(const char *reason)
{
    printf("SKIPPED %s: %s\n", current_name, reason);
    longjmp(case_jump, 2);
}

void ct_expect_equal_i64(const char *file, int line, const char *what, const int64_t *expected,
                         const int64_t *actual, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (expected[i] != actual[i])
            ct_fail_here(file, line, "%s: first difference at element %zu of %zu: expected %lld, got %lld",
                         what, i, n, (long long)expected[i], (long long)actual[i]);
}

/* xorshift64* */
uint32_t ct_rand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

int ct_rand_range(int lo, int hi)
{
    return lo + (int)(ct_rand() % (uint32_t)(hi - lo + 1));
}

double ct_rand_unit(void) { return ct_rand() / 4294967296.0; }

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

/* glob with '*' only */
static int match(const char *pattern, const char *s)
{
    if (*pattern == '\0')
        return *s == '\0';
    if (*pattern == '*')
        return match(pattern + 1, s) || (*s && match(pattern, s + 1));
    return *s == *pattern && match(pattern + 1, s + 1);
}

static int matches_any(const char *filters, const char *name)
{
    /* several patterns may be given separated by ':'; a leading '-' excludes */
    char buf[1024];
    char *tok, *save = NULL;
    int hit = 0, any_positive = 0;
    if (!filters || !*filters)
        return 1;
    snprintf(buf, sizeof buf, "%s", filters);
    for (tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        if (*tok == '-') {
            if (match(tok + 1, name))
                return 0;
        } else {
            any_positive = 1;
            if (match(tok, name))
                hit = 1;
        }
    }
    return any_positive ? hit : 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static vx_uint32 references(vx_context context)
{
    vx_uint32 n = 0;
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &n, sizeof n);
    return n;
}

/* 0 passed, 1 failed, 2 skipped */
static int run_case(const ct_case *c)
{
    vx_context context;
    vx_uint32 baseline, after;
    volatile int outcome;
    current_name = c->full_name;
    rng_state = (ct_seed ^ hash_name(c->full_name)) | 1;
    context = vxCreateContext();
    if (vxGetStatus((vx_reference)context) != VX_SUCCESS) {
        printf("FAILED %s: vxCreateContext failed (status %d)\n", c->full_name,
               (int)vxGetStatus((vx_reference)context));
        return 1;
    }
    baseline = references(context);
    outcome = setjmp(case_jump);
    if (outcome == 0) {
        c->test->body(context, c->arg);
        after = references(context);
        if (after != baseline) {
            printf("FAILED %s: leak check: VX_CONTEXT_REFERENCES expected %u (after vxCreateContext), got %u\n",
                   c->full_name, baseline, after);
            outcome = 1;
        }
    }
    vxReleaseContext(&context);
    return outcome;
}

int main(int argc, char **argv)
{
    const char *filter = NULL;
    int list = 0, i;
    size_t t, k, passed = 0, failed = 0, skipped = 0, selected = 0;
    double start;

    ct_seed = (uint64_t)time(NULL);
    for (i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--filter=", 9) == 0)
            filter = argv[i] + 9;
        else if (strncmp(argv[i], "--seed=", 7) == 0)
            ct_seed = strtoull(argv[i] + 7, NULL, 0);
        else if (strcmp(argv[i], "--list") == 0)
            list = 1;
        else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
            verbose = 0;
        else {
            printf("usage: %s [--filter=PATTERN[:PATTERN|:-EXCLUDED]] [--seed=N] [--list] [--quiet]\n",
                   argv[0]);
            return 2;
        }
    }
    for (t = 0; t < n_tests; t++) {
        if (tests[t].gen) {
            generating = &tests[t];
            tests[t].gen();
        } else {
            add_case(&tests[t], NULL, NULL);
        }
    }
    if (list) {
        for (k = 0; k < n_cases; k++)
            if (matches_any(filter, cases[k].full_name))
                printf("%s\n", cases[k].full_name);
        return 0;
    }
    printf("openvx-nn conformance: seed %llu (rerun with --seed=%llu), %zu tests, %zu cases%s%s\n",
           (unsigned long long)ct_seed, (unsigned long long)ct_seed, n_tests, n_cases,
           filter ? ", filter " : "", filter ? filter : "");
    fflush(stdout);
    start = now_ms();
    for (k = 0; k < n_cases; k++) {
        double t0;
        int outcome;
        if (!matches_any(filter, cases[k].full_name))
            continue;
        selected++;
        t0 = now_ms();
        outcome = run_case(&cases[k]);
        if (outcome == 0)
            passed++;
        else if (outcome == 1)
            failed++;
        else
            skipped++;
        if (verbose || outcome == 1)
            printf("%s %s (%.1f ms)\n", outcome == 0 ? "ok  " : outcome == 1 ? "FAIL" : "skip",
                   cases[k].full_name, now_ms() - t0);
        fflush(stdout);
    }
    printf("ran %zu cases in %.1f s\n", selected, (now_ms() - start) / 1e3);
    if (skipped)
        printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    else
        printf("%zu passed, %zu failed\n", passed, failed);
    return failed ? 1 : 0;
}
