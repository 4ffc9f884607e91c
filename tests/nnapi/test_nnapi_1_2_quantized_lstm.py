"""QUANTIZED_16BIT_LSTM: uint8 activations (scale 1/128, zero point 128), a TENSOR_QUANT16_SYMM cell state
(scale 2^-11), against the LSTM's real-valued equations on the dequantized operands (the header's text gives the
ranges, not the integer steps: the result must be the real LSTM's within the fixed-point functions' error and the
output's quantization), and the header's quantization rules refused when broken."""
from __future__ import annotations

import math

import numpy as np
import pytest
from nnapi_harness import I32T, Q8, Out, Tensor, refused, run

from openvx_nn import nnapi
from openvx_nn.kernels.frontend import quant16_lstm

OP = nnapi.OperationType
Q16 = nnapi.OperandType.TENSOR_QUANT16_SYMM
ACT, STATE = (1.0 / 128, 128), (2.0 ** -11, 0)


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def real_lstm(x, h, c, w_x, w_h, b):
    """Gates input, forget, cell, output of NNAPI's LSTM without peepholes or projection, tanh activation."""
    pre = [x @ w_x[g].T + h @ w_h[g].T + b[g] for g in range(4)]
    c_new = sigmoid(pre[1]) * c + sigmoid(pre[0]) * np.tanh(pre[2])
    return c_new, sigmoid(pre[3]) * np.tanh(c_new)


def test_the_fixed_point_logistic_and_tanh_are_the_real_functions_within_2_to_the_minus_11():
    for bits in (3, 4):
        for raw in range(-32768, 32768, 13):
            v = raw / 2.0 ** (15 - bits)
            assert abs(quant16_lstm.logistic(raw, bits) / 32768 - 1 / (1 + math.exp(-v))) < 2 ** -11
            assert abs(quant16_lstm.tanh(raw, bits) / 32768 - math.tanh(v)) < 2 ** -11
    assert quant16_lstm.logistic(0, 3) == 16384 and quant16_lstm.tanh(0, 3) == 0


def _operands(rng, batch, size, units, w_scale, w_zero, b_range):
    w = [rng.integers(0, 256, (units, n)).astype(np.uint8) for n in (size,) * 4 + (units,) * 4]
    b = [rng.integers(-b_range, b_range + 1, units).astype(np.int32) for _ in range(4)]
    x = rng.integers(0, 256, (batch, size)).astype(np.uint8)
    h = rng.integers(0, 256, (batch, units)).astype(np.uint8)
    c = rng.integers(-12000, 12001, (batch, units)).astype(np.int16)
    inputs = ([Tensor(x, *ACT)] + [Tensor(a, w_scale, w_zero, const=True) for a in w]
              + [Tensor(a, w_scale / 128, 0, const=True) for a in b] + [Tensor(c, *STATE, kind=Q16), Tensor(h, *ACT)])
    return inputs, (x, h, c, w, b)


@pytest.mark.parametrize("seed", range(8))
def test_quantized_16bit_lstm_is_the_real_lstm_within_the_fixed_point_error(seed):
    rng = np.random.default_rng(73 + seed)
    batch, size, units = (int(v) for v in rng.integers(1, 6, 3))
    w_scale = float(np.float32(rng.uniform(0.002, 0.06)))
    w_zero = int(rng.integers(100, 156))
    inputs, (x, h, c, w, b) = _operands(rng, batch, size, units, w_scale, w_zero, 3000)
    c_out, out = run(OP.QUANTIZED_16BIT_LSTM, inputs, [Out(Q16, (batch, units), *STATE), Out(Q8, (batch, units), *ACT)])
    real = [(a.astype(np.float64) - w_zero) * w_scale for a in w]
    want_c, want_h = real_lstm((x - 128.0) / 128, (h - 128.0) / 128, c * 2.0 ** -11, real[:4], real[4:],
                               [a * (w_scale / 128) for a in b])
    assert np.abs(want_c).max() < 16  # inside the cell state's range
    np.testing.assert_allclose(c_out * 2.0 ** -11, want_c, rtol=0, atol=3e-3)
    want_q = np.clip(np.round(want_h * 128) + 128, 0, 255)
    assert np.abs(out.astype(int) - want_q).max() <= 1


def test_the_headers_quantization_rules_are_refused_naming_the_operand():
    rng = np.random.default_rng(5)
    outs = [Out(Q16, (1, 2), *STATE), Out(Q8, (1, 2), *ACT)]
    inputs, _ = _operands(rng, 1, 3, 2, 0.02, 128, 10)
    inputs[0] = Tensor(inputs[0].value, 0.01, 128)
    assert "input 0 (input) has scale and zero point (0.01" in refused(OP.QUANTIZED_16BIT_LSTM, inputs, outs)
    inputs, _ = _operands(rng, 1, 3, 2, 0.02, 128, 10)
    inputs[6] = Tensor(inputs[6].value, 0.03, 128, const=True)
    assert "input 6 has scale and zero point" in refused(OP.QUANTIZED_16BIT_LSTM, inputs, outs)
    inputs, _ = _operands(rng, 1, 3, 2, 0.02, 128, 10)
    inputs[10] = Tensor(inputs[10].value, 0.5, 0, const=True, kind=I32T)
    assert "input 10 (bias)" in refused(OP.QUANTIZED_16BIT_LSTM, inputs, outs)
    inputs, _ = _operands(rng, 1, 3, 2, 0.02, 128, 10)
    assert "output 0 (cell state)" in refused(OP.QUANTIZED_16BIT_LSTM, inputs,
                                              [Out(Q16, (1, 2), 2.0 ** -12, 0), outs[1]])
