"""A C program may end (return from main, or exit() from any thread) while a
scheduled graph or another thread's vxProcessGraph is still running: the exit
handler waits for the running kernels, and the process exits cleanly."""
from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import compile_c, run_c

RUNS = int(os.environ.get("OPENVX_NN_EXIT_RUNS", "50"))

GRAPH = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <VX/vx.h>
#include <VX/vx_khr_nn.h>

static vx_graph graph;
static volatile int started = 0;

static void *process(void *arg)
{
    (void)arg;
    started = 1;
    vxProcessGraph(graph);
    return NULL;
}

int main(int argc, char **argv)
{
    vx_context context = vxCreateContext();
    vx_size in_dims[3] = {13, 13, 16}, w_dims[4] = {3, 3, 16, 8}, out_dims[3] = {13, 13, 8};
    vx_tensor x = vxCreateTensor(context, 3, in_dims, VX_TYPE_FLOAT32, 0);
    vx_tensor w = vxCreateTensor(context, 4, w_dims, VX_TYPE_FLOAT32, 0);
    vx_tensor y = vxCreateTensor(context, 3, out_dims, VX_TYPE_FLOAT32, 0);
    vx_nn_convolution_params_t params = {1, 1, VX_CONVERT_POLICY_SATURATE, VX_ROUND_POLICY_TO_ZERO,
                                         VX_NN_DS_SIZE_ROUNDING_FLOOR, 0, 0};
    graph = vxCreateGraph(context);
    vxConvolutionLayer(graph, x, w, NULL, &params, sizeof params, y);
    if (argc > 1) { /* exit() while another thread is in vxProcessGraph, after argv[1] ms */
        pthread_t thread;
        struct timespec pause = {0, atol(argv[1]) * 1000000L};
        pthread_create(&thread, NULL, process, NULL);
        while (!started)
            ;
        nanosleep(&pause, NULL);
        exit(0);
    }
    vxScheduleGraph(graph);
    return 0;
}
"""


def _run_many(exe, args_of_run) -> list:
    with ThreadPoolExecutor(2) as pool:  # two at a time: the machine has two cores
        return list(pool.map(lambda i: run_c(exe, *args_of_run(i), timeout=120), range(RUNS)))


def _assert_clean(results) -> None:
    bad = [(r.returncode, r.stderr[-500:]) for r in results if r.returncode != 0 or r.stderr]
    assert not bad, f"{len(bad)} of {len(results)} runs failed, e.g. {bad[0]}"


# The same program around a ReLU layer: from an empty cache it compiles in seconds where the convolution's many
# kernels take minutes, and exits inside numba/LLVM all the same.
SMALL_GRAPH = GRAPH.replace(
    "w_dims[4] = {3, 3, 16, 8}, out_dims[3] = {13, 13, 8};", "w_dims[4] = {1, 1, 16, 16}, out_dims[3] = {13, 13, 16};"
).replace("vxConvolutionLayer(graph, x, w, NULL, &params, sizeof params, y);",
          "(void)w; (void)params; vxActivationLayer(graph, x, VX_NN_ACTIVATION_RELU, 0.0f, 0.0f, y);")
assert SMALL_GRAPH.count("vxActivationLayer") == 1 and "{13, 13, 16};" in SMALL_GRAPH


@pytest.fixture(scope="module")
def program():
    return compile_c(GRAPH, "exit_while_running", extra=["-pthread"])


@pytest.fixture(scope="module")
def small_program():
    return compile_c(SMALL_GRAPH, "exit_while_compiling", extra=["-pthread"])


def test_return_from_main_with_a_scheduled_graph_exits_cleanly_every_time(program):
    _assert_clean(_run_many(program, lambda i: ()))


def test_exit_while_another_thread_processes_exits_cleanly_every_time(program):
    _assert_clean(_run_many(program, lambda i: (str(i % 10 * 3),)))


def test_exit_while_the_kernels_still_compile_exits_cleanly(small_program, tmp_path):
    """An empty kernel cache: the graph is inside numba/LLVM when the process exits."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")}
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(subprocess.run, [str(small_program), *args], capture_output=True, text=True, env=env,
                            timeout=600) for args in ((), ("5",))]
        _assert_clean([r.result() for r in runs])


HELPER_PROGRAM = r"""
import sys, time
import numba
from openvx_nn.core import execution
from openvx_nn.kernels.engine import gang, workers

execution.prepare_runtime()  # as the first graph run does: registers the exit's wait


@numba.njit(nogil=True, cache=False)
def spin(n):  # a kernel still running on a helper when the program ends
    s = 0.0
    for i in range(n):
        s += (i % 7) * 0.5
    return s


spin(10)
if sys.argv[1] == "kernel":
    workers.lend(lambda: print("helper's kernel done", spin(400_000_000) > 0, flush=True), 1)
    time.sleep(0.2)  # the helper is inside the kernel now
else:  # a helper held in the gang's spin (a hold never ended): the exit must not wait out HOLD_CYCLES
    gang._hold(gang._mailbox, 1)
    gang.summon(1)
    time.sleep(0.05)
    assert int(gang._mailbox[1]) == 1
    execution.shutdown()
    print("in the gang after the exit's wait:", int(gang._mailbox[1]), flush=True)
print("main ends", flush=True)
"""


def test_a_python_program_ending_while_a_helper_runs_a_kernel_waits_for_it():
    # A helper left in a kernel (or compiling one) while the interpreter and LLVM are torn down runs freed code.
    run = subprocess.run([sys.executable, "-c", HELPER_PROGRAM, "kernel"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["main ends", "helper's kernel done True"], run.stdout + run.stderr


def test_the_exit_lets_helpers_out_of_the_gang_at_once():
    run = subprocess.run([sys.executable, "-c", HELPER_PROGRAM, "gang"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["in the gang after the exit's wait: 0", "main ends"], \
        run.stdout + run.stderr
