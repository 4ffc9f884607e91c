/* NeuralNetworks.h: the Android Neural Networks API 1.2 (API levels 27 to 29) on Linux, served by
 * libneuralnetworks.so of openvx-nn:
 *     cc app.c $(python -m openvx_nn.config --cflags --nnapi-libs)
 * Names and values are NNAPI's (the enums carry the HAL 1.0 to 1.2 values).  Every function returns a
 * ResultCode: NULL arguments give ANEURALNETWORKS_UNEXPECTED_NULL, calls out of order
 * ANEURALNETWORKS_BAD_STATE, bad operands or buffers ANEURALNETWORKS_BAD_DATA, a failed execution
 * ANEURALNETWORKS_OP_FAILED (ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE for a too small output buffer); the
 * reason goes to stderr as one line naming the function and object. */
#ifndef ANDROID_ML_NN_RUNTIME_NEURAL_NETWORKS_H
#define ANDROID_ML_NN_RUNTIME_NEURAL_NETWORKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ANEURALNETWORKS_API
#define ANEURALNETWORKS_API
#endif

typedef enum {
    ANEURALNETWORKS_FLOAT32 = 0,
    ANEURALNETWORKS_INT32 = 1,
    ANEURALNETWORKS_UINT32 = 2,
    ANEURALNETWORKS_TENSOR_FLOAT32 = 3,
    ANEURALNETWORKS_TENSOR_INT32 = 4,
    ANEURALNETWORKS_TENSOR_QUANT8_ASYMM = 5,
    /* API level 29 */
    ANEURALNETWORKS_BOOL = 6,
    ANEURALNETWORKS_TENSOR_QUANT16_SYMM = 7,
    ANEURALNETWORKS_TENSOR_FLOAT16 = 8,
    ANEURALNETWORKS_TENSOR_BOOL8 = 9,
    ANEURALNETWORKS_FLOAT16 = 10,
    ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    ANEURALNETWORKS_TENSOR_QUANT16_ASYMM = 12,
    ANEURALNETWORKS_TENSOR_QUANT8_SYMM = 13
} OperandCode;

