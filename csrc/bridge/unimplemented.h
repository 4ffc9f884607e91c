/* bridge/unimplemented.h: what the generated stubs of csrc/build_capi.py call.
 * Logs "<fn>: not implemented" and answers the error object of ref's context
 * for VX_ERROR_NOT_IMPLEMENTED (0 when ref names no live object). */
uintptr_t vxnn_not_implemented(const char *fn, uintptr_t ref);
