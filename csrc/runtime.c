/* runtime.c: start-up of the embedded interpreter.  Included into the cffi
 * module's own translation unit, because cffi_start_python() is static there.
 *
 * A C program that loads libopenvx.so has no Python yet.  Before cffi starts
 * one we configure it ourselves: an embedded interpreter does not find the
 * virtual environment the package was installed in (it searches PATH), so we
 * name its executable explicitly, chosen in this order:
 *   1. $OPENVX_NN_PYTHON,
 *   2. <venv>/bin/python3 for the nearest pyvenv.cfg above this library,
 *   3. the interpreter that built the library (VXNN_BUILD_PYTHON).
 * When the library is loaded into a running Python, that interpreter is used.
 *
 * Exit.  cffi never finalizes the interpreter it starts, but exit() still runs
 * the C exit handlers and library destructors (LLVM's among them) while graph
 * workers may be inside a kernel or the JIT.  vxnn_at_exit runs first: it is
 * registered when start-up is complete, after the Python side has loaded those
 * libraries and made LLVM build its lazily created state (which registers its
 * teardown), and handlers run in reverse order.  It calls openvx_nn.core.execution.shutdown(), which refuses new
 * executions and waits for those in flight, and then keeps the GIL, so no
 * Python code runs again while the process is torn down. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime_internal.h"

#ifndef VXNN_BUILD_PYTHON
#define VXNN_BUILD_PYTHON ""
#endif

static char vxnn_libdir[4096];
static pthread_once_t vxnn_once = PTHREAD_ONCE_INIT;
static int vxnn_bad_python; /* OPENVX_NN_PYTHON names no executable: never start another Python instead */
static pthread_once_t vxnn_exit_once = PTHREAD_ONCE_INIT;
static int vxnn_started_python = 0; /* we, not a Python host, started the interpreter */
static int vxnn_exiting = 0;

static void vxnn_find_libdir(void)
{
    Dl_info info;
    if (dladdr((void *)&vxnn_find_libdir, &info) && info.dli_fname) {
        const char *slash;
        snprintf(vxnn_libdir, sizeof vxnn_libdir, "%s", info.dli_fname);
        slash = strrchr(vxnn_libdir, '/');
        if (slash)
            vxnn_libdir[slash - vxnn_libdir] = '\0';
        else
            vxnn_libdir[0] = '\0';
    }
}

const char *vxnn_library_dir(void)
{
    if (!vxnn_libdir[0])
        vxnn_find_libdir();
    return vxnn_libdir;
}

