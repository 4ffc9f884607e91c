"""The recurrent engine's GRU in both places its reset gate may act, against plain float64 loops written from the
cells' published equations, over random sizes, sequence lengths 1..n, initial states, reverse and batch-major input.

PyTorch's ``torch.nn.GRU`` (reset after the recurrent product, ONNX's ``linear_before_reset``):
    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr);  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h' = (1 - z) * n + z * h
CoreML's GRU layer (reset before it): z = f(clip(W_z x + R_z y + b_z)), r = f(clip(W_r x + R_r y + b_r)),
    c = y * r, o = g(clip(W_o x + R_o c + b_o)), y' = (1 - z) * o + z * y, clip to [-50, 50].
"""
from __future__ import annotations

import math
import zlib

import numpy as np
import pytest

from openvx_nn.kernels.frontend import recurrent_layer as rl

TOL = 2e-5


def _sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


def torch_gru(x, h0, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's equations, one unit at a time; weights in PyTorch's gate order (r, z, n)."""
    steps, batch, _ = x.shape
    units = h0.shape[1]
    out = np.zeros((steps, batch, units))
    h = np.array(h0, np.float64)
    for t in range(steps):
        new = np.zeros_like(h)
        for b in range(batch):
            for u in range(units):
                def lin(gate, w, bias, v, u=u):
                    row = gate * units + u
                    return sum(float(w[row, k]) * float(v[k]) for k in range(v.shape[0])) + float(bias[row])
                r = _sigmoid(lin(0, w_ih, b_ih, x[t, b]) + lin(0, w_hh, b_hh, h[b]))
                z = _sigmoid(lin(1, w_ih, b_ih, x[t, b]) + lin(1, w_hh, b_hh, h[b]))
                n = math.tanh(lin(2, w_ih, b_ih, x[t, b]) + r * lin(2, w_hh, b_hh, h[b]))
                new[b, u] = (1 - z) * n + z * h[b, u]
        h = new
        out[t] = h
    return out


def coreml_gru(x, h0, w, rec, bias):
    """CoreML's layer text, one unit at a time; gates in its order (z, r, o), f = sigmoid, g = tanh."""
    steps, batch, _ = x.shape
    units = h0.shape[1]
    clip = lambda v: min(max(v, -50.0), 50.0)
    out = np.zeros((steps, batch, units))
    y = np.array(h0, np.float64)
    for t in range(steps):
        new = np.zeros_like(y)
        for b in range(batch):
            z = np.zeros(units)
            r = np.zeros(units)
            for u in range(units):
                z[u] = _sigmoid(clip(float(w[0, u] @ x[t, b]) + float(rec[0, u] @ y[b]) + bias[0, u]))
                r[u] = _sigmoid(clip(float(w[1, u] @ x[t, b]) + float(rec[1, u] @ y[b]) + bias[1, u]))
            c = y[b] * r
            for u in range(units):
                o = math.tanh(clip(float(w[2, u] @ x[t, b]) + float(rec[2, u] @ c) + bias[2, u]))
                new[b, u] = (1 - z[u]) * o + z[u] * y[b, u]
        y = new
        out[t] = y
    return out


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL * max(1.0, float(np.abs(want).max())))


def _order(a, units):
    """PyTorch's (r, z, n) rows in the engine's (z, r, o) order."""
    r, z, n = np.split(a, 3) if a.ndim == 1 else np.split(a, 3, axis=0)
    assert r.shape[0] == units
    return np.concatenate([z, r, n])


CASES = [(1, 1, 1, 1), (1, 3, 5, 7), (2, 1, 4, 16), (9, 2, 12, 16), (5, 4, 3, 33), (17, 1, 64, 8)]


@pytest.mark.parametrize("steps,batch,size,units", CASES)
@pytest.mark.parametrize("start", ["zeros", "given"])
def test_reset_after_is_pytorch_gru(rng, steps, batch, size, units, start):
    scale = 1.5 / math.sqrt(units)
    w_ih = (rng.uniform(-scale, scale, (3 * units, size))).astype(np.float32)
    w_hh = (rng.uniform(-scale, scale, (3 * units, units))).astype(np.float32)
    b_ih = (rng.uniform(-1, 1, 3 * units)).astype(np.float32)
    b_hh = (rng.uniform(-1, 1, 3 * units)).astype(np.float32)
    x = rng.standard_normal((steps, batch, size)).astype(np.float32)
    h0 = (rng.standard_normal((batch, units)) * (0.8 if start == "given" else 0.0)).astype(np.float32)
    cell = rl.Cell("gru", _order(w_ih, units), _order(w_hh, units), _order(b_ih, units),
                   [("sigmoid", 0, 0), ("tanh", 0, 0)], recurrent_bias=_order(b_hh, units), reset_after=True)
    want = torch_gru(x, h0, w_ih, w_hh, b_ih, b_hh)
    out = np.full((steps, batch, units), np.nan, np.float32)
    h_out = np.zeros((batch, units), np.float32)
    rl.runner(rl.bind(cell, x, out, h0 if start == "given" else None, None, h_out))()
    _close(out, want)
    _close(h_out, want[-1])
    # batch-major input and reverse order: the same equations over the reversed sequence
    out = np.full((1, batch, units), np.nan, np.float32)
    rl.runner(rl.bind(cell, np.ascontiguousarray(x.transpose(1, 0, 2)), out, h0, reverse=True, batch_major=True))()
    _close(out[0], torch_gru(x[::-1], h0, w_ih, w_hh, b_ih, b_hh)[-1])


@pytest.mark.parametrize("steps,batch,size,units", CASES)
def test_reset_before_is_coreml_gru(rng, steps, batch, size, units):
    w = (rng.standard_normal((3, units, size)) * 0.5).astype(np.float32)
    rec = (rng.standard_normal((3, units, units)) * 0.5).astype(np.float32)
    bias = (rng.standard_normal((3, units)) * 0.5).astype(np.float32)
    bias[0, 0] = 80.0  # past the clip: the gate saturates at sigmoid(50)
    x = rng.standard_normal((steps, batch, size)).astype(np.float32)
    h0 = (rng.standard_normal((batch, units)) * 0.8).astype(np.float32)
    cell = rl.Cell("gru", w.reshape(3 * units, size), rec.reshape(3 * units, units), bias.reshape(-1),
                   [("sigmoid", 0, 0), ("tanh", 0, 0)], pre_clip=50.0)
    out = np.full((steps, batch, units), np.nan, np.float32)
    rl.runner(rl.bind(cell, x, out, h0))()
    _close(out, coreml_gru(x, h0, w, rec, bias))
    # a recurrent bias in this form is a plain sum with the input's
    half = (bias / 2).reshape(-1)
    split = rl.Cell("gru", cell.w_x, cell.w_h, half, cell.activations, pre_clip=50.0, recurrent_bias=half)
    again = np.full_like(out, np.nan)
    rl.runner(rl.bind(split, x, again, h0))()
    _close(again, coreml_gru(x, h0, w, rec, bias))


def test_reset_after_is_refused_outside_a_gru(rng):
    cell = rl.Cell("rnn", np.ones((4, 3), np.float32), np.ones((4, 4), np.float32), reset_after=True)
    with pytest.raises(ValueError, match="only a GRU"):
        rl.bind(cell, np.ones((2, 1, 3), np.float32), np.zeros((2, 1, 4), np.float32))
