/* Import an NNEF folder with vxImportKernelFromURL, run it as a node and compare with the expected outputs.
 *
 *   nnef_import FOLDER IN... -- OUT...     inputs FOLDER/inputs/IN.dat, expected FOLDER/outputs/OUT.dat
 *   nnef_import --expect-error TYPE URL     the import must fail; prints the status and the log lines
 *
 * Parameters are taken as the kernel describes them right after the import (VX_PARAMETER_DIRECTION and the
 * meta format's dims and type): tensors whose dims are the NNEF shape in NNEF order and whose bytes are the
 * packed payload of a .dat file. NNEF logicals are VX_TYPE_BOOL tensors of vx_bool elements: the eight-to-a-byte
 * bits of a .dat file (first element in the high bit) are unpacked into them and compared with them here.
 * Floats must match within 1e-4 relative (near zero, relative to a hundredth of the output's largest value),
 * integers and logicals exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_import_kernel.h>

#define HEADER 128
#define MAX_DIMS 8

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context; (void)ref;
    printf("log %d: %s\n", status, string);
}

/* The payload of a .dat file (bits per item in *bits), or NULL. */
static unsigned char *read_dat(const char *path, size_t *length, unsigned *bits)
{
    FILE *f = fopen(path, "rb");
    unsigned char header[HEADER];
    if (!f || fread(header, 1, HEADER, f) != HEADER) {
        printf("cannot read %s\n", path);
        if (f) fclose(f);
        return NULL;
    }
    unsigned data_length, bits_per_item;
    memcpy(&data_length, header + 4, 4);
    memcpy(&bits_per_item, header + 4 + 4 + 4 + 8 * 4, 4);
    unsigned char *data = malloc(data_length ? data_length : 1);
    if (fread(data, 1, data_length, f) != data_length) {
        printf("short payload in %s\n", path);
        free(data);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *length = data_length;
    *bits = bits_per_item;
    return data;
}

static size_t element_size(vx_enum type)
{
    return type == VX_TYPE_BOOL ? sizeof(vx_bool) : type == VX_TYPE_UINT8 || type == VX_TYPE_INT8 ? 1
         : type == VX_TYPE_INT16 ? 2 : 4;
}

static unsigned bit_of(const unsigned char *bits, size_t e)
{
    return (bits[e / 8] >> (7 - e % 8)) & 1;
}

/* A .dat payload as the tensor's elements: logicals' bits unpacked into vx_bool, other types as they are. */
static unsigned char *as_elements(unsigned char *data, size_t length, unsigned bits, vx_enum type, size_t elements)
{
    if (type != VX_TYPE_BOOL)
        return data;
    if (bits != 1 || length * 8 < elements) {
        printf("a logical .dat payload of %zu bytes at %u bits for %zu elements\n", length, bits, elements);
        free(data);
        return NULL;
    }
    vx_bool *values = malloc(elements * sizeof(vx_bool) + 1);
    for (size_t e = 0; e < elements; e++)
        values[e] = bit_of(data, e) ? vx_true_e : vx_false_e;
    free(data);
    return (unsigned char *)values;
}

static size_t count_of(vx_size rank, const vx_size *dims)
{
    size_t elements = 1;
    for (vx_size d = 0; d < rank; d++)
        elements *= dims[d];
    return elements;
}

static vx_status copy(vx_tensor t, vx_size n, const vx_size *dims, vx_enum type, void *data, vx_enum usage)
{
    vx_size start[MAX_DIMS] = {0}, strides[MAX_DIMS];
    strides[0] = element_size(type);
    for (vx_size i = 1; i < n; i++)
        strides[i] = strides[i - 1] * dims[i - 1];
    return vxCopyTensorPatch(t, n, start, dims, strides, data, usage, VX_MEMORY_TYPE_HOST);
}

static int expect_error(const char *type, const char *url)
{
    vx_context context = vxCreateContext();
    vxRegisterLogCallback(context, on_log, vx_false_e);
    vx_kernel kernel = vxImportKernelFromURL(context, type, url);
    vx_status status = vxGetStatus((vx_reference)kernel);
    printf("status %d\n", status);
    vxReleaseContext(&context);
    return status == VX_SUCCESS ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--expect-error") == 0)
        return expect_error(argv[2], argv[3]);
    if (argc < 3) {
        printf("usage: nnef_import FOLDER IN... -- OUT...\n");
        return 2;
    }
    const char *folder = argv[1];
    int split = 2;
    while (split < argc && strcmp(argv[split], "--") != 0)
        split++;
    int inputs = split - 2, outputs = argc - split - 1, count = inputs + outputs;
    vx_context context = vxCreateContext();
    vxRegisterLogCallback(context, on_log, vx_false_e);
    vx_kernel kernel = vxImportKernelFromURL(context, "nnef", folder);
    if (vxGetStatus((vx_reference)kernel) != VX_SUCCESS) {
        printf("import failed: %d\n", vxGetStatus((vx_reference)kernel));
        return 1;
    }
    vx_uint32 parameters = 0;
    vxQueryKernel(kernel, VX_KERNEL_PARAMETERS, &parameters, sizeof(parameters));
    if ((int)parameters != count) {
        printf("the kernel has %u parameters, expected %d\n", parameters, count);
        return 1;
    }
    vx_tensor *tensors = calloc(count, sizeof(vx_tensor));
    vx_size (*dims)[MAX_DIMS] = calloc(count, sizeof(*dims));
    vx_size *ranks = calloc(count, sizeof(vx_size));
    vx_enum *types = calloc(count, sizeof(vx_enum));
    for (int i = 0; i < count; i++) {  /* every parameter as the import describes it, before any graph */
        vx_parameter p = vxGetKernelParameterByIndex(kernel, i);
        vx_enum direction = 0, type = 0;
        vx_meta_format meta = NULL;
        vxQueryParameter(p, VX_PARAMETER_DIRECTION, &direction, sizeof(direction));
        vxQueryParameter(p, VX_PARAMETER_TYPE, &type, sizeof(type));
        if (direction != (i < inputs ? VX_INPUT : VX_OUTPUT) || type != VX_TYPE_TENSOR) {
            printf("parameter %d: direction %d type %d\n", i, direction, type);
            return 1;
        }
        if (vxQueryParameter(p, VX_PARAMETER_META_FORMAT, &meta, sizeof(meta)) != VX_SUCCESS ||
            vxQueryMetaFormatAttribute(meta, VX_TENSOR_NUMBER_OF_DIMS, &ranks[i], sizeof(vx_size)) != VX_SUCCESS ||
            vxQueryMetaFormatAttribute(meta, VX_TENSOR_DIMS, dims[i], ranks[i] * sizeof(vx_size)) != VX_SUCCESS ||
            vxQueryMetaFormatAttribute(meta, VX_TENSOR_DATA_TYPE, &types[i], sizeof(vx_enum)) != VX_SUCCESS) {
            printf("parameter %d: no meta format\n", i);
            return 1;
        }
        vxReleaseParameter(&p);
        tensors[i] = vxCreateTensor(context, ranks[i], dims[i], types[i], 0);
    }
    vx_graph graph = vxCreateGraph(context);
    vx_node node = vxCreateGenericNode(graph, kernel);
    for (int i = 0; i < count; i++)
        vxSetParameterByIndex(node, i, (vx_reference)tensors[i]);
    for (int i = 0; i < inputs; i++) {
        char path[4096];
        size_t length;
        unsigned bits;
        snprintf(path, sizeof(path), "%s/inputs/%s.dat", folder, argv[2 + i]);
        unsigned char *data = read_dat(path, &length, &bits);
        if (data)
            data = as_elements(data, length, bits, types[i], count_of(ranks[i], dims[i]));
        if (!data || copy(tensors[i], ranks[i], dims[i], types[i], data, VX_WRITE_ONLY) != VX_SUCCESS) {
            printf("cannot set input %s\n", argv[2 + i]);
            return 1;
        }
        free(data);
    }
    vx_status status = vxVerifyGraph(graph);
    if (status == VX_SUCCESS)
        status = vxProcessGraph(graph);
    if (status != VX_SUCCESS) {
        printf("graph failed: %d\n", status);
        return 1;
    }
    int failures = 0;
    for (int o = 0; o < outputs; o++) {
        int i = inputs + o;
        const char *name = argv[split + 1 + o];
        char path[4096];
        size_t length, elements = 1;
        unsigned bits;
        snprintf(path, sizeof(path), "%s/outputs/%s.dat", folder, name);
        unsigned char *expected = read_dat(path, &length, &bits);
        elements = count_of(ranks[i], dims[i]);
        unsigned char *got = malloc(elements * element_size(types[i]) + 1);
        if (!expected || copy(tensors[i], ranks[i], dims[i], types[i], got, VX_READ_ONLY) != VX_SUCCESS) {
            printf("cannot read output %s\n", name);
            return 1;
        }
        size_t wrong = 0;
        double worst = 0.0, largest = 0.0;
        for (size_t e = 0; types[i] == VX_TYPE_FLOAT32 && e < elements; e++)
            largest = fmax(largest, fabs(((float *)expected)[e]));
        double floor = fmax(0.01 * largest, 1e-6);  /* near zero (sums that cancel): relative to the output */
        for (size_t e = 0; e < elements; e++) {
            if (types[i] == VX_TYPE_FLOAT32) {
                float a = ((float *)got)[e], b = ((float *)expected)[e];
                double error = fabs((double)a - b) / fmax(fabs(b), floor);
                if (!(error <= 1e-4)) wrong++;
                if (error > worst) worst = error;
            } else if (types[i] == VX_TYPE_INT32) {
                wrong += ((int *)got)[e] != ((int *)expected)[e];
            } else if (types[i] == VX_TYPE_BOOL) {  /* bits in the file, vx_bool in the tensor */
                vx_bool value = ((vx_bool *)got)[e];
                wrong += value != (bit_of(expected, e) ? vx_true_e : vx_false_e);
            } else {
                printf("%s: unexpected type %d\n", name, types[i]);
                return 1;
            }
        }
        printf("%s: %zu elements, %zu wrong, worst relative error %.3g\n", name, elements, wrong, worst);
        failures += wrong != 0;
        free(got);
        free(expected);
    }
    vxReleaseNode(&node);
    vxReleaseGraph(&graph);
    for (int i = 0; i < count; i++)
        vxReleaseTensor(&tensors[i]);
    vxReleaseKernel(&kernel);
    vxReleaseContext(&context);
    printf(failures ? "FAILED\n" : "ok\n");
    return failures ? 1 : 0;
}
