"""The C functions of API level 29 (devices, supported operations, compilations for devices, synchronous runs,
output shapes, timing, bursts, hardware buffers): a compiled program prints each call's ResultCode and what it
returned; the codes are the header's for success, NULL arguments, calls out of order and bad data."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import compile_c, run_c
from test_nnapi_c_api import PROLOGUE, nnapi_flags

import openvx_nn

PROGRAM = PROLOGUE + r"""
static const uint32_t two[] = {2}, three[] = {3}, five[] = {5};

static void values(const char *label, const float *v, int n)
{
    int i;
    printf("%s", label);
    for (i = 0; i < n; i++)
        printf(" %g", v[i]);
    printf("\n");
}

int main(void)
{
    ANeuralNetworksDevice *device = NULL, *none = NULL;
    const ANeuralNetworksDevice *twice[2];
    const ANeuralNetworksDevice *bogus = (const ANeuralNetworksDevice *)&twice;
    const char *name = NULL, *version = NULL;
    int32_t type = -1;
    int64_t level = -1;
    uint32_t count = 0, rank = 99, dims[1] = {0};
    uint64_t duration = 0, in_driver = 0, on_hardware = 0;
    ANeuralNetworksModel *model, *mixed, *unfinished;
    ANeuralNetworksCompilation *plain = NULL, *for_device = NULL, *open_compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksBurst *burst = NULL;
    ANeuralNetworksMemory *memory = (ANeuralNetworksMemory *)1;
    ANeuralNetworksOperandType f5 = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, five, 0.0f, 0};
    float x[5] = {-1.5f, 2.5f, -3.0f, 4.0f, 0.5f}, y[5] = {9, 9, 9, 9, 9}, small[2] = {9, 9};
    bool supported[2] = {true, true};

    /* devices */
    SHOW("device_count", ANeuralNetworks_getDeviceCount(&count));
    printf("count %u\n", count);
    SHOW("null_device_count", ANeuralNetworks_getDeviceCount(NULL));
    SHOW("get_device", ANeuralNetworks_getDevice(0, &device));
    SHOW("bad_device_index", ANeuralNetworks_getDevice(1, &none));
    printf("bad_device_index_out %d\n", none == NULL);
    SHOW("null_device_out", ANeuralNetworks_getDevice(0, NULL));
    SHOW("get_name", ANeuralNetworksDevice_getName(device, &name));
    printf("name %s\n", name);
    SHOW("get_type", ANeuralNetworksDevice_getType(device, &type));
    printf("type %d\n", type);
    SHOW("get_version", ANeuralNetworksDevice_getVersion(device, &version));
    printf("version %s\n", version);
    SHOW("get_feature_level", ANeuralNetworksDevice_getFeatureLevel(device, &level));
    printf("level %lld\n", (long long)level);
    SHOW("null_device_name", ANeuralNetworksDevice_getName(NULL, &name));
    SHOW("null_name_out", ANeuralNetworksDevice_getName(device, NULL));
    SHOW("null_type_out", ANeuralNetworksDevice_getType(device, NULL));
    SHOW("null_level_out", ANeuralNetworksDevice_getFeatureLevel(device, NULL));
    SHOW("null_version_out", ANeuralNetworksDevice_getVersion(device, NULL));
    SHOW("bad_device_type", ANeuralNetworksDevice_getType(bogus, &type));

    /* supported operations, in the order added: operation 0 (declared [3] for a [2] result) runs after
     * operation 1, which writes its input */
    {
        ANeuralNetworksOperandType f2 = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, two, 0.0f, 0};
        ANeuralNetworksOperandType f3 = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, three, 0.0f, 0};
        uint32_t a = 0, b = 1, c = 2;
        ANeuralNetworksModel_create(&mixed);
        ANeuralNetworksModel_addOperand(mixed, &f2);
        ANeuralNetworksModel_addOperand(mixed, &f2);
        ANeuralNetworksModel_addOperand(mixed, &f3);
        ANeuralNetworksModel_addOperation(mixed, ANEURALNETWORKS_RELU, 1, &b, 1, &c);
        ANeuralNetworksModel_addOperation(mixed, ANEURALNETWORKS_RELU, 1, &a, 1, &b);
        ANeuralNetworksModel_identifyInputsAndOutputs(mixed, 1, &a, 1, &c);
        SHOW("unfinished_supported", ANeuralNetworksModel_getSupportedOperationsForDevices(
            mixed, (const ANeuralNetworksDevice *const *)&device, 1, supported));
        ANeuralNetworksModel_finish(mixed);
    }
    SHOW("supported", ANeuralNetworksModel_getSupportedOperationsForDevices(
        mixed, (const ANeuralNetworksDevice *const *)&device, 1, supported));
    printf("supported_values %d %d\n", supported[0], supported[1]);
    twice[0] = twice[1] = device;
    SHOW("bad_duplicate_devices", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, twice, 2, supported));
    SHOW("bad_no_devices", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, twice, 0, supported));
    SHOW("bad_foreign_device", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, &bogus, 1, supported));
    SHOW("null_devices", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, NULL, 1, supported));
    {
        const ANeuralNetworksDevice *with_null[2] = {NULL, NULL};
        with_null[0] = device;
        SHOW("null_device_entry", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, with_null, 2,
                                                                                        supported));
    }
    SHOW("null_supported_out", ANeuralNetworksModel_getSupportedOperationsForDevices(mixed, twice, 1, NULL));
    SHOW("null_supported_model", ANeuralNetworksModel_getSupportedOperationsForDevices(NULL, twice, 1, supported));
    ANeuralNetworksModel_free(mixed);

    /* compilations for devices */
    model = relu_model(1);
    unfinished = relu_model(0);
    SHOW("create_for_devices", ANeuralNetworksCompilation_createForDevices(
        model, (const ANeuralNetworksDevice *const *)&device, 1, &for_device));
    SHOW("bad_create_for_devices", ANeuralNetworksCompilation_createForDevices(model, twice, 2, &open_compilation));
    printf("bad_create_for_devices_out %d\n", open_compilation == NULL);
    SHOW("state_create_for_devices", ANeuralNetworksCompilation_createForDevices(unfinished, twice, 1,
                                                                                 &open_compilation));
    SHOW("null_create_for_devices_out", ANeuralNetworksCompilation_createForDevices(model, twice, 1, NULL));
    ANeuralNetworksCompilation_finish(for_device);
    ANeuralNetworksCompilation_create(model, &plain);
    ANeuralNetworksCompilation_finish(plain);

    /* compute, and the shape of a dynamic output: a too small buffer first */
    ANeuralNetworksExecution_create(plain, &execution);
    SHOW("state_rank_before_compute", ANeuralNetworksExecution_getOutputOperandRank(execution, 0, &rank));
    SHOW("state_duration_before_compute", ANeuralNetworksExecution_getDuration(execution, 1, &duration));
    SHOW("bad_measure_without_devices", ANeuralNetworksExecution_setMeasureTiming(execution, true));
    ANeuralNetworksExecution_setInput(execution, 0, &f5, x, sizeof x);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, small, sizeof small);
    SHOW("insufficient_compute", ANeuralNetworksExecution_compute(execution));
    SHOW("insufficient_rank", ANeuralNetworksExecution_getOutputOperandRank(execution, 0, &rank));
    SHOW("insufficient_dimensions", ANeuralNetworksExecution_getOutputOperandDimensions(execution, 0, dims));
    printf("insufficient_shape %u %u\n", rank, dims[0]);
    SHOW("state_compute_twice", ANeuralNetworksExecution_compute(execution));
    ANeuralNetworksExecution_free(execution);

    ANeuralNetworksExecution_create(plain, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, &f5, x, sizeof x);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y);
    SHOW("compute", ANeuralNetworksExecution_compute(execution));
    values("compute_values", y, 5);
    rank = 99;
    dims[0] = 0;
    SHOW("rank", ANeuralNetworksExecution_getOutputOperandRank(execution, 0, &rank));
    SHOW("dimensions", ANeuralNetworksExecution_getOutputOperandDimensions(execution, 0, dims));
    printf("shape %u %u\n", rank, dims[0]);
    SHOW("bad_rank_index", ANeuralNetworksExecution_getOutputOperandRank(execution, 1, &rank));
    SHOW("bad_dimensions_index", ANeuralNetworksExecution_getOutputOperandDimensions(execution, -1, dims));
    SHOW("null_rank_out", ANeuralNetworksExecution_getOutputOperandRank(execution, 0, NULL));
    SHOW("null_dimensions_out", ANeuralNetworksExecution_getOutputOperandDimensions(execution, 0, NULL));
    SHOW("unmeasured_duration", ANeuralNetworksExecution_getDuration(execution, 1, &duration));
    printf("unmeasured_is_max %d\n", duration == UINT64_MAX);
    ANeuralNetworksExecution_free(execution);
    SHOW("null_compute", ANeuralNetworksExecution_compute(NULL));

    /* a failed compute: RELU's input omitted */
    ANeuralNetworksExecution_create(plain, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, NULL, NULL, 0);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y);
    SHOW("failed_compute", ANeuralNetworksExecution_compute(execution));
    SHOW("state_rank_after_failure", ANeuralNetworksExecution_getOutputOperandRank(execution, 0, &rank));
    ANeuralNetworksExecution_free(execution);

    /* timing, on a compilation for one device */
    ANeuralNetworksExecution_create(for_device, &execution);
    SHOW("measure", ANeuralNetworksExecution_setMeasureTiming(execution, true));
    ANeuralNetworksExecution_setInput(execution, 0, &f5, x, sizeof x);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y);
    SHOW("measured_compute", ANeuralNetworksExecution_compute(execution));
    SHOW("duration_in_driver", ANeuralNetworksExecution_getDuration(execution, ANEURALNETWORKS_DURATION_IN_DRIVER,
                                                                    &in_driver));
    SHOW("duration_on_hardware", ANeuralNetworksExecution_getDuration(
        execution, ANEURALNETWORKS_DURATION_ON_HARDWARE, &on_hardware));
    printf("durations %llu %llu\n", (unsigned long long)on_hardware, (unsigned long long)in_driver);
    SHOW("bad_duration_code", ANeuralNetworksExecution_getDuration(execution, 2, &duration));
    SHOW("state_measure_after_compute", ANeuralNetworksExecution_setMeasureTiming(execution, false));
    SHOW("null_duration_out", ANeuralNetworksExecution_getDuration(execution, 1, NULL));
    SHOW("null_measure", ANeuralNetworksExecution_setMeasureTiming(NULL, true));
    ANeuralNetworksExecution_free(execution);

    /* bursts */
    ANeuralNetworksCompilation_create(model, &open_compilation);
    SHOW("state_burst_unfinished", ANeuralNetworksBurst_create(open_compilation, &burst));
    printf("state_burst_unfinished_out %d\n", burst == NULL);
    SHOW("null_burst_out", ANeuralNetworksBurst_create(plain, NULL));
    SHOW("burst_create", ANeuralNetworksBurst_create(plain, &burst));
    {
        int round;
        for (round = 0; round < 2; round++) { /* a burst serves any number of executions */
            x[0] = (float)round;
            ANeuralNetworksExecution_create(plain, &execution);
            ANeuralNetworksExecution_setInput(execution, 0, &f5, x, sizeof x);
            ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y);
            SHOW(round ? "burst_compute_1" : "burst_compute_0", ANeuralNetworksExecution_burstCompute(execution,
                                                                                                      burst));
            values(round ? "burst_values_1" : "burst_values_0", y, 5);
            ANeuralNetworksExecution_free(execution);
        }
    }
    ANeuralNetworksExecution_create(for_device, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, &f5, x, sizeof x);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, sizeof y);
    SHOW("bad_burst_other_compilation", ANeuralNetworksExecution_burstCompute(execution, burst));
    SHOW("null_burst", ANeuralNetworksExecution_burstCompute(execution, NULL));
    SHOW("bad_burst_handle", ANeuralNetworksExecution_burstCompute(execution, (ANeuralNetworksBurst *)execution));
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksBurst_free(burst);
    ANeuralNetworksBurst_free(NULL);

    /* hardware buffers */
    SHOW("hardware_buffer", ANeuralNetworksMemory_createFromAHardwareBuffer((const AHardwareBuffer *)&count,
                                                                           &memory));
    printf("hardware_buffer_out %d\n", memory == NULL);
    SHOW("null_hardware_buffer", ANeuralNetworksMemory_createFromAHardwareBuffer(NULL, &memory));
    SHOW("null_hardware_memory_out", ANeuralNetworksMemory_createFromAHardwareBuffer(
        (const AHardwareBuffer *)&count, NULL));

    ANeuralNetworksCompilation_free(open_compilation);
    ANeuralNetworksCompilation_free(for_device);
    ANeuralNetworksCompilation_free(plain);
    ANeuralNetworksModel_free(unfinished);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""

