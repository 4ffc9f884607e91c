/* nnapi/neuralnetworks.c: the exported NNAPI functions (API levels 27 to 29) of libneuralnetworks.so.
 * Each checks its pointer arguments (NULL: ANEURALNETWORKS_UNEXPECTED_NULL, before Python
 * is involved), unpacks ANeuralNetworksOperandType into plain values and calls its
 * Python-bodied bridge function (nnapi/bridge.h); handles are ids, never dereferenced. */
#define ANEURALNETWORKS_API __attribute__((visibility("default")))
#include <stdio.h>
#include <NeuralNetworks.h>
#include "nnapi/bridge.h"

enum { KIND_MEMORY = 0, KIND_MODEL = 1, KIND_COMPILATION = 2, KIND_EXECUTION = 3, KIND_EVENT = 4, KIND_BURST = 5 };
#define H(x) ((uintptr_t)(x))

static int nnapi_null(const char *fn, const char *what)
{
    fprintf(stderr, "libneuralnetworks: %s: %s is NULL\n", fn, what);
    return ANEURALNETWORKS_UNEXPECTED_NULL;
}

/* Python could not start: the reason is already on stderr (runtime.c). */
#define START_OR_RETURN(failure) do { if (!vxnn_start()) return (failure); } while (0)
#define NOT_NULL(p) do { if (!(p)) return nnapi_null(__func__, #p); } while (0)

int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset, ANeuralNetworksMemory **memory)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(memory);
    *memory = NULL;
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_memory_create(__func__, size, protect, fd, offset, &out);
    *memory = (ANeuralNetworksMemory *)out;
    return status;
}

static void nnapi_release(const char *fn, uintptr_t handle, int32_t kind)
{
    if (handle && vxnn_start())
        nnapi_free(fn, handle, kind);
}

void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory) { nnapi_release(__func__, H(memory), KIND_MEMORY); }
void ANeuralNetworksModel_free(ANeuralNetworksModel *model) { nnapi_release(__func__, H(model), KIND_MODEL); }
void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *compilation)
{
    nnapi_release(__func__, H(compilation), KIND_COMPILATION);
}
void ANeuralNetworksExecution_free(ANeuralNetworksExecution *execution)
{
    nnapi_release(__func__, H(execution), KIND_EXECUTION);
}
void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event) { nnapi_release(__func__, H(event), KIND_EVENT); }
void ANeuralNetworksBurst_free(ANeuralNetworksBurst *burst) { nnapi_release(__func__, H(burst), KIND_BURST); }

int ANeuralNetworksModel_create(ANeuralNetworksModel **model)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(model);
    *model = NULL;
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_model_create(__func__, &out);
    *model = (ANeuralNetworksModel *)out;
    return status;
}

int ANeuralNetworksModel_finish(ANeuralNetworksModel *model)
{
    NOT_NULL(model);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_finish(__func__, H(model));
}

int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *model, const ANeuralNetworksOperandType *type)
{
    NOT_NULL(model);
    NOT_NULL(type);
    if (type->dimensionCount && !type->dimensions)
        return nnapi_null(__func__, "type->dimensions");
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_add_operand(__func__, H(model), type->type, type->dimensionCount, type->dimensions,
                                   type->scale, type->zeroPoint);
}

int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *model, int32_t index, const void *buffer,
                                         size_t length)
{
    NOT_NULL(model);
    if (!buffer && length)
        return nnapi_null(__func__, "buffer");
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_set_value(__func__, H(model), index, buffer, length);
}

int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *model, int32_t index,
                                                   const ANeuralNetworksMemory *memory, size_t offset, size_t length)
{
    NOT_NULL(model);
    NOT_NULL(memory);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_set_value_from_memory(__func__, H(model), index, H(memory), offset, length);
}

int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *model, ANeuralNetworksOperationType type,
                                      uint32_t inputCount, const uint32_t *inputs, uint32_t outputCount,
                                      const uint32_t *outputs)
{
    NOT_NULL(model);
    NOT_NULL(inputs);
    NOT_NULL(outputs);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_add_operation(__func__, H(model), type, inputCount, inputs, outputCount, outputs);
}

int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *model, uint32_t inputCount,
                                                  const uint32_t *inputs, uint32_t outputCount,
                                                  const uint32_t *outputs)
{
    NOT_NULL(model);
    NOT_NULL(inputs);
    NOT_NULL(outputs);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_identify(__func__, H(model), inputCount, inputs, outputCount, outputs);
}

int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *model, bool allow)
{
    NOT_NULL(model);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_relax(__func__, H(model), allow ? 1 : 0);
}

int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel *model, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams *channelQuant)
{
    NOT_NULL(model);
    NOT_NULL(channelQuant);
    if (channelQuant->scaleCount && !channelQuant->scales)
        return nnapi_null(__func__, "channelQuant->scales");
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_set_channel_quant(__func__, H(model), index, channelQuant->channelDim,
                                         channelQuant->scaleCount, channelQuant->scales);
}

