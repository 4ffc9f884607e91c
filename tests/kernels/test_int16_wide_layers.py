"""Q7.8 layers of random shapes, with the int16 extremes, bit for bit against plain references.

Wide layers matter here: a unit's weights past ``simd.SLICE_BYTES`` (a fully connected layer of thousands of
inputs and several rows) are summed K-block by K-block across all the tiles of a strip instead of tile by tile,
so their shapes are drawn on both sides of that size, with short last tiles and output maps that do not fill
whole blocks. Inputs over the whole int16 range (-32768 and 32767 among them) against weights within +-1.0 need
several int32 K-blocks; inputs and weights all at one extreme stress the block bound. Every rounding and overflow
policy. The references sum in Python ints (or exact int64 NumPy products, bounded below 2**62 here) and
round from the contract with ``fractions.Fraction``: no code shared with the engine.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conv_reference import reference_convolution
from kernel_testing import Q78, assert_bits_equal, fit_exact, round_exact

from openvx_nn.kernels.engine import correlation, isa, prepared
from openvx_nn.kernels.engine import simd as engine
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected
from openvx_nn.kernels.support import native

ISAS = [pytest.param(name, id=name, marks=pytest.mark.skipif(name not in isa.available(), reason=f"no {name}"))
        for name in isa.ISAS if name != "generic"]
POLICIES = [(True, True), (True, False), (False, True), (False, False)]  # (saturate, nearest_even)


def _fc_reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, saturate: bool, nearest_even: bool,
                  positions: tuple[int, int, int, int]) -> np.ndarray:
    """out[i, b] = round(sum_j x[j, b] * w[j, i] / 2**(px + pw) + bias[i] / 2**pb, to 2**-po), then fitted."""
    px, pw, pb, po = positions
    sums = x.T.astype(np.int64) @ w.astype(np.int64)  # exact: |sum| < n_in * 2**30 < 2**62
    out = np.empty((w.shape[1], x.shape[1]), np.int16)
    for b in range(x.shape[1]):
        for i in range(w.shape[1]):
            total = Fraction(int(sums[b, i]), 2 ** (px + pw))
            if bias is not None:
                total += Fraction(int(bias[i]), 2 ** pb)
            out[i, b] = fit_exact(round_exact(total * 2 ** po, nearest_even), Q78, saturate)
    return out


def _bound_run(w: np.ndarray, x: np.ndarray, bias: np.ndarray | None, arithmetic, name: str) -> np.ndarray:
    """The layer through the entry bound once (the native plan's driver)."""
    n_in, batch = x.shape
    n_out = w.shape[1]
    route = correlation.prepare(w.reshape(1, 1, n_in, n_out), bias is not None, (1, 1, n_in, batch),
                                (1, 1, n_out, batch), correlation.Window(1, 1, 1, 1, 0, 0), arithmetic, "simd", name)
    out = np.zeros((n_out, batch), np.int16, order="F")
    bound = prepared.bind(route, x[None, None], bias, out[None, None])
    assert native.run(bound.entry) == 0
    return out


@pytest.mark.parametrize("name", ISAS)
def test_wide_fully_connected_layers_of_random_shapes_are_exact(name):
    rng = np.random.default_rng(7801)
    sliced = 0
    for case in range(6):
        n_out = int(rng.integers(17, 140))
        batch = int(rng.integers(2, 40))
        probe = engine.prepare(np.zeros((1, 1, 1, n_out), np.int16), correlation.Window(1, 1, 1, 1, 0, 0),
                               (1, 1, 1, batch), (1, 1, n_out, batch), name)  # the tile does not depend on n_in
        past = engine.SLICE_BYTES // (2 * probe.vecs * probe.lanes)  # inputs whose weight block passes the limit
        n_in = past + int(rng.integers(1, 2000)) if case % 2 == 0 else int(rng.integers(300, min(past, 3000)))
        x = rng.integers(-32768, 32768, (n_in, batch)).astype(np.int16, order="F")
        x[rng.integers(0, n_in, 8), rng.integers(0, batch, 8)] = -32768
        x[rng.integers(0, n_in, 8), rng.integers(0, batch, 8)] = 32767
        w = rng.integers(-256, 257, (n_in, n_out)).astype(np.int16, order="F")
        bias = rng.integers(-32768, 32768, n_out).astype(np.int16) if case % 3 else None
        plan = engine.prepare(w.reshape(1, 1, n_in, n_out), correlation.Window(1, 1, 1, 1, 0, 0),
                              (1, 1, n_in, batch), (1, 1, n_out, batch), name)
        assert 0 < engine.block_steps(plan, 32768) < plan.inner, "the sums fit one K-block"
        sliced += plan.weights[0].nbytes > engine.SLICE_BYTES and batch > plan.rows
        saturate, nearest_even = POLICIES[case % 4]
        positions = (8, 8, 8, 8) if case % 2 else (8, 8, 11, 4)
        expected = _fc_reference(x, w, bias, saturate, nearest_even, positions)
        out = np.zeros((n_out, batch), np.int16, order="F")
        fully_connected(x, w, bias, out, saturate, nearest_even, fpp_x=positions[0], fpp_w=positions[1],
                        fpp_b=positions[2], fpp_out=positions[3], isa=name)
        assert_bits_equal(out, expected)
        arithmetic = correlation.Arithmetic(saturate, nearest_even, *positions)
        assert_bits_equal(_bound_run(w, x, bias, arithmetic, name), expected)
    assert sliced >= 2  # the K-sliced strips ran, not only the per-tile ones


@pytest.mark.parametrize("name", ISAS)
@pytest.mark.parametrize("value", [-32768, 32767])
def test_a_wide_fully_connected_layer_at_the_int16_extremes_is_exact(name, value):
    # Every input at one extreme against weights of +-1.0 and some at -32768: the longest sums the int32
    # blocks must not overflow, saturated and wrapped.
    rng = np.random.default_rng(7802)
    n_in, n_out, batch = 6000, 40, 11
    x = np.full((n_in, batch), value, np.int16, order="F")
    x[:, 1] = -32768
    w = np.where(rng.random((n_in, n_out)) < 0.5, -256, 256).astype(np.int16, order="F")
    w[:3, 0] = -32768
    bias = rng.integers(-32768, 32768, n_out).astype(np.int16)
    inside = 0
    for saturate, nearest_even in POLICIES:
        for positions in ((8, 8, 8, 8), (8, 8, 8, 0)):
            expected = _fc_reference(x, w, bias, saturate, nearest_even, positions)
            out = np.zeros((n_out, batch), np.int16, order="F")
            fully_connected(x, w, bias, out, saturate, nearest_even, fpp_x=positions[0], fpp_w=positions[1],
                            fpp_b=positions[2], fpp_out=positions[3], isa=name)
            assert_bits_equal(out, expected)
            inside += np.count_nonzero((expected > -32768) & (expected < 32767))
    assert inside  # not every value at a limit


@pytest.mark.parametrize("name", ISAS)
def test_q78_convolutions_of_random_shapes_are_exact(name):
    rng = np.random.default_rng(7803)
    for case in range(4):
        k = int(rng.choice([1, 3, 5]))
        width, height = int(rng.integers(k, 15)), int(rng.integers(k, 12))
        channels, maps = int(rng.integers(1, 90)), int(rng.integers(1, 70))
        pad, stride = int(rng.integers(0, k // 2 + 1)), int(rng.integers(1, 3))
        x = rng.integers(-32768, 32768, (width, height, channels)).astype(np.int16)
        x.flat[rng.integers(0, x.size, 6)] = -32768
        x.flat[rng.integers(0, x.size, 6)] = 32767
        x = np.asfortranarray(x)
        w = np.asfortranarray(rng.integers(-256, 257, (k, k, channels, maps)).astype(np.int16))
        bias = rng.integers(-32768, 32768, maps).astype(np.int16) if case % 2 else None
        out_shape = ((width + 2 * pad - k) // stride + 1, (height + 2 * pad - k) // stride + 1, maps)
        saturate, nearest_even = POLICIES[case]
        positions = (8, 8, 8, 8)
        out = np.zeros(out_shape, np.int16, order="F")
        convolution(x, w, bias, out, pad, pad, stride, stride, 0, 0, saturate, nearest_even, fpp_x=8, fpp_w=8,
                    fpp_b=8, fpp_out=8, method="simd", isa=name)
        expected = reference_convolution(x, w, bias, out_shape, (pad, pad), (stride, stride), (0, 0), Q78, positions,
                                         saturate, nearest_even)
        assert_bits_equal(out, expected)
