"""Python's cyclic garbage collector paused around passes that create objects in bulk.

Verifying a graph creates a few objects per node (accesses, metadata, validated
tensors' storage) and keeps most of them.  Every 700 allocations CPython runs a
young-generation collection, and every few of those an older one that walks all
the objects that survived before: for a 10,000-node graph that made verify cost
per node grow 1.7x from 1,000 to 10,000 nodes although the pass itself is
linear.  Nothing these passes create is cyclic garbage, so pausing the collector
for their duration loses nothing; it runs again at the next allocation after.

The pause is counted across threads: the collector is enabled again when the
last pass that paused it ends, and only if it was enabled when the first began
(a host that disabled it keeps it disabled).
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
