"""NNAPI's C API (``NeuralNetworks.h``, libneuralnetworks.so): the shipped example built with the flags
``python -m openvx_nn.config`` prints and checked against the Python front end, the exported names,
and every ResultCode the API gives for NULL arguments, calls out of order and bad data."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
from conftest import C_FLAGS, ROOT, compile_c, run_c

from openvx_nn import nnapi
from openvx_nn.library import library_path

T = nnapi.OperandType
OP = nnapi.OperationType
LIBRARY = library_path().parent / "libneuralnetworks.so"


def nnapi_flags() -> list[str]:
    out = subprocess.run([sys.executable, "-m", "openvx_nn.config", "--cflags", "--nnapi-libs"], check=True,
                         capture_output=True, text=True).stdout
    return shlex.split(out)


API_27 = {f"ANeuralNetworks{name}" for name in (
    "Memory_createFromFd", "Memory_free", "Model_create", "Model_free", "Model_finish", "Model_addOperand",
    "Model_setOperandValue", "Model_setOperandValueFromMemory", "Model_addOperation",
    "Model_identifyInputsAndOutputs", "Compilation_create", "Compilation_free", "Compilation_setPreference",
    "Compilation_finish", "Execution_create", "Execution_free", "Execution_setInput", "Execution_setInputFromMemory",
    "Execution_setOutput", "Execution_setOutputFromMemory", "Execution_startCompute", "Event_wait", "Event_free")}
API_28 = {"ANeuralNetworksModel_relaxComputationFloat32toFloat16"}
API_29 = {f"ANeuralNetworks{name}" for name in (
    "_getDeviceCount", "_getDevice", "Device_getName", "Device_getType", "Device_getVersion",
    "Device_getFeatureLevel", "Model_getSupportedOperationsForDevices", "Model_setOperandSymmPerChannelQuantParams",
    "Compilation_createForDevices", "Execution_compute", "Execution_getOutputOperandRank",
    "Execution_getOutputOperandDimensions", "Execution_setMeasureTiming", "Execution_getDuration", "Burst_create",
    "Burst_free", "Execution_burstCompute", "Memory_createFromAHardwareBuffer")}
EXPORTED = API_27 | API_28 | API_29
"""The functions libneuralnetworks.so exports, by the API level that introduced them."""


def test_only_the_nnapi_names_are_exported_under_the_loader_name():
    dynamic = subprocess.run(["nm", "-D", "--defined-only", str(LIBRARY)], capture_output=True, text=True,
                             check=True).stdout
    names = {line.split()[-1] for line in dynamic.splitlines() if line.strip()}
    header = (ROOT / "include" / "NeuralNetworks.h").read_text()
    declared = set(re.findall(r"\b(ANeuralNetworks\w+)\(", header))
    assert names == declared == EXPORTED
    soname = subprocess.run(["readelf", "-d", str(LIBRARY)], capture_output=True, text=True, check=True).stdout
    assert "[libneuralnetworks.so]" in soname


def _example_in_python(batch: int) -> np.ndarray:
    """The model of csrc/examples/nnapi_cnn.c through the Python front end, with the example's numbers."""
    filt = np.array([128 + (i * 37) % 41 - 20 for i in range(18)], np.uint8).reshape(2, 3, 3, 1)
    fc = np.array([128 + (i * 53) % 61 - 30 for i in range(54)], np.uint8).reshape(3, 18)
    x = np.array([(i * 29 + 7) % 64 for i in range(batch * 36)], np.uint8).reshape(batch, 6, 6, 1)
    s_in, s_w, s_conv, s_fc = np.float32(1 / 64), np.float32(0.05), np.float32(0.1), np.float32(0.02)
    m = nnapi.Model()

    def const(kind, value, dims, scale=0.0, zero=0):
        k = m.add_operand(kind, dims, scale, zero)
        m.set_operand_value(k, value)
        return k
    q8 = T.TENSOR_QUANT8_ASYMM
    xk = m.add_operand(q8, [0, 6, 6, 1], s_in, 0)
    conv = m.add_operand(q8, [0, 6, 6, 2], s_conv, 0)
    m.add_operation(OP.CONV_2D, [xk, const(q8, filt, [2, 3, 3, 1], s_w, 128),
                                 const(T.TENSOR_INT32, np.array([-20, 40], np.int32), [2], np.float32(s_in * s_w))]
                    + [const(T.INT32, v, []) for v in (1, 1, 1, 1)], [conv])
    pool = m.add_operand(q8, [0, 3, 3, 2], s_conv, 0)
    m.add_operation(OP.MAX_POOL_2D, [conv] + [const(T.INT32, v, []) for v in (2, 2, 2, 2, 2, 0)], [pool])
    flat = m.add_operand(q8, [0, 18], s_conv, 0)
    m.add_operation(OP.RESHAPE, [pool, const(T.TENSOR_INT32, np.array([-1, 18], np.int32), [2])], [flat])
    logits = m.add_operand(q8, [0, 3], np.float32(0.1), 128)
    m.add_operation(OP.FULLY_CONNECTED, [flat, const(q8, fc, [3, 18], s_fc, 128),
                                         const(T.TENSOR_INT32, np.array([100, -50, 0], np.int32), [3],
                                               np.float32(s_conv * s_fc)), const(T.INT32, 0, [])], [logits])
    y = m.add_operand(q8, [0, 3], np.float32(1 / 256), 0)
    m.add_operation(OP.SOFTMAX, [logits, const(T.FLOAT32, 1.0, [])], [y])
    m.identify_inputs_and_outputs([xk], [y])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, x)
    out = np.zeros((batch, 3), np.uint8)
    e.set_output(0, out)
    e.compute()
    c.release()
    return out


