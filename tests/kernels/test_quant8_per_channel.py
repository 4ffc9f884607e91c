"""Per-channel quantized convolutions (NNAPI's TENSOR_QUANT8_SYMM_PER_CHANNEL filter: int8, zero point 0, a
scale per output channel) on the integer engine (``engine/nhwc.py``, every instruction set this CPU runs) and the
uint8 depthwise kernel (``quant8_depthwise``), against a NumPy reference written from NNAPI's text and
docs/fixed-point.md, and bit for bit against the exact loop they replace (``conv2d_per_channel``).

Randomized shapes, strides, asymmetric paddings, depth multipliers and zero points; per-channel multipliers
``s_in * s_filter[o] / s_out`` from ones every value rounds to zero up to ones above 2**31 (a negative shift),
mixed within a layer; saturating data (only 0 and 255, filters at -128 and 127, biases at the int32 extremes)
and all four fused activations.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from openvx_nn.kernels.engine import isa
from openvx_nn.kernels.frontend import nhwc_convolution as loop
from openvx_nn.kernels.frontend.quant8_convolution import prepare_conv_per_channel
from openvx_nn.kernels.frontend.quant8_depthwise import prepare_depthwise

ROUTES = [pytest.param(name, id=name, marks=pytest.mark.skipif(name not in isa.available(),
                                                               reason=f"this CPU has no {name}"))
          for name in isa.ISAS]
# real multipliers: every value rounds to 0, small, below 1, 1, above 1, above 2**31 (a left shift)
MULTIPLIERS = np.array([1e-13, 3.1e-5, 0.0123, 0.37, 1.0, 3.7, 2.0 ** 33])


# ---- the reference, from the specification's text ----------------------------------------------------------

def _fixed_point(real: float) -> tuple[int, int]:
    """``real = m * 2**-shift`` with a 31-bit ``m`` (2**30 <= m < 2**31), m rounded to nearest."""
    fraction, exponent = math.frexp(real)  # real = fraction * 2**exponent, 0.5 <= fraction < 1
    m = round(fraction * 2 ** 31)
    if m == 2 ** 31:
        m, exponent = m // 2, exponent + 1
    return m, 31 - exponent


def _requantize(acc: int, real: float, zero_point: int, lo: int, hi: int) -> int:
    """One accumulator to the output: clamped to int32, times m, divided by 2**shift rounded half away from zero
    (a negative shift: the product clamped to +-2**40, then multiplied by 2**-shift), plus the zero point,
    clamped to the activation's [lo, hi]. Python integers: nothing wraps."""
    m, shift = _fixed_point(real)
    product = max(-(2 ** 31 - 1), min(acc, 2 ** 31 - 1)) * m
    if shift <= 0:
        value = max(-(2 ** 40), min(product, 2 ** 40)) * 2 ** -shift if shift < 0 else product
    else:
        magnitude = (abs(product) + 2 ** (shift - 1)) // 2 ** shift
        value = magnitude if product >= 0 else -magnitude
    return max(lo, min(value + zero_point, hi))


def _range(activation: int, scale: float, zero_point: int) -> tuple[int, int]:
    """NNAPI's fused activation as a raw [lo, hi]: NONE, RELU, RELU1, RELU6."""
    def q(real):
        v = real / scale
        return zero_point + math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)
    return {0: (0, 255), 1: (max(0, zero_point), 255), 2: (max(0, q(-1.0)), min(255, q(1.0))),
            3: (max(0, zero_point), min(255, q(6.0)))}[activation]


