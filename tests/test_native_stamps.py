"""Native entries stamped from a template (kernels/support/stamps.py): an entry made from the stamp of an
earlier node is word for word the entry its kernel would pack for the node itself, over randomized shapes,
strides, broadcasting, in-place aliasing and parameters; what a stamp must not cover is built afresh."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from openvx_nn.kernels.engine import gang
from openvx_nn.kernels.openvx import activation, elementwise
from openvx_nn.kernels.support import stamps


def _fresh(make):
    """The entry ``make()`` gives with no stamp to use (the kernel's own packing)."""
    saved = dict(stamps._stamps)
    stamps._stamps.clear()
    try:
        return make()
    finally:
        stamps._stamps.clear()
        stamps._stamps.update(saved)


def _outcome(make):
    """``make()``'s entry, or the ValueError it raised (a kernel refuses some overlaps: stamps must too)."""
    try:
        return make()
    except ValueError as err:
        return str(err)


def _check(make):
    """``make()`` with the stamps as they are gives what it gives with none."""
    got, want = _outcome(make), _fresh(lambda: _outcome(make))
    assert type(got) is type(want)
    if isinstance(got, str) or got is None:
        assert got == want
    else:
        assert got.address == want.address
        np.testing.assert_array_equal(_shared_words(got), _shared_words(want))


def _shared_words(entry):
    """The entry's block with the addresses of its own chunk-sharing task (counters and record) as 0: an entry
    that keeps a task is never stamped (``stamps._learn`` refuses it), and each build has a task of its own."""
    tasks = [k for k in entry.keep if isinstance(k, gang.NativeTask)]
    assert not tasks or not any(stamp is not None and stamp.address == entry.address
                                for stamp in stamps._stamps.values()), "an entry keeping a chunk-sharing task was stamped"
    own = {int(a) for t in tasks for a in (t.counters.ctypes.data, t.record.ctypes.data)}
    return np.where(np.isin(entry.block, list(own)), 0, entry.block) if own else entry.block


def _arrays(rng, dtype, shape, kind):
    """Three arrays (in1, in2, out) of one geometry family: contiguous, strided views, broadcast, in place."""
    def make(s):
        big = np.zeros([2 * n for n in s], dtype) if kind == "strided" else np.zeros(s, dtype)
        return big[tuple(slice(None, None, 2) for _ in s)] if kind == "strided" else big
    out = make(shape)
    in1 = make(shape)
    in2 = make(shape[:-1] + (1,)) if kind == "broadcast" else make(shape)
    if kind == "in place":
        in1 = out
    return in1, in2, out


@pytest.mark.parametrize("kind", ["contiguous", "strided", "broadcast", "in place"])
@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float32])
def test_a_stamped_elementwise_entry_is_the_packed_one(kind, dtype):
    rng = np.random.default_rng(hash((kind, np.dtype(dtype).str)) % 2**32)
    for _ in range(6):
        shape = tuple(int(n) for n in rng.integers(1, 6, rng.integers(1, 5)))
        saturate, subtract = bool(rng.integers(2)), bool(rng.integers(2))
        scale = float(rng.choice([1.0, 0.5, 1 / 3]))
        nearest = bool(rng.integers(2))
        for _ in range(3):  # the first learns the stamp, the next two are made from it
            a, b, o = _arrays(rng, dtype, shape, kind)
            _check(partial(elementwise.native_add_sub, a, b, o, saturate, subtract))
            _check(partial(elementwise.native_multiply, a, b, scale, o, saturate, nearest))


@pytest.mark.parametrize("function, dtype", [(f, np.int16) for f in ("relu", "brelu", "logistic", "tanh", "linear")]
                         + [(f, np.float32) for f in ("relu", "brelu", "linear")])
