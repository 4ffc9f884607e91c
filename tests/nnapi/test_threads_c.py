"""NNAPI's C API from pthreads: one compilation, an execution per call on every thread; each result is
bit-identical to the same call made alone (docs/threads.md)."""
from __future__ import annotations

from conftest import compile_c, run_c
from test_nnapi_c_api import nnapi_flags

SOURCE = r"""
#define _POSIX_C_SOURCE 200809L
#include <NeuralNetworks.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IN 512
#define OUT 256
#define CALLS 400
#define MAX_THREADS 8

static ANeuralNetworksCompilation *compilation;
static float inputs[CALLS][IN], alone[CALLS][OUT], got[CALLS][OUT];
static int threads, failures;

static int run(int i, float *out)
{
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksEvent *event = NULL;
    int status = ANeuralNetworksExecution_create(compilation, &execution);
    if (status == ANEURALNETWORKS_NO_ERROR)
        status = ANeuralNetworksExecution_setInput(execution, 0, NULL, inputs[i], sizeof inputs[i]);
    if (status == ANEURALNETWORKS_NO_ERROR)
        status = ANeuralNetworksExecution_setOutput(execution, 0, NULL, out, OUT * sizeof(float));
    if (status == ANEURALNETWORKS_NO_ERROR)
        status = ANeuralNetworksExecution_startCompute(execution, &event);
    if (status == ANEURALNETWORKS_NO_ERROR)
        status = ANeuralNetworksEvent_wait(event);
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    return status;
}

static void *body(void *arg)
{
    int first = (int)(size_t)arg, i;
    for (i = first; i < CALLS; i += threads)
        if (run(i, got[i]) != ANEURALNETWORKS_NO_ERROR)
            __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static uint32_t add(ANeuralNetworksModel *model, uint32_t *count, int32_t type, uint32_t rank, const uint32_t *dims)
{
    ANeuralNetworksOperandType t = {type, rank, dims, 0.0f, 0};
    if (ANeuralNetworksModel_addOperand(model, &t) != ANEURALNETWORKS_NO_ERROR)
        exit(2);
    return (*count)++;
}

int main(int argc, char **argv)
{
    static const uint32_t in_dims[] = {1, IN}, w_dims[] = {OUT, IN}, b_dims[] = {OUT}, out_dims[] = {1, OUT};
    static float weights[OUT * IN], bias[OUT];
    ANeuralNetworksModel *model = NULL;
    pthread_t workers[MAX_THREADS];
    uint32_t count = 0, x, w, b, act, y;
    int32_t relu = 1;
    int i, wrong = 0;
    unsigned seed = 12345;

    threads = argc > 1 ? atoi(argv[1]) : 2;
    for (i = 0; i < OUT * IN; i++)
        weights[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 256.0f - 0.5f;
    for (i = 0; i < OUT; i++)
        bias[i] = (float)(i % 7) - 3.0f;
    for (i = 0; i < CALLS * IN; i++)
        (&inputs[0][0])[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 128.0f - 1.0f;
    if (ANeuralNetworksModel_create(&model) != ANEURALNETWORKS_NO_ERROR)
        return 2;
    x = add(model, &count, ANEURALNETWORKS_TENSOR_FLOAT32, 2, in_dims);
    w = add(model, &count, ANEURALNETWORKS_TENSOR_FLOAT32, 2, w_dims);
    b = add(model, &count, ANEURALNETWORKS_TENSOR_FLOAT32, 1, b_dims);
    act = add(model, &count, ANEURALNETWORKS_INT32, 0, NULL);
    y = add(model, &count, ANEURALNETWORKS_TENSOR_FLOAT32, 2, out_dims);
    {
        uint32_t op_in[] = {x, w, b, act}, op_out[] = {y};
        if (ANeuralNetworksModel_setOperandValue(model, w, weights, sizeof weights) ||
            ANeuralNetworksModel_setOperandValue(model, b, bias, sizeof bias) ||
            ANeuralNetworksModel_setOperandValue(model, act, &relu, sizeof relu) ||
            ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_FULLY_CONNECTED, 4, op_in, 1, op_out) ||
            ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &x, 1, &y) ||
            ANeuralNetworksModel_finish(model) ||
            ANeuralNetworksCompilation_create(model, &compilation) ||
            ANeuralNetworksCompilation_finish(compilation))
            return 3;
    }
    for (i = 0; i < CALLS; i++)
        if (run(i, alone[i]) != ANEURALNETWORKS_NO_ERROR)
            return 4;
    for (i = 0; i < threads; i++)
        pthread_create(&workers[i], NULL, body, (void *)(size_t)i);
    for (i = 0; i < threads; i++)
        pthread_join(workers[i], NULL);
    for (i = 0; i < CALLS; i++)
        wrong += memcmp(alone[i], got[i], sizeof alone[i]) != 0;
    printf("threads=%d calls=%d failures=%d wrong=%d\n", threads, CALLS, failures, wrong);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return failures || wrong;
}
"""


def test_pthreads_sharing_a_compilation_get_their_own_results():
    exe = compile_c(SOURCE, "nnapi_threads", nnapi_flags() + ["-pthread"])
    for threads in (2, 8):
        out = run_c(exe, str(threads), timeout=300)
        assert out.returncode == 0, out.stdout + out.stderr[-2000:]
        assert f"threads={threads} calls=400 failures=0 wrong=0" in out.stdout
