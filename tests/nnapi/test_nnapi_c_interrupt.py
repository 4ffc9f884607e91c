"""Ctrl-C (SIGINT) inside libneuralnetworks.so's entry points, while a model's kernels compile (an empty kernel
cache): a C program gets one log line naming the function, then the signal's default action, as it would without
the library; never a Python traceback or a call that reports success without having run."""
from __future__ import annotations

import re
import signal

from conftest import compile_c
from test_interrupt import run_interrupted
from test_nnapi_c_api import nnapi_flags

PROGRAM = r"""
#include <NeuralNetworks.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) do { int s_ = (call); if (s_) { printf("%s: %d\n", #call, s_); return 1; } } while (0)

static float weights[96 * 3 * 3 * 64], bias[96], input[13 * 13 * 64], output[13 * 13 * 96];

int main(void) {
    static const uint32_t in_dims[] = {1, 13, 13, 64}, w_dims[] = {96, 3, 3, 64}, b_dims[] = {96};
    static const uint32_t out_dims[] = {1, 13, 13, 96};
    ANeuralNetworksOperandType in_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 4, in_dims, 0.0f, 0};
    ANeuralNetworksOperandType w_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 4, w_dims, 0.0f, 0};
    ANeuralNetworksOperandType b_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, b_dims, 0.0f, 0};
    ANeuralNetworksOperandType out_t = {ANEURALNETWORKS_TENSOR_FLOAT32, 4, out_dims, 0.0f, 0};
    ANeuralNetworksOperandType int_t = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    int32_t values[4] = {ANEURALNETWORKS_PADDING_SAME, 1, 1, ANEURALNETWORKS_FUSED_RELU};
    uint32_t ins[7] = {0, 1, 2, 3, 4, 5, 6}, out = 7, i;
    for (i = 0; i < sizeof weights / sizeof *weights; i++)
        weights[i] = (float)(i % 7) / 7.0f - 0.5f;
    CHECK(ANeuralNetworksModel_create(&model));
    CHECK(ANeuralNetworksModel_addOperand(model, &in_t));
    CHECK(ANeuralNetworksModel_addOperand(model, &w_t));
    CHECK(ANeuralNetworksModel_addOperand(model, &b_t));
    for (i = 0; i < 4; i++) {
        CHECK(ANeuralNetworksModel_addOperand(model, &int_t));
        CHECK(ANeuralNetworksModel_setOperandValue(model, 3 + i, &values[i], sizeof values[i]));
    }
    CHECK(ANeuralNetworksModel_addOperand(model, &out_t));
    CHECK(ANeuralNetworksModel_setOperandValue(model, 1, weights, sizeof weights));
    CHECK(ANeuralNetworksModel_setOperandValue(model, 2, bias, sizeof bias));
    CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_CONV_2D, 7, ins, 1, &out));
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, ins, 1, &out));
    CHECK(ANeuralNetworksModel_finish(model));
    printf("processing\n");
    fflush(stdout);
    CHECK(ANeuralNetworksCompilation_create(model, &compilation));
    CHECK(ANeuralNetworksCompilation_finish(compilation));
    CHECK(ANeuralNetworksExecution_create(compilation, &execution));
    CHECK(ANeuralNetworksExecution_setInput(execution, 0, NULL, input, sizeof input));
    CHECK(ANeuralNetworksExecution_setOutput(execution, 0, NULL, output, sizeof output));
    CHECK(ANeuralNetworksExecution_compute(execution));
    printf("returned\n");
    return 0;
}
"""


def test_a_c_program_interrupted_in_an_nnapi_call_gets_a_log_line_then_the_default_action_of_sigint(tmp_path):
    code, output = run_interrupted([str(compile_c(PROGRAM, "nnapi_interrupt", nnapi_flags()))], tmp_path)
    assert code == -signal.SIGINT, output
    line = r"^libneuralnetworks: ANeuralNetworks\w+: interrupted by SIGINT \(Ctrl-C\)"
    assert re.search(line, output, re.MULTILINE), output
    assert "returned" not in output and "Traceback" not in output, output
