"""Ctrl-C (SIGINT) during a graph's first run, while its kernels compile (an empty kernel cache makes that
take seconds): a Python caller gets ``KeyboardInterrupt``; a C program gets a log line and then the signal's
default action, as it would without the library; a C-style call from Python returns ``VX_FAILURE`` with the
log line."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import compile_c

C_PROGRAM = r"""
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>
#include <stdio.h>
static void VX_CALLBACK on_log(vx_context c, vx_reference r, vx_status s, const vx_char text[]) {
    (void)c; (void)r;
    printf("log %d: %s\n", (int)s, text);
    fflush(stdout);
}
int main(void) {
    vx_context ctx = vxCreateContext();
    vx_graph g = vxCreateGraph(ctx);
    vx_size in[3] = {13, 13, 64}, w[4] = {3, 3, 64, 96}, out[3] = {13, 13, 96};
    vx_tensor x = vxCreateTensor(ctx, 3, in, VX_TYPE_UINT8, 0);
    vx_tensor k = vxCreateTensor(ctx, 4, w, VX_TYPE_UINT8, 0);
    vx_tensor y = vxCreateTensor(ctx, 3, out, VX_TYPE_UINT8, 0);
    vx_nn_convolution_params_t p = {1, 1, VX_CONVERT_POLICY_SATURATE, VX_ROUND_POLICY_TO_ZERO,
                                    VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    vx_status s;
    vxRegisterLogCallback(ctx, on_log, vx_false_e);
    vxConvolutionLayer(g, x, k, NULL, &p, sizeof p, y);
    printf("processing\n");
    fflush(stdout);
    s = vxProcessGraph(g);
    printf("returned %d\n", (int)s);
    vxReleaseContext(&ctx);
    return 0;
}
"""

PYTHON_PROGRAM = r"""
import sys
import numpy as np
from openvx_nn import vx
from openvx_nn.api import Context
with Context() as ctx, ctx.graph() as g:
    y = g.convolution(ctx.tensor(shape=(13, 13, 64), dtype=np.uint8), np.ones((3, 3, 64, 96), np.uint8), None,
                      padding=1)
    g.verify()
    print("processing", flush=True)
    if sys.argv[1] == "pythonic":
        try:
            g.process()
        except KeyboardInterrupt:
            print("the caller got KeyboardInterrupt", flush=True)
    else:
        print("returned", vx.vxProcessGraph(vx.ffi.cast("vx_graph", g.handle)), flush=True)
"""


def run_interrupted(command: list[str], tmp_path) -> tuple[int, str]:
    """Run ``command`` with an empty kernel cache; SIGINT half a second after it prints "processing"."""
    env = {**os.environ, "OPENVX_NN_CACHE_DIR": str(tmp_path / "empty-cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    p = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = ""
    while "processing" not in seen:
        line = p.stdout.readline()
        assert line, seen
        seen += line
    time.sleep(0.5)
    assert p.poll() is None, "the first run finished before the interrupt: no compilation to interrupt"
    p.send_signal(signal.SIGINT)
    rest, _ = p.communicate(timeout=120)
    return p.returncode, seen + rest


def test_a_c_program_gets_a_log_line_then_the_default_action_of_sigint(tmp_path):
    code, output = run_interrupted([str(compile_c(C_PROGRAM, "interrupt"))], tmp_path)
    assert code == -signal.SIGINT, output
    assert "log -1: vxProcessGraph: interrupted by SIGINT (Ctrl-C)" in output
    assert "returned" not in output and "Traceback" not in output


def test_a_python_caller_of_the_pythonic_api_gets_keyboard_interrupt(tmp_path):
    code, output = run_interrupted([sys.executable, "-X", "faulthandler", "-c", PYTHON_PROGRAM, "pythonic"], tmp_path)
    assert code == 0 and "the caller got KeyboardInterrupt" in output, output


def test_a_c_style_call_from_python_returns_failure_with_the_log_line(tmp_path):
    code, output = run_interrupted([sys.executable, "-X", "faulthandler", "-c", PYTHON_PROGRAM, "c-style"], tmp_path)
    assert code == 0 and "returned -1" in output, output


def test_an_interrupted_entry_point_becomes_keyboard_interrupt_in_the_pythonic_caller():
    # SIGINT landing inside a C entry point called from Python (the Pythonic API's vx calls) ends that call
    # with VX_FAILURE and leaves the interrupt pending; the API raises it in its caller, once.
    from openvx_nn.api import reference
    from openvx_nn.api.errors import VXError as PythonicVXError
    from openvx_nn.capi import interrupt

    assert not interrupt.hosted_by_c()
    interrupt.redeliver()
    with pytest.raises(KeyboardInterrupt, match="vxQueryTensor"):
        reference._checked(-1, "vxQueryTensor", reference.LOG.mark())  # -1: VX_FAILURE
    with pytest.raises(PythonicVXError):  # taken once: the next failure is an ordinary error
        reference._checked(-1, "vxQueryTensor", reference.LOG.mark())


SWALLOWING_PROGRAM = r"""
import ctypes, os, signal
from numba.core.compiler_lock import global_compiler_lock
import openvx_nn.api  # noqa: F401  (the library installs its guard)

def inside_c():  # SIGINT arrives while C code (here ctypes, in numba: llvmlite) calls back into Python
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs between bytecodes: its exception is swallowed by ctypes
        pass

callback = ctypes.CFUNCTYPE(None)(inside_c)
try:
    with global_compiler_lock:
        callback()
        print("compiling went on", flush=True)
except KeyboardInterrupt:
    print("raised when the lock was released", flush=True)
print("handler restored:", signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
"""


def test_ctrl_c_swallowed_by_a_callback_inside_numbas_compiler_comes_back_when_compiling_ends():
    # llvmlite's ctypes callbacks (its object-cache hook) print and drop KeyboardInterrupt, so Ctrl-C during
    # a kernel's compilation was lost; CI caught the first test above finishing its run uninterrupted.
    run = subprocess.run([sys.executable, "-c", SWALLOWING_PROGRAM], capture_output=True, text=True,
                         timeout=120)
    assert run.stdout.splitlines() == ["compiling went on", "raised when the lock was released",
                                       "handler restored: True"]
    assert "Traceback" not in run.stderr, run.stderr  # the dropped copy is not printed either


HANDOVER_PROGRAM = r"""
import os, signal, sys
from numba.core.compiler_lock import global_compiler_lock
import openvx_nn.api  # noqa: F401  (the library installs its guard)

bindings = {"__name__": "llvmlite.binding.example", "os": os, "signal": signal}
exec('''
def hand_over(steps):  # as llvmlite passes a module to the JIT: a C call, then the Python side marks it owned
    steps.append("passed to C")
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs here, between the two steps
        pass
    steps.append("marked owned")
''', bindings)

steps = []
try:
    with global_compiler_lock:
        bindings["hand_over"](steps)
        steps.append("the caller's next line")
except KeyboardInterrupt:
    print("raised after", steps, flush=True)
print("tracing off:", sys.gettrace() is None, flush=True)
"""


def test_ctrl_c_landing_inside_llvms_bindings_is_raised_once_they_return():
    # An exception between llvmlite's two steps of a handover leaves an object both owners free: the process
    # crashed at exit (CI: the Pythonic test above ended with SIGSEGV after printing its KeyboardInterrupt).
    run = subprocess.run([sys.executable, "-c", HANDOVER_PROGRAM], capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines() == ["raised after ['passed to C', 'marked owned']", "tracing off: True"], \
        run.stdout + run.stderr


HOOK_PROGRAM = r"""
import os, signal, sys
from llvmlite import binding as llvm
from numba.core.compiler_lock import global_compiler_lock
import openvx_nn.api  # noqa: F401  (the library installs its guard)

sent = []

def released():  # as numba's hook on llvmlite's lock: another module's code, run inside llvmlite's call
    if not sent:
        sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here, while llvmlite's frames are below this one
            pass

llvm.ffi.register_lock_callback(lambda: None, released)
options = None
try:
    with global_compiler_lock:
        options = llvm.create_pipeline_tuning_options()  # a C call, then the Python object takes the pointer
        print("not interrupted", flush=True)
except KeyboardInterrupt:
    print("raised after the object was whole:", options is not None and "_as_parameter_" in vars(options), flush=True)
del options
print("tracing off:", sys.gettrace() is None, flush=True)
"""


def test_ctrl_c_landing_in_code_that_llvmlite_called_is_raised_once_llvmlite_returns():
    # Once in CI the C program of the stress test printed llvmlite's "'PipelineTuningOptions' object has no
    # attribute '_as_parameter_'" from a finalizer: SIGINT landed in numba's hook on llvmlite's lock (a frame of
    # numba's, so it raised at once) and unwound through llvmlite's constructor between its C call and the line
    # that keeps the pointer.
    run = subprocess.run([sys.executable, "-c", HOOK_PROGRAM], capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines() == ["raised after the object was whole: True", "tracing off: True"], \
        run.stdout + run.stderr
    assert "Exception ignored" not in run.stderr and "Traceback" not in run.stderr, run.stderr


FINALIZER_PROGRAM = r"""
import os, signal, sys
from openvx_nn.capi import interrupt

interrupt.hosted_by_c = lambda: True  # as in a C program, which started Python through the library
interrupt.guard_finalizers()
bindings = {"__name__": "llvmlite.binding.example", "os": os, "signal": signal}
exec('''
class Owned:  # as llvmlite's objects: the finalizer hands the object back to C
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs here, inside the finalizer
            pass
''', bindings)

def caller(steps):
    owned = bindings["Owned"]()
    del owned  # the finalizer runs here, outside numba's compiler lock
    steps.append("the caller's next line")

steps = []
try:
    caller(steps)
    print("not interrupted", steps, flush=True)
except KeyboardInterrupt:
    print("raised in the caller", steps, flush=True)
print("tracing off:", sys.gettrace() is None, flush=True)
"""


def test_ctrl_c_landing_in_an_llvmlite_finalizer_in_a_c_host_reaches_the_caller():
    # Once in a cold CI run the C program above printed a traceback from llvmlite's ``_ObjectRef.__del__``: SIGINT
    # raised inside a finalizer that garbage collection ran outside the compiler lock is printed and lost.
    run = subprocess.run([sys.executable, "-c", FINALIZER_PROGRAM], capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines() == ["raised in the caller []", "tracing off: True"], run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr


def test_ctrl_c_escaping_an_entry_point_is_given_back_not_lost(ctx):  # ctx: the library started (its cffi module)
    # SIGINT landing in an entry's wrapper before its own try (or after it) reached cffi's error handler, which
    # returned a bare VX_FAILURE: the demo then ended on "vxQueryTensor failed" instead of "interrupted".
    from openvx_nn.capi import interrupt

    interrupt.take_pending()
    assert interrupt.escaped(-1)(KeyboardInterrupt, KeyboardInterrupt(), None) == -1
    assert interrupt.take_pending()
    assert interrupt.escaped(0)(ValueError, ValueError("x"), None) == 0
    assert not interrupt.take_pending()


STARTING_PROGRAM = r"""
#include <VX/vx.h>
#include <stdio.h>
int main(void) {
    vx_context ctx = vxCreateContext();  /* SIGINT comes while Python starts (sitecustomize sends it) */
    printf("returned %d\n", (int)vxGetStatus((vx_reference)ctx));
    vxReleaseContext(&ctx);
    return 0;
}
"""


def test_ctrl_c_during_start_up_ends_a_c_program_by_sigint(tmp_path):
    # Raised in cffi's start-up code, KeyboardInterrupt made cffi give up on Python for good: the program carried
    # on with every call failing and exited 0. Start-up now holds SIGINT back and lets it through once it is over.
    (tmp_path / "sitecustomize.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.run([str(compile_c(STARTING_PROGRAM, "interrupt_start"))], env=env, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == -signal.SIGINT, run.stdout + run.stderr
    assert "returned" not in run.stdout and "Traceback" not in run.stderr, run.stdout + run.stderr


EXITING_PROGRAM = r"""
#include <VX/vx.h>
#include <signal.h>
#include <stdio.h>
int main(void) {
    vx_context ctx = vxCreateContext();
    printf("created %d\n", (int)vxGetStatus((vx_reference)ctx));
    fflush(stdout);
    raise(SIGINT);  /* Ctrl-C while the program runs its own code: Python only records it */
    printf("still running\n");
    fflush(stdout);
    return 0;  /* no OpenVX call after it: the library's exit handler is the next Python code */
}
"""


def test_ctrl_c_the_library_recorded_but_never_acted_on_ends_a_c_program_at_exit_by_sigint():
    # It was raised in the exit handler's wait for the engine's threads: a traceback, the wait skipped while
    # helper threads might still be inside kernels as the process was torn down, and exit status 0.
    run = subprocess.run([str(compile_c(EXITING_PROGRAM, "interrupt_exit"))], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == -signal.SIGINT, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["created 0", "still running"], run.stdout
    assert "Traceback" not in run.stderr, run.stderr


LINKING_PROGRAM = r"""
import os, signal, types
import llvmlite.binding.linker as linker
from llvmlite.binding import ffi
import openvx_nn.api  # noqa: F401  (the library installs its guard)
from openvx_nn.kernels.support import jit

scope = {"__name__": "llvmlite.binding.ffi", "os": os, "signal": signal, "link": ffi.lib.LLVMPY_LinkModules}
exec('''
def linking(*args):  # SIGINT arrives while LLVM links a module into another, destroying it
    status = link(*args)
    os.kill(os.getpid(), signal.SIGINT)
    return status
''', scope)
linker.ffi = types.SimpleNamespace(lib=types.SimpleNamespace(LLVMPY_LinkModules=scope["linking"]),
                                   OutputString=ffi.OutputString)
try:
    jit.start_codegen()
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
import gc
gc.collect()
print("no crash", flush=True)
"""


def test_ctrl_c_while_the_runtime_starts_llvm_is_raised_once_llvm_has_let_go_of_its_module():
    # The runtime's start (a C program's start-up, a Python program's first run) links a module outside numba's
    # compiler lock, where Ctrl-C was not deferred: KeyboardInterrupt between LLVM destroying the linked module and
    # llvmlite forgetting it freed the module twice (SIGSEGV in LLVMContext::removeModule, from the traceback's
    # release in cffi's start-up code).
    run = subprocess.run([sys.executable, "-c", LINKING_PROGRAM], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["KeyboardInterrupt", "no crash"], run.stdout + run.stderr
