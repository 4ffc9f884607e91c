/* NeuralNetworks.h: the Android Neural Networks API 1.1 (API levels 27 and 28) on Linux, served by
 * libneuralnetworks.so of openvx-nn:
 *     cc app.c $(python -m openvx_nn.config --cflags --nnapi-libs)
 * Names and values are NNAPI's (the enums carry the HAL 1.0 and 1.1 values).  Every function returns a
 * ResultCode: NULL arguments give ANEURALNETWORKS_UNEXPECTED_NULL, calls out of order
 * ANEURALNETWORKS_BAD_STATE, bad operands or buffers ANEURALNETWORKS_BAD_DATA, a failed execution
 * ANEURALNETWORKS_OP_FAILED; the reason goes to stderr as one line naming the function and object. */
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
    ANEURALNETWORKS_TENSOR_QUANT8_ASYMM = 5
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
    ANEURALNETWORKS_TRANSPOSE = 37
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
    ANEURALNETWORKS_UNMAPPABLE = 7
} ResultCode;

enum { ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES = 128 };

typedef struct ANeuralNetworksMemory ANeuralNetworksMemory;
typedef struct ANeuralNetworksModel ANeuralNetworksModel;
typedef struct ANeuralNetworksCompilation ANeuralNetworksCompilation;
typedef struct ANeuralNetworksExecution ANeuralNetworksExecution;
typedef struct ANeuralNetworksEvent ANeuralNetworksEvent;

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

#ifdef __cplusplus
}
#endif

#endif
