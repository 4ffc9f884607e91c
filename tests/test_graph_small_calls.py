"""What the small-graph figures of bench_threads rest on, tested without timing:

- processing a verified graph takes no lock that other threads' calls take
  (a thread switched out inside such a lock makes every other thread queue on
  it: a lock convoy), from the C API and from the Pythonic API;
- a process from the Pythonic API releases the GIL only inside its kernel
  (each release wakes a thread waiting for the GIL), counted by interposing
  ``PyEval_SaveThread`` in a child process;
- the state machine that replaced the lock still runs one graph on one
  thread at a time and destroys a graph released during its own run.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from vxhelp import empty, read, release, tensor

from openvx_nn.api import Context
from openvx_nn.api import reference as api_reference
from openvx_nn.core import reference

U8 = np.uint8
BUILD = Path(__file__).resolve().parent / "_build"


def _refs(vx, ctx) -> int:
    out = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryContext(ctx, vx.VX_CONTEXT_REFERENCES, out, 4) == vx.VX_SUCCESS
    return out[0]


def _while_held(locks, action) -> bool:
    """Run ``action`` on this thread while another thread holds ``locks``: True when it finished
    before they were let go (they are held for at most 20 s, so a blocked action ends too)."""
    held, finished = threading.Event(), threading.Event()
    result: list[bool] = []

    def holder():
        for lock in locks:
            lock.acquire()
        held.set()
        try:
            result.append(finished.wait(20))
        finally:
            for lock in reversed(locks):
                lock.release()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    action()
    finished.set()
    thread.join()
    return result[0]


def test_processing_a_verified_graph_takes_no_model_lock(vx, ctx):
    a = tensor(vx, ctx, np.array([1, 2, 3], U8))
    out = empty(vx, ctx, (3,), U8)
    graph = vx.vxCreateGraph(ctx)
    release(vx, vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out))
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS  # verifies (under the lock) and binds
    statuses: list[int] = []
    assert _while_held([reference.lock], lambda: statuses.append(vx.vxProcessGraph(graph)))
    assert statuses == [vx.VX_SUCCESS]
    assert read(vx, out, (3,), U8).tolist() == [2, 4, 6]
    release(vx, graph, a, out)


def test_python_api_process_takes_no_shared_lock():
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(np.array([[[3, 0, 200, 1]]], U8))
        y = g.relu(x, out=ctx.tensor(shape=(1, 1, 4), dtype=U8))
        g.process()
        y.write(np.zeros((1, 1, 4), U8))
        assert _while_held([reference.lock, api_reference.LOG._lock], g.process)
        assert y.numpy().tolist() == [[[3, 0, 200, 1]]]


_GIL_SHIM = """
/* Counts the calls of PyEval_SaveThread (a GIL release) made through the dynamic linker. */
#define _GNU_SOURCE
#include <dlfcn.h>
static long releases;
long gil_releases(void) { return releases; }
void *PyEval_SaveThread(void)
{
    static void *(*real)(void);
    if (!real)
        real = (void *(*)(void))dlsym(RTLD_NEXT, "PyEval_SaveThread");
    __atomic_add_fetch(&releases, 1, __ATOMIC_RELAXED);
    return real();
}
"""

_GIL_CHILD = """
import ctypes
import numpy as np
from openvx_nn import vx
from openvx_nn.api import Context
shim = ctypes.PyDLL(None)  # PyDLL: calling the counter keeps the GIL
shim.gil_releases.restype = ctypes.c_long
CALLS = 10

def releases(call):
    before = shim.gil_releases()
    for _ in range(CALLS):
        call()
    return shim.gil_releases() - before

with Context() as ctx, ctx.graph() as g:
    g.relu(ctx.tensor(np.arange(8, dtype=np.uint8).reshape(1, 1, 8)),
           out=ctx.tensor(shape=(1, 1, 8), dtype=np.uint8))
    g.process()
    through_c = releases(lambda: vx.vxProcessGraph(g.handle))
    python_api = releases(g.process)
    print(through_c, python_api)
