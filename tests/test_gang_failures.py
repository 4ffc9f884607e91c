"""A shared native layer whose chunk raises, on a helper thread or on the calling one, fails with a status
instead of hanging: the helper that raised never counts its chunk as finished, so the serve loops (the Python
gang's and the C plan's helper threads) mark the task failed and the caller's wait ends on it.

Each case runs in a subprocess under a timeout: the defect this guards against is a hang."""
from __future__ import annotations

import subprocess
import sys

import pytest

from openvx_nn.kernels.engine import isa

PRELUDE = r"""
import sys
import numpy as np
from openvx_nn.kernels.engine import gang
from openvx_nn.kernels.engine.atomics import fetch_add, pause, take_chunk, wait_for_chunks
from openvx_nn.kernels.support import jit, native

CALLER_RAISES = sys.argv[1] == "caller"
COUNTERS, MAILBOX, TASK, CHUNKS, ARMED, HUGE = 0, *range(native.ARRAY_WORDS, native.ARRAY_WORDS + 5)
PATIENCE = 1 << 18  # pause rounds (milliseconds): how long the caller lets a helper claim the first chunk


@jit.jitable
def lines(code, block, chunks, wait):
    # Chunks claimed from both ends; while block[ARMED], the first chunk of a helper, or of the caller
    # (CALLER_RAISES) once a helper holds one, raises (an allocation numba refuses: MemoryError) before it is
    # counted as finished.
    if chunks == 0:
        return
    claim = np.int64(native.c_array(block, COUNTERS, np.int64)[0, 0, 0, 0, 0].ctypes.data)
    rounds = 0
    while wait and fetch_add(claim, 0) >> 32 == 0 and rounds < PATIENCE:  # a helper claims first
        pause()
        rounds += 1
    raises = block[ARMED] != 0 and (wait and fetch_add(claim, 0) >> 32 != 0 if CALLER_RAISES else not wait)
    i = take_chunk(claim, chunks, not wait)
    while i >= 0:
        if raises:
            np.empty(block[HUGE], np.float64)
        fetch_add(claim + 8, 1)
        i = take_chunk(claim, chunks, not wait)
    if wait:
        wait_for_chunks(claim, chunks)


ENTRY, HELPER = (jit.native(body) for body in gang.shared_entry(lines, gang.nothing_first,
                                                                (MAILBOX, TASK, CHUNKS, COUNTERS)))


def shared_entry(armed):
    task = gang.NativeTask(64, True)
    task.chunks = 8
    block, keep = native.pack(native.as6(task.counters), *task.words(), armed, 1 << 60)
    return native.Entry(ENTRY, block, keep + task.finish(HELPER, block))
"""

GANG_PROGRAM = PRELUDE + r"""
import time
entry = shared_entry(1)
deadline = time.monotonic() + 120
with gang.held():  # the helper stays in the gang between the runs
    gang.summon(1)
    while time.monotonic() < deadline:  # until a helper took part in a run (the OS's say, on a loaded machine)
        joins = gang.native_joins()
        status = native.run(entry)
        if status != 0:
            break
print("status", status)
print("retracted", int(gang._mailbox[gang.NATIVE_TASK // 8]) == 0, int(gang._mailbox[gang.INSIDE // 8]) == 0)
print("joined", gang.native_joins() > joins)
print("counted", int(entry.keep[-3][1]) >= (1 << 40))
"""

ONE_NODE_GRAPH = r"""
import dataclasses
from openvx_nn import vx
from openvx_nn.core import reference

def model(handle):
    return reference.lookup(int(vx.ffi.cast("uintptr_t", handle)), reference.Reference)

entries = []
@vx.ffi.callback("vx_log_callback_f")
def on_log(context, ref, status, text):
    entries.append((status, vx.ffi.string(text).decode()))

ctx = vx.vxCreateContext()
vx.vxRegisterLogCallback(ctx, on_log, vx.vx_false_e)
g = vx.vxCreateGraph(ctx)
dims = vx.ffi.new("vx_size[]", [2])
x = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_FLOAT32, 0)
out = vx.vxCreateTensor(ctx, 1, dims, vx.VX_TYPE_FLOAT32, 0)
node = vx.vxActivationLayer(g, x, vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, out)
"""
"""A graph of one node whose kernel description a program replaces (``model(node)``), its log lines in
``entries``: the graph programs here and in ``test_lent_chunk_failures``."""

GRAPH_PROGRAM = PRELUDE + ONE_NODE_GRAPH + r"""
made = []
def bind(params, scalars):
    made.append(shared_entry(0))
    return made[-1]
model(node).description = dataclasses.replace(model(node).description, native=bind)
print("first", vx.vxProcessGraph(g), model(g).plan.native is not None)
made[-1].block[ARMED] = 1
import time
deadline = time.monotonic() + 120
while time.monotonic() < deadline:  # until a C helper took part in a run (the OS's say, on a loaded machine)
    status = vx.vxProcessGraph(g)
    if status != vx.VX_SUCCESS:
        break
print("armed", status, model(g).plan.native is None)
print("logged", any(s == vx.VX_FAILURE and "raised" in t and "native kernel" in t for s, t in entries))
status = vx.ffi.new("vx_status *")
vx.vxQueryNode(node, vx.VX_NODE_STATUS, status, 4)
print("node", status[0])
print("again", vx.vxProcessGraph(g), len(made))
"""


def _run(program: str, who: str) -> dict[str, list[str]]:
    try:
        run = subprocess.run([sys.executable, "-c", program, who], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"the run hung ({who}'s chunk raised): {timeout.stdout!r} {timeout.stderr!r}")
    assert run.returncode == 0, run.stderr
    return {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}


pytestmark = pytest.mark.skipif(isa.threads() < 2, reason="one thread: no helper shares a layer")


@pytest.mark.parametrize("who", ["helper", "caller"])
def test_a_chunk_raising_in_a_gang_task_fails_the_entry_instead_of_hanging(who):
    seen = _run(GANG_PROGRAM, who)
    assert seen["joined"] == ["True"], "no helper joined the task: nothing was tested"
    assert seen["status"] == ["-1"]  # VX_FAILURE (jit.RAISED)
    assert seen["retracted"] == ["True", "True"]  # no helper left inside the layer, the task withdrawn
    assert seen["counted"] == ["True"]  # the failure is recorded in the task's counters


@pytest.mark.parametrize("who", ["helper", "caller"])
def test_a_chunk_raising_on_the_plans_helper_threads_fails_the_node_and_the_next_run_rebinds(who):
    from openvx_nn import vx
    seen = _run(GRAPH_PROGRAM, who)
    assert seen["first"] == [str(vx.VX_SUCCESS), "True"]
    assert seen["armed"] == [str(vx.VX_FAILURE), "True"]  # failed, the native plan withdrawn
    assert seen["logged"] == ["True"]
    assert seen["node"] == [str(vx.VX_FAILURE)]
    assert seen["again"] == [str(vx.VX_SUCCESS), "2"]  # the Python path bound the layer again
