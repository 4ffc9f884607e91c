"""Native entries whose work the gang's helpers share: the same bits whether one thread runs every unit or two
share them, and whatever the split (channel groups of a pool of few rows, slices of an element-wise call's
outermost axis), against plain references written from the rules."""
from __future__ import annotations

import functools
import time

import numpy as np
import pytest
from test_float_pooling_rules import reference as pool_reference

from openvx_nn.kernels.engine import gang, isa
from openvx_nn.kernels.frontend import channel_gate, float_pooling, float_sharing
from openvx_nn.kernels.openvx import elementwise
from openvx_nn.kernels.support import native


def _shared_runs(entry, out: np.ndarray, fill, expected: bytes, what) -> bool:
    """``entry`` run alone (no helper counted in: every unit on this thread), then, when it shares its units, with
    a helper spinning in the gang until one joined (which runs it joins is the OS's say); ``out`` (filled with
    ``fill`` before each run) holds ``expected`` after each; whether the entry shares its units."""
    with gang.closed():
        out.fill(fill)
        assert native.run(entry) == 0
        assert out.tobytes() == expected, what
    if not gang.lends(entry):
        return False
    joins, runs, deadline = gang.native_joins(), 0, time.monotonic() + 60
    with gang.held():
        while runs < 5 or (gang.native_joins() == joins and time.monotonic() < deadline):
            gang.summon_spare()
            out.fill(fill)
            assert native.run(entry) == 0
            assert out.tobytes() == expected, (what, runs)
            runs += 1
    assert gang.native_joins() > joins, "no helper joined the shared entry"
    return True


def _one_thread(make, out: np.ndarray) -> np.ndarray:
    """What the entry ``make(out)`` bound for one thread (whole rows, no split) writes."""
    one = np.empty_like(out)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(isa, "threads", lambda: 1)
        assert native.run(make(one)) == 0
    return one


TWO = pytest.mark.skipif(isa.threads() < 2, reason="one thread: no helper shares an entry")


@TWO
@pytest.mark.parametrize("mode", [float_pooling.AVERAGE, float_pooling.MAX])
def test_a_pool_of_few_rows_shares_its_channels_with_the_same_bits(mode):
    rng = np.random.default_rng(7 + mode)
    for case in range(4):
        depth = int(rng.choice([17, 32, 40, 144, 200]))
        side = int(rng.integers(12, 40))
        if case % 2 == 0:  # a global pool: one output row
            size, strides, pads, out_hw = (side, side), (1, 1), (0, 0, 0, 0), (1, 1)
        else:  # a 3x3/2 pool with padding to a few rows
            size, strides, pads = (3, 3), (2, 2), (1, 1, 1, 1)
            out_hw = ((side + 2 - 3) // 2 + 1,) * 2
        x = rng.standard_normal((1, side, side, depth)).astype(np.float32)
        x[0, 0, 0, :3] = [np.inf, -0.0, 1e30]
        out = np.empty((1, *out_hw, depth), np.float32)
        expected = pool_reference(x, mode, pads, strides, size, 0)
        entry = float_pooling.native_pool2d(x, out, mode, pads, strides, size, 0)
        small = out.size * size[0] * size[1] * float_pooling.COST_PER_VALUE < float_sharing.NATIVE_PARALLEL_WORK
        if out_hw[0] < float_pooling.GROUP_UNITS and not small:
            assert entry.block[float_pooling._GROUPS] > 1, "a pool of few rows is not cut over its channels"
        one = _one_thread(functools.partial(float_pooling.native_pool2d, x, mode=mode, pads=pads, strides=strides,
                                            filter_size=size, activation=0), out)
        assert one.tobytes() == expected.tobytes(), (case, depth, side)
        assert _shared_runs(entry, out, np.nan, expected.tobytes(), (case, depth, side)) or small


def _views(rng, shape, broadcast):
    """A float32 or int16 operand pair for ``shape``: the second broadcast over the axes in ``broadcast``."""
    b_shape = tuple(1 if i in broadcast else n for i, n in enumerate(shape))
    return rng.standard_normal(shape).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)


@TWO
@pytest.mark.parametrize("operation", ["multiply", "add", "subtract"])
def test_an_elementwise_call_split_over_its_outer_axis_gives_the_same_bits(operation):
    rng = np.random.default_rng({"multiply": 1, "add": 2, "subtract": 3}[operation])
    shared = []
    for case in range(4):
        shape = (int(rng.integers(3, 40)), int(rng.integers(20, 40)), int(rng.integers(20, 150)), 1)
        a, b = _views(rng, shape, {0, 1} if case % 2 == 0 else {2})
        a.reshape(-1)[:2] = [np.nan, np.inf]
        out = np.empty(shape, np.float32)
        if operation == "multiply":
            scale = float(np.float32(rng.uniform(0.5, 2)))
            expected = (a.astype(np.float64) * b.astype(np.float64) * scale).astype(np.float32)

            make = functools.partial(elementwise.native_multiply, a, b, scale, saturate=False, nearest_even=False)
        else:
            expected = np.where(np.isnan(a), a, a - b if operation == "subtract" else a + b).astype(np.float32)
            make = functools.partial(elementwise.native_add_sub, a, b, saturate=False,
                                     subtract=operation == "subtract")
        assert _one_thread(make, out).tobytes() == expected.tobytes(), (case, shape)
        shared.append(_shared_runs(make(out), out, 0, expected.tobytes(), (case, shape)))
    assert any(shared), "no case was large enough to share"


