"""The recurrent engine (``kernels/frontend/recurrence`` bound by ``recurrent_layer``) against plain float64 NumPy
loops written from the cells' definitions (NNAPI's LSTM and RNN text, CoreML's LSTM, GRU and simple recurrent
layer text), over randomized shapes: sequence length 1, batch 1, reverse, batch-major input, CIFG, peepholes,
layer normalization, projection, cell and projection clipping at edge values, every gate activation."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from openvx_nn.kernels.frontend import recurrent_layer as rl

TOL = 2e-5
"""Float32 products and activations (3 ulps) carried over a few steps against float64: absolute on values of
order one, relative to the largest value above."""


def _act(name, a, b):
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    soft = lambda v: np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0)
    return {"identity": lambda v: v, "relu": lambda v: np.maximum(v, 0), "relu1": lambda v: np.clip(v, -1, 1),
            "relu6": lambda v: np.clip(v, 0, 6), "tanh": np.tanh, "sigmoid": sig,
            "scaled_tanh": lambda v: a * np.tanh(b * v), "linear": lambda v: a * v + b,
            "sigmoid_hard": lambda v: np.clip(a * v + b, 0, 1), "leaky_relu": lambda v: np.where(v >= 0, v, a * v),
            "thresholded_relu": lambda v: np.where(v >= a, v, 0.0),
            "elu": lambda v: np.where(v >= 0, v, a * np.expm1(np.minimum(v, 0))),
            "softsign": lambda v: v / (1 + np.abs(v)), "softplus": soft,
            "parametric_softplus": lambda v: a * soft(b * v)}[name]


def _clip(v, limit):
    return np.clip(v, -limit, limit) if limit > 0 else v


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _norm(v, w):
    mean = v.mean(axis=1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=1, keepdims=True)
    return (v - mean) / np.sqrt(var + 1e-8) * w


def reference(cell: rl.Cell, x, h0, c0, reverse):
    """Every step's state and the final (h, c), float64; ``x [T, B, K]`` time-major."""
    f64 = lambda a: None if a is None else np.asarray(a, np.float64)
    wx, wh, bias = f64(cell.w_x), f64(cell.w_h), f64(cell.bias)
    u = cell.units
    n = wx.shape[0] // u
    bias = np.zeros(n * u) if bias is None else bias
    acts = [_act(*a) for a in cell.activations]
    h, c = np.array(h0, np.float64), np.array(c0, np.float64)
    steps = []
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in order:
        xt = np.asarray(x[t], np.float64)
        if cell.kind == "rnn":
            h = acts[0](_clip(xt @ wx.T + h @ wh.T + bias, cell.pre_clip))
        elif cell.kind == "gru":
            w, r, b = wx.reshape(3, u, -1), wh.reshape(3, u, u), bias.reshape(3, u)
            z = acts[0](_clip(xt @ w[0].T + h @ r[0].T + b[0], cell.pre_clip))
            rr = acts[0](_clip(xt @ w[1].T + h @ r[1].T + b[1], cell.pre_clip))
            o = acts[1](_clip(xt @ w[2].T + (rr * h) @ r[2].T + b[2], cell.pre_clip))
            h = (1 - z) * o + z * h
        else:
            names = "fco" if cell.cifg else "ifco"
            sums = {g: xt @ wx[k * u:(k + 1) * u].T + h @ wh[k * u:(k + 1) * u].T for k, g in enumerate(names)}
            bs = {g: bias[k * u:(k + 1) * u] for k, g in enumerate(names)}
            p = np.zeros((3, u)) if cell.peephole is None else f64(cell.peephole)
            nw = None if cell.norm is None else f64(cell.norm)

            def gate(g, extra, k, act, sums=sums, nw=nw, bs=bs):
                v = sums[g] + extra
                v = _norm(v, nw[k]) + bs[g] if nw is not None else v + bs[g]
                return act(_clip(v, cell.pre_clip))
            f = gate("f", p[1] * c, 1, acts[0])
            i = 1 - f if cell.cifg else gate("i", p[0] * c, 0, acts[0])
            z = gate("c", 0, 2, acts[1])
            c = _clip(f * c + i * z, cell.cell_clip)
            o = gate("o", p[2] * c, 3, acts[0])
            h = o * acts[2](c)
            if cell.projection is not None:
                pb = 0 if cell.projection_bias is None else f64(cell.projection_bias)
                h = _clip(h @ f64(cell.projection).T + pb, cell.projection_clip)
        steps.append((t, h))
    out = np.zeros((x.shape[0],) + h.shape)
    for t, v in steps:
        out[t] = v
    return out, h, c


