"""How threads share a layer's chunks and how the gang keeps its helpers: ``atomics.take_chunk`` (the caller from
the front, helpers from the back, every chunk once), ``gang.closed`` (no native task posted) and the linger after
a held run (``gang.LINGER_CYCLES``)."""
from __future__ import annotations

import itertools
import threading
import time

import numba
import numpy as np
import pytest

from openvx_nn.kernels.engine import gang
from openvx_nn.kernels.engine.atomics import LINE_BYTES, fetch_add, load, shared_words, take_chunk


@numba.njit(nogil=True)
def _take_all(counters, n_chunks, back, taken, who, pause_every):
    """Take chunks until none is left, marking each in ``taken`` (how often) and ``who`` (1 front, 2 back);
    returns the order this thread got them in."""
    claim = counters.ctypes.data
    order = np.full(n_chunks, -1, np.int64)
    k = 0
    while True:
        i = take_chunk(claim, n_chunks, back)
        if i < 0:
            return order[:k]
        taken[i] += 1
        who[i] = 2 if back else 1
        order[k] = i
        k += 1
        spin = 0
        for _ in range(pause_every * (i % 7)):  # uneven work, so the threads interleave
            spin += 1
        if spin < 0:
            return order


def test_one_thread_from_each_end_takes_every_chunk_once_in_order():
    counters = np.zeros(2, np.int64)
    claim = counters.ctypes.data
    got = [take_chunk(claim, 5, False), take_chunk(claim, 5, True), take_chunk(claim, 5, True),
           take_chunk(claim, 5, False), take_chunk(claim, 5, False), take_chunk(claim, 5, True)]
    assert got == [0, 4, 3, 1, 2, -1]
    assert take_chunk(claim, 5, False) == -1


@pytest.mark.parametrize("n_chunks", [1, 2, 7, 64, 1000])
def test_two_threads_split_the_chunks_into_a_prefix_and_a_suffix(n_chunks):
    for trial in range(20):
        counters = np.zeros(2, np.int64)
        taken, who = np.zeros(n_chunks, np.int64), np.zeros(n_chunks, np.int64)
        orders: dict[bool, np.ndarray] = {}

        def run(back: bool, counters=counters, taken=taken, who=who, orders=orders) -> None:
            orders[back] = _take_all(counters, n_chunks, back, taken, who, 50)
        threads = [threading.Thread(target=run, args=(back,)) for back in (False, True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert np.all(taken == 1), f"trial {trial}: chunks taken {taken.tolist()}"
        front, back = orders[False], orders[True]
        assert front.tolist() == list(range(len(front)))  # the caller: 0, 1, 2, ...
        assert back.tolist() == list(range(n_chunks - 1, n_chunks - 1 - len(back), -1))  # helpers: n-1, n-2, ...
        assert len(front) + len(back) == n_chunks


def _fake_mailbox(counted: int) -> np.ndarray:
    mailbox = np.zeros(gang._mailbox.size, np.int64)
    mailbox[gang.COUNTED // 8] = counted
    return mailbox


def test_a_closed_gang_is_posted_no_native_task():
    record = np.zeros(2, np.int64)
    mailbox = _fake_mailbox(1)
    assert gang.post_native(mailbox.ctypes.data, record.ctypes.data)  # a helper is counted in: posted
    assert mailbox[gang.NATIVE_TASK // 8] == record.ctypes.data
    mailbox = _fake_mailbox(1)
    mailbox[gang.CLOSED // 8] = 1
    assert not gang.post_native(mailbox.ctypes.data, record.ctypes.data)
    assert mailbox[gang.NATIVE_TASK // 8] == 0 and mailbox[gang.GENERATION // 8] == 0
    assert not gang.post_native(_fake_mailbox(0).ctypes.data, record.ctypes.data)  # nobody to run it


def test_closed_counts_in_and_out_of_the_real_mailbox_even_when_the_block_raises():
    before = int(gang._mailbox[gang.CLOSED // 8])
    with pytest.raises(RuntimeError), gang.closed():
        assert gang._mailbox[gang.CLOSED // 8] == before + 1
        raise RuntimeError("inside")
    assert gang._mailbox[gang.CLOSED // 8] == before


def _parked_seconds(mailbox: np.ndarray) -> float:
    start = time.perf_counter()
    assert gang._park(mailbox, mailbox[gang.GENERATION // 8], 0) == -1  # no task comes: it leaves
    return time.perf_counter() - start


def test_a_helper_lingers_after_a_held_run_and_not_otherwise():
    gang._park(_fake_mailbox(1), 0, 0)  # compiled before timing
    plain = min(_parked_seconds(_fake_mailbox(1)) for _ in range(5))
    mailbox = _fake_mailbox(1)
    gang._hold(mailbox, 1)
    gang._hold(mailbox, -1)  # a held run ended just now
    lingered = _parked_seconds(mailbox)
    # LINGER_CYCLES of the time-stamp counter: at least ~1.4 ms on any clock up to 3.5 GHz
    assert lingered >= gang.LINGER_CYCLES / 3.5e9, lingered
    assert plain < lingered / 2, (plain, lingered)


@pytest.mark.parametrize("words", [1, 2, 4, 10, 16, 17])
def test_shared_words_are_zeros_alone_in_their_cache_lines(words):
    # counters that threads update atomically start on a line pair of their own, and no other array of the same
    # kind reaches into it (many small ones allocated in a row, as a model's layers allocate their counters)
    arrays = [shared_words(words) for _ in range(32)]
    spans = []
    for a in arrays:
        assert a.dtype == np.int64 and a.shape == (words,) and a.flags.c_contiguous and not a.any()
        start = a.ctypes.data
        assert start % LINE_BYTES == 0
        end = start + -(-a.nbytes // LINE_BYTES) * LINE_BYTES  # the lines it owns
        spans.append((start, end))
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start


@numba.njit(nogil=True)
def _add_then_load(counters, times):
    at = counters.ctypes.data
    for _ in range(times):
        fetch_add(at + 8, 3)
    return load(at), load(at + 8)


def test_an_atomic_load_reads_what_atomic_adds_left():
    counters = shared_words(2)
    counters[0] = -7
    assert _add_then_load(counters, 1000) == (-7, 3000)
    assert counters[1] == 3000


def test_a_spin_on_atomic_loads_sees_another_threads_adds():
    # a waiter spinning on load() sees the other thread's adds (no value kept in a register: the loop ends)
    counters = shared_words(2)
    done = threading.Event()

    def adder():
        _add_then_load(counters, 5000)
        done.set()

    thread = threading.Thread(target=adder)
    thread.start()
    assert _wait_until(counters, 15000) == 15000
    thread.join()
    assert done.is_set()


@numba.njit(nogil=True)
def _wait_until(counters, total):
    at = counters.ctypes.data
    while load(at + 8) < total:
        pass
    return load(at + 8)