EXPECTED = {
    "device_count": 0, "null_device_count": 3, "get_device": 0, "bad_device_index": 4, "null_device_out": 3,
    "get_name": 0, "get_type": 0, "get_version": 0, "get_feature_level": 0, "null_device_name": 3,
    "null_name_out": 3, "null_type_out": 3, "null_level_out": 3, "null_version_out": 3, "bad_device_type": 4,
    "unfinished_supported": 6, "supported": 0, "bad_duplicate_devices": 4, "bad_no_devices": 4,
    "bad_foreign_device": 4, "null_devices": 3, "null_device_entry": 3, "null_supported_out": 3, "null_supported_model": 3,
    "create_for_devices": 0, "bad_create_for_devices": 4, "state_create_for_devices": 6,
    "null_create_for_devices_out": 3,
    "state_rank_before_compute": 6, "state_duration_before_compute": 6, "bad_measure_without_devices": 4,
    "insufficient_compute": 8, "insufficient_rank": 8, "insufficient_dimensions": 8, "state_compute_twice": 6,
    "compute": 0, "rank": 0, "dimensions": 0, "bad_rank_index": 4, "bad_dimensions_index": 4, "null_rank_out": 3,
    "null_dimensions_out": 3, "unmeasured_duration": 0, "state_measure_after_compute": 6, "null_compute": 3,
    "failed_compute": 4, "state_rank_after_failure": 6,
    "measure": 0, "measured_compute": 0, "duration_in_driver": 0, "duration_on_hardware": 0, "bad_duration_code": 4,
    "null_duration_out": 3, "null_measure": 3,
    "state_burst_unfinished": 6, "null_burst_out": 3, "burst_create": 0, "burst_compute_0": 0, "burst_compute_1": 0,
    "bad_burst_other_compilation": 4, "null_burst": 3, "bad_burst_handle": 4,
    "hardware_buffer": 7, "null_hardware_buffer": 3, "null_hardware_memory_out": 3,
}