def _cell(rng, kind, size, units, **options):
    n = rl.GATES[kind] - (1 if options.get("cifg") else 0)
    outs = units if options.get("projection") is None else options["projection"].shape[0]
    return rl.Cell(kind, (rng.standard_normal((n * units, size)) * 0.4).astype(np.float32),
                   (rng.standard_normal((n * units, outs if kind == "lstm" else units)) * 0.4).astype(np.float32),
                   (rng.standard_normal(n * units) * 0.3).astype(np.float32), **options)


def _run(cell, x, reverse=False, batch_major=False, sequence=True, states=True, rng=None):
    steps, batch = (x.shape[1], x.shape[0]) if batch_major else x.shape[:2]
    time_major = x.transpose(1, 0, 2) if batch_major else x
    h0 = (rng.standard_normal((batch, cell.outputs)) * 0.5).astype(np.float32) if states else None
    c0 = (rng.standard_normal((batch, cell.units)) * 0.5).astype(np.float32) if states else None
    out = np.full((steps if sequence else 1, batch, cell.outputs), np.nan, np.float32)
    h_out, c_out = np.zeros((batch, cell.outputs), np.float32), np.zeros((batch, cell.units), np.float32)
    rl.runner(rl.bind(cell, x, out, h0, c0 if cell.kind == "lstm" else None, h_out,
                      c_out if cell.kind == "lstm" else None, reverse, batch_major))()
    want, h, c = reference(cell, time_major, np.zeros((batch, cell.outputs)) if h0 is None else h0,
                           np.zeros((batch, cell.units)) if c0 is None else c0, reverse)
    _close(out, want if sequence else h[None])
    _close(h_out, h)
    if cell.kind == "lstm":
        _close(c_out, c)


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL * max(1.0, float(np.abs(want).max())))


SHAPES = [(1, 1, 3, 4), (5, 2, 3, 4), (7, 1, 12, 16), (3, 3, 20, 33), (2, 4, 1, 1)]


@pytest.mark.parametrize("steps,batch,size,units", SHAPES)
@pytest.mark.parametrize("kind", ["lstm", "gru", "rnn"])
def test_cells_against_reference(rng, kind, steps, batch, size, units):
    acts = {"lstm": [("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)], "gru": [("sigmoid", 0, 0), ("tanh", 0, 0)],
            "rnn": [("tanh", 0, 0)]}[kind]
    cell = _cell(rng, kind, size, units, activations=acts, pre_clip=50.0)
    x = rng.standard_normal((steps, batch, size)).astype(np.float32)
    _run(cell, x, rng=rng)
    _run(cell, x, reverse=True, sequence=False, states=False, rng=rng)
    _run(cell, np.ascontiguousarray(x.transpose(1, 0, 2)), batch_major=True, rng=rng)


@pytest.mark.parametrize("cifg", [False, True])
@pytest.mark.parametrize("peephole", [False, True])
@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("projection", [False, True])
def test_lstm_variants(rng, cifg, peephole, norm, projection):
    steps, batch, size, units = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 9)), \
        int(rng.integers(2, 20))
    outs = int(rng.integers(1, 12))
    options = {"cifg": cifg, "activations": [("sigmoid", 0, 0), ("relu6", 0, 0), ("relu6", 0, 0)],
               "cell_clip": 0.7, "projection_clip": 0.3 if projection else 0.0}
    if peephole:
        options["peephole"] = (rng.standard_normal((3, units)) * 0.5).astype(np.float32)
    if norm:
        options["norm"] = (rng.standard_normal((4, units)) * 0.5 + 1).astype(np.float32)
    if projection:
        options["projection"] = (rng.standard_normal((outs, units)) * 0.5).astype(np.float32)
        options["projection_bias"] = (rng.standard_normal(outs) * 0.2).astype(np.float32)
    cell = _cell(rng, "lstm", size, units, **options)
    x = (rng.standard_normal((steps, batch, size)) * 2).astype(np.float32)
    _run(cell, x, rng=rng)
    _run(cell, x, reverse=True, rng=rng)