@pytest.mark.parametrize("length", [32768, 5 * elementwise.LINE, elementwise.LINE, 3001, 7 * 7 * 1280, 1000])
def test_a_contiguous_elementwise_call_is_cut_in_long_lines_with_the_same_bits(length):
    """A contiguous tensor collapses to one loop line: its units are lines of ``LINE`` values where it is a multiple
    of them, else of a length between half and twice ``LINE`` that divides it, else the one line; never single
    values, and the sum is a + b whether one thread or two run it."""
    rng = np.random.default_rng(length)
    a, b = (rng.standard_normal((length // 128, 128) if length % 128 == 0 else (length,)).astype(np.float32)
            for _ in range(2))
    a.reshape(-1)[:2] = [np.nan, np.inf]
    out = np.empty_like(a)
    views = [elementwise._outer_first(v) for v in elementwise.loop_views(out, a, b)]
    line, half = views[0].shape[-1], elementwise.LINE // 2
    if length % elementwise.LINE == 0:
        assert line == elementwise.LINE
    elif any(length % d == 0 for d in range(half, min(4 * half, length - 1) + 1)):
        assert half <= line <= 4 * half and length % line == 0 and line < length
    else:
        assert line == length
    assert all(v.shape[0] * v.shape[-1] == length for v in views)
    assert views[0].size == length and views[1].reshape(-1).tobytes() == a.tobytes()
    expected = np.where(np.isnan(a), a, a + b).astype(np.float32)
    make = functools.partial(elementwise.native_add_sub, a, b, saturate=False, subtract=False)
    assert _one_thread(make, out).tobytes() == expected.tobytes()
    if isa.threads() > 1:
        _shared_runs(make(out), out, 0, expected.tobytes(), length)


@pytest.mark.parametrize("dtype", [np.int16, np.uint8])
def test_an_integer_elementwise_entry_split_over_its_outer_axis_is_exact(dtype):
    rng = np.random.default_rng(11)
    info = np.iinfo(dtype)
    shape = (37, 29, 23)
    a = rng.integers(info.min, info.max + 1, shape).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (37, 1, 23)).astype(dtype)
    out = np.empty(shape, dtype)
    assert native.run(elementwise.native_add_sub(a, b, out, True, False)) == 0
    assert np.array_equal(out, np.clip(a.astype(np.int64) + b, info.min, info.max))
    product = np.empty(shape, dtype)
    assert native.run(elementwise.native_multiply(a, b, 1.0, product, True, False)) == 0
    exact = a.astype(np.int64) * b  # scale 1, positions 0: rounding plays no part
    assert np.array_equal(product, np.clip(exact, info.min, info.max))


@TWO
@pytest.mark.parametrize("gate_axes", ["channels", "pixels"])
def test_a_gated_product_shared_over_its_lines_gives_the_same_bits(gate_axes):
    # OpenVX order [W, H, C, N] (Fortran): a squeeze-and-excitation gate [1, 1, C, 1] (inner 1: a line is a
    # channel's pixels), or a gate [W, H, 1, 1] over channels (a line is a pixel row of the gate).
    rng = np.random.default_rng(5 if gate_axes == "channels" else 6)
    shared = []
    for case in range(3):
        w, h, c = int(rng.integers(7, 60)), int(rng.integers(7, 60)), int(rng.integers(9, 150))
        x = np.asfortranarray(rng.standard_normal((w, h, c, 1)).astype(np.float32))
        g_shape = (1, 1, c, 1) if gate_axes == "channels" else (w, h, 1, 1)
        g = np.asfortranarray(rng.standard_normal(g_shape).astype(np.float32))
        out = np.empty_like(x, order="F")
        expected = np.asfortranarray(x * g)  # one float32 product a value
        make = functools.partial(channel_gate.native_entry, x, g, function=None)
        assert _one_thread(make, out).tobytes() == expected.tobytes(), (case, g_shape)
        shared.append(_shared_runs(make(out), out, np.nan, expected.tobytes(), (case, x.shape)))
    assert any(shared), "no case was large enough to share"


@TWO
def test_a_gated_logistic_product_shared_equals_the_one_thread_entry():
    rng = np.random.default_rng(9)
    x = np.asfortranarray(rng.standard_normal((40, 37, 96, 1)).astype(np.float32))
    g = np.asfortranarray(rng.standard_normal((1, 1, 96, 1)).astype(np.float32) * 4)
    out = np.empty_like(x, order="F")
    make = functools.partial(channel_gate.native_entry, x, g, function="logistic")
    one = _one_thread(make, out)
    assert np.allclose(one, x / (1 + np.exp(-g.astype(np.float64))), rtol=1e-6, atol=1e-7)
    assert _shared_runs(make(out), out, np.nan, one.tobytes(), "logistic")
