"""The operand types of API level 29 through NNAPI's C API: a compiled program adds operands of each type,
gives them values and per-channel scales (``ANeuralNetworksModel_setOperandSymmPerChannelQuantParams``), sets
execution inputs of each type, and prints the ResultCode of every call the header's text refuses."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import compile_c, run_c
from test_nnapi_c_api import nnapi_flags

PROGRAM = r"""
#include <NeuralNetworks.h>
#include <stdio.h>
#include <string.h>

#define SHOW(label, call) printf("%s %d\n", label, (int)(call))

static const uint32_t three[] = {3}, two_three[] = {2, 3}, three_two[] = {3, 2};

static int add(ANeuralNetworksModel *model, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
               int32_t zero)
{
    ANeuralNetworksOperandType t = {type, rank, dims, scale, zero};
    return ANeuralNetworksModel_addOperand(model, &t);
}

int main(void)
{
    ANeuralNetworksModel *model = NULL, *lacking = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksEvent *event = NULL;
    const float scales[3] = {0.5f, 0.25f, 2.0f}, bad_scales[3] = {0.5f, 0.0f, 2.0f};
    ANeuralNetworksSymmPerChannelQuantParams params = {0, 3, scales};
    ANeuralNetworksSymmPerChannelQuantParams short_params = {0, 2, scales};
    ANeuralNetworksSymmPerChannelQuantParams zero_scale = {0, 3, bad_scales};
    ANeuralNetworksSymmPerChannelQuantParams bad_axis = {2, 3, scales};
    ANeuralNetworksSymmPerChannelQuantParams null_scales = {0, 3, NULL};
    const int8_t weights[6] = {1, -2, 3, -4, 5, -127};
    const uint8_t flag = 2; /* any non-zero byte is true */
    const uint16_t half[3] = {0x3c00, 0xc000, 0x3555}; /* 1, -2, 0.333 */
    const uint8_t bools[3] = {0, 5, 1};
    const int16_t shorts[3] = {-32768, 0, 32767};
    const uint16_t ushorts[3] = {0, 40000, 65535};
    const int8_t bytes[3] = {-128, 0, 127};
    float x[6] = {-1, 2, -3, 4, -5, 6}, y[6] = {0};
    uint32_t relu_in = 0, relu_out = 1, inputs[6] = {0, 2, 3, 4, 5, 6};
    int i;

    ANeuralNetworksModel_create(&model);
    SHOW("add_x", add(model, ANEURALNETWORKS_TENSOR_FLOAT32, 2, two_three, 0.0f, 0));
    SHOW("add_y", add(model, ANEURALNETWORKS_TENSOR_FLOAT32, 2, two_three, 0.0f, 0));
    SHOW("add_tensor_float16", add(model, ANEURALNETWORKS_TENSOR_FLOAT16, 1, three, 0.0f, 0));        /* 2 */
    SHOW("add_tensor_bool8", add(model, ANEURALNETWORKS_TENSOR_BOOL8, 1, three, 0.0f, 0));            /* 3 */
    SHOW("add_quant16_symm", add(model, ANEURALNETWORKS_TENSOR_QUANT16_SYMM, 1, three, 0.125f, 0));   /* 4 */
    SHOW("add_quant16_asymm", add(model, ANEURALNETWORKS_TENSOR_QUANT16_ASYMM, 1, three, 0.5f, 65535)); /* 5 */
    SHOW("add_quant8_symm", add(model, ANEURALNETWORKS_TENSOR_QUANT8_SYMM, 1, three, 0.25f, 0));      /* 6 */
    SHOW("add_per_channel", add(model, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 2, three_two, 0.0f, 0)); /* 7 */
    SHOW("add_bool", add(model, ANEURALNETWORKS_BOOL, 0, NULL, 0.0f, 0));                             /* 8 */
    SHOW("add_float16", add(model, ANEURALNETWORKS_FLOAT16, 0, NULL, 0.0f, 0));                       /* 9 */
    SHOW("bad_quant16_symm_zero_point", add(model, ANEURALNETWORKS_TENSOR_QUANT16_SYMM, 1, three, 0.125f, 1));
    SHOW("bad_quant16_asymm_zero_point", add(model, ANEURALNETWORKS_TENSOR_QUANT16_ASYMM, 1, three, 0.5f, 65536));
    SHOW("bad_quant8_symm_scale", add(model, ANEURALNETWORKS_TENSOR_QUANT8_SYMM, 1, three, 0.0f, 0));
    SHOW("bad_per_channel_scale", add(model, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 1, three, 1.0f, 0));
    SHOW("bad_float16_scale", add(model, ANEURALNETWORKS_TENSOR_FLOAT16, 1, three, 1.0f, 0));
    SHOW("bad_bool_dims", add(model, ANEURALNETWORKS_BOOL, 1, three, 0.0f, 0));

    SHOW("null_channel_model", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(NULL, 7, &params));
    SHOW("null_channel_params", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, NULL));
    SHOW("null_channel_scales", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &null_scales));
    SHOW("bad_channel_count", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &short_params));
    SHOW("bad_channel_scale", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &zero_scale));
    SHOW("bad_channel_axis", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &bad_axis));
    SHOW("bad_channel_operand_type", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 6, &params));
    SHOW("bad_channel_operand_index", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 70, &params));
    SHOW("channel_params", ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &params));
    SHOW("value_per_channel", ANeuralNetworksModel_setOperandValue(model, 7, weights, sizeof weights));
    SHOW("value_bool", ANeuralNetworksModel_setOperandValue(model, 8, &flag, 1));
    SHOW("value_float16", ANeuralNetworksModel_setOperandValue(model, 9, half, 2));
    SHOW("bad_value_float16_length", ANeuralNetworksModel_setOperandValue(model, 9, half, 4));
    SHOW("add_operation", ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_RELU, 1, &relu_in, 1, &relu_out));
    SHOW("identify", ANeuralNetworksModel_identifyInputsAndOutputs(model, 6, inputs, 1, &relu_out));
    SHOW("finish", ANeuralNetworksModel_finish(model));
    SHOW("state_channel_after_finish",
         ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 7, &params));

    ANeuralNetworksModel_create(&lacking);
    add(lacking, ANEURALNETWORKS_TENSOR_FLOAT32, 2, two_three, 0.0f, 0);
    add(lacking, ANEURALNETWORKS_TENSOR_FLOAT32, 2, two_three, 0.0f, 0);
    add(lacking, ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 2, three_two, 0.0f, 0);
    ANeuralNetworksModel_setOperandValue(lacking, 2, weights, sizeof weights);
    ANeuralNetworksModel_addOperation(lacking, ANEURALNETWORKS_RELU, 1, &relu_in, 1, &relu_out);
    ANeuralNetworksModel_identifyInputsAndOutputs(lacking, 1, &relu_in, 1, &relu_out);
    SHOW("bad_finish_without_channel_params", ANeuralNetworksModel_finish(lacking));
    ANeuralNetworksModel_free(lacking);

    ANeuralNetworksCompilation_create(model, &compilation);
    SHOW("compile", ANeuralNetworksCompilation_finish(compilation));
    ANeuralNetworksExecution_create(compilation, &execution);
    SHOW("input_float32", ANeuralNetworksExecution_setInput(execution, 0, NULL, x, sizeof x));
    SHOW("input_float16", ANeuralNetworksExecution_setInput(execution, 1, NULL, half, sizeof half));
    SHOW("input_bool8", ANeuralNetworksExecution_setInput(execution, 2, NULL, bools, sizeof bools));
    SHOW("input_quant16_symm", ANeuralNetworksExecution_setInput(execution, 3, NULL, shorts, sizeof shorts));
    SHOW("input_quant16_asymm", ANeuralNetworksExecution_setInput(execution, 4, NULL, ushorts, sizeof ushorts));
    SHOW("bad_input_quant8_symm_length", ANeuralNetworksExecution_setInput(execution, 5, NULL, bytes, 6));
    SHOW("input_quant8_symm", ANeuralNetworksExecution_setInput(execution, 5, NULL, bytes, sizeof bytes));
    {
        ANeuralNetworksOperandType wrong = {ANEURALNETWORKS_TENSOR_QUANT16_SYMM, 1, three, 0.5f, 0};
        SHOW("bad_input_quantization", ANeuralNetworksExecution_setInput(execution, 3, &wrong, shorts, sizeof shorts));
    }
    SHOW("output", ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y));
    ANeuralNetworksExecution_startCompute(execution, &event);
    SHOW("wait", ANeuralNetworksEvent_wait(event));
    printf("values");
    for (i = 0; i < 6; i++)
        printf(" %g", y[i]);
    printf("\n");
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""

