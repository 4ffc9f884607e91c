/* context_info.c: create a context, print what it reports, release it. */
#include <stdio.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

int main(void)
{
    vx_context context = vxCreateContext();
    vx_char implementation[VX_MAX_IMPLEMENTATION_NAME];
    vx_uint16 version = 0;
    vx_uint32 refs = 0;
    vx_size ext_size = 0;
    char extensions[256];

    if (vxGetStatus((vx_reference)context) != VX_SUCCESS) {
        fprintf(stderr, "vxCreateContext failed\n");
        return 1;
    }
    vxQueryContext(context, VX_CONTEXT_IMPLEMENTATION, implementation, sizeof implementation);
    vxQueryContext(context, VX_CONTEXT_VERSION, &version, sizeof version);
    vxQueryContext(context, VX_CONTEXT_REFERENCES, &refs, sizeof refs);
    vxQueryContext(context, VX_CONTEXT_EXTENSIONS_SIZE, &ext_size, sizeof ext_size);
    if (ext_size > sizeof extensions ||
        vxQueryContext(context, VX_CONTEXT_EXTENSIONS, extensions, ext_size) != VX_SUCCESS)
        return 1;
    printf("implementation: %s\nversion: %d.%d\nextensions: %s\nreferences: %u\n",
           implementation, version >> 8, version & 0xFF, extensions, refs);
    return vxReleaseContext(&context) == VX_SUCCESS && context == NULL ? 0 : 1;
}