def test_the_c_example_builds_with_the_config_flags_and_matches_the_python_front_end(tmp_path):
    exe = tmp_path / "nnapi_cnn"
    build = subprocess.run(["cc", *C_FLAGS, str(ROOT / "csrc" / "examples" / "nnapi_cnn.c"), "-o", str(exe),
                            *nnapi_flags()], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], env={}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    printed = [[int(v) for v in re.findall(r"(\d+) \(", line)] for line in run.stdout.splitlines()]
    np.testing.assert_array_equal(np.array(printed), _example_in_python(2))


PROLOGUE = r"""
#include <NeuralNetworks.h>
#include <stdio.h>

#define SHOW(label, call) printf("%s %d\n", label, (int)(call))

/* out = RELU(in), both of unknown size (an execution gives it through setInput's type); finished if finish. */
static ANeuralNetworksModel *relu_model(int finish)
{
    static const uint32_t unknown[] = {0};
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksOperandType f = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, unknown, 0.0f, 0};
    uint32_t in = 0, out = 1;
    ANeuralNetworksModel_create(&model);
    ANeuralNetworksModel_addOperand(model, &f);
    ANeuralNetworksModel_addOperand(model, &f);
    ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_RELU, 1, &in, 1, &out);
    ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &in, 1, &out);
    if (finish)
        ANeuralNetworksModel_finish(model);
    return model;
}
"""
"""What the C programs of the NNAPI tests share: the headers, ``SHOW`` (a call's label and code, one line) and
``relu_model``."""

