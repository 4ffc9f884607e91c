/* engine.h: a small Khronos-style test engine for the openvx-nn conformance suite.
 *
 *   TEST(testcase, name) { ... }                   one case
 *   TEST_WITH_ARG(testcase, name, arg_type, gen) { ... uses arg ... }
 *       gen is a `static void gen(void)` calling ct_emit("suffix", &arg) once per case.
 *
 * Every test body gets `context` (a fresh vxCreateContext) and, for parameterized tests,
 * `arg`. ASSERT_* macros stop the case on failure and print the case name and both values.
 * After the body the engine checks VX_CONTEXT_REFERENCES is back to its value after
 * vxCreateContext (the leak check), then releases the context.
 */
#ifndef CT_ENGINE_H
#define CT_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <VX/vxu.h>

typedef void (*ct_body)(vx_context context, const void *arg);
typedef void (*ct_gen)(void);

void ct_register(const char *testcase, const char *name, ct_body body, ct_gen gen, size_t arg_size);
void ct_emit(const char *suffix, const void *arg);

/* the running case */
const char *ct_case_name(void);
void ct_fail_here(const char *file, int line, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;
void ct_skip_here(const char *reason)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;

/* seeded random numbers: each case starts from (seed, hash of its name) */
uint32_t ct_rand(void);
int ct_rand_range(int lo, int hi); /* inclusive */
double ct_rand_unit(void);
extern uint64_t ct_seed;

#define CT_CAT_(a, b) a##b
#define CT_CAT(a, b) CT_CAT_(a, b)
#define CT_UNUSED __attribute__((unused))

#define TESTCASE(tc) static const char *CT_CAT(tc, __testcase_name) CT_UNUSED = #tc

#define TEST(tc, nm)                                                                             \
    static void tc##__##nm(vx_context context, const void *arg_);                                \
    static void __attribute__((constructor)) tc##__##nm##__register(void)                        \
    {                                                                                            \
        ct_register(#tc, #nm, tc##__##nm, NULL, 0);                                              \
    }                                                                                            \
    static void tc##__##nm(CT_UNUSED vx_context context, CT_UNUSED const void *arg_)

#define TEST_WITH_ARG(tc, nm, arg_type, gen)                                                     \
    static void tc##__##nm##__body(vx_context context, const arg_type *arg);                     \
    static void tc##__##nm(vx_context context, const void *arg_)                                 \
    {                                                                                            \
        tc##__##nm##__body(context, (const arg_type *)arg_);                                     \
    }                                                                                            \
    static void __attribute__((constructor)) tc##__##nm##__register(void)                        \
    {                                                                                            \
        ct_register(#tc, #nm, tc##__##nm, gen, sizeof(arg_type));                                \
    }                                                                                            \
    static void tc##__##nm##__body(CT_UNUSED vx_context context, CT_UNUSED const arg_type *arg)

#define FAIL(...) ct_fail_here(__FILE__, __LINE__, __VA_ARGS__)
#define SKIP(reason) ct_skip_here(reason)

#define ASSERT(cond)                                                                             \
    do {                                                                                         \
        if (!(cond))                                                                             \
            FAIL("assertion failed: %s", #cond);                                                 \
    } while (0)

#define ASSERT_EQ_INT(expected, actual)                                                          \
    do {                                                                                         \
        long long ct_e_ = (long long)(expected), ct_a_ = (long long)(actual);                    \
        if (ct_e_ != ct_a_)                                                                      \
            FAIL("%s: expected %lld, got %lld (%s)", #actual, ct_e_, ct_a_, #expected);          \
    } while (0)

/* expr must return `expected` (a vx_status) */
#define ASSERT_STATUS(expected, expr)                                                            \
    do {                                                                                         \
        vx_status ct_s_ = (expr);                                                                \
        if (ct_s_ != (vx_status)(expected))                                                      \
            FAIL("%s: expected status %d (%s), got %d", #expr, (int)(expected), #expected,       \
                 (int)ct_s_);                                                                    \
    } while (0)

#define VX_CALL(expr) ASSERT_STATUS(VX_SUCCESS, expr)

/* ref must be a valid object (vxGetStatus == VX_SUCCESS) */
#define ASSERT_VX_OBJECT(ref)                                                                    \
    do {                                                                                         \
        vx_status ct_s_ = vxGetStatus((vx_reference)(ref));                                      \
        if ((ref) == NULL || ct_s_ != VX_SUCCESS)                                                \
            FAIL("%s is not a valid object (status %d)", #ref, (int)ct_s_);                      \
    } while (0)

/* compare two int64 arrays element by element; the first difference fails with index and values */
void ct_expect_equal_i64(const char *file, int line, const char *what, const int64_t *expected,
                         const int64_t *actual, size_t n);
#define ASSERT_EQ_ARRAY(what, expected, actual, n)                                               \
    ct_expect_equal_i64(__FILE__, __LINE__, what, expected, actual, n)

#endif