def _reference(x, w, bias, pads, strides, multiplier, activation, quant_in, scales, quant_out, out_hw):
    """out[b, y, x, o] from the sums over the window of (x - zx) * w (padding: zx, a real zero), plus bias[o];
    ``multiplier`` 0: w [O, KH, KW, C]; else depthwise, w [1, KH, KW, C * multiplier], channel o reads input
    o // multiplier."""
    left, right, top, bottom = pads
    padded = np.pad(x.astype(np.int64) - quant_in[1], ((0, 0), (top, bottom), (left, right), (0, 0)))
    n, (oh, ow) = x.shape[0], out_hw
    units = w.shape[3] if multiplier else w.shape[0]
    _, kh, kw, _ = w.shape
    lo, hi = _range(activation, *quant_out)
    out = np.zeros((n, oh, ow, units), np.uint8)
    for o in range(units):
        real = quant_in[0] * float(scales[o]) / quant_out[0]
        for b in range(n):
            for y in range(oh):
                for xx in range(ow):
                    window = padded[b, y * strides[1]: y * strides[1] + kh, xx * strides[0]: xx * strides[0] + kw]
                    if multiplier:
                        acc = int((window[..., o // multiplier] * w[0, ..., o].astype(np.int64)).sum())
                    else:
                        acc = int((window * w[o].astype(np.int64)).sum())
                    acc += 0 if bias is None else int(bias[o])
                    out[b, y, xx, o] = _requantize(acc, real, quant_out[1], lo, hi)
    return out


# ---- randomized cases ----------------------------------------------------------------------------------------

def _case(rng, i: int, depthwise: bool):
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
    c = int(rng.integers(1, 12))
    multiplier = int(rng.integers(1, 4)) if depthwise else 0
    units = c * multiplier if depthwise else int(rng.integers(1, 40))
    kh, kw = int(rng.integers(1, min(h, 4) + 1)), int(rng.integers(1, min(w, 4) + 1))
    if i % 5 == 0:
        kh, kw = min(h, 3), min(w, 3)
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))  # left, right, top, bottom
    strides = tuple(int(s) for s in rng.integers(1, 4, 2))  # width, height
    out_hw = ((h + pads[2] + pads[3] - kh) // strides[1] + 1, (w + pads[0] + pads[1] - kw) // strides[0] + 1)
    saturate = i % 4 == 3
    if saturate:
        x = (rng.integers(0, 2, (n, h, w, c)) * 255).astype(np.uint8)
    else:
        x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    shape = (1, kh, kw, units) if depthwise else (units, kh, kw, c)
    filt = (rng.choice([-128, 127], shape) if saturate else rng.integers(-128, 128, shape)).astype(np.int8)
    limit = (1 << 31) - 1 if i % 3 == 2 else 1 << 16
    bias = None if i % 3 == 0 else rng.integers(-limit, limit, units, endpoint=True).astype(np.int32)
    s_in = float(rng.uniform(0.005, 0.05))
    s_out = float(rng.uniform(0.005, 0.05))
    # each channel's multiplier drawn from MULTIPLIERS (times a jitter): shifts of both signs in one layer
    picked = MULTIPLIERS[rng.integers(0, len(MULTIPLIERS), units)] * rng.uniform(0.8, 1.25, units)
    scales = (picked * s_out / s_in).astype(np.float32)
    zero_in, zero_out = int(rng.choice([0, 128, 255, int(rng.integers(0, 256))])), int(rng.integers(0, 256))
    return (x, filt, bias, pads, strides, multiplier, i % 4, (s_in, zero_in), scales, (s_out, zero_out), out_hw)


def _check(got, want, loop_out, what):
    np.testing.assert_array_equal(got, loop_out, err_msg=f"{what}: differs from conv2d_per_channel")
    np.testing.assert_array_equal(got, want, err_msg=f"{what}: differs from the reference")


@pytest.mark.parametrize("route", ROUTES)
def test_per_channel_conv2d_on_the_engine_equals_the_reference_and_the_loop(route):
    rng = np.random.default_rng(7)
    for i in range(24):
        x, filt, bias, pads, strides, _, act, q_in, scales, q_out, out_hw = _case(rng, i, False)
        want = _reference(x, filt, bias, pads, strides, 0, act, q_in, scales, q_out, out_hw)
        loop_out = np.zeros_like(want)
        loop.conv2d_per_channel(x, filt, bias, loop_out, pads, strides, 0, act, q_in, scales, q_out)
        got = np.full_like(want, 77)
        prepare_conv_per_channel(filt, bias, x.shape, want.shape, pads, strides, act, q_in, scales, q_out,
                                 isa=route)(x, got)
        _check(got, want, loop_out, f"case {i}, {route}")


@pytest.mark.parametrize("route", [r for r in ROUTES if r.values[0] != "generic"])
def test_per_channel_conv2d_sums_past_one_int32_block_are_exact(route):
    """A window long enough that the engine adds its int32 blocks in int64 (and the sum passes the int32
    clamp): the per-channel epilogue on that route too."""
    rng = np.random.default_rng(11)
    c, units = 7500, 5
    x = np.full((1, 3, 3, c), 255, np.uint8)
    x[0, 1, 1, : c // 3] = 0
    filt = np.where(rng.integers(0, 8, (units, 3, 3, c)) == 0, 127, -128).astype(np.int8)
    scales = np.array([1e-9, 0.02, 1.3, 5.0, 1e-3], np.float32)
    q_in, q_out = (0.01, 0), (0.02, 100)
    bias = np.array([0, -(1 << 31), 5, (1 << 31) - 1, 12345], np.int32)
    want = _reference(x, filt, bias, (1, 1, 1, 1), (1, 1), 0, 0, q_in, scales, q_out, (3, 3))
    got = np.zeros_like(want)
    prepare_conv_per_channel(filt, bias, x.shape, want.shape, (1, 1, 1, 1), (1, 1), 0, q_in, scales, q_out,
                             isa=route)(x, got)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(want)) > 2  # not only saturated values


def test_per_channel_depthwise_equals_the_reference_and_the_loop():
    rng = np.random.default_rng(8)
    for i in range(30):
        x, filt, bias, pads, strides, m, act, q_in, scales, q_out, out_hw = _case(rng, i, True)
        want = _reference(x, filt, bias, pads, strides, m, act, q_in, scales, q_out, out_hw)
        loop_out = np.zeros_like(want)
        loop.conv2d_per_channel(x, filt, bias, loop_out, pads, strides, m, act, q_in, scales, q_out)
        got = np.full_like(want, 77)
        prepare_depthwise(filt, bias, want.shape, pads, strides, m, act, q_in, None, q_out, scales=scales)(x, got)
        _check(got, want, loop_out, f"case {i}")


@pytest.mark.parametrize("stride", [1, 2])
def test_per_channel_depthwise_3x3_lines_longer_than_a_segment(stride):
    """MobileNet's shape: 3x3, multiplier 1, lines of more than one segment (the nine-tap runs)."""
    rng = np.random.default_rng(9 + stride)
    c, h = 48, 16
    x = rng.integers(0, 256, (1, h, h, c), dtype=np.uint8)
    filt = rng.integers(-128, 128, (1, 3, 3, c)).astype(np.int8)
    bias = rng.integers(-5000, 5000, c).astype(np.int32)
    scales = (rng.choice(MULTIPLIERS[1:6], c) * 0.02 / 0.01).astype(np.float32)
    q_in, q_out = (0.01, 128), (0.02, 3)
    out_hw = ((h + 2 - 3) // stride + 1,) * 2
    want = _reference(x, filt, bias, (1, 1, 1, 1), (stride, stride), 1, 3, q_in, scales, q_out, out_hw)
    got = np.zeros_like(want)
    prepare_depthwise(filt, bias, want.shape, (1, 1, 1, 1), (stride, stride), 1, 3, q_in, None, q_out,
                      scales=scales)(x, got)
    np.testing.assert_array_equal(got, want)


def test_per_channel_depthwise_3x3_over_random_layers_equals_the_reference():
    """The 3x3 route's int16 pairs with each channel's own multiplier and shift (its sums stored, then the
    per-channel epilogue): random sizes, channel counts on and off 8, strides 1 and 2 in each direction,
    paddings, zero points 0 and 255, only -128/127 weights and 0/255 inputs every third case."""
    rng = np.random.default_rng(12)
    for i in range(16):
        n, c, h, w = int(rng.integers(1, 3)), (5, 8, 16, 33)[i % 4], int(rng.integers(3, 10)), int(rng.integers(3, 30))
        pads = tuple(int(p) for p in rng.integers(0, 3, 4))
        strides = ((1, 1), (2, 2), (1, 2), (2, 1))[i // 4]
        out_hw = ((h + pads[2] + pads[3] - 3) // strides[1] + 1, (w + pads[0] + pads[1] - 3) // strides[0] + 1)
        edge = i % 3 == 2
        x = ((rng.integers(0, 2, (n, h, w, c)) * 255).astype(np.uint8) if edge
             else rng.integers(0, 256, (n, h, w, c), dtype=np.uint8))
        filt = (rng.choice([-128, 127], (1, 3, 3, c)) if edge else rng.integers(-128, 128, (1, 3, 3, c))).astype(np.int8)
        bias = None if i % 3 == 0 else rng.integers(-(1 << 16), 1 << 16, c).astype(np.int32)
        picked = MULTIPLIERS[rng.integers(0, len(MULTIPLIERS), c)] * rng.uniform(0.8, 1.25, c)
        q_in, q_out = (0.01, (0, 255, 128)[i % 3]), (0.02, (255, 0, 77)[i % 3])
        scales = (picked * q_out[0] / q_in[0]).astype(np.float32)
        want = _reference(x, filt, bias, pads, strides, 1, i % 4, q_in, scales, q_out, out_hw)
        got = np.full_like(want, 77)
        prepare_depthwise(filt, bias, want.shape, pads, strides, 1, i % 4, q_in, None, q_out, scales=scales)(x, got)
        np.testing.assert_array_equal(got, want, err_msg=f"case {i}")
