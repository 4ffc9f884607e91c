"""QUANTIZED_16BIT_LSTM in plain NumPy integers, for the tests.

The header fixes the operands' quantizations (activations at scale 1/128 and zero point 128, the cell state at
2^4 / 32768 = 2^-11, the biases at the input's scale times the weights') but not the integer steps between them;
Android's CPU driver computes them as TensorFlow Lite's ``LstmCell<4>`` on gemmlowp's 16-bit fixed point, and so
are they written here, one NumPy expression per step of gemmlowp's ``fixedpoint.h`` (whole arrays at once, int64
values holding int16 or int32 ones; nothing of ``openvx_nn`` is used):

- the gate sums ``bias + sum (x - 128) (w - w_zero)`` wrap as int32, are scaled by ``4096 * bias_scale`` (a
  31-bit multiplier and a shift: ``MultiplyByQuantizedMultiplier``) and saturated to int16: Q3.12 values;
- input, forget and output gates are gemmlowp's ``logistic``, the modulation its ``tanh`` (Q0.15 results);
- ``c = SaturatingAdd(Rescale<4>(i * g), c_prev * f)`` in Q4.11 (the cell state, saturated at int16);
- ``h = 128 + clamp(RoundingDivideByPOT(o * tanh(c), 8), -128, 127)``.
"""
from __future__ import annotations

import math

import numpy as np

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1
I32_MIN = -(1 << 31)