typedef enum {
    ANEURALNETWORKS_ADD = 0,
    ANEURALNETWORKS_AVERAGE_POOL_2D = 1,
    ANEURALNETWORKS_CONCATENATION = 2,
    ANEURALNETWORKS_CONV_2D = 3,
    ANEURALNETWORKS_DEPTHWISE_CONV_2D = 4,
    ANEURALNETWORKS_DEPTH_TO_SPACE = 5,
    ANEURALNETWORKS_DEQUANTIZE = 6,
    ANEURALNETWORKS_EMBEDDING_LOOKUP = 7,
    ANEURALNETWORKS_FLOOR = 8,
    ANEURALNETWORKS_FULLY_CONNECTED = 9,
    ANEURALNETWORKS_HASHTABLE_LOOKUP = 10,
    ANEURALNETWORKS_L2_NORMALIZATION = 11,
    ANEURALNETWORKS_L2_POOL_2D = 12,
    ANEURALNETWORKS_LOCAL_RESPONSE_NORMALIZATION = 13,
    ANEURALNETWORKS_LOGISTIC = 14,
    ANEURALNETWORKS_LSH_PROJECTION = 15,
    ANEURALNETWORKS_LSTM = 16,
    ANEURALNETWORKS_MAX_POOL_2D = 17,
    ANEURALNETWORKS_MUL = 18,
    ANEURALNETWORKS_RELU = 19,
    ANEURALNETWORKS_RELU1 = 20,
    ANEURALNETWORKS_RELU6 = 21,
    ANEURALNETWORKS_RESHAPE = 22,
    ANEURALNETWORKS_RESIZE_BILINEAR = 23,
    ANEURALNETWORKS_RNN = 24,
    ANEURALNETWORKS_SOFTMAX = 25,
    ANEURALNETWORKS_SPACE_TO_DEPTH = 26,
    ANEURALNETWORKS_SVDF = 27,
    ANEURALNETWORKS_TANH = 28,
    /* API level 28 */
    ANEURALNETWORKS_BATCH_TO_SPACE_ND = 29,
    ANEURALNETWORKS_DIV = 30,
    ANEURALNETWORKS_MEAN = 31,
    ANEURALNETWORKS_PAD = 32,
    ANEURALNETWORKS_SPACE_TO_BATCH_ND = 33,
    ANEURALNETWORKS_SQUEEZE = 34,
    ANEURALNETWORKS_STRIDED_SLICE = 35,
    ANEURALNETWORKS_SUB = 36,
    ANEURALNETWORKS_TRANSPOSE = 37,
    /* API level 29 */
    ANEURALNETWORKS_ABS = 38,
    ANEURALNETWORKS_ARGMAX = 39,
    ANEURALNETWORKS_ARGMIN = 40,
    ANEURALNETWORKS_AXIS_ALIGNED_BBOX_TRANSFORM = 41,
    ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_LSTM = 42,
    ANEURALNETWORKS_BIDIRECTIONAL_SEQUENCE_RNN = 43,
    ANEURALNETWORKS_BOX_WITH_NMS_LIMIT = 44,
    ANEURALNETWORKS_CAST = 45,
    ANEURALNETWORKS_CHANNEL_SHUFFLE = 46,
    ANEURALNETWORKS_DETECTION_POSTPROCESSING = 47,
    ANEURALNETWORKS_EQUAL = 48,
    ANEURALNETWORKS_EXP = 49,
    ANEURALNETWORKS_EXPAND_DIMS = 50,
    ANEURALNETWORKS_GATHER = 51,
    ANEURALNETWORKS_GENERATE_PROPOSALS = 52,
    ANEURALNETWORKS_GREATER = 53,
    ANEURALNETWORKS_GREATER_EQUAL = 54,
    ANEURALNETWORKS_GROUPED_CONV_2D = 55,
    ANEURALNETWORKS_HEATMAP_MAX_KEYPOINT = 56,
    ANEURALNETWORKS_INSTANCE_NORMALIZATION = 57,
    ANEURALNETWORKS_LESS = 58,
    ANEURALNETWORKS_LESS_EQUAL = 59,
    ANEURALNETWORKS_LOG = 60,
    ANEURALNETWORKS_LOGICAL_AND = 61,
    ANEURALNETWORKS_LOGICAL_NOT = 62,
    ANEURALNETWORKS_LOGICAL_OR = 63,
    ANEURALNETWORKS_LOG_SOFTMAX = 64,
    ANEURALNETWORKS_MAXIMUM = 65,
    ANEURALNETWORKS_MINIMUM = 66,
    ANEURALNETWORKS_NEG = 67,
    ANEURALNETWORKS_NOT_EQUAL = 68,
    ANEURALNETWORKS_PAD_V2 = 69,
    ANEURALNETWORKS_POW = 70,
    ANEURALNETWORKS_PRELU = 71,
    ANEURALNETWORKS_QUANTIZE = 72,
    ANEURALNETWORKS_QUANTIZED_16BIT_LSTM = 73,
    ANEURALNETWORKS_RANDOM_MULTINOMIAL = 74,
    ANEURALNETWORKS_REDUCE_ALL = 75,
    ANEURALNETWORKS_REDUCE_ANY = 76,
    ANEURALNETWORKS_REDUCE_MAX = 77,
    ANEURALNETWORKS_REDUCE_MIN = 78,
    ANEURALNETWORKS_REDUCE_PROD = 79,
    ANEURALNETWORKS_REDUCE_SUM = 80,
    ANEURALNETWORKS_ROI_ALIGN = 81,
    ANEURALNETWORKS_ROI_POOLING = 82,
    ANEURALNETWORKS_RSQRT = 83,
    ANEURALNETWORKS_SELECT = 84,
    ANEURALNETWORKS_SIN = 85,
    ANEURALNETWORKS_SLICE = 86,
    ANEURALNETWORKS_SPLIT = 87,
    ANEURALNETWORKS_SQRT = 88,
    ANEURALNETWORKS_TILE = 89,
    ANEURALNETWORKS_TOPK_V2 = 90,
    ANEURALNETWORKS_TRANSPOSE_CONV_2D = 91,
    ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_LSTM = 92,
    ANEURALNETWORKS_UNIDIRECTIONAL_SEQUENCE_RNN = 93,
    ANEURALNETWORKS_RESIZE_NEAREST_NEIGHBOR = 94
} OperationCode;

typedef enum {
    ANEURALNETWORKS_FUSED_NONE = 0,
    ANEURALNETWORKS_FUSED_RELU = 1,
    ANEURALNETWORKS_FUSED_RELU1 = 2,
    ANEURALNETWORKS_FUSED_RELU6 = 3
} FuseCode;

typedef enum {
    ANEURALNETWORKS_PADDING_SAME = 1,
    ANEURALNETWORKS_PADDING_VALID = 2
} PaddingCode;

