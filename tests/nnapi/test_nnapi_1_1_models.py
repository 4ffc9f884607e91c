"""A TFLite-style model of NNAPI 1.1's operations through the Python front end and the C API against NumPy, and
the relaxed-computation switch (``relax_computation_float32_to_float16``, C
``ANeuralNetworksModel_relaxComputationFloat32toFloat16``): recorded in the HAL model and the ``.nnapi`` file,
settable until ``finish``, computed in float32 either way."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import compile_c, run_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
F32T, I32T = T.TENSOR_FLOAT32, T.TENSOR_INT32

MEAN = np.array([0.5, -0.25, 1.0], np.float32)
STD = np.array([2.0, 0.5, 4.0], np.float32)


def model_input() -> np.ndarray:
    """The input both front ends feed: ``(i * 37 % 23) / 4 - 2`` for element i (the C program's formula)."""
    return np.array([(i * 37 % 23) / 4.0 - 2.0 for i in range(108)], np.float32).reshape(1, 6, 6, 3)


def numpy_reference(x: np.ndarray) -> np.ndarray:
    """The model in NumPy: pad, space to batch by 2x2, normalize, back to space, channels first, mean over the
    width, squeeze, odd rows of each channel."""
    padded = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])  # [1, 8, 8, 3]
    batch = padded.reshape(1, 4, 2, 4, 2, 3).transpose(2, 4, 0, 1, 3, 5).reshape(4, 4, 4, 3)
    normal = (batch - MEAN) / STD
    space = normal.reshape(2, 2, 1, 4, 4, 3).transpose(2, 3, 0, 4, 1, 5).reshape(1, 8, 8, 3)
    channels = space.transpose(0, 3, 1, 2)  # [1, 3, 8, 8]
    mean = channels.astype(np.float64).mean(axis=3, keepdims=True)  # [1, 3, 8, 1]
    return mean[0, :, 1:7:2, 0]  # squeeze the width, then rows 1, 3, 5 of each channel: [3, 3]


def build_model(relaxed: bool = False) -> nnapi.Model:
    m = nnapi.Model()

    def tensor(dims):
        return m.add_operand(F32T, dims)

    def ints(values):
        value = np.array(values, np.int32)
        k = m.add_operand(I32T, list(value.shape))
        m.set_operand_value(k, value)
        return k

    def scalar(v):
        k = m.add_operand(T.INT32)
        m.set_operand_value(k, v)
        return k

    def const(values):
        k = m.add_operand(F32T, [len(values)])
        m.set_operand_value(k, values)
        return k
    x = tensor([1, 6, 6, 3])
    padded, batch, centred, normal = tensor([1, 8, 8, 3]), tensor([4, 4, 4, 3]), tensor([4, 4, 4, 3]), tensor([4, 4, 4, 3])
    space, channels, mean, squeezed, out = (tensor([1, 8, 8, 3]), tensor([1, 3, 8, 8]), tensor([1, 3, 8, 1]),
                                            tensor([1, 3, 8]), tensor([3, 3]))
    m.add_operation(OP.PAD, [x, ints([[0, 0], [1, 1], [1, 1], [0, 0]])], [padded])
    m.add_operation(OP.SPACE_TO_BATCH_ND, [padded, ints([2, 2]), ints([[0, 0], [0, 0]])], [batch])
    m.add_operation(OP.SUB, [batch, const(MEAN), scalar(0)], [centred])
    m.add_operation(OP.DIV, [centred, const(STD), scalar(0)], [normal])
    m.add_operation(OP.BATCH_TO_SPACE_ND, [normal, ints([2, 2])], [space])
    m.add_operation(OP.TRANSPOSE, [space, ints([0, 3, 1, 2])], [channels])
    m.add_operation(OP.MEAN, [channels, ints([-1]), scalar(1)], [mean])
    m.add_operation(OP.SQUEEZE, [mean, ints([3])], [squeezed])
    m.add_operation(OP.STRIDED_SLICE, [squeezed, ints([0, 0, 1]), ints([1, 3, -1]), ints([1, 1, 2]), scalar(1),
                                       scalar(0), scalar(1)], [out])
    m.identify_inputs_and_outputs([x], [out])
    if relaxed:
        m.relax_computation_float32_to_float16(True)
    m.finish()
    return m


def run_python(m: nnapi.Model) -> np.ndarray:
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, model_input())
    out = np.zeros((3, 3), np.float32)
    e.set_output(0, out)
    e.compute()
    c.release()
    return out


