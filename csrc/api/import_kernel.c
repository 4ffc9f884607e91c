/* api/import_kernel.c: vxImportKernelFromURL (vx_khr_import_kernel): a kernel from a model file. */
#include "../runtime_internal.h"
#include <VX/vx_khr_import_kernel.h>

VX_API_ENTRY vx_kernel VX_API_CALL vxImportKernelFromURL(vx_context context, const vx_char *type, const vx_char *url)
{
    VXNN_START_OR_RETURN(NULL);
    return (vx_kernel)vxnn_import_kernel_from_url(__func__, H(context), type, url);
}
