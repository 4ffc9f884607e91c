/* context_lifetime.c: the context as a C application sees it: every attribute,
 * the size and attribute checks, the singleton, and destruction on release.
 * Prints "context checks passed" and exits 0, or names the failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

static int failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAILED line %d: %s\n", __LINE__, #cond);               \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static char last_log[VX_MAX_LOG_MESSAGE_LEN];
static vx_status last_status;
static vx_reference last_ref;
static int log_count;

static void VX_CALLBACK on_log(vx_context context, vx_reference ref, vx_status status, const vx_char string[])
{
    (void)context;
    last_status = status;
    last_ref = ref;
    log_count++;
    strncpy(last_log, string, sizeof last_log - 1);
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;
    while ((p = strstr(p, word)) != NULL) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
        p += n;
    }
    return 0;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_context again;
    vx_graph graph, error;
    vx_uint16 vendor = 0, version = 0;
    vx_uint32 kernels = 0, modules = 0, refs = 0, refs_before = 0, count = 0;
    vx_char implementation[VX_MAX_IMPLEMENTATION_NAME];
    vx_size ext_size = 0, max_dims = 0;
    char extensions[512];
    vx_kernel_info_t *table;
    vx_border_t border, back;
    vx_enum type = 0;

    CHECK(vxGetStatus((vx_reference)context) == VX_SUCCESS);
    vxRegisterLogCallback(context, on_log, vx_false_e);

    /* every attribute */
    CHECK(vxQueryContext(context, VX_CONTEXT_VENDOR_ID, &vendor, sizeof vendor) == VX_SUCCESS);
    CHECK(vxQueryContext(context, VX_CONTEXT_VERSION, &version, sizeof version) == VX_SUCCESS);
    CHECK(version == VX_VERSION_1_3);
    CHECK(VX_VERSION_MAJOR(1) == 0x100 && VX_VERSION_MINOR(3) == 3 && VX_VERSION == VX_VERSION_1_3);
    CHECK(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNELS, &kernels, sizeof kernels) == VX_SUCCESS);
    CHECK(vxQueryContext(context, VX_CONTEXT_MODULES, &modules, sizeof modules) == VX_SUCCESS);
    CHECK(modules <= kernels);
    CHECK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &refs_before, sizeof refs_before) == VX_SUCCESS);
    CHECK(refs_before >= 1);
    CHECK(vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, implementation, sizeof implementation) == VX_SUCCESS);
    CHECK(implementation[0] != '\0' && memchr(implementation, '\0', sizeof implementation) != NULL);
    CHECK(vxQueryContext(context, VX_CONTEXT_EXTENSIONS_SIZE, &ext_size, sizeof ext_size) == VX_SUCCESS);
    CHECK(ext_size > 1 && ext_size <= sizeof extensions);
    CHECK(vxQueryContext(context, VX_CONTEXT_EXTENSIONS, extensions, ext_size) == VX_SUCCESS);
    CHECK(strlen(extensions) + 1 == ext_size);
    CHECK(has_word(extensions, "KHR_NN_8") && has_word(extensions, "KHR_NN_16"));
    CHECK(vxQueryContext(context, VX_CONTEXT_MAX_TENSOR_DIMS, &max_dims, sizeof max_dims) == VX_SUCCESS);
    CHECK(max_dims >= 4);
    table = (vx_kernel_info_t *)calloc(kernels + 1, sizeof *table);
    CHECK(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNEL_TABLE, table, kernels * sizeof *table) == VX_SUCCESS);
    CHECK(vxQueryContext(context, VX_CONTEXT_UNIQUE_KERNEL_TABLE, table, (kernels + 1) * sizeof *table)
          == VX_ERROR_INVALID_PARAMETERS);
    free(table);

    memset(&border, 0, sizeof border);
    border.mode = VX_BORDER_REPLICATE;
    CHECK(vxSetContextAttribute(context, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border) == VX_SUCCESS);
    CHECK(vxQueryContext(context, VX_CONTEXT_IMMEDIATE_BORDER, &back, sizeof back) == VX_SUCCESS);
    CHECK(back.mode == VX_BORDER_REPLICATE);
    border.mode = VX_BORDER_UNDEFINED;
    CHECK(vxSetContextAttribute(context, VX_CONTEXT_IMMEDIATE_BORDER, &border, sizeof border) == VX_SUCCESS);

    /* sizes, unknown attributes, read-only attributes: each logged with the function's name */
    log_count = 0;
    CHECK(vxQueryContext(context, VX_CONTEXT_VERSION, &refs, sizeof refs) == VX_ERROR_INVALID_PARAMETERS);
    CHECK(log_count == 1 && last_status == VX_ERROR_INVALID_PARAMETERS && strstr(last_log, "vxQueryContext"));
    CHECK(last_ref == (vx_reference)context);
    CHECK(vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, implementation, 10) == VX_ERROR_INVALID_PARAMETERS);
    CHECK(vxQueryContext(context, VX_ATTRIBUTE_BASE(VX_ID_KHRONOS, VX_TYPE_CONTEXT) + 0x7F, &refs, 4)
          == VX_ERROR_NOT_SUPPORTED);
    CHECK(last_status == VX_ERROR_NOT_SUPPORTED && strstr(last_log, "vxQueryContext"));
    CHECK(vxSetContextAttribute(context, VX_CONTEXT_REFERENCES, &refs, sizeof refs) == VX_ERROR_NOT_SUPPORTED);
    CHECK(last_status == VX_ERROR_NOT_SUPPORTED && strstr(last_log, "vxSetContextAttribute"));
    CHECK(log_count == 4);

    /* the singleton */
    again = vxCreateContext();
    CHECK(again == context);
    CHECK(vxQueryReference((vx_reference)context, VX_REFERENCE_COUNT, &count, sizeof count) == VX_SUCCESS);
    CHECK(count == 2);
    CHECK(vxReleaseContext(&again) == VX_SUCCESS && again == NULL);
    CHECK(vxQueryReference((vx_reference)context, VX_REFERENCE_COUNT, &count, sizeof count) == VX_SUCCESS);
    CHECK(count == 1);

    /* objects, error objects, and destruction of everything on the last release */
    graph = vxCreateGraph(context);
    CHECK(vxGetStatus((vx_reference)graph) == VX_SUCCESS);
    CHECK(vxGetContext((vx_reference)graph) == context);
    CHECK(vxQueryContext(context, VX_CONTEXT_REFERENCES, &refs, sizeof refs) == VX_SUCCESS);
    CHECK(refs == refs_before + 1);
    error = vxCreateGraph((vx_context)graph);
    CHECK(error != NULL && vxGetStatus((vx_reference)error) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxQueryReference((vx_reference)error, VX_REFERENCE_TYPE, &type, sizeof type) == VX_SUCCESS);
    CHECK(type == VX_TYPE_ERROR);
    CHECK(vxGetStatus(NULL) == VX_ERROR_NO_RESOURCES);
    CHECK(vxGetStatus((vx_reference)&refs) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxReleaseContext(&context) == VX_SUCCESS && context == NULL);
    CHECK(vxGetStatus((vx_reference)graph) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxGetStatus((vx_reference)error) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxReleaseGraph(&graph) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxReleaseContext(&context) == VX_ERROR_INVALID_REFERENCE);

    if (failures)
        return 1;
    printf("context checks passed\n");
    return 0;
}