def test_a_tflite_style_model_of_the_1_1_operations_matches_numpy_through_the_python_front_end():
    got = run_python(build_model())
    np.testing.assert_allclose(got, numpy_reference(model_input()), rtol=1e-6, atol=1e-6)


def test_a_relaxed_model_is_recorded_and_computes_in_float32_like_a_strict_one(tmp_path):
    relaxed, strict = build_model(relaxed=True), build_model()
    assert relaxed.relaxed and relaxed.to_hal().relaxComputationFloat32toFloat16
    assert not strict.to_hal().relaxComputationFloat32toFloat16
    np.testing.assert_array_equal(run_python(relaxed), run_python(strict))  # float32 throughout: the same bits
    path = tmp_path / "relaxed.nnapi"
    relaxed.save(path)
    assert nnapi.hal.load_model(path).relaxComputationFloat32toFloat16
    strict.save(path)
    assert not nnapi.hal.load_model(path).relaxComputationFloat32toFloat16


def test_a_model_file_written_without_the_relaxed_key_reads_as_strict(tmp_path):
    path = tmp_path / "relaxed.nnapi"
    build_model(relaxed=True).save(path)
    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files}
    description = json.loads(members["model.json"].tobytes())
    del description["relaxComputationFloat32toFloat16"]  # as files written before the key existed
    members["model.json"] = np.frombuffer(json.dumps(description).encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **members)
    assert nnapi.hal.load_model(path).relaxComputationFloat32toFloat16 is False


def test_relaxing_a_finished_model_is_refused_and_a_later_call_undoes_an_earlier_one():
    m = build_model()
    with pytest.raises(nnapi.NNAPIError, match="finished"):
        m.relax_computation_float32_to_float16(True)
    assert not m.to_hal().relaxComputationFloat32toFloat16
    open_model = nnapi.Model()
    open_model.relax_computation_float32_to_float16(True)
    open_model.relax_computation_float32_to_float16(False)
    assert not open_model.relaxed


def test_the_driver_reports_a_relaxed_performance():
    status, capabilities = nnapi.hal.Device().get_capabilities()
    assert status == nnapi.ErrorStatus.NONE
    assert capabilities.relaxedFloat32toFloat16Performance.execTime > 0