def test_a_stamped_activation_entry_is_the_packed_one(function, dtype):
    rng = np.random.default_rng(7)
    for _ in range(4):
        shape = tuple(int(n) for n in rng.integers(1, 7, rng.integers(1, 4)))
        a, b = float(rng.uniform(0.5, 2)), float(rng.uniform(0.5, 2))
        for in_place in (False, True, False):
            out = np.zeros(shape, dtype)
            x = out if in_place else np.zeros(shape, dtype)
            fpp = 8 * (dtype == np.int16)
            _check(partial(activation.native_entry, x, out, function, a, b, fpp_in=fpp, fpp_out=fpp))


def test_float32_logistic_and_tanh_entries_are_built_afresh_with_their_own_chunk_counters():
    # They run on float_activation, whose entries share chunks with the helpers through counters of their own.
    x = [np.zeros((40, 50), np.float32) for _ in range(4)]
    entries = [activation.native_entry(x[k], x[k + 1], "logistic") for k in (0, 2)]
    assert entries[0].address == entries[1].address
    assert not np.array_equal(entries[0].block, entries[1].block)
    counters = [next(k for k in e.keep if isinstance(k, np.ndarray) and k.dtype == np.int64) for e in entries]
    assert counters[0] is not counters[1]


def test_an_entry_keeps_its_own_tensors_alive_and_not_the_first_nodes():
    first = [np.zeros((3, 4), np.int16) for _ in range(3)]
    elementwise.native_add_sub(*first, True, False)
    second = [np.zeros((3, 4), np.int16) for _ in range(3)]
    entry = elementwise.native_add_sub(*second, True, False)
    kept = {id(k) for k in entry.keep}
    assert all(id(t) in kept for t in second) and not any(id(t) in kept for t in first)
    key = next(k for k in stamps._stamps if k[0] == ("add_sub", True, False) and k[2] == ((3, 4), (8, 2), "<i2"))
    stamp = stamps._stamps[key]
    assert stamp is not None and stamp.constants == ()


def test_a_partial_overlap_is_refused_as_without_stamps():
    base = np.zeros(20, np.int16)
    for _ in range(2):
        with pytest.raises(ValueError, match="overlaps the output"):
            elementwise.native_add_sub(base[1:11], base[:10], base[:10], True, False)


def test_stamps_are_bounded(monkeypatch):
    monkeypatch.setattr(stamps, "LIMIT", 8)
    stamps._stamps.clear()
    for n in range(1, 30):
        elementwise.native_add_sub(np.zeros(n, np.int16), np.zeros(n, np.int16), np.zeros(n, np.int16), True, False)
    assert len(stamps._stamps) <= 8


def test_an_arrays_address_is_where_numpy_says_its_data_starts():
    """``stamps._address`` (the buffer protocol where it can) against NumPy's own ``__array_interface__``, over
    the arrays binding meets: C and Fortran order, views into an arena, strided, negative strides, broadcast,
    read-only, 0-d and empty."""
    rng = np.random.default_rng(7)
    arena = np.zeros(4096, np.uint8)
    cases = [np.zeros((3, 4), np.float32), np.zeros((4, 4, 2), np.int16, order="F"),
             arena[64:128].view(np.int16).reshape((4, 4, 2), order="F"), arena[1:9], np.zeros((5, 6))[::2, 1::3],
             np.zeros(7, np.int8)[::-1], np.broadcast_to(np.zeros(3), (4, 3)), np.zeros(()), np.zeros((0, 3)),
             np.zeros((2, 1, 3), np.uint8, order="F")[:, :, 1:]]
    readonly = np.zeros((4, 2), np.int32, order="F")
    readonly.flags.writeable = False
    cases.append(readonly)
    for _ in range(20):
        shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(1, 5)))
        base = np.zeros(shape, rng.choice([np.int8, np.int16, np.float32]), order=rng.choice(["C", "F"]))
        cases.append(base[tuple(slice(int(rng.integers(0, n)), None) for n in shape)])
    for array in cases:
        assert stamps._address(array) == array.__array_interface__["data"][0], (array.shape, array.strides)