def wrap16(v):
    return ((np.asarray(v, np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def wrap32(v):
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def c_divide(n, d):
    """C's integer division, toward zero."""
    n = np.asarray(n, np.int64)
    return np.sign(n) * (np.abs(n) // d)


def rounding_divide_by_pot(x, exponent):
    """``RoundingDivideByPOT``: x / 2^exponent, rounded to nearest, ties away from zero."""
    x = np.asarray(x, np.int64)
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def high_mul16(a, b):
    """``SaturatingRoundingDoublingHighMul`` of int16 values: round(a * b / 2^15), -1 * -1 saturated."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    product = c_divide(ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14)), 1 << 15)
    return np.where((a == I16_MIN) & (b == I16_MIN), I16_MAX, product)


def high_mul32(a, b):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    product = c_divide(ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30)), 1 << 31)
    return np.where((a == I32_MIN) & (b == I32_MIN), (1 << 31) - 1, product)


def times_pot16(x, exponent):
    """``SaturatingRoundingMultiplyByPOT`` on int16."""
    x = np.asarray(x, np.int64)
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (15 - exponent)) - 1
    return np.where(x > threshold, I16_MAX, np.where(x < -threshold, I16_MIN, wrap16(x << exponent)))


def constant16(raw32):
    """A gemmlowp constant given by its int32 raw value, as int16 (``RescaleConstantInitializer``)."""
    return int(rounding_divide_by_pot(raw32, 16))


def _exp_on_quarter(a):
    """exp(a) for a Q0.15 ``a`` in [-1/4, 0): the 4th-order Taylor expansion around -1/8."""
    e_minus_eighth, third = constant16(1895147668), constant16(715827883)
    x = wrap16(a + (1 << 12))
    x2 = high_mul16(x, x)
    x3 = high_mul16(x2, x)
    x4_over_4 = times_pot16(high_mul16(x2, x2), -2)
    tail = times_pot16(wrap16(high_mul16(wrap16(x4_over_4 + x3), third) + x2), -1)
    return np.clip(e_minus_eighth + high_mul16(e_minus_eighth, wrap16(x + tail)), I16_MIN, I16_MAX)


BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401), (4, 242))
"""exp(-2^k) as gemmlowp's int32 raw Q0.31 values, k from -2 to 4."""


def exp_on_negative_values(a, integer_bits):
    """exp(a) of a non-positive Q(integer_bits).(15 - integer_bits) value, in Q0.15."""
    a = np.asarray(a, np.int64)
    fractional = 15 - integer_bits
    quarter = 1 << (fractional - 2)
    reduced = wrap16((a & (quarter - 1)) - quarter)  # a mod 1/4, minus 1/4: in [-1/4, 0)
    result = _exp_on_quarter(times_pot16(reduced, integer_bits))
    remainder = wrap16(reduced - a)  # what a lacks beyond that: a sum of powers of two, each a factor exp(-2^k)
    for k, raw in BARREL:
        if integer_bits > k:
            result = np.where(remainder & (1 << (fractional + k)), high_mul16(result, constant16(raw)), result)
    return np.where(a == 0, I16_MAX, result)


def _newton_steps(a):
    """1 / (1 + a) for a Q0.15 ``a`` in [0, 1], as Q2.13: three Newton-Raphson steps from 48/17 - 32/17 d."""
    total = a + I16_MAX
    half = c_divide(total + np.where(total >= 0, 1, -1), 2)  # RoundingHalfSum(a, 1)
    x = wrap16(constant16(1515870810) + high_mul16(half, constant16(-1010580540)))
    for _ in range(3):
        error = wrap16((1 << 13) - high_mul16(half, x))
        x = wrap16(x + times_pot16(high_mul16(x, error), 2))
    return x


def logistic(a, integer_bits):
    a = np.asarray(a, np.int64)
    magnitude = np.where(a > 0, a, wrap16(-a))
    positive = times_pot16(_newton_steps(exp_on_negative_values(wrap16(-magnitude), integer_bits)), 1)
    return np.where(a == 0, 1 << 14, np.where(a > 0, positive, wrap16(I16_MAX - positive)))


def tanh(a, integer_bits):
    a = np.asarray(a, np.int64)
    negative_part = np.where(a < 0, a, wrap16(-a))
    t = times_pot16(wrap16(_newton_steps(exp_on_negative_values(negative_part, integer_bits + 1)) - (1 << 13)), 2)
    return np.where(a == 0, 0, np.where(a < 0, wrap16(-t), t))


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TensorFlow Lite's ``QuantizeMultiplier``: real = m * 2^(shift - 31), m rounded half away from zero."""
    fraction, shift = math.frexp(real)
    m = int(math.copysign(math.floor(abs(fraction) * 2 ** 31 + 0.5), fraction))
    if m == 1 << 31:
        m, shift = m // 2, shift + 1
    return m, shift


def cell(x, h, c, w_x, w_h, bias, weights_zero, bias_scale):
    """One step: uint8 ``x [B, I]``, ``h [B, O]``, int16 ``c [B, O]``, uint8 ``w_x [4][O, I]``, ``w_h [4][O, O]``
    and int32 ``bias [4][O]`` (gates input, forget, cell, output) -> (int16 cell state, uint8 output)."""
    m, shift = quantize_multiplier(4096.0 * bias_scale)
    xs, hs = np.asarray(x, np.int64) - 128, np.asarray(h, np.int64) - 128
    pre = []
    for g in range(4):
        acc = wrap32(np.asarray(bias[g], np.int64) + xs @ (np.asarray(w_x[g], np.int64) - weights_zero).T
                     + hs @ (np.asarray(w_h[g], np.int64) - weights_zero).T)
        scaled = rounding_divide_by_pot(high_mul32(wrap32(acc << max(shift, 0)), m), max(-shift, 0))
        pre.append(np.clip(scaled, I16_MIN, I16_MAX))
    input_gate, forget_gate, output_gate = logistic(pre[0], 3), logistic(pre[1], 3), logistic(pre[3], 3)
    modulation = tanh(pre[2], 3)
    state = np.clip(times_pot16(high_mul16(input_gate, modulation), -4) + high_mul16(np.asarray(c, np.int64),
                                                                                    forget_gate), I16_MIN, I16_MAX)
    activation = rounding_divide_by_pot(high_mul16(output_gate, tanh(state, 4)), 8)
    return state.astype(np.int16), (128 + np.clip(activation, -128, 127)).astype(np.uint8)