PROGRAM = r"""
#include <NeuralNetworks.h>
#include <stdio.h>

static ANeuralNetworksModel *model;
static uint32_t count;

static uint32_t tensor(uint32_t rank, const uint32_t *dims)
{
    ANeuralNetworksOperandType type = {ANEURALNETWORKS_TENSOR_FLOAT32, rank, dims, 0.0f, 0};
    ANeuralNetworksModel_addOperand(model, &type);
    return count++;
}

static uint32_t ints(uint32_t rank, const uint32_t *dims, const int32_t *values, size_t bytes)
{
    ANeuralNetworksOperandType type = {ANEURALNETWORKS_TENSOR_INT32, rank, dims, 0.0f, 0};
    ANeuralNetworksModel_addOperand(model, &type);
    ANeuralNetworksModel_setOperandValue(model, (int32_t)count, values, bytes);
    return count++;
}

static uint32_t scalar(int32_t value)
{
    ANeuralNetworksOperandType type = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    ANeuralNetworksModel_addOperand(model, &type);
    ANeuralNetworksModel_setOperandValue(model, (int32_t)count, &value, sizeof value);
    return count++;
}

static uint32_t floats(const float *values)
{
    static const uint32_t three[] = {3};
    uint32_t k = tensor(1, three);
    ANeuralNetworksModel_setOperandValue(model, (int32_t)k, values, 3 * sizeof(float));
    return k;
}

#define OPERATION(code, ins, out) ANeuralNetworksModel_addOperation(model, code, sizeof ins / sizeof *ins, ins, 1, &out)

int main(void)
{
    static const uint32_t d_in[] = {1, 6, 6, 3}, d_pad[] = {1, 8, 8, 3}, d_batch[] = {4, 4, 4, 3},
                          d_chw[] = {1, 3, 8, 8}, d_mean[] = {1, 3, 8, 1}, d_sq[] = {1, 3, 8}, d_out[] = {3, 3},
                          two[] = {2}, four[] = {4}, three[] = {3}, one[] = {1}, pairs4[] = {4, 2}, pairs2[] = {2, 2};
    static const int32_t pads[] = {0, 0, 1, 1, 1, 1, 0, 0}, block[] = {2, 2}, none[] = {0, 0, 0, 0},
                         perm[] = {0, 3, 1, 2}, last[] = {-1}, width[] = {3}, begin[] = {0, 0, 1},
                         end[] = {1, 3, -1}, strides[] = {1, 1, 2};
    static const float mean[] = {0.5f, -0.25f, 1.0f}, std[] = {2.0f, 0.5f, 4.0f};
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksEvent *event = NULL;
    uint32_t x, padded, batch, centred, normal, space, chw, averaged, squeezed, out;
    float input[108], output[9];
    int i, status;

    printf("null %d\n", ANeuralNetworksModel_relaxComputationFloat32toFloat16(NULL, true));
    ANeuralNetworksModel_create(&model);
    x = tensor(4, d_in);
    padded = tensor(4, d_pad);
    {
        uint32_t ins[] = {x, ints(2, pairs4, pads, sizeof pads)};
        OPERATION(ANEURALNETWORKS_PAD, ins, padded);
    }
    batch = tensor(4, d_batch);
    {
        uint32_t ins[] = {padded, ints(1, two, block, sizeof block), ints(2, pairs2, none, sizeof none)};
        OPERATION(ANEURALNETWORKS_SPACE_TO_BATCH_ND, ins, batch);
    }
    centred = tensor(4, d_batch);
    {
        uint32_t ins[] = {batch, floats(mean), scalar(ANEURALNETWORKS_FUSED_NONE)};
        OPERATION(ANEURALNETWORKS_SUB, ins, centred);
    }
    normal = tensor(4, d_batch);
    {
        uint32_t ins[] = {centred, floats(std), scalar(ANEURALNETWORKS_FUSED_NONE)};
        OPERATION(ANEURALNETWORKS_DIV, ins, normal);
    }
    space = tensor(4, d_pad);
    {
        uint32_t ins[] = {normal, ints(1, two, block, sizeof block)};
        OPERATION(ANEURALNETWORKS_BATCH_TO_SPACE_ND, ins, space);
    }
    chw = tensor(4, d_chw);
    {
        uint32_t ins[] = {space, ints(1, four, perm, sizeof perm)};
        OPERATION(ANEURALNETWORKS_TRANSPOSE, ins, chw);
    }
    averaged = tensor(4, d_mean);
    {
        uint32_t ins[] = {chw, ints(1, one, last, sizeof last), scalar(1)};
        OPERATION(ANEURALNETWORKS_MEAN, ins, averaged);
    }
    squeezed = tensor(3, d_sq);
    {
        uint32_t ins[] = {averaged, ints(1, one, width, sizeof width)};
        OPERATION(ANEURALNETWORKS_SQUEEZE, ins, squeezed);
    }
    out = tensor(2, d_out);
    {
        uint32_t ins[] = {squeezed, ints(1, three, begin, sizeof begin), ints(1, three, end, sizeof end),
                          ints(1, three, strides, sizeof strides), scalar(1), scalar(0), scalar(1)};
        OPERATION(ANEURALNETWORKS_STRIDED_SLICE, ins, out);
    }
    ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &x, 1, &out);
    printf("relax %d\n", ANeuralNetworksModel_relaxComputationFloat32toFloat16(model, true));
    printf("finish %d\n", ANeuralNetworksModel_finish(model));
    printf("relax_after_finish %d\n", ANeuralNetworksModel_relaxComputationFloat32toFloat16(model, false));
    printf("compile %d\n", ANeuralNetworksCompilation_create(model, &compilation) |
                           ANeuralNetworksCompilation_finish(compilation));
    for (i = 0; i < 108; i++)
        input[i] = (float)(i * 37 % 23) / 4.0f - 2.0f;
    ANeuralNetworksExecution_create(compilation, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, NULL, input, sizeof input);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, output, sizeof output);
    ANeuralNetworksExecution_startCompute(execution, &event);
    status = ANeuralNetworksEvent_wait(event);
    printf("run %d\n", status);
    for (i = 0; i < 9; i++)
        printf("%.9g\n", output[i]);
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""


def test_the_model_through_the_c_api_matches_numpy_and_the_python_front_end_and_relaxes_before_finish_only():
    run = run_c(compile_c(PROGRAM, "nnapi_1_1", nnapi_flags()), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    codes = dict(line.split() for line in lines[:6])
    assert codes == {"null": "3", "relax": "0", "finish": "0", "relax_after_finish": "6", "compile": "0",
                     "run": "0"}  # UNEXPECTED_NULL, NO_ERROR, BAD_STATE after finish
    got = np.array([float(v) for v in lines[6:]], np.float32).reshape(3, 3)
    np.testing.assert_allclose(got, numpy_reference(model_input()), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got, run_python(build_model(relaxed=True)))