@pytest.fixture(scope="module")
def run():
    result = run_c(compile_c(PROGRAM, "nnapi_api29", nnapi_flags()), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _printed(run) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines() if line.strip()}


def test_every_api_29_call_returns_the_headers_code(run):
    printed = _printed(run)
    assert {label: int(printed[label][0]) for label in EXPECTED} == EXPECTED


def test_one_cpu_device_describes_itself(run):
    printed = _printed(run)
    assert printed["count"] == ["1"] and printed["bad_device_index_out"] == ["1"]
    assert printed["name"] == ["openvx_nn-cpu"] and printed["type"] == ["2"] and printed["level"] == ["29"]
    assert printed["version"] == ["openvx-nn", openvx_nn.__version__]


def test_supported_operations_come_in_the_order_added(run):
    # operation 0 (its output declared [3] for RELU's [2]) cannot lower; operation 1, run first, can
    assert _printed(run)["supported_values"] == ["0", "1"]


def test_a_dynamic_output_reports_its_shape_also_when_its_buffer_was_too_small(run):
    printed = _printed(run)
    assert printed["insufficient_shape"] == ["1", "5"] and printed["shape"] == ["1", "5"]
    x = np.array([-1.5, 2.5, -3.0, 4.0, 0.5])
    np.testing.assert_array_equal(np.array(printed["compute_values"], float), np.maximum(x, 0))


