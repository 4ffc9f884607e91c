"""QUANTIZED_16BIT_LSTM: uint8 activations (scale 1/128, zero point 128), a TENSOR_QUANT16_SYMM cell state
(scale 2^-11), against two references: the LSTM's real-valued equations on the dequantized operands, the cell
state saturated at the range the header gives it (the header's text gives the ranges, not the integer steps: the
result must be the real LSTM's within the fixed-point functions' error and the output's quantization), and
``quant16_lstm_reference`` (the integer steps of Android's CPU driver, TensorFlow Lite's ``LstmCell<4>`` on
gemmlowp, in plain NumPy: bit for bit); over random operands and the edge values (the cell state saturating
either way, gate sums saturating at int16, activations and weights at 0 and 255); and the header's quantization
rules refused when broken."""
from __future__ import annotations

import math

import numpy as np
import pytest
import quant16_lstm_reference as integers
from nnapi_harness import I32T, Q8, Out, Tensor, refused, run

from openvx_nn import nnapi
from openvx_nn.kernels.frontend import quant16_lstm

OP = nnapi.OperationType
Q16 = nnapi.OperandType.TENSOR_QUANT16_SYMM
ACT, STATE = (1.0 / 128, 128), (2.0 ** -11, 0)


def sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(v)))


STATE_RANGE = (-16.0, 16.0 * 32767 / 32768)
"""The cell state's range the header gives: [-2^4, 2^4 * 32767/32768]."""


def real_lstm(x, h, c, w_x, w_h, b):
    """Gates input, forget, cell, output of NNAPI's LSTM without peepholes or projection, tanh activation; the
    new cell state held in its range."""
    pre = [x @ w_x[g].T + h @ w_h[g].T + b[g] for g in range(4)]
    c_new = np.clip(sigmoid(pre[1]) * c + sigmoid(pre[0]) * np.tanh(pre[2]), *STATE_RANGE)
    return c_new, sigmoid(pre[3]) * np.tanh(c_new)


def test_the_fixed_point_logistic_and_tanh_are_the_real_functions_within_2_to_the_minus_11():
    for bits in (3, 4):
        for raw in range(-32768, 32768, 13):
            v = raw / 2.0 ** (15 - bits)
            assert abs(quant16_lstm.logistic(raw, bits) / 32768 - 1 / (1 + math.exp(-v))) < 2 ** -11
            assert abs(quant16_lstm.tanh(raw, bits) / 32768 - math.tanh(v)) < 2 ** -11
    assert quant16_lstm.logistic(0, 3) == 16384 and quant16_lstm.tanh(0, 3) == 0


def _operands(rng, batch, size, units, w_scale, w_zero, b_range, arrays=None):
    w = [rng.integers(0, 256, (units, n)).astype(np.uint8) for n in (size,) * 4 + (units,) * 4]
    b = [rng.integers(-b_range, b_range + 1, units).astype(np.int32) for _ in range(4)]
    x = rng.integers(0, 256, (batch, size)).astype(np.uint8)
    h = rng.integers(0, 256, (batch, units)).astype(np.uint8)
    c = rng.integers(-12000, 12001, (batch, units)).astype(np.int16)
    if arrays is not None:  # an edge case's own values
        x, h, c, w, b = arrays
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


def test_the_references_logistic_and_tanh_are_the_real_functions_and_the_kernels_bit_for_bit():
    raw = np.arange(-32768, 32768)
    for bits in (3, 4):
        v = raw / 2.0 ** (15 - bits)
        mine_logistic, mine_tanh = integers.logistic(raw, bits), integers.tanh(raw, bits)
        assert np.abs(mine_logistic / 32768 - 1 / (1 + np.exp(-v))).max() < 2 ** -11
        assert np.abs(mine_tanh / 32768 - np.tanh(v)).max() < 2 ** -11
        for r in raw[::7]:
            assert quant16_lstm.logistic(int(r), bits) == mine_logistic[r + 32768]
            assert quant16_lstm.tanh(int(r), bits) == mine_tanh[r + 32768]


def _run_cell(rng, arrays, w_scale, w_zero):
    batch, units = arrays[2].shape
    inputs, _ = _operands(rng, batch, arrays[0].shape[1], units, w_scale, w_zero, 0, arrays)
    return run(OP.QUANTIZED_16BIT_LSTM, inputs, [Out(Q16, (batch, units), *STATE), Out(Q8, (batch, units), *ACT)])


