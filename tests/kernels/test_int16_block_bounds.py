"""Int16 K-blocks as long as the weights' real sums allow, and not one step longer.

The engine sums an int16 correlation in int32 blocks whose length it derives at verify from the packed
weights' per-channel sums of |w| (``block_bounds``). These tests build weights whose sums sit at the
edge: all weights negative against inputs of -32768, so that every product is positive and a block's
true sum is 32768 times its sum of |w|; sums of 65535 fit int32 exactly, 65536 reach 2**31. A block one
step too long wraps and the output differs from the plain references (which share no code with the
engine), through the Python route and through the bound native entry alike.
"""
from __future__ import annotations

import numpy as np
import pytest
from conv_reference import reference_convolution
from kernel_testing import Format, assert_bits_equal
from layer_references import fully_connected_ref

from openvx_nn.kernels.engine import correlation, isa, prepared
from openvx_nn.kernels.engine import simd as engine
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected
from openvx_nn.kernels.support import native

LIMIT = (2**31 - 1) // 32768  # the largest sum of |w| a block may reach against inputs of -32768
ISAS = [pytest.param(name, id=name, marks=pytest.mark.skipif(name not in isa.available(), reason=f"no {name}"))
        for name in isa.ISAS if name != "generic"]
# Saturating: a sum wrapped by 2**32 keeps its low bits, so only a saturated output shows the wrap.
ROUNDINGS = [True, False]
# Q7.8 inputs and weights; outputs at 8 and 0 fractional bits; plain integers
FPPS = [(8, 8, 8, 8), (8, 8, 8, 0), (0, 0, 0, 0)]