def test_timing_is_measured_in_nanoseconds_and_unmeasured_is_uint64_max(run):
    printed = _printed(run)
    assert printed["unmeasured_is_max"] == ["1"]
    on_hardware, in_driver = (int(v) for v in printed["durations"])
    assert 0 < on_hardware <= in_driver < 10**10  # the graph's run is part of the driver's time; under 10 s
    assert on_hardware % 1000 == 0 and in_driver % 1000 == 0  # the HAL's microseconds


def test_bursts_run_each_execution_as_a_compute(run):
    printed = _printed(run)
    for round_ in (0, 1):
        x = np.array([round_, 2.5, -3.0, 4.0, 0.5])
        np.testing.assert_array_equal(np.array(printed[f"burst_values_{round_}"], float), np.maximum(x, 0))


def test_refusals_log_the_function_and_the_reason(run):
    log = run.stderr
    for words in ("ANeuralNetworks_getDevice: device index 1 does not exist",
                  "ANeuralNetworksModel_getSupportedOperationsForDevices: devices[1] repeats device openvx_nn-cpu",
                  "ANeuralNetworksModel_getSupportedOperationsForDevices: numDevices is 0",
                  "ANeuralNetworksModel_getSupportedOperationsForDevices: devices[1] is NULL",
                  "ANeuralNetworksModel_getSupportedOperationsForDevices: model 0x10000: the model is not finished",
                  "ANeuralNetworksCompilation_createForDevices: the model is not finished",
                  "ANeuralNetworksExecution_setMeasureTiming: execution 0x",
                  "createForDevices (with one device)",
                  "ANeuralNetworksExecution_getDuration: execution 0x",
                  "duration code 2 is not a DurationCode",
                  "ANeuralNetworksExecution_compute: execution 0x",
                  "the execution failed: output 0 (operand 1) has 8 bytes, it needs 20",
                  "output 0's buffer was too small for its dimensions [5]",
                  "ANeuralNetworksExecution_burstCompute: burst 0x",
                  "the execution and the burst come from different compilations",
                  "ANeuralNetworksBurst_create: compilation 0x",
                  "the compilation is not finished",
                  "ANeuralNetworksExecution_getOutputOperandRank: execution 0x",
                  "the execution failed (BAD_DATA): it has no output shapes",
                  "ANeuralNetworksMemory_createFromAHardwareBuffer: AHardwareBuffer is not supported",
                  "ANeuralNetworksDevice_getType: device 0x"):
        assert words in log, words
    assert printed_ok(run)


def printed_ok(run) -> bool:
    printed = _printed(run)
    return printed["hardware_buffer_out"] == ["1"] and printed["state_burst_unfinished_out"] == ["1"] and \
        printed["bad_create_for_devices_out"] == ["1"]
