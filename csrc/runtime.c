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
 * Python code runs again while the process is torn down.
 *
 * Ctrl-C.  Python's signal module takes SIGINT over when it is imported (a C
 * host that left SIGINT at its default), and an entry point that SIGINT
 * interrupts gives it back with its default action (interrupt.py).  Two
 * places must not get Python's KeyboardInterrupt at all.  Start-up: raised in
 * the init code, it made cffi give up on Python for good, and the program
 * carried on with every call failing; so the thread that starts Python holds
 * SIGINT back until start-up is over, and a start-up that failed gives SIGINT
 * back its former action before letting it through.  Exit: raised in
 * shutdown(), it skipped the wait for the threads still inside kernels or the
 * JIT while the C runtime and LLVM were torn down; so vxnn_at_exit first gives
 * SIGINT its default action back (a Ctrl-C now ends the process at once, as
 * without the library), and a SIGINT Python recorded but never acted on (it
 * came while the program ran its own code or a native run) takes that action
 * then. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
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
static int vxnn_started_up = 0; /* the first start-up attempt is over (vxnn_start's fast path) */
static struct sigaction vxnn_host_sigint; /* SIGINT's action before start-up */
static void (*vxnn_python_sigint)(int);   /* Python's SIGINT handler, when start-up installed it */

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

/* At exit: SIGINT's default action again if Python's handler has it, and taken now if Python recorded a SIGINT
 * it has not acted on (see the comment at the top).  Called with the GIL. */
static void vxnn_sigint_at_exit(void)
{
    struct sigaction now, fallback;
    if (!vxnn_python_sigint || sigaction(SIGINT, NULL, &now) != 0 || now.sa_handler != vxnn_python_sigint)
        return; /* the host's own handler, or SIGINT ignored: not ours to change */
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    sigaction(SIGINT, &fallback, NULL);
    if (PyErr_CheckSignals() < 0) {
        if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
            raise(SIGINT); /* ends the process here, unless the host blocks SIGINT */
        PyErr_Clear();
    }
}

static void vxnn_at_exit(void)
{
    PyObject *module, *result;
    if (vxnn_exiting || !vxnn_started_python || !Py_IsInitialized())
        return;
    vxnn_exiting = 1;
    PyGILState_Ensure(); /* never released: see the comment at the top */
    vxnn_sigint_at_exit();
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

int vxnn_hosts_python(void)
{
    return vxnn_started_python;
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

static void vxnn_note_host_sigint(void)
{
    sigaction(SIGINT, NULL, &vxnn_host_sigint);
}

/* The end of a start-up that held SIGINT back: Python's handler noted, or after a failed start-up SIGINT's
 * former action restored (Python will not act on it); then a SIGINT that came meanwhile is let through. */
static void vxnn_let_sigint_through(int started, const sigset_t *saved)
{
    struct sigaction now;
    if (sigaction(SIGINT, NULL, &now) == 0 && now.sa_handler != vxnn_host_sigint.sa_handler) {
        if (started && vxnn_host_sigint.sa_handler == SIG_DFL)
            vxnn_python_sigint = now.sa_handler;
        else if (!started)
            sigaction(SIGINT, &vxnn_host_sigint, NULL);
    }
    __atomic_store_n(&vxnn_started_up, 1, __ATOMIC_RELEASE);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static int vxnn_start_python(void)
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

int vxnn_start(void)
{
    static pthread_once_t noted = PTHREAD_ONCE_INIT;
    sigset_t sigint, saved;
    int started;
    if (__atomic_load_n(&vxnn_started_up, __ATOMIC_ACQUIRE))
        return vxnn_start_python();
    /* Start-up: SIGINT held back in this thread (and in the threads Python starts meanwhile, which inherit the
     * mask); a host that blocked it keeps it blocked. */
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &sigint, &saved) != 0)
        return vxnn_start_python();
    pthread_once(&noted, vxnn_note_host_sigint);
    started = vxnn_start_python();
    vxnn_let_sigint_through(started, &saved);
    return started;
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
