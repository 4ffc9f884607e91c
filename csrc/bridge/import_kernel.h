/* bridge/import_kernel.h: the Python-bodied function behind vxImportKernelFromURL. */
uintptr_t vxnn_import_kernel_from_url(const char *fn, uintptr_t context, const char *type, const char *url);
