"""The cyclic collector is paused while a graph verifies and restored after (``core/collector.py``)."""
from __future__ import annotations

import gc
import threading

import numpy as np

from openvx_nn.api import Context
from openvx_nn.core import collector


def test_pause_restores_the_hosts_setting():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # a host that disabled it keeps it disabled
    finally:
        gc.enable()


def test_pauses_overlapping_across_threads_end_enabled():
    inside, release = threading.Event(), threading.Event()

    def hold():
        with collector.paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    inside.wait(5)
    with collector.paused():
        release.set()
        worker.join(5)
        assert not gc.isenabled()  # the other thread's pause ended; this one holds
    assert gc.isenabled()


def test_verify_of_a_long_graph_runs_no_collection_while_paused():
    paused, after = [], []

    def count(phase, info):
        if phase == "start":
            (paused if collector._depth else after).append(info["generation"])

    with Context() as ctx:
        x = ctx.tensor(np.arange(32, dtype=np.int16).reshape(4, 4, 2), fixed_point_position=8)
        g = ctx.graph()
        y = x
        for _ in range(1500):  # ~10 allocations a node: dozens of collections if not paused
            y = g.relu(y)
        g.relu(y, out=ctx.tensor(shape=(4, 4, 2), dtype=np.int16, fixed_point_position=8))
        gc.collect()  # generation counts from zero: the collection that may follow the pause is a young one
        gc.callbacks.append(count)
        try:
            g.verify()
        finally:
            gc.callbacks.remove(count)
        assert gc.isenabled()
    assert paused == []
    assert all(generation == 0 for generation in after)  # one young collection may follow the pause
