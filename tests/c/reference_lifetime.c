/* reference_lifetime.c: counting, type, names and release of references as a
 * C application uses them.  Prints "reference checks passed" and exits 0, or
 * names the failed check. */
#include <stdio.h>
#include <string.h>
#include <VX/vx.h>

static int failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAILED line %d: %s\n", __LINE__, #cond);               \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static vx_uint32 count_of(vx_reference ref)
{
    vx_uint32 count = 0;
    if (vxQueryReference(ref, VX_REFERENCE_COUNT, &count, sizeof count) != VX_SUCCESS)
        return 0xFFFFFFFFu;
    return count;
}

static vx_uint32 live_references(vx_context context)
{
    vx_uint32 refs = 0;
    if (vxQueryContext(context, VX_CONTEXT_REFERENCES, &refs, sizeof refs) != VX_SUCCESS)
        return 0xFFFFFFFFu;
    return refs;
}

int main(void)
{
    vx_context context = vxCreateContext();
    vx_uint32 baseline = live_references(context);
    vx_graph graph = vxCreateGraph(context);
    vx_graph copy = graph;
    vx_reference generic;
    vx_enum type = 0;
    vx_char *name = NULL;
    char long_name[VX_MAX_REFERENCE_NAME + 1];

    CHECK(vxGetStatus((vx_reference)graph) == VX_SUCCESS);
    CHECK(live_references(context) == baseline + 1);

    /* types */
    CHECK(vxQueryReference((vx_reference)context, VX_REFERENCE_TYPE, &type, sizeof type) == VX_SUCCESS);
    CHECK(type == VX_TYPE_CONTEXT);
    CHECK(vxQueryReference((vx_reference)graph, VX_REFERENCE_TYPE, &type, sizeof type) == VX_SUCCESS);
    CHECK(type == VX_TYPE_GRAPH);

    /* counting */
    CHECK(count_of((vx_reference)graph) == 1);
    CHECK(vxRetainReference((vx_reference)graph) == VX_SUCCESS);
    CHECK(count_of((vx_reference)graph) == 2);
    generic = (vx_reference)graph;
    CHECK(vxReleaseReference(&generic) == VX_SUCCESS && generic == NULL);
    CHECK(count_of((vx_reference)graph) == 1);

    /* names */
    CHECK(vxSetReferenceName((vx_reference)graph, "lenet") == VX_SUCCESS);
    CHECK(vxQueryReference((vx_reference)graph, VX_REFERENCE_NAME, &name, sizeof name) == VX_SUCCESS);
    CHECK(name != NULL && strcmp(name, "lenet") == 0);
    memset(long_name, 'q', sizeof long_name);
    long_name[VX_MAX_REFERENCE_NAME] = '\0';
    CHECK(vxSetReferenceName((vx_reference)graph, long_name) == VX_ERROR_INVALID_PARAMETERS);
    long_name[VX_MAX_REFERENCE_NAME - 1] = '\0';
    CHECK(vxSetReferenceName((vx_reference)graph, long_name) == VX_SUCCESS);
    CHECK(vxQueryReference((vx_reference)graph, VX_REFERENCE_NAME, &name, sizeof name) == VX_SUCCESS);
    CHECK(name != NULL && strlen(name) == VX_MAX_REFERENCE_NAME - 1);

    /* release, double release, released handles everywhere */
    CHECK(vxReleaseGraph(&graph) == VX_SUCCESS && graph == NULL);
    CHECK(vxReleaseGraph(&graph) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxReleaseGraph(&copy) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxGetStatus((vx_reference)copy) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxRetainReference((vx_reference)copy) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxQueryReference((vx_reference)copy, VX_REFERENCE_TYPE, &type, sizeof type) == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxSetReferenceName((vx_reference)copy, "x") == VX_ERROR_INVALID_REFERENCE);
    CHECK(vxGetContext((vx_reference)copy) == NULL);
    CHECK(vxCreateGraph((vx_context)copy) == NULL);
    CHECK(live_references(context) == baseline);

    CHECK(vxReleaseContext(&context) == VX_SUCCESS && context == NULL);
    if (failures)
        return 1;
    printf("reference checks passed\n");
    return 0;
}
