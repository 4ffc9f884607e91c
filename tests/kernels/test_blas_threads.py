"""Our GEMMs run OpenBLAS single-threaded and give the process its thread count back afterwards."""
from __future__ import annotations

import threading

import pytest

from openvx_nn.kernels.support import blas_threads

controls = blas_threads._CONTROLS
pytestmark = pytest.mark.skipif(controls is None, reason="numpy's BLAS is not an OpenBLAS with thread controls")


def test_inside_single_openblas_runs_one_thread_and_the_count_is_restored_after():
    get, put = controls
    before = get()
    put(2)
    try:
        with blas_threads.single():
            assert get() == 1
            with blas_threads.single():  # nested: still one, and the outer exit restores
                assert get() == 1
            assert get() == 1
        assert get() == 2
        with blas_threads.single(False):  # not wanted: untouched
            assert get() == 2
    finally:
        put(before)


def test_the_count_is_restored_when_the_last_of_several_threads_leaves():
    get, put = controls
    before = get()
    put(2)
    inside, leave = threading.Barrier(3), threading.Event()

    def worker():
        with blas_threads.single():
            inside.wait()
            leave.wait()

    workers = [threading.Thread(target=worker) for _ in range(2)]
    try:
        for t in workers:
            t.start()
        inside.wait(timeout=30)
        assert get() == 1
        leave.set()
        for t in workers:
            t.join(timeout=30)
        assert get() == 2
    finally:
        leave.set()
        put(before)