def negative_weights(rng: np.random.Generator, count: int, total: int) -> np.ndarray:
    """``count`` weights <= 0 whose magnitudes add up to exactly ``total`` (each within 32767)."""
    places = max(1, min(count, int(rng.integers(-(-total // 30000) + 1, 2 * (-(-total // 30000)) + 6))))
    magnitudes = np.zeros(count, np.int64)
    chosen = rng.choice(count, places, replace=False)
    magnitudes[chosen] = rng.multinomial(total, np.full(places, 1 / places))
    assert magnitudes.max() <= 32767
    return -magnitudes


def edge_sums(rng: np.random.Generator, n: int, edge: int) -> list[int]:
    """``n`` sums of |w| whose largest is exactly ``edge`` (the others a little below): the block length
    the engine derives is then decided by that one value."""
    return [edge] + [edge - int(rng.integers(0, 30)) for _ in range(n - 1)]


def mostly_lowest(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inputs of -32768 (the largest products against negative weights); along the last index of axis 1
    (a batch column, an image row), some of them other values. Sums away from those reach the edge."""
    x = np.full(shape, -32768, np.int16)
    mixed = x[:, -1]
    other = rng.random(mixed.shape) < 0.3
    mixed[other] = rng.integers(-32768, 32768, int(other.sum()))
    return np.asfortranarray(x)


@pytest.mark.parametrize("name", ISAS)
def test_fully_connected_sums_at_the_int32_edge_are_exact(name):
    rng = np.random.default_rng(7001)
    for case in range(6):
        n_in, n_out, batch = int(rng.integers(8, 400)), int(rng.integers(1, 40)), int(rng.integers(2, 4))
        n_in = max(n_in, 8 * (1 + (case // 2) % 3))
        blocks = 1 + (case // 2) % 3
        edge = blocks * LIMIT + case % 2  # exactly at the limit (one block fits), or one past it
        w = np.asfortranarray(np.stack([negative_weights(rng, n_in, total) for total in edge_sums(rng, n_out, edge)],
                                       axis=1).astype(np.int16))
        x = mostly_lowest(rng, (n_in, batch))
        fpp = FPPS[case % len(FPPS)]
        nearest = ROUNDINGS[case % 2]
        fmt = Format("Q", np.int16, fpp[3])
        out = np.zeros((n_out, batch), np.int16, order="F")
        fully_connected(x, w, None, out, True, nearest, fpp_x=fpp[0], fpp_w=fpp[1], fpp_out=fpp[3], isa=name)
        expected = fully_connected_ref(x, w, None, fmt, True, nearest, fpp_x=fpp[0], fpp_w=fpp[1], fpp_out=fpp[3])
        assert_bits_equal(out, expected)


def tap_weights(rng: np.random.Generator, k: int, channels: int, k_out: int, case: int) -> np.ndarray:
    """(k, k, channels, k_out) negative weights whose sums per kernel row put the largest block at the limit
    or one past it (``case`` % 2): all k rows together, the first two rows (blocks of two rows, k = 3), or
    each row twice the limit (runs within a row)."""
    mode = (case // 2) % 3
    edge = LIMIT + case % 2
    w = np.zeros((k, k, channels, k_out), np.int64)
    for out, total in enumerate(edge_sums(rng, k_out, edge)):
        if mode == 0:  # one block of every row fits, or not
            rows = list(rng.multinomial(total, np.full(k, 1 / k)))
        elif mode == 1:  # two rows fit together, or not
            first = int(rng.integers(total // 3, total // 2))
            rows = [first, total - first] + [int(rng.integers(LIMIT // 4, LIMIT // 2))] * (k - 2)
        else:
            rows = [2 * total - int(rng.integers(0, 5)) for _ in range(k)]
        for my in range(k):
            w[:, my, :, out] = negative_weights(rng, k * channels, rows[my]).reshape(k, channels)
    return np.asfortranarray(w.astype(np.int16))


@pytest.mark.parametrize("name", ISAS)
def test_convolution_sums_at_the_int32_edge_are_exact(name):
    rng = np.random.default_rng(7002)
    for case in range(12):
        k = 3 if case % 4 < 2 else 2
        channels, k_out = int(rng.choice([6, 16, 33])), int(rng.integers(1, 24))
        size = int(rng.integers(k + 1, 9))
        pad = int(rng.integers(0, 2))
        w = tap_weights(rng, k, channels, k_out, case)
        x = mostly_lowest(rng, (size, size, channels))
        fpp = FPPS[case % len(FPPS)]
        saturate, nearest = True, ROUNDINGS[case % 2]
        out_size = size + 2 * pad - k + 1
        out = np.zeros((out_size, out_size, k_out), np.int16, order="F")
        convolution(x, w, None, out, pad, pad, 1, 1, 0, 0, saturate, nearest, fpp_x=fpp[0], fpp_w=fpp[1],
                    fpp_out=fpp[3], method="simd", isa=name)
        fmt = Format("Q", np.int16, fpp[3])
        assert_bits_equal(out, reference_convolution(x, w, None, out.shape, (pad, pad), (1, 1), (0, 0), fmt,
                                                     fpp, saturate, nearest))


@pytest.mark.skipif(isa.selected() == "generic", reason="no SIMD route on this CPU")
def test_the_bound_native_entry_chooses_the_same_safe_blocks():
    rng = np.random.default_rng(7003)
    for case in range(6):
        k, channels, k_out, size = 3, int(rng.choice([4, 16])), int(rng.integers(1, 20)), 6
        w = tap_weights(rng, k, channels, k_out, case)
        x = mostly_lowest(rng, (size, size, channels))
        fpp = FPPS[case % len(FPPS)]
        saturate, nearest = True, ROUNDINGS[case % 2]
        arithmetic = correlation.Arithmetic(saturate, nearest, *fpp)
        window = correlation.convolution_window(1, 1, 1, 1, 0, 0)
        out_shape = (size, size, k_out)
        route = correlation.prepare(w, False, x.shape, out_shape, window, arithmetic, "simd", isa.selected())
        ours = np.zeros(out_shape, np.int16, order="F")
        assert native.run(prepared.bind(route, x, None, ours).entry) == 0
        fmt = Format("Q", np.int16, fpp[3])
        assert_bits_equal(ours, reference_convolution(x, w, None, out_shape, (1, 1), (1, 1), (0, 0), fmt, fpp,
                                                      saturate, nearest))


def _window():
    from openvx_nn.kernels.engine.correlation import Window
    return Window(1, 1, 1, 1, 0, 0)


def test_weights_within_the_limit_take_one_block_and_one_more_splits():
    # 600 weights of -109 and one of -135: a sum of 65535, so inputs of -32768 fit one int32 block, where
    # the uniform bound (every weight the largest) would cut the sum into blocks of 242 steps.
    w = np.full((1, 1, 602, 4), -109, np.int16)
    w[0, 0, 600, :], w[0, 0, 601, :] = -135, 0
    plan = engine.prepare(w, _window(), (1, 1, 602), (1, 1, 4), "avx2")
    steps = plan.taps.size * plan.inner
    assert np.abs(w.astype(np.int64)).sum(axis=2).max() == LIMIT
    assert engine.block_steps(plan, 32768) >= steps
    w[0, 0, 601, 2] = -1  # one channel at 65536: 32768 * 65536 = 2**31
    plan = engine.prepare(w, _window(), (1, 1, 602), (1, 1, 4), "avx2")
    assert 242 < engine.block_steps(plan, 32768) < steps
    assert engine.block_steps(plan, 32767) >= steps  # a measured input below 32768 fits again


@pytest.mark.parametrize("k_out", [1, 3, 17, 130])
def test_weight_sums_read_the_real_channels_only_and_give_the_unpacked_maximum(k_out):
    # The packed blocks hold up to 128 lanes; the padding lanes are zeros. The largest per-channel sum of |w|
    # must be the plain one from the unpacked weights, and summing must not take memory for the padding lanes
    # (a layer of one output channel and 8.4 million input channels had taken 21 GB).
    import tracemalloc

    from openvx_nn.kernels.engine.block_bounds import weight_sums
    rng = np.random.default_rng(k_out)
    channels = 4096
    w = rng.integers(-32768, 32768, (1, 1, channels, k_out)).astype(np.int16)
    window = correlation.convolution_window(0, 0, 1, 1, 0, 0, 0, 0)
    name = next(n for n in isa.ISAS if n != "generic" and n in isa.available())
    plan = engine.prepare(w, window, (1, 1, channels), (1, 1, k_out), name)
    want = int(np.abs(w.astype(np.int64)).sum(axis=(0, 1, 2)).max())
    assert plan.w_total == want
    tracemalloc.start()
    try:
        total, _ = weight_sums(plan.weights, plan.taps.size, plan.inner, plan.w_max, k_out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == want
    real_lanes = min(k_out, plan.vecs * plan.lanes)
    assert peak <= 64 * channels * real_lanes + (1 << 16), f"{peak} bytes for {real_lanes} real lanes"
