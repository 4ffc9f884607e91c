"""The thread budget (``kernels/support/thread_budget.py``): ``OPENVX_NN_THREADS`` threads in all, shared by
the graphs executing at once and whatever their kernels lend to helpers or numba's pool; the threads lent
never exceed what the graphs executing leave, the spare ones are used, and results stay bit-identical."""
from __future__ import annotations

import random
import threading

import numba
import numpy as np
import pytest

from openvx_nn.api import Context
from openvx_nn.kernels.support import thread_budget


@pytest.fixture
def budget(monkeypatch):
    """Sets the budget for one test, the peak reset; nothing may stay lent after it."""
    def set_to(threads: int) -> None:
        monkeypatch.setattr(thread_budget, "BUDGET", threads)
        monkeypatch.setattr(thread_budget, "peak", 0)
    yield set_to
    assert thread_budget._lent == 0


def _in_threads(work, count: int, timeout: float) -> None:
    """``work(k)`` on ``count`` threads at once; fails on an exception in any, or one still running after
    ``timeout`` seconds (a deadlock)."""
    failures = []

    def guarded(k):
        try:
            work(k)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not failures and not any(t.is_alive() for t in threads)


def test_concurrent_takers_never_hold_more_than_the_budget_leaves(budget, monkeypatch):
    budget(5)
    monkeypatch.setattr(thread_budget, "executing", 2)  # two graphs executing: three threads to lend
    held, worst, lock = [0], [0], threading.Lock()

    def taker(seed):
        rng = random.Random(seed)
        for _ in range(300):
            got = thread_budget.take(rng.randint(1, 4), wait=rng.random() < 0.5)
            with lock:
                held[0] += got
                worst[0] = max(worst[0], held[0])
            with lock:
                held[0] -= got
            thread_budget.give(got)

    _in_threads(taker, 6, 60)
    assert 0 < worst[0] <= 3
    assert thread_budget.peak <= 5
    assert thread_budget.take(9) == 3  # all three free again
    thread_budget.give(3)


def test_a_waiting_taker_gets_a_thread_once_one_is_given_back(budget):
    budget(2)  # the caller counts as one graph: one to lend
    assert thread_budget.take(4) == 1
    got = []
    waiter = threading.Thread(target=lambda: got.append(thread_budget.take(1, wait=True)))
    waiter.start()
    waiter.join(timeout=0.05)
    assert waiter.is_alive() and not got  # none spare: it waits
    thread_budget.give(1)
    waiter.join(timeout=10)
    assert got == [1]
    thread_budget.give(1)


def test_helpers_run_lent_tasks_on_spare_threads_only(budget):
    from openvx_nn.kernels.engine import workers
    budget(3)  # the caller counts as one graph: two to lend
    active, worst, ran, lock = [0], [0], [], threading.Lock()
    done = threading.Semaphore(0)

    def task():
        with lock:
            active[0] += 1
            worst[0] = max(worst[0], active[0])
        threading.Event().wait(0.02)
        with lock:
            active[0] -= 1
            ran.append(1)
        done.release()

    workers.lend(task, 5)
    for _ in range(5):
        assert done.acquire(timeout=60)
    assert len(ran) == 5 and worst[0] <= 2
    for _ in range(500):  # each helper gives its thread back just after the task
        if thread_budget._lent == 0:
            break
        threading.Event().wait(0.01)


def _pool_graph(ctx, rng):
    """An int16 abs (a table lookup) large enough for numba's pool (``activation.PARALLEL_WORK``), on the Python
    path. float32 activations share the engine's helper threads instead, so they would not show the pool here."""
    from openvx_nn import vx
    from openvx_nn.core import reference
    g = ctx.graph()
    data = rng.integers(-32767, 32768, (600, 512)).astype(np.int16)
    out = g.activation(ctx.tensor(data), "abs", out=ctx.tensor(shape=data.shape, dtype=np.int16),
                       fixed_point_position=0)
    reference.lookup(int(vx.ffi.cast("uintptr_t", g.handle)), reference.Reference).native_allowed = False
    return g, out, np.abs(data)


def test_concurrent_graphs_share_the_spare_threads_within_the_budget(budget):
    rng = np.random.default_rng(5)
    with Context() as ctx:
        graphs = [_pool_graph(ctx, rng) for _ in range(3)]
        budget(1)
        graphs[0][0].process()  # nothing to lend: the serial kernel
        assert thread_budget.peak == 0 and np.array_equal(graphs[0][1].numpy(), graphs[0][2])
        budget(4)
        graphs[0][0].process()  # one graph alone takes the other three for numba's pool (as many as it has)
        assert thread_budget.peak == min(4, numba.config.NUMBA_NUM_THREADS)
        assert np.array_equal(graphs[0][1].numpy(), graphs[0][2])
        budget(4)
        gate = threading.Barrier(3)

        def work(k):
            g, out, expected = graphs[k]
            gate.wait(timeout=30)
            for _ in range(6):
                g.process()
                assert np.array_equal(out.numpy(), expected)

        _in_threads(work, 3, 300)
        assert thread_budget.peak <= 4
        for g, _out, _expected in graphs:
            g.close()
