"""NNAPI's QUANTIZED_16BIT_LSTM cell in integers: gemmlowp's 16-bit fixed-point arithmetic, as TensorFlow Lite's
``LstmCell<4>`` and Android's reference compute it.

Each gate's sum ``bias + sum (x - 128) * (w - w_zero)`` over the input and the previous output is brought to Q3.12
(int16) by NNAPI's doubling high multiply and rounding shift (the multiplier ``4096 * bias_scale``); the gates take
gemmlowp's fixed-point logistic and tanh (Q0.15 results); the cell state is Q4.11 (scale 2^-11, TENSOR_QUANT16_SYMM),
the output uint8 at scale 1/128, zero point 128. Values are int64 here, wrapped or saturated to int16 where
gemmlowp's int16 operations wrap or saturate.
"""
from __future__ import annotations

import math

import numpy as np

from ..support import jit


@jit.kernel
def _wrap16(x):
    return ((x + 32768) & 0xFFFF) - 32768


@jit.kernel
def _sat16(x):
    return min(max(x, -32768), 32767)


@jit.kernel
def _tdiv(n, d):
    """C's integer division (toward zero)."""
    q = abs(n) // d
    return q if n >= 0 else -q


@jit.kernel
def rounding_divide_by_pot(x, exponent):
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


@jit.kernel
def _mul16(a, b):
    """gemmlowp's int16 saturating rounding doubling high multiply (a fixed-point product)."""
    if a == -32768 and b == -32768:
        return 32767
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return _tdiv(ab + nudge, 1 << 15)


@jit.kernel
def _pot16(x, exponent):
    """gemmlowp's SaturatingRoundingMultiplyByPOT on int16."""
    if exponent > 0:
        threshold = (1 << (15 - exponent)) - 1
        if x > threshold:
            return 32767
        if x < -threshold:
            return -32768
        return _wrap16(x << exponent)
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    return x


@jit.kernel
def _constant16(raw32):
    """gemmlowp's int32 constants taken to int16 (rounded division by 2^16)."""
    return rounding_divide_by_pot(raw32, 16)


@jit.kernel
def _exp_quarter(a):
    """exp on [-1/4, 0) in Q0.15: the Taylor expansion around -1/8."""
    constant_term = _constant16(1895147668)
    one_third = _constant16(715827883)
    x = _wrap16(a + (1 << 12))
    x2 = _mul16(x, x)
    x3 = _mul16(x2, x)
    x4 = _mul16(x2, x2)
    x4_over_4 = _pot16(x4, -2)
    poly = _pot16(_wrap16(_mul16(_wrap16(x4_over_4 + x3), one_third) + x2), -1)
    return _sat16(constant_term + _mul16(constant_term, _wrap16(x + poly)))


@jit.kernel
def exp_on_negative_values(a, integer_bits):
    """exp of a non-positive Q(integer_bits).(15 - integer_bits) value, in Q0.15."""
    fractional = 15 - integer_bits
    quarter = 1 << (fractional - 2)
    a_mod = _wrap16((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_pot16(a_mod, integer_bits))
    remainder = _wrap16(a_mod - a)
    multipliers = (1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)
    for k in range(7):
        exponent = k - 2
        if integer_bits > exponent and remainder & (1 << (fractional + exponent)):
            result = _mul16(result, _constant16(multipliers[k]))
    return 32767 if a == 0 else result


@jit.kernel
def _newton_reciprocal(a):
    """Three Newton-Raphson steps of 1 / (1 + a) / 2 for a in [0, 1] (Q0.15 in, Q2.13 out); and the half sum."""
    half_denominator = _tdiv(a + 32767 + (1 if a + 32767 >= 0 else -1), 2)
    x = _wrap16(_constant16(1515870810) + _mul16(half_denominator, _constant16(-1010580540)))
    for _ in range(3):
        one_minus = _wrap16((1 << 13) - _mul16(half_denominator, x))
        x = _wrap16(x + _pot16(_mul16(x, one_minus), 2))
    return x


@jit.kernel
def logistic(a, integer_bits):
    """gemmlowp's logistic of a Q(integer_bits) int16 value, in Q0.15."""
    if a == 0:
        return 1 << 14
    positive = a > 0
    magnitude = a if positive else _wrap16(-a)
    r = _pot16(_newton_reciprocal(exp_on_negative_values(_wrap16(-magnitude), integer_bits)), 1)
    return r if positive else _wrap16(32767 - r)


@jit.kernel
def tanh(a, integer_bits):
    """gemmlowp's tanh of a Q(integer_bits) int16 value, in Q0.15."""
    if a == 0:
        return 0
    negative = a < 0
    n = a if negative else _wrap16(-a)
    x = _newton_reciprocal(exp_on_negative_values(n, integer_bits + 1))
    t = _pot16(_wrap16(x - (1 << 13)), 2)
    return _wrap16(-t) if negative else t


@jit.kernel
def _multiply_by_quantized_multiplier(x, multiplier, shift):
    left = max(0, shift)
    right = max(0, -shift)
    v = ((x << left) + (1 << 31)) % (1 << 32) - (1 << 31)
    if v == -(1 << 31) and multiplier == -(1 << 31):
        high = (1 << 31) - 1
    else:
        ab = v * multiplier
        nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
        high = _tdiv(ab + nudge, 1 << 31)
    return rounding_divide_by_pot(high, right)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(m, shift) with real = m * 2^(shift - 31), m a 31-bit integer rounded half away from zero (TFLite's)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    fixed = math.floor(abs(q) * (1 << 31) + 0.5) * (1 if q >= 0 else -1)
    if fixed == 1 << 31:
        fixed //= 2
        shift += 1
    return fixed, shift


@jit.kernel
def lstm_cell(x, h_prev, w_x, w_h, bias, weights_zero, multiplier, shift, c_prev, c_out, h_out):
    """``x [B, I]`` and ``h_prev [B, O]`` uint8 values (zero point 128), ``w_x [4, O, I]`` and ``w_h [4, O, O]`` uint8
    values, ``bias [4, O]`` int32 values (all as int64 arrays) (gates input, forget, cell, output), ``c_prev`` int16 Q4.11 -> ``c_out`` int16, ``h_out``
    uint8."""
    batch, inputs = x.shape
    outs = h_prev.shape[1]
    pre = np.zeros(4, np.int64)
    for b in range(batch):
        for c in range(outs):
            for g in range(4):
                acc = bias[g, c]
                for i in range(inputs):
                    acc += (x[b, i] - 128) * (w_x[g, c, i] - weights_zero)
                for o in range(outs):
                    acc += (h_prev[b, o] - 128) * (w_h[g, c, o] - weights_zero)
                acc = ((acc + (1 << 31)) % (1 << 32)) - (1 << 31)
                pre[g] = _sat16(_multiply_by_quantized_multiplier(acc, multiplier, shift))
            input_gate = logistic(pre[0], 3)
            forget_gate = logistic(pre[1], 3)
            modulation = tanh(pre[2], 3)
            output_gate = logistic(pre[3], 3)
            state = _sat16(_pot16(_mul16(input_gate, modulation), -4) + _mul16(forget_gate, c_prev[b, c]))
            c_out[b, c] = state
            activ = rounding_divide_by_pot(_mul16(output_gate, tanh(state, 4)), 8)
            h_out[b, c] = 128 + min(max(activ, -128), 127)