int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model, ANeuralNetworksCompilation **compilation)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(compilation);
    *compilation = NULL;
    NOT_NULL(model);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_compilation_create(__func__, H(model), 0, &out);
    *compilation = (ANeuralNetworksCompilation *)out;
    return status;
}

/* -- API level 29: the devices (this library is one CPU device), and what runs on them ------------------ */
struct ANeuralNetworksDevice {
    const char *name;
};
static const ANeuralNetworksDevice cpu_device = {"openvx_nn-cpu"};  /* {VENDOR}-{DEVICE} */

static int nnapi_log(const char *fn, int code, const char *message)
{
    fprintf(stderr, "libneuralnetworks: %s: %s\n", fn, message);
    return code;
}

/* The device list of getSupportedOperationsForDevices and createForDevices: ours, once. */
static int nnapi_devices(const char *fn, const ANeuralNetworksDevice *const *devices, uint32_t count)
{
    uint32_t i;
    if (!devices)
        return nnapi_null(fn, "devices");
    if (count == 0)
        return nnapi_log(fn, ANEURALNETWORKS_BAD_DATA, "numDevices is 0; at least one device is needed");
    for (i = 0; i < count; i++) {
        if (!devices[i]) {
            fprintf(stderr, "libneuralnetworks: %s: devices[%u] is NULL\n", fn, i);
            return ANEURALNETWORKS_UNEXPECTED_NULL;
        }
        if (devices[i] != &cpu_device) {
            fprintf(stderr, "libneuralnetworks: %s: devices[%u] (%p) is not a device of "
                    "ANeuralNetworks_getDevice\n", fn, i, (const void *)devices[i]);
            return ANEURALNETWORKS_BAD_DATA;
        }
        if (i > 0) {
            fprintf(stderr, "libneuralnetworks: %s: devices[%u] repeats device %s; the set must not contain "
                    "duplicates\n", fn, i, devices[i]->name);
            return ANEURALNETWORKS_BAD_DATA;
        }
    }
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworks_getDeviceCount(uint32_t *numDevices)
{
    NOT_NULL(numDevices);
    *numDevices = 1;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device)
{
    NOT_NULL(device);
    *device = NULL;
    if (devIndex != 0) {
        fprintf(stderr, "libneuralnetworks: %s: device index %u does not exist (there is 1 device)\n", __func__,
                devIndex);
        return ANEURALNETWORKS_BAD_DATA;
    }
    *device = (ANeuralNetworksDevice *)&cpu_device;
    return ANEURALNETWORKS_NO_ERROR;
}

static int nnapi_device(const char *fn, const ANeuralNetworksDevice *device)
{
    if (!device)
        return nnapi_null(fn, "device");
    if (device != &cpu_device) {
        fprintf(stderr, "libneuralnetworks: %s: device %p is not a device of ANeuralNetworks_getDevice\n", fn,
                (const void *)device);
        return ANEURALNETWORKS_BAD_DATA;
    }
    return ANEURALNETWORKS_NO_ERROR;
}

#define DEVICE_OR_RETURN(device) do { int s_ = nnapi_device(__func__, device); if (s_) return s_; } while (0)

int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name)
{
    DEVICE_OR_RETURN(device);
    NOT_NULL(name);
    *name = device->name;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type)
{
    DEVICE_OR_RETURN(device);
    NOT_NULL(type);
    *type = ANEURALNETWORKS_DEVICE_CPU;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *device, const char **version)
{
    static char text[64];  /* the package's version, written once; valid for the process's life */
    int status;
    DEVICE_OR_RETURN(device);
    NOT_NULL(version);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    if (!text[0] && (status = nnapi_device_version(__func__, text, sizeof text)) != ANEURALNETWORKS_NO_ERROR)
        return status;
    *version = text;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device, int64_t *featureLevel)
{
    DEVICE_OR_RETURN(device);
    NOT_NULL(featureLevel);
    *featureLevel = 29;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_getSupportedOperationsForDevices(const ANeuralNetworksModel *model,
                                                          const ANeuralNetworksDevice *const *devices,
                                                          uint32_t numDevices, bool *supportedOps)
{
    int status;
    NOT_NULL(model);
    NOT_NULL(supportedOps);
    if ((status = nnapi_devices(__func__, devices, numDevices)) != ANEURALNETWORKS_NO_ERROR)
        return status;
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_model_supported(__func__, H(model), supportedOps);
}

int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model,
                                                const ANeuralNetworksDevice *const *devices, uint32_t numDevices,
                                                ANeuralNetworksCompilation **compilation)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(compilation);
    *compilation = NULL;
    NOT_NULL(model);
    if ((status = nnapi_devices(__func__, devices, numDevices)) != ANEURALNETWORKS_NO_ERROR)
        return status;
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_compilation_create(__func__, H(model), 1, &out);
    *compilation = (ANeuralNetworksCompilation *)out;
    return status;
}

int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *compilation, int32_t preference)
{
    NOT_NULL(compilation);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_compilation_set_preference(__func__, H(compilation), preference);
}