EXPECTED = {
    "add_x": 0, "add_y": 0, "add_tensor_float16": 0, "add_tensor_bool8": 0, "add_quant16_symm": 0,
    "add_quant16_asymm": 0, "add_quant8_symm": 0, "add_per_channel": 0, "add_bool": 0, "add_float16": 0,
    "bad_quant16_symm_zero_point": 4, "bad_quant16_asymm_zero_point": 4, "bad_quant8_symm_scale": 4,
    "bad_per_channel_scale": 4, "bad_float16_scale": 4, "bad_bool_dims": 4,
    "null_channel_model": 3, "null_channel_params": 3, "null_channel_scales": 3, "bad_channel_count": 4,
    "bad_channel_scale": 4, "bad_channel_axis": 4, "bad_channel_operand_type": 4, "bad_channel_operand_index": 4,
    "channel_params": 0, "value_per_channel": 0, "value_bool": 0, "value_float16": 0, "bad_value_float16_length": 4,
    "add_operation": 0, "identify": 0, "finish": 0, "state_channel_after_finish": 6,
    "bad_finish_without_channel_params": 4, "compile": 0,
    "input_float32": 0, "input_float16": 0, "input_bool8": 0, "input_quant16_symm": 0, "input_quant16_asymm": 0,
    "bad_input_quant8_symm_length": 4, "input_quant8_symm": 0, "bad_input_quantization": 4, "output": 0, "wait": 0,
}


@pytest.fixture(scope="module")
def run():
    return run_c(compile_c(PROGRAM, "nnapi_types", nnapi_flags()), timeout=300)


def test_each_call_on_the_new_types_returns_the_headers_code(run):
    assert run.returncode == 0, run.stdout + run.stderr
    codes = {line.split()[0]: int(line.split()[1]) for line in run.stdout.splitlines() if line.split()[0] in EXPECTED}
    assert codes == EXPECTED


def test_refusals_name_the_function_and_the_problem(run):
    log = run.stderr
    assert "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams: channelQuant is NULL" in log
    assert "ANeuralNetworksModel_setOperandSymmPerChannelQuantParams: channelQuant->scales is NULL" in log
    assert "2 scales for channel dimension 0 of size 3" in log
    assert "TENSOR_QUANT16_SYMM zero point 1 must be 0" in log
    assert "ANeuralNetworksModel_finish: operand 2: TENSOR_QUANT8_SYMM_PER_CHANNEL needs its channel" in log


def test_the_model_with_every_new_type_runs_from_c(run):
    values = next(line.split()[1:] for line in run.stdout.splitlines() if line.startswith("values"))
    np.testing.assert_array_equal(np.array(values, float), np.maximum([-1, 2, -3, 4, -5, 6], 0))