"""


def test_process_of_a_native_small_graph_never_enters_python_and_keeps_the_gil_from_python(tmp_path):
    BUILD.mkdir(exist_ok=True)
    shim = BUILD / "gil_release_counter.so"
    if not shim.exists():
        source = tmp_path / "gil_release_counter.c"
        source.write_text(_GIL_SHIM)
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", str(source), "-o", str(shim), "-ldl"], check=True)
    env = {**os.environ, "LD_PRELOAD": str(shim)}
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(_GIL_CHILD)], env=env, capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    through_c, python_api = (int(n) for n in child.stdout.split())
    if through_c == 0:
        pytest.skip("this Python's GIL releases do not go through the dynamic linker")
    calls = 10
    # The graph has a native plan: through C, cffi's call releases the GIL once and the plan runs
    # in C (entering Python would release it a second time on the way back); from the Python API the small
    # plan runs in C holding the GIL (native_plan.SMALL_WORK): no hand-over to wake another thread.
    assert through_c == calls, through_c
    assert python_api == 0, (python_api, through_c)


def test_threads_processing_one_graph_take_turns(vx, ctx):
    a = tensor(vx, ctx, np.array([9], U8))
    out = empty(vx, ctx, (1,), U8)
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    inside = {"now": 0, "most": 0, "runs": 0}

    @vx.ffi.callback("vx_nodecomplete_f")
    def completed(_node):
        inside["now"] += 1
        inside["most"] = max(inside["most"], inside["now"])
        inside["runs"] += 1
        os.sched_yield()  # invites a switch while "inside"
        inside["now"] -= 1
        return vx.VX_ACTION_CONTINUE

    assert vx.vxAssignNodeCallback(node, completed) == vx.VX_SUCCESS
    statuses: list[int] = []

    def work():
        for _ in range(150):
            statuses.append(vx.vxProcessGraph(graph))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert statuses == [vx.VX_SUCCESS] * 900
    assert inside == {"now": 0, "most": 1, "runs": 900}
    release(vx, node, graph, a, out)


def test_a_graph_released_during_its_own_process_goes_when_the_run_ends(vx, ctx):
    baseline = _refs(vx, ctx)
    a = tensor(vx, ctx, np.array([4], U8))
    out = empty(vx, ctx, (1,), U8)
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    holder = vx.ffi.new("vx_graph *", graph)
    counts: list[int] = []

    @vx.ffi.callback("vx_nodecomplete_f")
    def completed(_node):
        assert vx.vxReleaseGraph(holder) == vx.VX_SUCCESS
        counts.append(_refs(vx, ctx))
        return vx.VX_ACTION_CONTINUE

    assert vx.vxAssignNodeCallback(node, completed) == vx.VX_SUCCESS
    release(vx, node)
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert len(counts) == 1 and counts[0] > baseline + 2  # released, but kept while it runs
    assert _refs(vx, ctx) == baseline + 2  # gone with its node after the run: a and out are left
    assert read(vx, out, (1,), U8).tolist() == [8]
    release(vx, a, out)


def test_python_api_in_process_calls_fail_exactly_as_through_c(vx):
    from openvx_nn.api import VXError

    def through_c(function, graph) -> tuple[int, str]:
        mark = api_reference.LOG.mark()
        return getattr(vx, function)(graph.handle), api_reference.LOG.since(mark)

    def in_process(call) -> tuple[int, str]:
        with pytest.raises(VXError) as caught:
            call()
        return caught.value.status, caught.value.log

    with Context() as ctx, ctx.graph() as bad, ctx.graph() as good:
        bad.relu(ctx.tensor(np.zeros((1, 1, 8), U8)), out=ctx.tensor(shape=(1, 1, 3), dtype=U8))
        good.relu(ctx.tensor(np.zeros((1, 1, 8), U8)), out=ctx.tensor(shape=(1, 1, 8), dtype=U8))
        assert in_process(bad.process) == through_c("vxProcessGraph", bad)
        assert in_process(bad.process)[0] == vx.VX_ERROR_INVALID_DIMENSION
        assert in_process(good.wait) == through_c("vxWaitGraph", good) == (
            vx.VX_FAILURE, f"vxWaitGraph: graph ({good.address:#x}) was not scheduled")
        good.schedule()
        assert in_process(good.schedule) == through_c("vxScheduleGraph", good)
        assert in_process(good.process) == through_c("vxProcessGraph", good)
        assert in_process(good.process)[0] == vx.VX_ERROR_GRAPH_SCHEDULED
        good.wait()
        good.process()