ERRORS = r"""
#define _POSIX_C_SOURCE 200809L
""" + PROLOGUE + r"""
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FIRST(a, b) ((a) ? (a) : (b)) /* the first failing call's code */

static const uint32_t two[] = {2};

/* EMBEDDING_LOOKUP of a 2x2 table: an index out of range fails the execution (OP_FAILED at wait). */
static int failing_lookup(void)
{
    static const uint32_t one[] = {1}, table_dims[] = {2, 2}, row[] = {1, 2};
    static const float table[4] = {1, 2, 3, 4};
    ANeuralNetworksOperandType index_type = {ANEURALNETWORKS_TENSOR_INT32, 1, one, 0.0f, 0};
    ANeuralNetworksOperandType table_type = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, table_dims, 0.0f, 0};
    ANeuralNetworksOperandType row_type = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, row, 0.0f, 0};
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksEvent *event = NULL;
    uint32_t ins[2] = {0, 1}, out = 2;
    int32_t lookup = 5;
    float result[2];
    int status;
    ANeuralNetworksModel_create(&model);
    ANeuralNetworksModel_addOperand(model, &index_type);
    ANeuralNetworksModel_addOperand(model, &table_type);
    ANeuralNetworksModel_addOperand(model, &row_type);
    ANeuralNetworksModel_setOperandValue(model, 1, table, sizeof table);
    ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_EMBEDDING_LOOKUP, 2, ins, 1, &out);
    ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, ins, 1, &out);
    ANeuralNetworksModel_finish(model);
    ANeuralNetworksCompilation_create(model, &compilation);
    ANeuralNetworksCompilation_finish(compilation);
    ANeuralNetworksExecution_create(compilation, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, NULL, &lookup, sizeof lookup);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, result, sizeof result);
    ANeuralNetworksExecution_startCompute(execution, &event);
    status = ANeuralNetworksEvent_wait(event);
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return status;
}

int main(void)
{
    ANeuralNetworksModel *model = NULL, *open_model;
    ANeuralNetworksCompilation *compilation = NULL, *c2 = NULL;
    ANeuralNetworksExecution *execution = NULL, *e2 = NULL;
    ANeuralNetworksEvent *event = NULL;
    ANeuralNetworksMemory *memory = NULL;
    ANeuralNetworksOperandType f2 = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, two, 0.0f, 0};
    ANeuralNetworksOperandType bad_type = {99, 0, NULL, 0.0f, 0};
    ANeuralNetworksOperandType int_type = {ANEURALNETWORKS_TENSOR_INT32, 1, two, 0.0f, 0};
    float x[2] = {-1.5f, 2.5f}, y[2] = {7, 7};
    uint32_t zero = 0;
    int fd;
    char path[] = "/tmp/nnapi_errors_XXXXXX";

    /* UNEXPECTED_NULL */
    SHOW("null_model_create", ANeuralNetworksModel_create(NULL));
    SHOW("null_model_finish", ANeuralNetworksModel_finish(NULL));
    SHOW("null_add_operand_type", ANeuralNetworksModel_addOperand(relu_model(0), NULL));
    SHOW("null_set_value_buffer", ANeuralNetworksModel_setOperandValue(relu_model(0), 0, NULL, 8));
    SHOW("null_add_operation_inputs", ANeuralNetworksModel_addOperation(relu_model(0), 19, 1, NULL, 1, &zero));
    SHOW("null_compilation_out", ANeuralNetworksCompilation_create(relu_model(1), NULL));
    SHOW("null_execution_create", ANeuralNetworksExecution_create(NULL, &execution));
    SHOW("null_start_event", ANeuralNetworksExecution_startCompute(NULL, NULL));
    SHOW("null_event_wait", ANeuralNetworksEvent_wait(NULL));
    SHOW("null_memory_out", ANeuralNetworksMemory_createFromFd(8, PROT_READ, 0, 0, NULL));
    SHOW("null_output_buffer", ANeuralNetworksExecution_setOutput((ANeuralNetworksExecution *)16, 0, NULL, NULL, 8));
    ANeuralNetworksModel_free(NULL); /* no-ops */
    ANeuralNetworksEvent_free(NULL);

    /* BAD_DATA */
    open_model = relu_model(0);
    SHOW("bad_operand_type", ANeuralNetworksModel_addOperand(open_model, &bad_type));
    SHOW("bad_operand_index", ANeuralNetworksModel_setOperandValue(open_model, 7, x, sizeof x));
    SHOW("bad_value_length", ANeuralNetworksModel_addOperand(open_model, &f2) |
                             ANeuralNetworksModel_setOperandValue(open_model, 2, x, 4));
    SHOW("bad_operation_type", ANeuralNetworksModel_addOperation(open_model, 1234, 1, &zero, 1, &zero));
    {
        ANeuralNetworksOperandType garbage = {ANEURALNETWORKS_TENSOR_FLOAT32, 1u << 30, two, 0.0f, 0};
        SHOW("bad_dimension_count", ANeuralNetworksModel_addOperand(open_model, &garbage));
    }
    SHOW("bad_handle", ANeuralNetworksModel_finish((ANeuralNetworksModel *)0x1234));
    {
        ANeuralNetworksModel *wrong = NULL;
        uint32_t ins[2] = {0, 0}, out = 1;
        ANeuralNetworksOperandType f = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, two, 0.0f, 0};
        ANeuralNetworksModel_create(&wrong);
        ANeuralNetworksModel_addOperand(wrong, &f);
        ANeuralNetworksModel_addOperand(wrong, &f);
        SHOW("bad_operand_count_at_add", ANeuralNetworksModel_addOperation(wrong, ANEURALNETWORKS_RELU, 2, ins, 1,
                                                                           &out));
        ANeuralNetworksModel_identifyInputsAndOutputs(wrong, 1, ins, 1, &out);
        SHOW("no_operation_writes_the_output", FIRST(ANeuralNetworksModel_finish(wrong),
             FIRST(ANeuralNetworksCompilation_create(wrong, &c2), ANeuralNetworksCompilation_finish(c2))));
        ANeuralNetworksCompilation_free(c2);
        ANeuralNetworksModel_free(wrong);
    }
    model = relu_model(1);
    ANeuralNetworksCompilation_create(model, &compilation);
    SHOW("bad_preference", ANeuralNetworksCompilation_setPreference(compilation, 9));
    ANeuralNetworksCompilation_finish(compilation);
    ANeuralNetworksExecution_create(compilation, &execution);
    SHOW("bad_input_index", ANeuralNetworksExecution_setInput(execution, 3, &f2, x, sizeof x));
    SHOW("bad_input_length", ANeuralNetworksExecution_setInput(execution, 0, &f2, x, 4));
    SHOW("bad_input_type", ANeuralNetworksExecution_setInput(execution, 0, &int_type, x, sizeof x));
    ANeuralNetworksExecution_setOutput(execution, 0, &f2, y, sizeof y);
    SHOW("bad_unknown_dims_without_type", FIRST(ANeuralNetworksExecution_setInput(execution, 0, NULL, x, sizeof x),
         FIRST(ANeuralNetworksExecution_startCompute(execution, &event), ANeuralNetworksEvent_wait(event))));
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksExecution_create(compilation, &execution);
    SHOW("bad_missing_output", FIRST(ANeuralNetworksExecution_setInput(execution, 0, &f2, x, sizeof x),
         ANeuralNetworksExecution_startCompute(execution, &event)));
    ANeuralNetworksExecution_free(execution);
    SHOW("bad_freed_execution", ANeuralNetworksExecution_setInput(execution, 0, &f2, x, sizeof x));
    /* RELU's only input omitted (NULL, 0): accepted by setInput, refused when the model runs */
    ANeuralNetworksExecution_create(compilation, &execution);
    SHOW("omitted_input_accepted", ANeuralNetworksExecution_setInput(execution, 0, NULL, NULL, 0));
    ANeuralNetworksExecution_setOutput(execution, 0, &f2, y, sizeof y);
    ANeuralNetworksExecution_startCompute(execution, &event);
    SHOW("omitted_required_input_at_wait", ANeuralNetworksEvent_wait(event));
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);

    /* BAD_STATE */
    SHOW("state_add_after_finish", ANeuralNetworksModel_addOperand(model, &f2));
    SHOW("state_finish_twice", ANeuralNetworksModel_finish(model));
    SHOW("state_compile_unfinished", ANeuralNetworksCompilation_create(relu_model(0), &c2));
    SHOW("state_preference_after_finish", ANeuralNetworksCompilation_setPreference(compilation, 0));
    SHOW("state_compilation_finish_twice", ANeuralNetworksCompilation_finish(compilation));
    ANeuralNetworksCompilation_create(model, &c2);
    SHOW("state_execute_unfinished", ANeuralNetworksExecution_create(c2, &e2));
    ANeuralNetworksCompilation_free(c2);

    /* a run: the unknown size given by the type, then the execution is spent */
    ANeuralNetworksExecution_create(compilation, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, &f2, x, sizeof x);
    ANeuralNetworksExecution_setOutput(execution, 0, &f2, y, sizeof y);
    SHOW("run_start", ANeuralNetworksExecution_startCompute(execution, &event));
    SHOW("run_wait", ANeuralNetworksEvent_wait(event));
    printf("run_values %g %g\n", y[0], y[1]);
    SHOW("state_set_after_start", ANeuralNetworksExecution_setInput(execution, 0, &f2, x, sizeof x));
    SHOW("state_start_twice", ANeuralNetworksExecution_startCompute(execution, &event));
    ANeuralNetworksExecution_free(execution);

    SHOW("op_failed_at_wait", failing_lookup());

    /* memory from a file descriptor: the input read and the output written in the mapped file */
    fd = mkstemp(path);
    unlink(path);
    {
        float file[4] = {3.0f, -4.0f, 0.0f, 0.0f};
        if (write(fd, file, sizeof file) != (ssize_t)sizeof file)
            return 2;
    }
    SHOW("bad_fd", ANeuralNetworksMemory_createFromFd(16, PROT_READ, -1, 0, &memory));
    SHOW("unmappable", ANeuralNetworksMemory_createFromFd(16, PROT_READ, 1000, 0, &memory)); /* not open */
    SHOW("memory_create", ANeuralNetworksMemory_createFromFd(16, PROT_READ | PROT_WRITE, fd, 0, &memory));
    ANeuralNetworksExecution_create(compilation, &execution);
    SHOW("bad_memory_range", ANeuralNetworksExecution_setInputFromMemory(execution, 0, &f2, memory, 12, 8));
    ANeuralNetworksExecution_setInputFromMemory(execution, 0, &f2, memory, 0, 8);
    ANeuralNetworksExecution_setOutputFromMemory(execution, 0, &f2, memory, 8, 8);
    ANeuralNetworksExecution_startCompute(execution, &event);
    SHOW("memory_wait", ANeuralNetworksEvent_wait(event));
    {
        float back[4];
        if (pread(fd, back, sizeof back, 0) != (ssize_t)sizeof back)
            return 2;
        printf("memory_values %g %g\n", back[2], back[3]);
    }
    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksMemory_free(memory);
    close(fd);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""

EXPECTED = {
    "null_model_create": 3, "null_model_finish": 3, "null_add_operand_type": 3, "null_set_value_buffer": 3,
    "null_add_operation_inputs": 3, "null_compilation_out": 3, "null_execution_create": 3, "null_start_event": 3,
    "null_event_wait": 3, "null_memory_out": 3, "null_output_buffer": 3,
    "bad_operand_type": 4, "bad_operand_index": 4, "bad_value_length": 4, "bad_operation_type": 4, "bad_dimension_count": 4,
    "bad_handle": 4, "bad_operand_count_at_add": 4, "no_operation_writes_the_output": 4, "bad_preference": 4,
    "bad_input_index": 4,
    "bad_input_length": 4, "bad_input_type": 4, "bad_unknown_dims_without_type": 4, "bad_missing_output": 4,
    "bad_freed_execution": 4, "omitted_input_accepted": 0, "omitted_required_input_at_wait": 4,
    "state_add_after_finish": 6, "state_finish_twice": 6, "state_compile_unfinished": 6,
    "state_preference_after_finish": 6, "state_compilation_finish_twice": 6, "state_execute_unfinished": 6,
    "run_start": 0, "run_wait": 0, "op_failed_at_wait": 5, "state_set_after_start": 6, "state_start_twice": 6,
    "bad_fd": 4, "unmappable": 7, "memory_create": 0, "bad_memory_range": 4, "memory_wait": 0,
}


@pytest.fixture(scope="module")
def error_run():
    exe = compile_c(ERRORS, "nnapi_errors", nnapi_flags())
    return run_c(exe, timeout=300)


def test_every_result_code_of_the_c_api(error_run):
    assert error_run.returncode == 0, error_run.stdout + error_run.stderr
    got = {}
    for line in error_run.stdout.splitlines():
        label, *values = line.split()
        got[label] = values
    codes = {label: int(v[0]) for label, v in got.items() if label in EXPECTED}
    assert codes == EXPECTED
    assert got["run_values"] == ["0", "2.5"]  # RELU of the input, its size given by setInput's type
    assert got["memory_values"] == ["3", "0"]  # RELU of the mapped input, written into the mapped file


def test_each_refusal_is_one_log_line_naming_the_function_and_object(error_run):
    log = error_run.stderr
    assert "libneuralnetworks: ANeuralNetworksModel_create: model is NULL" in log
    assert re.search(r"ANeuralNetworksModel_finish: model 0x1234: 0x1234 is not an ANeuralNetworksModel", log)
    assert re.search(r"ANeuralNetworksExecution_setInput: execution 0x[0-9a-f]+: input 0 \(TENSOR_FLOAT32 \[2\]\) "
                     r"takes 8 bytes, the buffer has 4", log)
    assert re.search(r"ANeuralNetworksEvent_wait: the execution failed: operation 0 \(RELU\): input 0 \(operand 0\) "
                     r"has no value; it is not optional", log)
    assert "ANeuralNetworksCompilation_create: the model is not finished" in log
    assert re.search(r"ANeuralNetworksEvent_wait: the execution failed: .*EMBEDDING_LOOKUP.*5", log)


def test_mapped_weights_are_read_in_place_and_inputs_and_outputs_served_from_the_mapping(tmp_path):
    """The objects behind the handles, in this process: weights set from an fd mapping become the graph's
    tensor memory (no copy); the input is read from, and the output written to, the mapped file."""
    from openvx_nn.nnapi.capi.execution import CExecution
    from openvx_nn.nnapi.capi.objects import CCompilation, CModel, Memory
    rng = np.random.default_rng(31)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    path = tmp_path / "weights.bin"
    path.write_bytes(w.tobytes() + x.tobytes() + bytes(24))
    with open(path, "r+b") as f:
        weights = Memory(48, 1, f.fileno(), 0)  # PROT_READ
        data = Memory(56, 3, f.fileno(), 48)  # PROT_READ | PROT_WRITE, at an offset mmap cannot take as is
    model = CModel()
    for dims in ([2, 4], [3, 4], [3], [], [2, 3]):
        model.add_operand(T.INT32 if not dims else T.TENSOR_FLOAT32, dims, 0.0, 0)
    model.set_value(1, weights.region(0, 48), copy=False)
    model.set_value(2, memoryview(b.tobytes()), copy=True)
    model.set_value(3, memoryview(np.int32(0).tobytes()), copy=True)
    model.add_operation(OP.FULLY_CONNECTED, [0, 1, 2, 3], [4])
    model.identify([0], [4])
    model.finish()
    compilation = CCompilation(model)
    compilation.finish()
    tensor = compilation.compilation.prepared.lowered.builder.tensors[1]
    assert np.shares_memory(tensor.array, np.frombuffer(weights.view, np.uint8))
    execution = CExecution(compilation)
    execution.set(False, 0, None, data.region(0, 32))
    execution.set(True, 0, None, data.region(32, 24, written=True))
    execution.start().wait()
    got = np.frombuffer(path.read_bytes()[80:104], np.float32).reshape(2, 3)
    np.testing.assert_allclose(got, x.astype(np.float64) @ w.T + b, rtol=0, atol=1e-5)


def test_start_compute_returns_before_the_execution_runs_and_wait_waits():
    from openvx_nn.nnapi.capi.execution import CExecution
    from openvx_nn.nnapi.capi.objects import CCompilation, CModel
    model = CModel()
    for _ in range(2):
        model.add_operand(T.TENSOR_FLOAT32, [3], 0.0, 0)
    model.add_operation(OP.RELU, [0], [1])
    model.identify([0], [1])
    model.finish()
    compilation = CCompilation(model)
    compilation.finish()
    execution = CExecution(compilation)
    x, y = np.array([-1, 0, 2], np.float32), np.full(3, 9, np.float32)
    execution.set(False, 0, None, memoryview(x).cast("B"))
    execution.set(True, 0, None, memoryview(y).cast("B"))
    prepared = compilation.compilation.prepared
    with prepared._lock:  # the compilation is busy: the execution cannot run yet
        event = execution.start()
        np.testing.assert_array_equal(y, [9, 9, 9])  # startCompute returned without running it
    event.wait()
    np.testing.assert_array_equal(y, [0, 0, 2])