def _check_both(got, arrays, w_scale, w_zero, output_steps=2):
    """The operation's outputs against the integer reference (bit for bit) and the real LSTM: the cell state within
    the gates' error (2^-11 each) times what they multiply (the previous state, and 1) and a step of its own, the
    output within ``output_steps`` of its quantization."""
    x, h, c, w, b = arrays
    want_c, want_h = integers.cell(x, h, c, w[:4], w[4:], b, w_zero, w_scale / 128)
    np.testing.assert_array_equal(got[0], want_c)
    np.testing.assert_array_equal(got[1], want_h)
    real = [(a.astype(np.float64) - w_zero) * w_scale for a in w]
    real_c, real_h = real_lstm((x - 128.0) / 128, (h - 128.0) / 128, c * 2.0 ** -11, real[:4], real[4:],
                               [a * (w_scale / 128) for a in b])
    bound = 2.0 ** -11 * (np.abs(c * 2.0 ** -11) + 3)
    assert (np.abs(got[0] * 2.0 ** -11 - real_c) <= bound).all(), (got[0] * 2.0 ** -11, real_c)
    want_q = np.clip(np.round(real_h * 128) + 128, 0, 255)
    assert np.abs(got[1].astype(int) - want_q).max() <= output_steps


@pytest.mark.parametrize("seed", range(6))
def test_quantized_16bit_lstm_is_the_integer_reference_bit_for_bit(seed):
    rng = np.random.default_rng(173 + seed)
    batch, size, units = (int(v) for v in rng.integers(1, 7, 3))
    w_scale = float(np.float32(rng.uniform(0.002, 0.08)))
    w_zero = int(rng.integers(0, 256))
    _, arrays = _operands(rng, batch, size, units, w_scale, w_zero, 4000)
    arrays = list(arrays)
    arrays[2] = rng.integers(-32768, 32768, (batch, units)).astype(np.int16)  # the whole cell-state range
    _check_both(_run_cell(rng, arrays, w_scale, w_zero), arrays, w_scale, w_zero)


def _edge(batch, size, units, x, h, c, w_x, w_h, biases):
    full = np.full
    return (full((batch, size), x, np.uint8), full((batch, units), h, np.uint8), np.asarray(c, np.int16),
            [full((units, size), w_x, np.uint8)] * 4 + [full((units, units), w_h, np.uint8)] * 4,
            [full(units, v, np.int32) for v in biases])


EDGES = {
    # forget gate and input gate open, modulation +1, the cell state at its top: the sum saturates at +32767
    "cell state saturates up": (_edge(2, 3, 2, 128, 128, [[32767, 32000], [31000, 32767]], 128, 128,
                                      [10 ** 6, 10 ** 6, 10 ** 6, 10 ** 6]), 0.02, 128),
    "cell state saturates down": (_edge(2, 3, 2, 128, 128, [[-32768, -32000], [-31000, -32768]], 128, 128,
                                        [10 ** 6, 10 ** 6, -10 ** 6, 10 ** 6]), 0.02, 128),
    # gate sums far past Q3.12's range both ways (int16 saturation before the gates, -32768 into logistic)
    "gate sums saturate": (_edge(1, 4, 3, 128, 128, [[100, -100, 0]], 128, 128,
                                 [-10 ** 8, 10 ** 8, -10 ** 8, -10 ** 8]), 0.05, 128),
    # every activation and weight at an end of uint8, zero points at the other
    "extreme inputs, weights 255 - 0": (_edge(2, 5, 4, 255, 0, np.zeros((2, 4)), 255, 255, [0, 0, 0, 0]),
                                        0.004, 0),
    "extreme inputs, weights 0 - 255": (_edge(2, 5, 4, 0, 255, np.full((2, 4), 16384), 0, 0, [0, 0, 0, 0]),
                                        0.004, 255),
    "large weight scale": (_edge(1, 6, 2, 255, 0, [[-20000, 20000]], 200, 60, [0, 100, -100, 0]), 0.06, 128),
}


@pytest.mark.parametrize("name", list(EDGES))
def test_edge_values_follow_the_integer_reference_and_the_saturated_real_lstm(name):
    arrays, w_scale, w_zero = EDGES[name]
    got = _run_cell(np.random.default_rng(0), arrays, w_scale, w_zero)
    _check_both(got, arrays, w_scale, w_zero)
    if name == "cell state saturates up":
        assert (got[0] == 32767).all() and (got[1] == 128 + 127).all()
    if name == "cell state saturates down":
        assert (got[0] == -32768).all()


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
