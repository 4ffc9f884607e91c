"""The float64 BLAS product of the GEMM route: packed weights and the choice of operand order.

Packed weights. BLAS needs the weights as a float64 matrix
``wm[k, j] = w[mx, my, c, k]``. Weights are static in a graph, so the
packed matrices of recent calls are kept: an entry is keyed by the tensor's
memory and layout, holds a copy of the raw values, and is used only after a
full comparison with the current values (cheaper than packing again), so a
changed tensor is always packed anew.

Operand order. ``res = wm @ cols`` (channels-major result) and
``res.T = cols.T @ wm.T`` (position-major) are the same exact product, but
OpenBLAS splits its work between threads differently for the two, and on a
busy two-core machine one of them can be several times slower than the
other depending on the shape. The first calls for a shape time both (with
``TRIALS`` runs each) and keep the faster; the result is the same either way.
"""
from __future__ import annotations

import threading
import time

import numpy as np

TRIALS = 3
# Tests set this to True (channels-major) or False (position-major) to pin the order.
FORCE_ORDER: bool | None = None


def pack_weights(w: np.ndarray) -> np.ndarray:
    """``wm[k, j] = w[mx, my, c, k]`` with ``j = mx + KX * (my + KY * c)``, a C-ordered float64 ``(K, taps)`` matrix."""
    kx, ky, channels, k_out = w.shape
    wm = np.empty((k_out, kx * ky * channels), np.float64)
    wm.reshape(k_out, channels, ky, kx)[...] = w.transpose(3, 2, 1, 0)
    return wm


class PackCache:
    """Packed weights of recent calls (see the module doc), at most ``capacity`` entries and ``max_bytes``."""

    def __init__(self, capacity: int = 16, max_bytes: int = 1 << 28):
        self._entries: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()
        self._capacity, self._max_bytes = capacity, max_bytes

    def get(self, w: np.ndarray) -> np.ndarray:
        if w.size == 0 or not (w.flags.c_contiguous or w.flags.f_contiguous):  # no cheap comparison
            return pack_weights(w)
        flat = w.ravel(order="K")  # a view: the memory order
        key = (w.__array_interface__["data"][0], w.shape, w.strides, w.dtype.str)
        with self._lock:
            entry = self._entries.pop(key, None)
        if entry is not None and not np.array_equal(flat, entry[0]):  # integers: equal values are equal bits
            entry = None
        if entry is None:
            entry = (flat.copy(), pack_weights(w))
        with self._lock:
            self._entries[key] = entry  # most recent last
            while len(self._entries) > self._capacity or self._nbytes() > self._max_bytes:
                del self._entries[next(iter(self._entries))]
        return entry[1]

    def _nbytes(self) -> int:
        return sum(raw.nbytes + wm.nbytes for raw, wm in self._entries.values())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class OrderChooser:
    """Per product shape, the operand order that ran faster over the first ``TRIALS`` calls of each."""

    def __init__(self):
        self._chosen: dict[tuple, bool] = {}
        self._times: dict[tuple, dict[bool, list[float]]] = {}
        self._lock = threading.Lock()

    def pick(self, shape: tuple) -> bool:
        """True: channels-major ``wm @ cols``; False: position-major ``cols.T @ wm.T``."""
        if FORCE_ORDER is not None:
            return FORCE_ORDER
        chosen = self._chosen.get(shape)
        if chosen is not None:
            return chosen
        with self._lock:
            times = self._times.setdefault(shape, {True: [], False: []})
            return len(times[True]) <= len(times[False])

    def record(self, shape: tuple, channels_major: bool, seconds: float) -> None:
        if FORCE_ORDER is not None or shape in self._chosen:
            return
        with self._lock:
            times = self._times.setdefault(shape, {True: [], False: []})
            times[channels_major].append(seconds)
            if min(len(times[True]), len(times[False])) >= TRIALS:
                self._chosen[shape] = min(times[True]) <= min(times[False])
                del self._times[shape]

    def chosen(self) -> dict[tuple, bool]:
        return dict(self._chosen)


packed_weights = PackCache()
orders = OrderChooser()


def multiply(wm: np.ndarray, cols: np.ndarray, res: np.ndarray, channels_major: bool) -> None:
    """``res = wm @ cols`` for ``res`` (K, rows): C-ordered when ``channels_major``, else the transpose of a C array."""
    if channels_major:
        np.dot(wm, cols, out=res)
    else:
        np.dot(cols.T, wm.T, out=res.T)


def timed_multiply(wm: np.ndarray, cols: np.ndarray, res: np.ndarray, channels_major: bool, shape: tuple) -> None:
    """:func:`multiply`, timed for :data:`orders` while it is still choosing for ``shape``."""
    start = time.perf_counter()
    multiply(wm, cols, res, channels_major)
    orders.record(shape, channels_major, time.perf_counter() - start)