typedef enum {
    ANEURALNETWORKS_PREFER_LOW_POWER = 0,
    ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER = 1,
    ANEURALNETWORKS_PREFER_SUSTAINED_SPEED = 2
} PreferenceCode;

typedef enum {
    ANEURALNETWORKS_NO_ERROR = 0,
    ANEURALNETWORKS_OUT_OF_MEMORY = 1,
    ANEURALNETWORKS_INCOMPLETE = 2,
    ANEURALNETWORKS_UNEXPECTED_NULL = 3,
    ANEURALNETWORKS_BAD_DATA = 4,
    ANEURALNETWORKS_OP_FAILED = 5,
    ANEURALNETWORKS_BAD_STATE = 6,
    ANEURALNETWORKS_UNMAPPABLE = 7,
    /* API level 29 */
    ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE = 8,
    ANEURALNETWORKS_UNAVAILABLE_DEVICE = 9
} ResultCode;

/* API level 29 */
typedef enum {
    ANEURALNETWORKS_DEVICE_UNKNOWN = 0,
    ANEURALNETWORKS_DEVICE_OTHER = 1,
    ANEURALNETWORKS_DEVICE_CPU = 2,
    ANEURALNETWORKS_DEVICE_GPU = 3,
    ANEURALNETWORKS_DEVICE_ACCELERATOR = 4
} DeviceTypeCode;

/* API level 29: durations in nanoseconds */
typedef enum {
    ANEURALNETWORKS_DURATION_ON_HARDWARE = 0,
    ANEURALNETWORKS_DURATION_IN_DRIVER = 1
} DurationCode;

enum { ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128 };

typedef struct ANeuralNetworksMemory ANeuralNetworksMemory;
typedef struct ANeuralNetworksModel ANeuralNetworksModel;
typedef struct ANeuralNetworksCompilation ANeuralNetworksCompilation;
typedef struct ANeuralNetworksExecution ANeuralNetworksExecution;
typedef struct ANeuralNetworksEvent ANeuralNetworksEvent;
/* API level 29 */
typedef struct ANeuralNetworksBurst ANeuralNetworksBurst;
typedef struct ANeuralNetworksDevice ANeuralNetworksDevice;
/* Android's hardware buffers do not exist here: the type is only named, and
 * ANeuralNetworksMemory_createFromAHardwareBuffer refuses every buffer. */
typedef struct AHardwareBuffer AHardwareBuffer;

/* API level 29: the scales of an ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL operand, one per index of
 * dimension channelDim (each greater than zero); the function copies them. */
typedef struct ANeuralNetworksSymmPerChannelQuantParams {
    uint32_t channelDim;
    uint32_t scaleCount;
    const float *scales;
} ANeuralNetworksSymmPerChannelQuantParams;

typedef struct ANeuralNetworksOperandType {
    int32_t type;
    uint32_t dimensionCount;
    const uint32_t *dimensions;
    float scale;
    int32_t zeroPoint;
} ANeuralNetworksOperandType;

typedef int32_t ANeuralNetworksOperationType;

ANEURALNETWORKS_API int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                                           ANeuralNetworksMemory **memory);
ANEURALNETWORKS_API void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory);

ANEURALNETWORKS_API int ANeuralNetworksModel_create(ANeuralNetworksModel **model);
ANEURALNETWORKS_API void ANeuralNetworksModel_free(ANeuralNetworksModel *model);
ANEURALNETWORKS_API int ANeuralNetworksModel_finish(ANeuralNetworksModel *model);
ANEURALNETWORKS_API int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *model,
                                                        const ANeuralNetworksOperandType *type);
ANEURALNETWORKS_API int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *model, int32_t index,
                                                             const void *buffer, size_t length);
ANEURALNETWORKS_API int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *model, int32_t index,
                                                                       const ANeuralNetworksMemory *memory,
                                                                       size_t offset, size_t length);
ANEURALNETWORKS_API int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *model,
                                                          ANeuralNetworksOperationType type, uint32_t inputCount,
                                                          const uint32_t *inputs, uint32_t outputCount,
                                                          const uint32_t *outputs);
ANEURALNETWORKS_API int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *model,
                                                                      uint32_t inputCount, const uint32_t *inputs,
                                                                      uint32_t outputCount,
                                                                      const uint32_t *outputs);
/* API level 28: TENSOR_FLOAT32 may be computed with float16 range and precision (before finish; this
 * library computes float32 throughout either way). */
