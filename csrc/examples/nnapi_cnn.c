/* nnapi_cnn.c: a small quantized CNN built and run with NNAPI's C API (libneuralnetworks.so).
 *
 *     cc nnapi_cnn.c $(python -m openvx_nn.config --cflags --nnapi-libs) -o nnapi_cnn && ./nnapi_cnn
 *
 * input [N, 6, 6, 1] uint8 (N left unknown in the model: 0, given by setInput's type)
 *   -> CONV_2D 3x3, 2 filters, SAME, RELU -> MAX_POOL_2D 2x2 -> RESHAPE [-1, 18]
 *   -> FULLY_CONNECTED 3 -> SOFTMAX -> output [N, 3] uint8 (scale 1/256)
 * The convolution filter and the fully connected weights are read from a file mapped with
 * ANeuralNetworksMemory_createFromFd; the other constants are copied by setOperandValue.
 * Prints, per image, the three class probabilities and the most likely class. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <NeuralNetworks.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define BATCH 2
#define CHECK(call)                                                              \
    do {                                                                         \
        int status_ = (call);                                                    \
        if (status_ != ANEURALNETWORKS_NO_ERROR) {                               \
            fprintf(stderr, "%s failed with ResultCode %d\n", #call, status_);   \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static uint32_t operand_count = 0;

static uint32_t add(ANeuralNetworksModel *model, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                    int32_t zero_point)
{
    ANeuralNetworksOperandType t = {type, rank, dims, scale, zero_point};
    CHECK(ANeuralNetworksModel_addOperand(model, &t));
    return operand_count++;
}

static uint32_t add_int(ANeuralNetworksModel *model, int32_t value)
{
    uint32_t k = add(model, ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0);
    CHECK(ANeuralNetworksModel_setOperandValue(model, k, &value, sizeof value));
    return k;
}

/* The weights file: the 2x3x3x1 filter, then the 3x18 fully connected weights. */
static int weights_file(uint8_t *filter, uint8_t *fc)
{
    char path[] = "/tmp/nnapi_cnn_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    unlink(path);
    if (write(fd, filter, 18) != 18 || write(fd, fc, 54) != 54) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(void)
{
    static const uint32_t in_dims[] = {0, 6, 6, 1}, filter_dims[] = {2, 3, 3, 1}, conv_dims[] = {0, 6, 6, 2};
    static const uint32_t pool_dims[] = {0, 3, 3, 2}, shape_dims[] = {2}, flat_dims[] = {0, 18};
    static const uint32_t fc_dims[] = {3, 18}, two[] = {2}, three[] = {3}, out_dims[] = {0, 3};
    const float in_scale = 1.0f / 64, filter_scale = 0.05f, conv_scale = 0.1f, fc_scale = 0.02f;
    uint8_t filter[18], fc[54], input[BATCH * 36], output[BATCH * 3];
    int32_t conv_bias[2] = {-20, 40}, fc_bias[3] = {100, -50, 0}, shape[2] = {-1, 18};
    float beta = 1.0f;
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksMemory *memory = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksEvent *event = NULL;
    uint32_t x, w, b, conv, pool, reshaped, shape_k, fw, fb, logits, y, k;
    int i, n, fd;

    for (i = 0; i < 18; i++)
        filter[i] = (uint8_t)(128 + (i * 37) % 41 - 20);
    for (i = 0; i < 54; i++)
        fc[i] = (uint8_t)(128 + (i * 53) % 61 - 30);
    for (i = 0; i < BATCH * 36; i++)
        input[i] = (uint8_t)((i * 29 + 7) % 64);
    fd = weights_file(filter, fc);
    if (fd < 0) {
        perror("weights file");
        return 1;
    }
    CHECK(ANeuralNetworksMemory_createFromFd(72, PROT_READ, fd, 0, &memory));

    CHECK(ANeuralNetworksModel_create(&model));
    x = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, in_dims, in_scale, 0);
    w = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, filter_dims, filter_scale, 128);
    b = add(model, ANEURALNETWORKS_TENSOR_INT32, 1, two, in_scale * filter_scale, 0);
    CHECK(ANeuralNetworksModel_setOperandValueFromMemory(model, w, memory, 0, 18));
    CHECK(ANeuralNetworksModel_setOperandValue(model, b, conv_bias, sizeof conv_bias));
    conv = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, conv_dims, conv_scale, 0);
    {
        uint32_t ins[7] = {x, w, b, add_int(model, ANEURALNETWORKS_PADDING_SAME), add_int(model, 1),
                           add_int(model, 1), add_int(model, ANEURALNETWORKS_FUSED_RELU)};
        CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_CONV_2D, 7, ins, 1, &conv));
    }
    pool = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, pool_dims, conv_scale, 0);
    {
        uint32_t ins[7] = {conv, add_int(model, ANEURALNETWORKS_PADDING_VALID), add_int(model, 2),
                           add_int(model, 2), add_int(model, 2), add_int(model, 2),
                           add_int(model, ANEURALNETWORKS_FUSED_NONE)};
        CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_MAX_POOL_2D, 7, ins, 1, &pool));
    }
    shape_k = add(model, ANEURALNETWORKS_TENSOR_INT32, 1, shape_dims, 0.0f, 0);
    CHECK(ANeuralNetworksModel_setOperandValue(model, shape_k, shape, sizeof shape));
    reshaped = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, flat_dims, conv_scale, 0);
    {
        uint32_t ins[2] = {pool, shape_k};
        CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_RESHAPE, 2, ins, 1, &reshaped));
    }
    fw = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, fc_dims, fc_scale, 128);
    fb = add(model, ANEURALNETWORKS_TENSOR_INT32, 1, three, conv_scale * fc_scale, 0);
    CHECK(ANeuralNetworksModel_setOperandValueFromMemory(model, fw, memory, 18, 54));
    CHECK(ANeuralNetworksModel_setOperandValue(model, fb, fc_bias, sizeof fc_bias));
    logits = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, out_dims, 0.1f, 128);
    {
        uint32_t ins[4] = {reshaped, fw, fb, add_int(model, ANEURALNETWORKS_FUSED_NONE)};
        CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_FULLY_CONNECTED, 4, ins, 1, &logits));
    }
    y = add(model, ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, out_dims, 1.0f / 256, 0);
    k = add(model, ANEURALNETWORKS_FLOAT32, 0, NULL, 0.0f, 0);
    CHECK(ANeuralNetworksModel_setOperandValue(model, k, &beta, sizeof beta));
    {
        uint32_t ins[2] = {logits, k};
        CHECK(ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_SOFTMAX, 2, ins, 1, &y));
    }
    CHECK(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &x, 1, &y));
    CHECK(ANeuralNetworksModel_finish(model));

    CHECK(ANeuralNetworksCompilation_create(model, &compilation));
    CHECK(ANeuralNetworksCompilation_setPreference(compilation, ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER));
    CHECK(ANeuralNetworksCompilation_finish(compilation));

    CHECK(ANeuralNetworksExecution_create(compilation, &execution));
    {
        /* the model leaves the batch unknown: the type gives it */
        static const uint32_t batch_in[] = {BATCH, 6, 6, 1}, batch_out[] = {BATCH, 3};
        ANeuralNetworksOperandType tin = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 4, batch_in, in_scale, 0};
        ANeuralNetworksOperandType tout = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, batch_out, 1.0f / 256, 0};
        CHECK(ANeuralNetworksExecution_setInput(execution, 0, &tin, input, sizeof input));
        CHECK(ANeuralNetworksExecution_setOutput(execution, 0, &tout, output, sizeof output));
    }
    CHECK(ANeuralNetworksExecution_startCompute(execution, &event));
    CHECK(ANeuralNetworksEvent_wait(event));

    for (n = 0; n < BATCH; n++) {
        int best = 0;
        printf("image %d:", n);
        for (i = 0; i < 3; i++) {
            printf(" %3u (%.3f)", output[n * 3 + i], output[n * 3 + i] / 256.0);
            if (output[n * 3 + i] > output[n * 3 + best])
                best = i;
        }
        printf("  class %d\n", best);
    }

    ANeuralNetworksEvent_free(event);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    ANeuralNetworksMemory_free(memory);
    close(fd);
    return 0;
}
