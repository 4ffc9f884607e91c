"""Helpers stay available to every run: a helper leaving the gang counts itself out without the GIL and can be
summoned again at once (``gang._park``, ``gang.summon_spare``), and a native plan asks C for the engine's helper
threads whatever the budget had spare when it was built (``native_plan.build``)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from native_testing import model as _model
from native_testing import native_run as _native_run
from native_testing import values as _values

from openvx_nn import vx
from openvx_nn.api import Context
from openvx_nn.kernels.engine import gang, isa, prepared
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.support import thread_budget

ROOT = Path(__file__).resolve().parent.parent
TWO_THREADS = pytest.mark.skipif(isa.threads() < 2, reason="one thread: no helpers")

_LEAVING = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    from openvx_nn.kernels.engine import gang
    from openvx_nn.kernels.support import thread_budget
    words = gang._mailbox
    counted, leaving, generation = gang.COUNTED // 8, gang.LEAVING // 8, gang.GENERATION // 8
    ran = []
    done = threading.Event()
    spare_words = np.zeros(words.size, np.int64)
    gang._park(spare_words, 0, 0)  # compiled here: the helper needs no GIL to compile them once timed
    gang._left(spare_words)
    gang._count(spare_words, 0)
    def task():
        ran.append(threading.get_ident())
        done.set()
    gang._hold(words, 1)  # as during a held run: the helper stays in the gang
    gang.post(task, 1)
    assert done.wait(60), "the helper never ran its task"
    time.sleep(0.05)  # the GIL let go: the helper goes on into its spin (the gang's compiled loop)
    assert words[counted] == 1
    sys.setswitchinterval(30.0)  # from here this thread keeps the GIL while it computes
    gang._hold(words, -1)  # the run ended: the helper leaves once LINGER_CYCLES pass
    deadline = time.perf_counter() + 5.0
    while words[counted] != 0 and time.perf_counter() < deadline:
        pass  # pure Python: the GIL is never let go
    left = int(words[counted]) == 0
    spare, lent = thread_budget.spare(), thread_budget._lent  # its thread is not back yet: it needs the GIL
    out = int(words[leaving])
    before = int(words[generation])
    gang.summon_spare()  # what the next run does first
    summoned = int(words[generation]) > before and int(words[counted]) == 1
    print(left, out, spare, lent, summoned, flush=True)
    sys.setswitchinterval(0.005)
    done.clear()
    gang.post(task, 1)
    assert done.wait(60), "the summoned helper never ran a task"
    print(len(set(ran)) == 1 and ran[0] != threading.get_ident(), flush=True)
""")


@TWO_THREADS
def test_a_helper_leaving_while_the_caller_holds_the_gil_is_counted_out_and_summoned_again():
    # A helper's spin ends without the GIL; counting itself out of the gang, had it needed the GIL, waited for the
    # caller to let it go (it holds it in Python between runs): the caller's next run found the helper counted in,
    # summoned nobody, and its layers were posted to a gang that had nobody left in it.
    env = dict(os.environ, OPENVX_NN_THREADS="2")
    done = subprocess.run([sys.executable, "-c", _LEAVING], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("\n")[:2]
    left, leaving, spare, lent, summoned = first.split()
    assert left == "True", "the helper stayed counted in until it got the GIL"
    assert (leaving, spare, lent) == ("1", "0", "1"), first  # the case: its thread not yet back in the budget
    assert summoned == "True", "summon_spare did not post while the leaving helper had its thread"
    assert second == "True"  # the one helper thread came back for the next task


def _fake_mailbox(seen: int) -> np.ndarray:
    mailbox = np.zeros(gang._mailbox.size, np.int64)
    mailbox[gang.COUNTED // 8] = 1
    mailbox[gang.GENERATION // 8] = seen
    mailbox[gang.PYTHON // 8] = seen
    return mailbox


def test_a_native_task_retracted_before_the_helper_looked_is_not_taken_for_a_python_task():
    mailbox = _fake_mailbox(7)
    mailbox[gang.GENERATION // 8] = 8  # a native task posted and retracted (NATIVE_TASK back to 0) meanwhile
    assert gang._park(mailbox, 7, 0) == -1  # spins on, then leaves: nothing for Python to run
    assert mailbox[gang.COUNTED // 8] == 0 and mailbox[gang.LEAVING // 8] == 1  # counted out as it left
    mailbox = _fake_mailbox(7)
    mailbox[gang.GENERATION // 8] = 9
    mailbox[gang.PYTHON // 8] = 8  # a Python task, then a native one
    assert gang._park(mailbox, 7, 0) == 8  # the Python task's generation: its helper runs it
    assert mailbox[gang.COUNTED // 8] == 1 and mailbox[gang.LEAVING // 8] == 0  # still in the gang


@TWO_THREADS
@pytest.mark.skipif(isa.selected() == "generic", reason="no SIMD route here")
def test_a_plan_built_while_no_thread_was_spare_still_has_c_helpers_join_its_layers():
    # The budget's spare threads at build time are no measure of later runs': a helper still spinning from an
    # earlier run holds one. A plan built then asked C for no helpers for as long as it lived.
    rng = np.random.default_rng(2612)
    dtype, fpp = np.int16, 8
    shape, w_shape = (26, 20, 8), (3, 3, 8, 24)
    assert (shape[0] - 2) * (shape[1] - 2) * np.prod(w_shape) >= prepared.NATIVE_SHARE_WORK
    with Context() as ctx, ctx.graph() as g:
        x = ctx.tensor(_values(rng, shape, dtype), fixed_point_position=fpp)
        w = _values(rng, w_shape, dtype, small=True)
        b = _values(rng, (w_shape[3],), dtype)
        out = g.convolution(x, ctx.tensor(w, fixed_point_position=fpp), ctx.tensor(b, fixed_point_position=fpp),
                            out=ctx.tensor(shape=(shape[0] - 2, shape[1] - 2, w_shape[3]), dtype=dtype,
                                           fixed_point_position=fpp))
        expected = np.zeros(out.numpy().shape, dtype, order="F")
        convolution(x.numpy(), w, b, expected, 0, 0, 1, 1, 0, 0, True, True, fpp_x=fpp, fpp_w=fpp, fpp_b=fpp,
                    fpp_out=fpp)
        taken = thread_budget.take(thread_budget.BUDGET)  # every spare thread lent while the plan is built
        try:
            assert thread_budget.spare() == 0
            assert _native_run(g, out).tobytes() == expected.tobytes()
        finally:
            thread_budget.give(taken)
        assert int(_model(g.handle).plan.native.words[7]) == isa.threads() - 1
        joins, runs, deadline = gang.native_joins(), 0, time.monotonic() + 60  # which runs it joins: the OS's say
        while runs < 10 or (gang.native_joins() == joins and time.monotonic() < deadline):
            out.write(np.zeros_like(expected))
            assert vx.vxProcessGraph(g.handle) == vx.VX_SUCCESS
            assert out.numpy().tobytes() == expected.tobytes(), runs
            runs += 1
        assert gang.native_joins() > joins, "no helper joined the plan's layer"
