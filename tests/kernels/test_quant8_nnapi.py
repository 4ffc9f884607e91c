"""NNAPI's uint8 CONV_2D, FULLY_CONNECTED (integer engine, ``engine/nhwc.py``), DEPTHWISE_CONV_2D
(direct kernel) and AVERAGE/MAX_POOL_2D bit for bit against the NumPy routes they replace
(``frontend/nhwc_convolution``: exact int64 sums, then ``asymmetric.requantize``, itself held to
NNAPI's rule in tests/nnapi/test_nnapi_requantization.py; ``frontend/nhwc_pooling``: float64 on
dequantized values), on every instruction set this CPU runs.

Randomized shapes, strides, asymmetric paddings, depth multipliers, zero points (0, 128, 255 and
random), requantization multipliers below and above 1 (down to every value rounding to zero, up to
a negative shift) and all four fused activations.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit

from openvx_nn.kernels.engine import isa
from openvx_nn.kernels.engine.nhwc import pack_offsets, scale_lane, scale_run
from openvx_nn.kernels.engine.requantize_lanes import requantize8, requantize16
from openvx_nn.kernels.frontend import nhwc_convolution as reference
from openvx_nn.kernels.frontend import nhwc_pooling
from openvx_nn.kernels.frontend.asymmetric import quantized_multiplier, quantized_range, requantize
from openvx_nn.kernels.frontend.quant8_convolution import prepare_conv, prepare_fully_connected
from openvx_nn.kernels.frontend.quant8_depthwise import SEGMENT, _entries, prepare_depthwise
from openvx_nn.kernels.frontend.quant8_pooling import prepare_pool

ROUTES = [pytest.param(name, id=name, marks=pytest.mark.skipif(name not in isa.available(),
                                                               reason=f"this CPU has no {name}"))
          for name in isa.ISAS]
ZERO_POINTS = (0, 128, 255, None)  # None: random
# s_in * s_w / s_out: tiny (every value rounds to 0), below 1, exactly 1, above 1, above 2**31 (a left shift)
MULTIPLIERS = (1e-13, 3.1e-5, 0.0123, 0.37, 1.0, 3.7, 2.0 ** 33)


def _zero(rng, i: int) -> int:
    z = ZERO_POINTS[i % len(ZERO_POINTS)]
    return int(rng.integers(0, 256)) if z is None else z


def _quants(rng, i: int):
    """(input, filter, output) quantizations: zero points cycling through ZERO_POINTS, the multiplier
    through MULTIPLIERS."""
    s_in, s_w = float(rng.uniform(0.005, 0.05)), float(rng.uniform(0.002, 0.02))
    s_out = s_in * s_w / MULTIPLIERS[i % len(MULTIPLIERS)]
    return (s_in, _zero(rng, i)), (s_w, _zero(rng, i // 2 + 1)), (s_out, _zero(rng, i + 2))


def _window(rng, h: int, w: int):
    kh, kw = int(rng.integers(1, min(h, 4) + 1)), int(rng.integers(1, min(w, 4) + 1))
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))  # left, right, top, bottom: independent
    strides = tuple(int(s) for s in rng.integers(1, 4, 2))
    out_hw = ((h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1)
    return kh, kw, pads, strides, out_hw


def _bias(rng, units: int, i: int):
    if i % 3 == 0:
        return None
    limit = (1 << 31) - 1 if i % 3 == 2 else 1 << 16  # the extremes push the sum past the int32 clamp
    return rng.integers(-limit, limit, units, endpoint=True).astype(np.int32)


def _data(rng, shape, i: int) -> np.ndarray:
    """Random uint8, or (every fourth case) only 0 and 255: the largest offsets and sums."""
    if i % 4 == 3:
        return (rng.integers(0, 2, shape) * 255).astype(np.uint8)
    return rng.integers(0, 256, shape, dtype=np.uint8)


@pytest.mark.parametrize("route", ROUTES)
def test_conv2d_uint8_equals_the_numpy_route(route):
    rng = np.random.default_rng(19)
    for i in range(28):
        n, h, w, c, k = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 11), rng.integers(1, 11),
                                          rng.integers(1, 37), rng.integers(1, 53)))
        kh, kw, pads, strides, (oh, ow) = _window(rng, h, w)
        x, filt = _data(rng, (n, h, w, c), i), _data(rng, (k, kh, kw, c), i + 1)
        bias, quants, act = _bias(rng, k, i), _quants(rng, i), i % 4
        want, got = np.zeros((n, oh, ow, k), np.uint8), np.full((n, oh, ow, k), 7, np.uint8)
        reference.conv2d(x, filt, bias, want, pads, strides, act, *quants)
        prepare_conv(filt, bias, x.shape, want.shape, pads, strides, act, *quants, isa=route)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


@pytest.mark.parametrize("route", ROUTES)
def test_conv2d_uint8_over_several_channel_blocks_in_32_bit_lanes_equals_the_numpy_route(route):
    # The epilogue in 32-bit lanes (shifts 32..62, sums inside int32) for outputs wider than one tile's lanes:
    # in the micro-kernel's registers where the blocks divide the channels (24, 32, 64: rows of a last partial
    # tile to a scratch tile), else staged per tile and copied to their pixels (a partial last block, a tail
    # below 8 lanes).
    rng = np.random.default_rng(27)
    for i, k in enumerate((24, 32, 40, 64, 19, 130)):
        n, h, w, c = 1, int(rng.integers(3, 12)), int(rng.integers(3, 12)), int(rng.integers(1, 40))
        kh, kw, pads, strides, (oh, ow) = _window(rng, h, w)
        x, filt = _data(rng, (n, h, w, c), i), _data(rng, (k, kh, kw, c), i + 1)
        bias = rng.integers(-(1 << 16), 1 << 16, k).astype(np.int32)
        s_in, s_w = 0.02, 0.01
        quants = ((s_in, _zero(rng, i)), (s_w, _zero(rng, i + 1)), (s_in * s_w / (0.37, 0.0123, 3.1e-5)[i % 3], 100))
        want, got = np.zeros((n, oh, ow, k), np.uint8), np.full((n, oh, ow, k), 7, np.uint8)
        reference.conv2d(x, filt, bias, want, pads, strides, i % 4, *quants)
        prepare_conv(filt, bias, x.shape, want.shape, pads, strides, i % 4, *quants, isa=route)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


@pytest.mark.parametrize("route", ROUTES)
def test_fully_connected_uint8_equals_the_numpy_route(route):
    rng = np.random.default_rng(20)
    for i in range(14):
        batch, size, units = int(rng.integers(1, 6)), int(rng.integers(1, 700)), int(rng.integers(1, 70))
        x, filt = _data(rng, (batch, size), i), _data(rng, (units, size), i + 1)
        bias, quants, act = _bias(rng, units, i), _quants(rng, i), i % 4
        want, got = np.zeros((batch, units), np.uint8), np.zeros((batch, units), np.uint8)
        reference.fully_connected(x, filt, bias, want, act, *quants)
        prepare_fully_connected(filt, bias, batch, act, *quants, isa=route)(x, got)
        assert np.array_equal(got, want), f"case {i}"


@pytest.mark.parametrize("route", ROUTES)
def test_sums_past_one_int32_block_stay_exact(route):
    # 40000 products of offsets up to 255 * -255 (-2.6e9 in all, clamped by the rule; -1.3e9 in row 1):
    # more than one int32 block, added in int64 (a wrapped int32 sum would come out positive).
    x = np.full((2, 40000), 255, np.uint8)
    filt = np.zeros((3, 40000), np.uint8)
    filt[1], filt[2] = np.arange(40000) % 256, 255
    quants = ((0.5, 0), (0.5, 255), (0.25 * 40000 * 255, 255))
    want, got = np.zeros((2, 3), np.uint8), np.zeros((2, 3), np.uint8)
    reference.fully_connected(x, filt, None, want, 0, *quants)
    prepare_fully_connected(filt, None, 2, 0, *quants, isa=route)(x, got)
    assert np.array_equal(got, want) and want[0, 0] < want[0, 1] < want[0, 2] == 255


def test_depthwise_uint8_equals_the_numpy_route():
    rng = np.random.default_rng(21)
    for i in range(36):
        n, h, w, c, m = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 11), rng.integers(1, 11),
                                          rng.integers(1, 40), (1, 1, 2, 3)[i % 4]))
        kh, kw, pads, strides, (oh, ow) = _window(rng, h, w)
        x, filt = _data(rng, (n, h, w, c), i), _data(rng, (1, kh, kw, c * m), i + 1)
        bias, quants, act = _bias(rng, c * m, i), _quants(rng, i), i % 4
        want, got = np.zeros((n, oh, ow, c * m), np.uint8), np.full((n, oh, ow, c * m), 7, np.uint8)
        reference.depthwise_conv2d(x, filt, bias, want, pads, strides, m, act, *quants)
        prepare_depthwise(filt, bias, want.shape, pads, strides, m, act, *quants)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


@pytest.mark.parametrize("stride", [2, 3])
def test_strided_depthwise_with_columns_packed_by_phase_equals_the_numpy_route(stride):
    # Multiplier 1 with a column stride: whole-line runs over the packed row's phases, for even and odd
    # widths (the last phase a column short), asymmetric paddings and small and extreme biases (the 32-bit
    # and the 64-bit epilogue).
    rng = np.random.default_rng(28 + stride)
    for i, (h, w, c, pads) in enumerate([(9, 9, 16, (0, 1, 0, 1)), (8, 11, 5, (1, 1, 2, 0)), (7, 6, 33, (2, 0, 1, 1)),
                                         (12, 13, 8, (0, 0, 0, 0))]):
        kh, kw = 3, (3, 2, 4, 1)[i]
        strides = (stride, 1 + i % 2)
        oh, ow = (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // stride + 1
        x, filt = _data(rng, (1, h, w, c), i), _data(rng, (1, kh, kw, c), i + 1)
        quants = ((0.02, _zero(rng, i)), (0.01, _zero(rng, i + 1)), (0.05, _zero(rng, i + 2)))
        for bias in (None, _bias(rng, c, 1), _bias(rng, c, 2)):
            want, got = np.zeros((1, oh, ow, c), np.uint8), np.full((1, oh, ow, c), 7, np.uint8)
            reference.depthwise_conv2d(x, filt, bias, want, pads, strides, 1, 3, *quants)
            prepare_depthwise(filt, bias, want.shape, pads, strides, 1, 3, *quants)(x, got)
            assert np.array_equal(got, want), (i, bias is None)


def test_columns_packed_by_phase_are_the_padded_input_less_its_zero_point():
    # The strided depthwise layers' packer, alone: every column a phase holds (p * phase + i is window column
    # stride * i + p), over strides 2-4, paddings up to past the input, input widths on and off the strides,
    # channels on and off its eight-channel steps, zero points 0, 128, 255, packed whole or in shares of rows.
    rng = np.random.default_rng(34)
    pack = _entries()[1]
    for i in range(40):
        n, h, w, c, stride = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 6), rng.integers(1, 12),
                                               (1, 3, 8, 16, 19, 32, 40)[i % 7], rng.integers(2, 5)))
        left, top = int(rng.integers(0, 7)), int(rng.integers(0, 3))
        hp, wp = int(rng.integers(1, h + 2 * top + 1)), int(rng.integers(1, w + 2 * left + 4))
        wp = -(-wp // stride) * stride  # as the layer allots it: room for every phase's columns
        x, zero_point = _data(rng, (n, h, w, c), i), (0, 128, 255)[i % 3]
        window = np.zeros((n, hp, wp, c), np.int64)
        for y in range(hp):
            for col in range(wp):
                if 0 <= y - top < h and 0 <= col - left < w:
                    window[:, y, col] = x[:, y - top, col - left].astype(np.int64) - zero_point
        got = np.full((n, hp, wp, c), 999, np.int16)
        parts = 1 + i % 4  # in shares of rows, as threads pack it
        for part in range(parts):
            pack(x, got, zero_point, left, top, stride, part, parts)
        phase = -(-wp // stride)
        for col in range(wp):
            at = (col % stride) * phase + col // stride
            assert np.array_equal(got[:, :, at], window[:, :, col]), (i, col)


def test_3x3_depthwise_summing_nine_taps_in_one_pass_equals_the_numpy_route():
    # Multiplier 1 and a 3x3 window: every line's nine taps in one pass (``_nine_taps``), over strides 1-3 in
    # each direction, independent paddings, channel counts off and on the vector width, only 0 and 255 (the
    # largest sums), every fused activation and the 32- and 64-bit epilogues.
    rng = np.random.default_rng(33)
    for i in range(24):
        n, h, w, c = (int(v) for v in (rng.integers(1, 3), rng.integers(3, 15), rng.integers(3, 15),
                                       (1, 7, 8, 16, 24, 33)[i % 6]))
        pads = tuple(int(p) for p in rng.integers(0, 3, 4))
        strides = tuple(int(s) for s in rng.integers(1, 4, 2))
        oh, ow = (h + pads[2] + pads[3] - 3) // strides[1] + 1, (w + pads[0] + pads[1] - 3) // strides[0] + 1
        x, filt = _data(rng, (n, h, w, c), i), _data(rng, (1, 3, 3, c), i + 1)
        bias, quants, act = _bias(rng, c, i), _quants(rng, i), i % 4
        want, got = np.zeros((n, oh, ow, c), np.uint8), np.full((n, oh, ow, c), 7, np.uint8)
        reference.depthwise_conv2d(x, filt, bias, want, pads, strides, 1, act, *quants)
        prepare_depthwise(filt, bias, want.shape, pads, strides, 1, act, *quants)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


def test_3x3_depthwise_over_random_layers_equals_the_numpy_route():
    # The 3x3 route's int16 pairs (two rows' taps per 32-bit lane) and its requantization in registers, 16 lanes
    # a step, beside the 8-lane and one-by-one rest: random sizes up to lines of several segments, channel counts
    # on and off 8 and 16, strides 1 and 2 (and 3) in each direction, every padding 0..2 apart, batches of two
    # (a pair row never reads the next image), zero points 0, 128, 255 and random on each side, multipliers
    # below 1, 1 and above (to a left shift), biases none, small or extreme (the 64-bit epilogue), inputs and
    # weights only 0 and 255 every fourth case, every activation; depth multiplier 2 beside (the general runs).
    rng = np.random.default_rng(36)
    for i in range(60):
        n, c = int(rng.integers(1, 3)), (1, 3, 8, 15, 16, 24, 33, 64)[i % 8]
        h, w = int(rng.integers(3, 12)), int(rng.integers(3, 40 if c < 32 else 14))
        m = 2 if i % 10 == 9 else 1
        pads = tuple(int(p) for p in rng.integers(0, 3, 4))
        strides = ((1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (2, 3))[i % 6]
        oh, ow = (h + pads[2] + pads[3] - 3) // strides[1] + 1, (w + pads[0] + pads[1] - 3) // strides[0] + 1
        x, filt = _data(rng, (n, h, w, c), i), _data(rng, (1, 3, 3, c * m), i)
        bias, quants, act = _bias(rng, c * m, i), _quants(rng, i), int(rng.integers(0, 4))
        want, got = np.zeros((n, oh, ow, c * m), np.uint8), np.full((n, oh, ow, c * m), 7, np.uint8)
        reference.depthwise_conv2d(x, filt, bias, want, pads, strides, m, act, *quants)
        prepare_depthwise(filt, bias, want.shape, pads, strides, m, act, *quants)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


def test_depthwise_lines_longer_than_a_segment_equal_the_numpy_route():
    # Multiplier 1 runs a line in segments of whole pixels (``SEGMENT`` values at most, the weights tiled once per
    # segment): lines of several segments and a partial last one, 3x3 (nine taps in one pass) and other windows,
    # strides 1 and 2, channel counts that divide the segment and that do not.
    rng = np.random.default_rng(35)
    for i, (w, c, kh, kw, stride) in enumerate([(60, 24, 3, 3, 1), (160, 7, 3, 3, 2), (40, 33, 2, 4, 1),
                                                (70, 16, 3, 3, 2), (9, 130, 3, 3, 1), (45, 24, 1, 3, 2)]):
        h = 5
        pads = (1, 1, 1, 0) if i % 2 else (0, 2, 1, 1)
        oh, ow = (h + pads[2] + pads[3] - kh) // stride + 1, (w + pads[0] + pads[1] - kw) // stride + 1
        assert ow * c > SEGMENT or c > SEGMENT // 4
        x, filt = _data(rng, (1, h, w, c), i), _data(rng, (1, kh, kw, c), i + 1)
        bias, quants, act = _bias(rng, c, i + 1), _quants(rng, i + 2), i % 4
        want, got = np.zeros((1, oh, ow, c), np.uint8), np.full((1, oh, ow, c), 7, np.uint8)
        reference.depthwise_conv2d(x, filt, bias, want, pads, (stride, stride), 1, act, *quants)
        prepare_depthwise(filt, bias, want.shape, pads, (stride, stride), 1, act, *quants)(x, got)
        assert np.array_equal(got, want), f"case {i}: {np.argwhere(got != want)[:4].tolist()}"


def test_large_layers_shared_between_threads_equal_the_numpy_route():
    # Big enough for the engine's and the depthwise kernel's helpers (when the machine has them).
    rng = np.random.default_rng(22)
    x = rng.integers(0, 256, (1, 30, 30, 64), dtype=np.uint8)
    quants = ((0.02, 131), (0.01, 117), (0.05, 9))
    filt = rng.integers(0, 256, (96, 1, 1, 64), dtype=np.uint8)
    want, got = np.zeros((1, 30, 30, 96), np.uint8), np.zeros((1, 30, 30, 96), np.uint8)
    reference.conv2d(x, filt, None, want, (0,) * 4, (1, 1), 3, *quants)
    prepare_conv(filt, None, x.shape, want.shape, (0,) * 4, (1, 1), 3, *quants)(x, got)
    assert np.array_equal(got, want)
    dw = rng.integers(0, 256, (1, 3, 3, 64), dtype=np.uint8)
    want, got = np.zeros((1, 30, 30, 64), np.uint8), np.zeros((1, 30, 30, 64), np.uint8)
    reference.depthwise_conv2d(x, dw, None, want, (1,) * 4, (1, 1), 1, 1, *quants)
    prepare_depthwise(dw, None, want.shape, (1,) * 4, (1, 1), 1, 1, *quants)(x, got)
    assert np.array_equal(got, want)


def test_strided_output_views_are_filled():
    rng = np.random.default_rng(23)
    x = rng.integers(0, 256, (1, 5, 5, 4), dtype=np.uint8)
    filt = rng.integers(0, 256, (6, 3, 3, 4), dtype=np.uint8)
    quants = ((0.1, 3), (0.1, 250), (0.3, 128))
    want = np.zeros((1, 3, 3, 6), np.uint8)
    reference.conv2d(x, filt, None, want, (0,) * 4, (1, 1), 0, *quants)
    backing = np.zeros((1, 3, 3, 12), np.uint8)
    prepare_conv(filt, None, x.shape, want.shape, (0,) * 4, (1, 1), 0, *quants)(x, backing[..., ::2])
    assert np.array_equal(backing[..., ::2], want) and not backing[..., 1::2].any()


def test_scale_lane_is_the_requantization_rule_on_edge_values():
    rng = np.random.default_rng(24)
    edges = [0, 1, -1, 2, -2, 3, -3, (1 << 31) - 1, -(1 << 31), 1 << 40, -(1 << 40), (1 << 31) + 5, 12345,
             -12345] + rng.integers(-(1 << 33), 1 << 33, 200).tolist() + rng.integers(-(1 << 16), 1 << 16, 200).tolist()
    for multiplier in MULTIPLIERS + (0.5, 0.75, 2.0 ** -31, 2.0 ** -16):  # 2**-16: ties at every 2**15
        m, shift = quantized_multiplier(multiplier)
        for zero_point, lo, hi in ((0, 0, 255), (128, 0, 255), (255, 0, 255), (100, 100, 255), (7, 3, 20)):
            want = requantize(np.array(edges, np.int64), multiplier, zero_point, lo, hi)
            got = [scale_lane(v, m, shift, zero_point, lo, hi) for v in edges]
            assert got == want.tolist(), multiplier


def test_scale_run_in_32_bit_lanes_is_the_requantization_rule():
    # The epilogue's 32-bit form, for sums with bias inside int32 and shifts 32..62, on edge values: the
    # int32 limits, zero, ties (multipliers 2**-k put a tie at every 2**(k-1)) and random sums.
    rng = np.random.default_rng(26)
    limit = (1 << 31) - 1
    sums = np.array([0, 1, -1, 2, -2, limit - 5, -limit + 5, 1 << 20, -(1 << 20), 3 << 14, -(3 << 14)]
                    + rng.integers(-limit + 10, limit - 10, 300).tolist() + rng.integers(-99999, 99999, 300).tolist(),
                    np.int32)
    bias = np.resize(np.array([0, 5, -5, 1 << 14], np.int32), sums.size)
    for multiplier in (2.0 ** -1 * 0.75, 0.37, 0.0123, 3.1e-5, 2.0 ** -16, 2.0 ** -20, 1e-9, 2.0 ** -31, 1e-13):
        m, shift = quantized_multiplier(multiplier)
        if not 32 <= shift <= 62:
            continue
        for zero_point, lo, hi in ((0, 0, 255), (128, 0, 255), (255, 0, 255), (7, 3, 20)):
            want = requantize(sums.astype(np.int64) + bias, multiplier, zero_point, lo, hi)
            got = np.zeros(sums.size, np.uint8)
            scale_run(got, sums, bias, sums.size, m, 1 << (shift - 1), shift - 32, zero_point, lo, hi)
            assert got.tolist() == want.tolist(), multiplier


@njit
def _requantize_lanes(width, target, sums, bias, m, half, shift_hi, zero_point, lo, hi):
    for i in range(0, sums.size, width):
        if width == 16:
            requantize16(target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi)
        else:
            requantize8(target, sums, bias, i, m, half, shift_hi, zero_point, lo, hi)


@pytest.mark.parametrize("width", [8, 16])
def test_requantization_lanes_are_the_rule_at_both_ends_of_the_multiplier_and_shift(width):
    # The vector form of the 32-bit-lane epilogue (the micro-kernel's and scale_run's): 31-bit multipliers at
    # 2**30, 2**31 - 1 and random, shifts 32 (multipliers just under 1/2), 33, 47, 61 and 62; sums at the int32
    # limits, around zero (ties: m = 2**30 puts one at every 2**(shift - 31)), random; zero points 0, 128, 255
    # and random, each fused activation's range. 16 lanes are AVX-512's vector (two halves here).
    rng = np.random.default_rng(31 + width)
    limit = (1 << 31) - 1
    sums = np.array([limit, -limit, limit - 1, -limit + 1] + list(range(-40, 40)) + rng.integers(
        -limit, limit, 200, endpoint=True).tolist() + rng.integers(-(1 << 20), 1 << 20, 200).tolist(), np.int64)
    sums = np.resize(sums, -(-sums.size // 16) * 16)
    bias = np.where(np.abs(sums) < 1 << 30, rng.integers(-(1 << 16), 1 << 16, sums.size), 0)
    for m in (1 << 30, limit, int(rng.integers(1 << 30, 1 << 31))):
        for shift in (32, 33, 47, 61, 62):
            multiplier = m / 2.0 ** shift
            assert quantized_multiplier(multiplier) == (m, shift)
            for i, zero_point in enumerate((0, 128, 255, int(rng.integers(1, 255)))):
                for act in range(4):
                    lo, hi = quantized_range(act, 0.05 * (i + 1), zero_point)
                    want = requantize(sums + bias, multiplier, zero_point, lo, hi)
                    got = np.full(sums.size, 7, np.uint8)
                    _requantize_lanes(width, got, sums.astype(np.int32), bias.astype(np.int32), m, 1 << (shift - 1),
                                      shift - 32, zero_point, lo, hi)
                    assert np.array_equal(got, want), (m, shift, zero_point, act, np.argwhere(got != want)[:3])
                    tail = sums.size - 3  # scale_run: 16 lanes, then 8, then one by one
                    got[:] = 7
                    scale_run(got, sums.astype(np.int32), bias.astype(np.int32), tail, m, 1 << (shift - 1), shift - 32,
                              zero_point, lo, hi)
                    assert np.array_equal(got[:tail], want[:tail]) and (got[tail:] == 7).all()


@pytest.mark.parametrize("channels", [1, 2, 3, 4, 5, 7, 8, 16])
def test_packed_offsets_are_the_padded_input_less_its_zero_point(channels):
    rng = np.random.default_rng(27 + channels)
    x = rng.integers(0, 256, (2, 5, 6, channels), dtype=np.uint8)
    depth = channels + channels % 2
    for left, top, height, width in ((0, 0, 5, 6), (1, 2, 9, 8), (2, 1, 4, 3), (0, 1, 7, 9), (7, 0, 3, 4)):
        want = np.zeros((2, height, width, depth), np.int64)
        for y in range(height):
            for i in range(width):
                if 0 <= y - top < 5 and 0 <= i - left < 6:
                    want[:, y, i, :channels] = x[:, y - top, i - left].astype(np.int64) - 131
        got = pack_offsets(x, 131, left, top, height, width, depth)
        assert got.dtype == np.int16 and np.array_equal(got, want), (left, top, height, width)
    strided = pack_offsets(x[:, ::2], 131, 0, 0, 3, 6, depth)  # a view: packed from a contiguous copy
    assert np.array_equal(strided[..., :channels], x[:, ::2].astype(np.int64) - 131)


def test_depthwise_refuses_windows_beyond_the_int32_accumulator():
    with pytest.raises(ValueError, match="taps"):
        prepare_depthwise(np.zeros((1, 200, 200, 1), np.uint8), None, (1, 1, 1, 1), (0,) * 4, (1, 1), 1, 0,
                          (1.0, 0), (1.0, 0), (1.0, 0))


def test_uint8_pooling_equals_the_float64_route():
    rng = np.random.default_rng(25)
    for i in range(30):
        n, h, w, c = (int(v) for v in (rng.integers(1, 3), rng.integers(1, 10), rng.integers(1, 10),
                                       rng.integers(1, 40)))
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        pads = tuple(int(p) for p in rng.integers(0, 3, 4))
        if h + pads[2] + pads[3] < kh or w + pads[0] + pads[1] < kw:
            continue
        strides = tuple(int(s) for s in rng.integers(1, 4, 2))
        shape = (n, (h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1, c)
        x = _data(rng, (n, h, w, c), i)
        quant_in = (float(np.float32(rng.uniform(0.001, 0.5))), _zero(rng, i))
        quant_out = quant_in if i % 3 == 0 else (float(np.float32(rng.uniform(0.001, 0.5))), _zero(rng, i + 1))
        for mode in (nhwc_pooling.AVERAGE, nhwc_pooling.MAX):
            want, got = np.zeros(shape, np.uint8), np.full(shape, 7, np.uint8)
            nhwc_pooling.pool2d(x, want, mode, pads, strides, (kw, kh), i % 4, quant_in, quant_out)
            prepare_pool(mode == nhwc_pooling.MAX, shape, pads, strides, (kw, kh), i % 4, quant_in, quant_out)(x, got)
            assert np.array_equal(got, want), f"case {i}, mode {mode}"


@pytest.mark.parametrize("cpu, selected", [("generic", "lanes_are_the_rule or scale_run or phase or segment or 3x3"),
                                           ("haswell", "3x3")], ids=["generic", "haswell"])  # no inner -k may select this test itself
def test_the_vector_epilogue_and_packers_give_the_same_bits_compiled_for_a_cpu_without_avx(tmp_path, cpu,
                                                                                          selected):
    # The requantization lanes, the depthwise packers and the 3x3 depthwise pairs are generic LLVM IR: compiled
    # for baseline x86-64 (SSE2: NUMBA_CPU_NAME=generic, its own kernel cache) and for AVX2 without AVX-512
    # (haswell: the pairs' vpmaddwd on 256-bit vectors) the tests above of them still pass.
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, OPENVX_NN_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__, "-k",
                           selected], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
