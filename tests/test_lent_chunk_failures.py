"""A shared Python-path call whose chunk raises on a helper thread fails on the calling thread instead of hanging.

A chunk that raises is never counted as finished, and the caller waits for every chunk: without
``workers.Share`` (the helper's exception marks the call's counters failed, the caller raises it) the caller
waited forever. Covered: a float kernel's rows shared through the gang (``float_sharing.Rows``), a chunk loop
lent through the workers' queue (``workers.Share.lend``, as the quant8 and SIMD integer layers lend theirs) and
a graph's node on the Python path (VX_FAILURE, a log line saying it raised, the next run succeeds).

Each case runs in a subprocess under a timeout: the defect this guards against is a hang."""
from __future__ import annotations

import subprocess
import sys

import pytest
from test_gang_failures import ONE_NODE_GRAPH

from openvx_nn.kernels.engine import isa

PRELUDE = r"""
import time
import numpy as np
from numba import types
from openvx_nn.kernels.engine import workers
from openvx_nn.kernels.engine.atomics import fetch_add, pause, take_chunk, wait_for_chunks
from openvx_nn.kernels.frontend import float_sharing
from openvx_nn.kernels.support import jit

PATIENCE = 1 << 18  # pause rounds: how long the caller lets a helper claim the first chunk
N_ROWS = 64
ARMED = types.Array(types.int64, 1, "C", readonly=True)


@jit.kernel
def serial(armed, r0, r1):
    pass


@jit.kernel
def shared(armed, n_rows, n_chunks, counters, wait):
    # Chunks claimed by the caller from the front and the helpers from the back; while armed[0], a helper's
    # chunk raises before it is counted as finished. armed[1] counts the chunks that raised (a helper took part).
    claim = np.int64(counters.ctypes.data)
    rounds = 0
    while wait and fetch_add(claim, 0) >> 32 == 0 and rounds < PATIENCE:  # a helper claims first
        pause()
        rounds += 1
    i = take_chunk(claim, n_chunks, not wait)
    while i >= 0:
        if not wait and armed[0] != 0:
            fetch_add(armed.ctypes.data + 8, 1)
            raise ValueError("a planted failure")
        fetch_add(claim + 8, 1)
        i = take_chunk(claim, n_chunks, not wait)
    if wait:
        wait_for_chunks(claim, n_chunks)


def armed():
    return np.array([1, 0], np.int64)


def until_a_helper_raised(call, flags):
    # Runs call() until a helper's chunk raised in it (the OS decides when a helper runs, on a loaded machine);
    # prints what the last call raised.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            call()
        except Exception as error:
            print("raised", type(error).__name__, type(error.__cause__).__name__, "planted" in str(error))
            print("helper", int(flags[1]) > 0)
            return
        if flags[1]:
            break
    print("raised", "nothing", "-", "-")
    print("helper", int(flags[1]) > 0)
"""

ROWS_PROGRAM = PRELUDE + r"""
flags = armed()
rows = float_sharing.Rows(serial, shared, (flags,), (ARMED,), N_ROWS, 1 << 40)
until_a_helper_raised(rows, flags)
flags[0] = 0
rows()  # the gang's helpers still serve the next call
print("again", "ok")
"""

LENT_PROGRAM = PRELUDE + r"""
run = jit.entry(shared, ARMED, jit.INT, jit.INT, types.Array(types.int64, 1, "C"), jit.BOOL)
flags = armed()


def call():
    helpers = workers.helpers()
    n_chunks = workers.chunk_count(N_ROWS, helpers + 1)
    counters = np.zeros(2, np.int64)
    share = workers.Share(counters)
    share.lend(lambda: run(flags, N_ROWS, n_chunks, counters, False), helpers)
    share.run(run, flags, N_ROWS, n_chunks, counters, True)


until_a_helper_raised(call, flags)
flags[0] = 0
call()
print("again", "ok")
"""

GRAPH_PROGRAM = PRELUDE + ONE_NODE_GRAPH + r"""
flags = np.zeros(2, np.int64)
rows = float_sharing.Rows(serial, shared, (flags,), (ARMED,), N_ROWS, 1 << 40)
model(node).description = dataclasses.replace(model(node).description, native=None,
                                              bind=lambda params, state: rows)
print("first", vx.vxProcessGraph(g))
flags[0] = 1
deadline = time.monotonic() + 120
while time.monotonic() < deadline and not flags[1]:  # until a helper's chunk raised in a run
    status = vx.vxProcessGraph(g)
print("armed", status, int(flags[1]) > 0)
print("logged", any(s == vx.VX_FAILURE and "raised ValueError: a planted failure" in t for s, t in entries))
status = vx.ffi.new("vx_status *")
vx.vxQueryNode(node, vx.VX_NODE_STATUS, status, 4)
print("node", status[0])
flags[0] = 0
print("again", vx.vxProcessGraph(g))
"""


def _run(program: str) -> dict[str, list[str]]:
    try:
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"the run hung (a helper's chunk raised): {timeout.stdout!r} {timeout.stderr!r}")
    assert run.returncode == 0, run.stderr
    return {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}


pytestmark = pytest.mark.skipif(isa.threads() < 2, reason="one thread: no helper shares a call")


@pytest.mark.parametrize("program", [ROWS_PROGRAM, LENT_PROGRAM], ids=["rows-through-the-gang", "lent-on-the-queue"])
def test_a_helpers_chunk_raising_raises_on_the_calling_thread_instead_of_hanging(program):
    seen = _run(program)
    assert seen["helper"] == ["True"], "no helper's chunk raised: nothing was tested"
    assert seen["raised"] == ["ChunkFailed", "ValueError", "True"]  # the helper's exception is the cause
    assert seen["again"] == ["ok"]  # the helpers serve the next call


def test_a_helpers_chunk_raising_on_the_python_path_fails_the_node_and_the_next_run_succeeds():
    from openvx_nn import vx
    seen = _run(GRAPH_PROGRAM)
    assert seen["first"] == [str(vx.VX_SUCCESS)]
    assert seen["armed"] == [str(vx.VX_FAILURE), "True"]
    assert seen["logged"] == ["True"]  # the node's log line names the helper's exception
    assert seen["node"] == [str(vx.VX_FAILURE)]
    assert seen["again"] == [str(vx.VX_SUCCESS)]