/* <venv>/bin/python3 of the nearest pyvenv.cfg above this library, or NULL. */
static const char *vxnn_venv_python(char *out, size_t size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", vxnn_library_dir());
    while (dir[0]) {
        char probe[4200];
        char *slash;
        snprintf(probe, sizeof probe, "%s/pyvenv.cfg", dir);
        if (access(probe, R_OK) == 0) {
            snprintf(out, size, "%s/bin/python3", dir);
            if (access(out, X_OK) == 0)
                return out;
            snprintf(out, size, "%s/bin/python", dir);
            return access(out, X_OK) == 0 ? out : NULL;
        }
        slash = strrchr(dir, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return NULL;
}

static void vxnn_preinit(void)
{
    PyConfig config;
    PyStatus status;
    struct stat st;
    char buf[4200];
    const char *exe = getenv("OPENVX_NN_PYTHON");

    if (Py_IsInitialized()) {
        /* Loaded into a running Python: cffi's one-time start-up uses
         * PyCapsule_Type.tp_version_tag as its spin lock and waits for it to be 0
         * (Python < 3.12). Once a type-attribute cache lookup has given that type a
         * version tag (after importing coremltools, for one), it never is: reset it. */
        PyGILState_STATE gil = PyGILState_Ensure();
        PyType_Modified(&PyCapsule_Type);
        PyGILState_Release(gil);
        return;
    }
    if (exe && exe[0] && (stat(exe, &st) != 0 || !S_ISREG(st.st_mode) || access(exe, X_OK) != 0)) {
        vxnn_bad_python = 1;
        fprintf(stderr, "libopenvx: OPENVX_NN_PYTHON=%s is not an executable Python interpreter; "
                        "every OpenVX call will fail (unset it, or name the python that has openvx_nn)\n", exe);
        return;
    }
    if (!exe || !exe[0])
        exe = vxnn_venv_python(buf, sizeof buf);
    if (!exe || !exe[0])
        exe = VXNN_BUILD_PYTHON;

    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.buffered_stdio = 0; /* cffi never finalizes Python: buffered output would be lost */
    if (exe[0]) {
        status = PyConfig_SetBytesString(&config, &config.executable, exe);
        if (PyStatus_Exception(status)) {
            PyConfig_Clear(&config);
            return;
        }
    }
    status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        fprintf(stderr, "libopenvx: cannot start Python (%s)\n",
                status.err_msg ? status.err_msg : "unknown error");
        return;
    }
    vxnn_started_python = 1;
    PyEval_SaveThread(); /* cffi takes the GIL per call */
}

static void vxnn_at_exit(void)
{
    PyObject *module, *result;
    if (vxnn_exiting || !vxnn_started_python || !Py_IsInitialized())
        return;
    vxnn_exiting = 1;
    PyGILState_Ensure(); /* never released: see the comment at the top */
    module = PyImport_ImportModule("openvx_nn.core.execution");
    result = module ? PyObject_CallMethod(module, "shutdown", NULL) : NULL;
    if (!result)
        PyErr_Print();
    Py_XDECREF(result);
    Py_XDECREF(module);
}

void vxnn_register_exit(void)
{
    if (vxnn_started_python)
        atexit(vxnn_at_exit);
}

static void vxnn_register_exit_once(void)
{
    vxnn_register_exit();
}

/* Unloading the library (or a process end that skipped the exit handlers'
 * registration) takes the same path; it does nothing the second time. */
__attribute__((destructor)) static void vxnn_unload(void)
{
    vxnn_at_exit();
}

int vxnn_start(void)
{
    static int reported = 0;
    pthread_once(&vxnn_once, vxnn_preinit);
    if (vxnn_bad_python)
        return 0;
    if (cffi_start_python() == 0) {
        pthread_once(&vxnn_exit_once, vxnn_register_exit_once);
        return 1;
    }
    if (!reported) {
        reported = 1;
        fprintf(stderr, "libopenvx: the openvx_nn Python package failed to start; "
                        "every OpenVX call will fail (set OPENVX_NN_PYTHON to the "
                        "interpreter that has openvx_nn installed)\n");
    }
    return 0;
}

void vxnn_emit_log(void *callback, uintptr_t context, uintptr_t ref, int32_t status, const char *text)
{
    vx_log_callback_f cb = (vx_log_callback_f)(uintptr_t)callback;
    if (cb)
        cb((vx_context)context, (vx_reference)ref, status, text);
}

int32_t vxnn_call_node_callback(void *callback, uintptr_t node)
{
    vx_nodecomplete_f cb = (vx_nodecomplete_f)(uintptr_t)callback;
    return cb ? cb((vx_node)node) : 0;
}

void vxnn_memcpy(uintptr_t dst, uintptr_t src, size_t n)
{
    memmove((void *)dst, (const void *)src, n);
}

int32_t vxnn_call_kernel(void *function, uintptr_t node, const uintptr_t *parameters, uint32_t count)
{
    vx_kernel_f f = (vx_kernel_f)(uintptr_t)function;
    return f ? f((vx_node)node, (const vx_reference *)parameters, count) : VX_ERROR_INVALID_PARAMETERS;
}

int32_t vxnn_call_validator(void *function, uintptr_t node, const uintptr_t *parameters, uint32_t count,
                            const uintptr_t *metas)
{
    vx_kernel_validate_f f = (vx_kernel_validate_f)(uintptr_t)function;
    return f ? f((vx_node)node, (const vx_reference *)parameters, count, (vx_meta_format *)metas)
             : VX_ERROR_INVALID_PARAMETERS;
}

void *vxnn_module_open(const char *path, char *error, size_t size)
{
    void *module = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!module) {
        const char *why = dlerror();
        snprintf(error, size, "%s", why ? why : "unknown dlopen error");
    }
    return module;
}

void *vxnn_module_symbol(void *module, const char *name)
{
    return dlsym(module, name);
}

void vxnn_module_close(void *module)
{
    if (module)
        dlclose(module);
}

int32_t vxnn_call_publish(void *function, uintptr_t context)
{
    vx_publish_kernels_f f = (vx_publish_kernels_f)(uintptr_t)function;
    return f ? f((vx_context)context) : VX_ERROR_INVALID_PARAMETERS;
}