ANEURALNETWORKS_API int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *model,
                                                                              bool allow);
/* API level 29: required for every TENSOR_QUANT8_SYMM_PER_CHANNEL operand before finish. */
ANEURALNETWORKS_API int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel *model, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams *channelQuant);

ANEURALNETWORKS_API int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model,
                                                          ANeuralNetworksCompilation **compilation);
ANEURALNETWORKS_API void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *compilation);
ANEURALNETWORKS_API int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *compilation,
                                                                 int32_t preference);
ANEURALNETWORKS_API int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *compilation);

ANEURALNETWORKS_API int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *compilation,
                                                        ANeuralNetworksExecution **execution);
ANEURALNETWORKS_API void ANeuralNetworksExecution_free(ANeuralNetworksExecution *execution);
ANEURALNETWORKS_API int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                                          const ANeuralNetworksOperandType *type,
                                                          const void *buffer, size_t length);
ANEURALNETWORKS_API int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *execution,
                                                                    int32_t index,
                                                                    const ANeuralNetworksOperandType *type,
                                                                    const ANeuralNetworksMemory *memory,
                                                                    size_t offset, size_t length);
ANEURALNETWORKS_API int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                                           const ANeuralNetworksOperandType *type, void *buffer,
                                                           size_t length);
ANEURALNETWORKS_API int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *execution,
                                                                     int32_t index,
                                                                     const ANeuralNetworksOperandType *type,
                                                                     const ANeuralNetworksMemory *memory,
                                                                     size_t offset, size_t length);
ANEURALNETWORKS_API int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *execution,
                                                              ANeuralNetworksEvent **event);

ANEURALNETWORKS_API int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event);
ANEURALNETWORKS_API void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event);

/* API level 29.  One device: "openvx_nn-cpu", type ANEURALNETWORKS_DEVICE_CPU, feature level 29, version
 * "openvx-nn <package version>"; its handle and strings live as long as the process. */
ANEURALNETWORKS_API int ANeuralNetworks_getDeviceCount(uint32_t *numDevices);
ANEURALNETWORKS_API int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device);
ANEURALNETWORKS_API int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name);
ANEURALNETWORKS_API int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type);
ANEURALNETWORKS_API int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *device, const char **version);
ANEURALNETWORKS_API int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device,
                                                              int64_t *featureLevel);
/* One bool per operation, in the order added: true where it runs with its operands' types (a finished model). */
ANEURALNETWORKS_API int ANeuralNetworksModel_getSupportedOperationsForDevices(
    const ANeuralNetworksModel *model, const ANeuralNetworksDevice *const *devices, uint32_t numDevices,
    bool *supportedOps);
ANEURALNETWORKS_API int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model,
                                                                    const ANeuralNetworksDevice *const *devices,
                                                                    uint32_t numDevices,
                                                                    ANeuralNetworksCompilation **compilation);
/* A synchronous run; a too small output buffer gives ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE, after which the
 * output's rank and dimensions can be read to size it. */
ANEURALNETWORKS_API int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *execution);
ANEURALNETWORKS_API int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *execution,
                                                                      int32_t index, uint32_t *rank);
ANEURALNETWORKS_API int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *execution,
                                                                            int32_t index, uint32_t *dimensions);
/* Timing: only for an execution of a compilation made by createForDevices.  ON_HARDWARE is the graph's run,
 * IN_DRIVER the whole execution, in nanoseconds at microsecond resolution; UINT64_MAX when not measured. */
ANEURALNETWORKS_API int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *execution, bool measure);
ANEURALNETWORKS_API int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *execution,
                                                             int32_t durationCode, uint64_t *duration);
/* A burst runs its executions one at a time, each as ANeuralNetworksExecution_compute does. */
ANEURALNETWORKS_API int ANeuralNetworksBurst_create(ANeuralNetworksCompilation *compilation,
                                                    ANeuralNetworksBurst **burst);
ANEURALNETWORKS_API void ANeuralNetworksBurst_free(ANeuralNetworksBurst *burst);
ANEURALNETWORKS_API int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution *execution,
                                                              ANeuralNetworksBurst *burst);
/* Always ANEURALNETWORKS_UNMAPPABLE (memory set to NULL): there are no hardware buffers here. */
ANEURALNETWORKS_API int ANeuralNetworksMemory_createFromAHardwareBuffer(const AHardwareBuffer *ahwb,
                                                                        ANeuralNetworksMemory **memory);

#ifdef __cplusplus
}
#endif

#endif
