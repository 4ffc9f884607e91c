"""Calls split over threads started together, for the tests of models and graphs shared by threads."""
from __future__ import annotations

import threading
from collections.abc import Callable

WAIT = 120  # seconds a thread may take: far beyond any run here; only a deadlock reaches it


def in_threads(count: int, calls: int, work: Callable[[int], None]) -> list[BaseException]:
    """``work(i)`` for i in range(calls), split over ``count`` threads started together; the exceptions raised.
    A thread still running after ``WAIT`` seconds fails the test (a hang)."""
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def body(first: int) -> None:
        start.wait()
        try:
            for i in range(first, calls, count):
                work(i)
        except BaseException as err:  # noqa: BLE001 - reported by the test
            errors.append(err)
    threads = [threading.Thread(target=body, args=(t,)) for t in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive(), "a call hung"
    return errors