@pytest.mark.parametrize("name,a,b", [("identity", 0, 0), ("relu", 0, 0), ("relu1", 0, 0), ("relu6", 0, 0),
                                      ("tanh", 0, 0), ("sigmoid", 0, 0), ("scaled_tanh", 1.7, 0.6),
                                      ("linear", 0.5, 0.1), ("sigmoid_hard", 0.2, 0.5), ("leaky_relu", 0.1, 0),
                                      ("thresholded_relu", 0.3, 0), ("elu", 0.8, 0), ("softsign", 0, 0),
                                      ("softplus", 0, 0), ("parametric_softplus", 0.7, 1.3)])
def test_every_activation(rng, name, a, b):
    for kind, n in (("rnn", 1), ("gru", 2), ("lstm", 3)):
        acts = [(name, a, b)] * n
        if kind == "lstm":  # a cell output that grows without bound stays finite: sigmoid gates
            acts[0] = ("sigmoid", 0, 0)
        cell = _cell(rng, kind, 5, 6, activations=acts, pre_clip=50.0 if kind != "lstm" else 0.0)
        _run(cell, (rng.standard_normal((4, 2, 5))).astype(np.float32), rng=rng)


@pytest.mark.parametrize("limit", [0.0, 1e-6, 50.0])
def test_clip_edges(rng, limit):
    """Clipping at 0 (off), at a value every sum passes, at CoreML's 50 (large inputs reach it)."""
    cell = _cell(rng, "lstm", 4, 5, activations=[("sigmoid", 0, 0), ("linear", 1, 0), ("linear", 1, 0)],
                 cell_clip=limit, pre_clip=limit)
    _run(cell, (rng.standard_normal((6, 2, 4)) * 200).astype(np.float32), rng=rng)


def test_state_outputs_alias_state_inputs(rng):
    """NNAPI 1.0's forms carry the state through the output tensors: the same array as input and output."""
    cell = _cell(rng, "lstm", 3, 4, activations=[("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)])
    x = rng.standard_normal((1, 2, 3)).astype(np.float32)
    h, c = np.full((2, 4), 0.25, np.float32), np.full((2, 4), -0.5, np.float32)
    _, want_h, want_c = reference(cell, x, h, c, False)
    out = np.zeros((1, 2, 4), np.float32)
    rl.runner(rl.bind(cell, x, out, h, c, h, c))()
    np.testing.assert_allclose(h, want_h, atol=TOL)
    np.testing.assert_allclose(c, want_c, atol=TOL)


def test_bad_shapes_are_refused(rng):
    cell = _cell(rng, "lstm", 3, 4, activations=[("sigmoid", 0, 0), ("tanh", 0, 0), ("tanh", 0, 0)])
    x = rng.standard_normal((2, 1, 3)).astype(np.float32)
    with pytest.raises(ValueError, match="columns"):
        rl.bind(cell, np.zeros((2, 1, 5), np.float32), np.zeros((2, 1, 4), np.float32))
    with pytest.raises(ValueError, match="output"):
        rl.bind(cell, x, np.zeros((3, 1, 4), np.float32))
    with pytest.raises(ValueError, match="h0"):
        rl.bind(cell, x, np.zeros((2, 1, 4), np.float32), h0=np.zeros((1, 5), np.float32))
    with pytest.raises(ValueError, match="C-contiguous float32"):
        rl.bind(cell, x.astype(np.float64), np.zeros((2, 1, 4), np.float32))
