"""The epilogue of int16 layers whose sums take several int32 K-blocks, bit for bit against the plain references.

Q7.8 inputs over the whole int16 range against weights of up to +-1.0 give sums beyond int32, so the engine adds
its int32 K-blocks in int64 and requantizes each tile from those sums as it comes (``simd._correlate_units``).
Every rounding and overflow policy, output positions that shift right, not at all and left, a bias per channel,
per location and none, through the Python route and the bound native entry, against conv_reference.py and
layer_references.py, which share no code with the engine.
"""
from __future__ import annotations

import numpy as np
import pytest
from conv_reference import reference_convolution
from kernel_testing import Q78, assert_bits_equal
from layer_references import fully_connected_ref

from openvx_nn.kernels.engine import correlation, isa, prepared
from openvx_nn.kernels.engine import simd as engine
from openvx_nn.kernels.openvx.convolution import convolution
from openvx_nn.kernels.openvx.fully_connected import fully_connected
from openvx_nn.kernels.support import native

ISAS = [pytest.param(name, id=name, marks=pytest.mark.skipif(name not in isa.available(), reason=f"no {name}"))
        for name in isa.ISAS if name != "generic"]
POLICIES = [(True, True), (True, False), (False, True), (False, False)]  # (saturate, nearest_even)
# (x, w, bias, out) fractional positions: the usual Q7.8, a coarser output (shift right by 16), a bias finer than
# the products (the sums shifted left before the bias), an output finer than the sums (an exact left shift)
POSITIONS = [(8, 8, 8, 8), (8, 8, 8, 0), (8, 8, 15, 8), (2, 2, 3, 6)]


def _layer(rng: np.random.Generator, shape: tuple[int, ...], k: int, maps: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs over the whole int16 range (their extremes included) and weights within +-1.0 (Q7.8)."""
    x = rng.integers(-32768, 32768, shape).astype(np.int16)
    x.flat[:2] = -32768, 32767
    w = rng.integers(-256, 257, (k, k, shape[2], maps)).astype(np.int16)
    return np.asfortranarray(x), np.asfortranarray(w)


def _several_blocks(w: np.ndarray, x_shape: tuple[int, ...], out_shape: tuple[int, ...], name: str) -> None:
    window = correlation.convolution_window(1, 1, 1, 1, 0, 0) if w.shape[0] == 3 else correlation.Window(
        1, 1, 1, 1, 0, 0)
    plan = engine.prepare(w, window, x_shape, out_shape, name)
    assert 0 < engine.block_steps(plan, 32768) < plan.taps.size * plan.inner, "the sums fit one K-block"


@pytest.mark.parametrize("name", ISAS)
def test_convolution_of_several_k_blocks_requantizes_exactly(name):
    rng = np.random.default_rng(4301)
    x, w = _layer(rng, (13, 11, 96), 3, 37)
    out_shape = (13, 11, 37)
    _several_blocks(w, x.shape, out_shape, name)
    biases = [rng.integers(-32768, 32768, 37).astype(np.int16), None,
              rng.integers(-32768, 32768, (13, 11, 37)).astype(np.int16)]
    inside = saturated = 0
    for case, (saturate, nearest_even) in enumerate(POLICIES):
        for positions in POSITIONS:
            bias = biases[case % 3]
            out = np.zeros(out_shape, np.int16, order="F")
            convolution(x, w, bias, out, 1, 1, 1, 1, 0, 0, saturate, nearest_even, fpp_x=positions[0],
                        fpp_w=positions[1], fpp_b=positions[2], fpp_out=positions[3], method="simd", isa=name)
            expected = reference_convolution(x, w, bias, out_shape, (1, 1), (1, 1), (0, 0), Q78, positions, saturate,
                                             nearest_even)
            assert_bits_equal(out, expected)
            if saturate:
                inside += np.count_nonzero((expected > -32768) & (expected < 32767))
                saturated += expected.size
    assert inside > saturated // 5  # values inside the range as well as at its limits


@pytest.mark.parametrize("name", ISAS)
def test_fully_connected_of_several_k_blocks_requantizes_exactly_on_both_routes(name):
    # One row and several rows (a tile of one pixel, and tiles of many), through correlation.execute and
    # through the entry bound once (the native plan's driver).
    rng = np.random.default_rng(4302)
    for n_in, n_out, batch in ((3001, 150, 1), (1000, 70, 9)):
        x = rng.integers(-32768, 32768, (n_in, batch)).astype(np.int16, order="F")
        x[:2, 0] = -32768, 32767
        w = rng.integers(-256, 257, (n_in, n_out)).astype(np.int16, order="F")
        _several_blocks(w.reshape(1, 1, n_in, n_out), (1, 1, n_in, batch), (1, 1, n_out, batch), name)
        bias = rng.integers(-32768, 32768, n_out).astype(np.int16)
        for saturate, nearest_even in POLICIES:
            positions = (8, 8, 8, 8) if nearest_even else (8, 8, 8, 0)
            expected = fully_connected_ref(x, w, bias, Q78, saturate, nearest_even, fpp_x=positions[0],
                                           fpp_w=positions[1], fpp_b=positions[2], fpp_out=positions[3])
            out = np.zeros((n_out, batch), np.int16, order="F")
            fully_connected(x, w, bias, out, saturate, nearest_even, fpp_x=positions[0], fpp_w=positions[1],
                            fpp_b=positions[2], fpp_out=positions[3], isa=name)
            assert_bits_equal(out, expected)
            arithmetic = correlation.Arithmetic(saturate, nearest_even, *positions)
            route = correlation.prepare(w.reshape(1, 1, n_in, n_out), True, (1, 1, n_in, batch), (1, 1, n_out, batch),
                                        correlation.Window(1, 1, 1, 1, 0, 0), arithmetic, "simd", name)
            bound_out = np.zeros((n_out, batch), np.int16, order="F")
            bound = prepared.bind(route, x[None, None], bias, bound_out[None, None])
            assert native.run(bound.entry) == 0
            assert_bits_equal(bound_out, expected)