int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *compilation)
{
    NOT_NULL(compilation);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_compilation_finish(__func__, H(compilation));
}

int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *compilation, ANeuralNetworksExecution **execution)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(execution);
    *execution = NULL;
    NOT_NULL(compilation);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_execution_create(__func__, H(compilation), &out);
    *execution = (ANeuralNetworksExecution *)out;
    return status;
}

/* setInput/setOutput and their FromMemory forms: one bridge, the type unpacked (typed 0: NULL type). */
static int nnapi_set(const char *fn, ANeuralNetworksExecution *execution, int output, int32_t index,
                     const ANeuralNetworksOperandType *type, void *buffer, uintptr_t memory, size_t offset,
                     size_t length)
{
    if (!execution)
        return nnapi_null(fn, "execution");
    if (type && type->dimensionCount && !type->dimensions)
        return nnapi_null(fn, "type->dimensions");
    if (!vxnn_start())
        return ANEURALNETWORKS_OP_FAILED;
    return nnapi_execution_set(fn, H(execution), output, index, type != NULL, type ? type->type : 0,
                               type ? type->dimensionCount : 0, type ? type->dimensions : NULL,
                               type ? type->scale : 0.0f, type ? type->zeroPoint : 0, buffer, memory, offset,
                               length);
}

int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                      const ANeuralNetworksOperandType *type, const void *buffer, size_t length)
{
    if (!buffer && length)  /* NULL with length 0 omits an optional input */
        return nnapi_null(__func__, "buffer");
    return nnapi_set(__func__, execution, 0, index, type, (void *)buffer, 0, 0, length);
}

int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                const ANeuralNetworksOperandType *type,
                                                const ANeuralNetworksMemory *memory, size_t offset, size_t length)
{
    NOT_NULL(memory);
    return nnapi_set(__func__, execution, 0, index, type, NULL, H(memory), offset, length);
}

int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                       const ANeuralNetworksOperandType *type, void *buffer, size_t length)
{
    NOT_NULL(buffer);
    return nnapi_set(__func__, execution, 1, index, type, buffer, 0, 0, length);
}

int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                 const ANeuralNetworksOperandType *type,
                                                 const ANeuralNetworksMemory *memory, size_t offset, size_t length)
{
    NOT_NULL(memory);
    return nnapi_set(__func__, execution, 1, index, type, NULL, H(memory), offset, length);
}

int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *execution, ANeuralNetworksEvent **event)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(event);
    *event = NULL;
    NOT_NULL(execution);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_execution_start(__func__, H(execution), &out);
    *event = (ANeuralNetworksEvent *)out;
    return status;
}

int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event)
{
    NOT_NULL(event);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_event_wait(__func__, H(event));
}

/* -- API level 29: synchronous runs, their output shapes and durations, bursts ------------------------------- */
int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *execution)
{
    NOT_NULL(execution);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_execution_compute(__func__, H(execution));
}

int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *execution, int32_t index, uint32_t *rank)
{
    NOT_NULL(execution);
    NOT_NULL(rank);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_execution_output_rank(__func__, H(execution), index, rank);
}

int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *execution, int32_t index,
                                                        uint32_t *dimensions)
{
    NOT_NULL(execution);
    NOT_NULL(dimensions);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_execution_output_dimensions(__func__, H(execution), index, dimensions);
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *execution, bool measure)
{
    NOT_NULL(execution);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_execution_measure(__func__, H(execution), measure ? 1 : 0);
}

int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *execution, int32_t durationCode,
                                         uint64_t *duration)
{
    NOT_NULL(execution);
    NOT_NULL(duration);
    *duration = UINT64_MAX;
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_execution_duration(__func__, H(execution), durationCode, duration);
}

int ANeuralNetworksBurst_create(ANeuralNetworksCompilation *compilation, ANeuralNetworksBurst **burst)
{
    uintptr_t out = 0;
    int status;
    NOT_NULL(burst);
    *burst = NULL;
    NOT_NULL(compilation);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    status = nnapi_burst_create(__func__, H(compilation), &out);
    *burst = (ANeuralNetworksBurst *)out;
    return status;
}

int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution *execution, ANeuralNetworksBurst *burst)
{
    NOT_NULL(execution);
    NOT_NULL(burst);
    START_OR_RETURN(ANEURALNETWORKS_OP_FAILED);
    return nnapi_burst_compute(__func__, H(execution), H(burst));
}

/* Android's hardware buffers do not exist on Linux: no buffer can be mapped (the header's code for a buffer the
 * device does not support). */
int ANeuralNetworksMemory_createFromAHardwareBuffer(const AHardwareBuffer *ahwb, ANeuralNetworksMemory **memory)
{
    NOT_NULL(memory);
    *memory = NULL;
    NOT_NULL(ahwb);
    return nnapi_log(__func__, ANEURALNETWORKS_UNMAPPABLE,
                     "AHardwareBuffer is not supported (no Android hardware buffers here); map a file "
                     "descriptor with ANeuralNetworksMemory_createFromFd");
}
