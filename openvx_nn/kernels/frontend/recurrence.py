"""The recurrent engine: float32 LSTM, GRU and simple RNN cells over a sequence, for every front end.

A direction of a layer is one call. The input products of the whole sequence are one product on the fully
connected tiles (``float_convolution.fc_rows``: ``[T * B, K] x [K, gates * U]``, the biases added there);
each step's recurrent products of every gate are one more (``[B, O] x [O, gates * U]``); the gates' element-wise
math is then one pass of loops along the units, which LLVM vectorizes (the activations are
``float_activation``'s float32 functions). A GRU applies its reset gate in one of two places: CoreML's multiplies
it into the state *before* the output gate's recurrent product, so its step takes two products (update and reset
together, then output); PyTorch's (ONNX's ``linear_before_reset``) multiplies it into the recurrent product
with its bias, so all three gates' products are one (``I_RESET_AFTER``).

Cells (``CELL`` codes), gate order along the products' columns:

- LSTM: input, forget, cell (block input), output; the input gate's columns are left out with CIFG (coupled
  input and forget gates: ``i = 1 - f``). Peepholes (input, forget on the old cell state; output on the new),
  layer normalization (NNAPI: a gate's sum of products, peephole included, normalized over the units of its
  batch row, times the gate's weights, then its bias), cell clipping, a projection with its bias and clipping.
- GRU: update z, reset r, output o: ``h = (1 - z) o + z h`` with ``o = g(Wo x + Ro (r * h) + bo)`` (CoreML), or
  with the reset applied after the recurrent product, ``o = g(Wo x + bo + r * (Ro h + bRo))`` (PyTorch: the
  recurrent biases of z and r are plain sums; that of o, ``bRo``, is the recurrent product's bias).
- RNN: ``h = f(W x + R h + b)``.

The kernel is compiled with IEEE division (``error_model="numpy"``, as ``float_activation``'s loops are): under
Python's model every division checks for zero, which kept LLVM from vectorizing the logistic and tanh loops
(128 values: 560 and 680 ns scalar, 53 and 66 vectorized; a GRU step of 128 units 4.1 us before, 1.7 after).

Each gate's pre-activation is clipped to ``[-pre_clip, pre_clip]`` when ``pre_clip`` > 0 (CoreML clips at 50).
Activations: :data:`ACTIVATIONS` codes, each with two parameters (a, b). Arithmetic is float32 (products as the
fully connected layer sums them; the activations within ``float_activation.ULPS``); the state is carried in
float32 from step to step.
"""
from __future__ import annotations

import math

import numpy as np

from ..support import jit, native
from .float_activation import logistic32, softplus32, tanh32
from .float_convolution import fc_block, fc_rows, fc_run

ACTIVATIONS = ("identity", "relu", "relu1", "relu6", "tanh", "sigmoid", "scaled_tanh", "linear", "sigmoid_hard",
               "leaky_relu", "thresholded_relu", "elu", "softsign", "softplus", "parametric_softplus")
"""Gate activations by code: ``scaled_tanh`` is ``a tanh(b v)``, ``linear`` ``a v + b``, ``sigmoid_hard``
``min(max(a v + b, 0), 1)``, ``leaky_relu`` ``a v`` below 0, ``thresholded_relu`` 0 below ``a``, ``elu``
``a (exp(v) - 1)`` below 0, ``parametric_softplus`` ``a softplus(b v)``; relu1 and relu6 clip to [-1, 1], [0, 6]."""
CELLS = ("lstm", "gru", "rnn")
LSTM, GRU, RNN = range(3)
NORM_EPSILON = 1e-8

# ints: the layer's integer settings (``Layer.ints``)
(I_CELL, I_STEPS, I_BATCH, I_REVERSE, I_CIFG, I_PEEPHOLE, I_NORM, I_PROJECTION, I_BATCH_MAJOR, I_PANEL_X, I_UNITS_X,
 I_PANEL_H, I_UNITS_H, I_PANEL_H2, I_UNITS_H2, I_PANEL_P, I_UNITS_P, I_ACT_F, I_ACT_G, I_ACT_H, I_RESET_AFTER, I_LOOP_X,
 I_LOOP_H, I_LOOP_H2, I_LOOP_P) = range(25)
# reals: its float settings
R_CELL_CLIP, R_PROJ_CLIP, R_PRE_CLIP, R_A_F, R_B_F, R_A_G, R_B_G, R_A_H, R_B_H = range(9)
N_REALS = 9

_F = np.float32
_ZERO, _ONE = _F(0.0), _F(1.0)


@jit.jitable
def activate(code, a, b, row):
    """``row`` (float32, contiguous) through activation ``code`` in place; one loop per function (vectorized)."""
    n = row.shape[0]
    af, bf = _F(a), _F(b)
    if code == 1:
        for i in range(n):
            row[i] = max(row[i], _ZERO)
    elif code == 2:
        for i in range(n):
            row[i] = min(max(row[i], -_ONE), _ONE)
    elif code == 3:
        for i in range(n):
            row[i] = min(max(row[i], _ZERO), _F(6.0))
    elif code == 4:
        for i in range(n):
            row[i] = tanh32(row[i])
    elif code == 5:
        for i in range(n):
            row[i] = logistic32(row[i])
    elif code == 6:
        for i in range(n):
            row[i] = af * tanh32(bf * row[i])
    elif code == 7:
        for i in range(n):
            row[i] = af * row[i] + bf
    elif code == 8:
        for i in range(n):
            row[i] = min(max(af * row[i] + bf, _ZERO), _ONE)
    elif code == 9:
        for i in range(n):
            row[i] = row[i] if row[i] >= _ZERO else af * row[i]
    elif code == 10:
        for i in range(n):
            row[i] = row[i] if row[i] >= af else _ZERO
    elif code == 11:
        for i in range(n):
            row[i] = row[i] if row[i] >= _ZERO else _F(a * math.expm1(row[i]))
    elif code == 12:
        for i in range(n):
            row[i] = row[i] / (_ONE + abs(row[i]))
    elif code == 13:
        for i in range(n):
            row[i] = softplus32(row[i])
    elif code == 14:
        for i in range(n):
            row[i] = af * softplus32(bf * row[i])


@jit.jitable
def _clip(row, limit):
    if limit > 0.0:
        lim = _F(limit)
        for i in range(row.shape[0]):
            row[i] = min(max(row[i], -lim), lim)


@jit.jitable
def _normalize(row, weights, bias):
    """NNAPI's layer normalization of one gate's row: mean and biased variance over the units (float64 sums)."""
    n = row.shape[0]
    mean = 0.0
    for u in range(n):
        mean += row[u]
    mean /= n
    var = 0.0
    for u in range(n):
        var += (row[u] - mean) * (row[u] - mean)
    inv = 1.0 / math.sqrt(var / n + NORM_EPSILON)
    for u in range(n):
        row[u] = _F((row[u] - mean) * inv) * weights[u] + bias[u]


@jit.jitable
def _lstm_row(ints, reals, pre_row, rec_row, g, cell, peep, norm, bias, hidden, gates, b):
    """One batch row of an LSTM step: ``g [4, U]`` scratch, ``cell [U]`` updated, ``hidden [U]`` written."""
    units = cell.shape[0]
    cifg, first = ints[I_CIFG] != 0, 1 if ints[I_CIFG] != 0 else 0
    peephole, layer_norm = ints[I_PEEPHOLE] != 0, ints[I_NORM] != 0
    pre_clip = reals[R_PRE_CLIP]
    for k in range(first, 4):
        col = (k - first) * units
        row = g[k]
        for u in range(units):
            row[u] = pre_row[col + u] + rec_row[col + u]
    if peephole:
        for u in range(units):
            g[1, u] += peep[1, u] * cell[u]
        if not cifg:
            for u in range(units):
                g[0, u] += peep[0, u] * cell[u]
    for k in range(first, 3):
        if layer_norm:
            _normalize(g[k], norm[k], bias[k])
        _clip(g[k], pre_clip)
    if not cifg:
        activate(ints[I_ACT_F], reals[R_A_F], reals[R_B_F], g[0])
    activate(ints[I_ACT_F], reals[R_A_F], reals[R_B_F], g[1])
    activate(ints[I_ACT_G], reals[R_A_G], reals[R_B_G], g[2])
    if cifg:
        for u in range(units):
            g[0, u] = _ONE - g[1, u]
    for u in range(units):
        cell[u] = g[1, u] * cell[u] + g[0, u] * g[2, u]
    _clip(cell, reals[R_CELL_CLIP])
    if peephole:
        for u in range(units):
            g[3, u] += peep[2, u] * cell[u]
    if layer_norm:
        _normalize(g[3], norm[3], bias[3])
    _clip(g[3], pre_clip)
    activate(ints[I_ACT_F], reals[R_A_F], reals[R_B_F], g[3])
    for u in range(units):
        hidden[u] = cell[u]
    activate(ints[I_ACT_H], reals[R_A_H], reals[R_B_H], hidden)
    for u in range(units):
        hidden[u] *= g[3, u]
    for k in range(4):
        for u in range(units):
            gates[k, b, u] = g[k, u]


@jit.jitable
def _gru_state(ints, reals, g, h, gates, b):
    """The GRU's output gate from its sum ``g[2]`` and the new state ``h = (1 - z) o + z h`` (``z``: ``g[0]``)."""
    units = h.shape[0]
    _clip(g[2], reals[R_PRE_CLIP])
    activate(ints[I_ACT_G], reals[R_A_G], reals[R_B_G], g[2])
    for u in range(units):
        h[u] = (_ONE - g[0, u]) * g[2, u] + g[0, u] * h[u]
        gates[2, b, u] = g[2, u]


@jit.jitable
def _row(ints, t, b):
    """The input-product row of time ``t``, batch row ``b`` (the input in time- or batch-major order)."""
    if ints[I_BATCH_MAJOR] != 0:
        return b * ints[I_STEPS] + t
    return t * ints[I_BATCH] + b


@jit.kernel(error_model="numpy")
def run(ints, reals, x, wx, bx, pre, wh, zeros, rec, wh2, rec2, hs, cell, hid, proj, proj_bias, peep, norm, bias,
        h0, c0, out, h_out, c_out, gates):
    """One direction of a layer over its sequence (module doc). ``x [1, 1, T*B, K]`` (rows in ``_row``'s order),
    ``wx``/``wh``/``wh2``/``proj``: ``pack_fc`` weights, ``bx`` the biases added to the input products (zeros with
    layer normalization, which adds ``bias [4, U]`` after it), ``zeros`` those added to the recurrent products
    (zeros but for a GRU's output gate with ``I_RESET_AFTER``), ``pre``, ``rec``, ``rec2``, ``hid`` scratch,
    ``hs [1, 1, B, O]`` and ``cell [B, U]`` the carried state, from ``h0``/``c0`` (size 0: zeros); ``out [T', B, O]``
    (time-major: T' = T, the state after each step at its time; T' = 1: the last state), ``h_out``/``c_out`` (size
    0: none) the final state; ``gates [4, B, U]`` the last step's gates after activation."""
    cell_kind, steps, batch = ints[I_CELL], ints[I_STEPS], ints[I_BATCH]
    units, outs = hid.shape[3], hs.shape[3]
    state = hs[0, 0]
    if h0.size > 0:
        state[:, :] = h0
    else:
        state[:, :] = _ZERO
    if cell_kind == LSTM:
        if c0.size > 0:
            cell[:, :] = c0
        else:
            cell[:, :] = _ZERO
    fc_rows(ints[I_LOOP_X], x, wx, bx, pre, ints[I_PANEL_X], ints[I_UNITS_X])
    pre_rows = pre[0, 0]
    rec_rows, hidden = rec[0, 0], hid[0, 0]
    g = np.empty((4, units), np.float32)
    full = out.shape[0] == steps
    # the steps' products read and write the same arrays at every step: their blocks are built once
    on_state = fc_block(hs, wh, zeros, rec, ints[I_PANEL_H], ints[I_UNITS_H])
    projected = fc_block(hid, proj, proj_bias, hs, ints[I_PANEL_P], ints[I_UNITS_P])
    on_reset = fc_block(hid, wh2, zeros, rec2, ints[I_PANEL_H2], ints[I_UNITS_H2])
    for s in range(steps):
        t = steps - 1 - s if ints[I_REVERSE] != 0 else s
        fc_run(ints[I_LOOP_H], on_state)
        if cell_kind == LSTM:
            for b in range(batch):
                _lstm_row(ints, reals, pre_rows[_row(ints, t, b)], rec_rows[b], g, cell[b], peep, norm, bias,
                          hidden[b], gates, b)
            if ints[I_PROJECTION] != 0:
                fc_run(ints[I_LOOP_P], projected)
                for b in range(batch):
                    _clip(state[b], reals[R_PROJ_CLIP])
            else:
                state[:, :] = hidden
        elif cell_kind == GRU:
            after = ints[I_RESET_AFTER] != 0
            for b in range(batch):
                p, r = pre_rows[_row(ints, t, b)], rec_rows[b]
                for k in range(2):
                    for u in range(units):
                        g[k, u] = p[k * units + u] + r[k * units + u]
                    _clip(g[k], reals[R_PRE_CLIP])
                    activate(ints[I_ACT_F], reals[R_A_F], reals[R_B_F], g[k])
                for u in range(units):
                    gates[0, b, u], gates[1, b, u] = g[0, u], g[1, u]
                if after:  # the reset gate scales the output gate's recurrent product (its bias included)
                    for u in range(units):
                        g[2, u] = p[2 * units + u] + g[1, u] * r[2 * units + u]
                    _gru_state(ints, reals, g, state[b], gates, b)
                else:
                    for u in range(units):
                        hidden[b, u] = g[1, u] * state[b, u]
            if not after:
                fc_run(ints[I_LOOP_H2], on_reset)
                for b in range(batch):
                    p, r2 = pre_rows[_row(ints, t, b)], rec2[0, 0, b]
                    g[0, :] = gates[0, b]
                    for u in range(units):
                        g[2, u] = p[2 * units + u] + r2[u]
                    _gru_state(ints, reals, g, state[b], gates, b)
        else:
            for b in range(batch):
                p, r, h = pre_rows[_row(ints, t, b)], rec_rows[b], state[b]
                for u in range(outs):
                    h[u] = p[u] + r[u]
                _clip(h, reals[R_PRE_CLIP])
                activate(ints[I_ACT_F], reals[R_A_F], reals[R_B_F], h)
        if full:
            out[t, :, :] = state
    if not full:
        out[0, :, :] = state
    if h_out.size > 0:
        h_out[:, :] = state
    if c_out.size > 0 and cell_kind == LSTM:
        c_out[:, :] = cell


@jit.jitable
def _at(block, k):
    """Packed array ``k`` of the block (after ``ints`` and ``reals``), C-contiguous 6-D."""
    return native.c_array(block, (k + 2) * native.ARRAY_WORDS, np.float32)


@jit.jitable
def _strided(block, k):
    """Packed array ``k`` of the block as its strided 6-D view (outputs and states may be views)."""
    return native.array(block, (k + 2) * native.ARRAY_WORDS, np.float32)


@native.factory
def entry() -> int:
    """The native entry of :func:`run`: the block packs ``ints``, ``reals`` and :func:`run`'s 23 arrays in order."""
    def body(block):
        ints = native.c_array(block, 0, np.int64)[0, 0, 0, 0, 0]
        reals = native.c_array(block, native.ARRAY_WORDS, np.float64)[0, 0, 0, 0, 0]
        run(ints, reals, _at(block, 0)[0, 0], _at(block, 1)[0], _at(block, 2)[0, 0, 0, 0, 0], _at(block, 3)[0, 0],
            _at(block, 4)[0], _at(block, 5)[0, 0, 0, 0, 0], _at(block, 6)[0, 0], _at(block, 7)[0],
            _at(block, 8)[0, 0], _at(block, 9)[0, 0], _at(block, 10)[0, 0, 0, 0], _at(block, 11)[0, 0],
            _at(block, 12)[0], _at(block, 13)[0, 0, 0, 0, 0], _at(block, 14)[0, 0, 0, 0],
            _at(block, 15)[0, 0, 0, 0], _at(block, 16)[0, 0, 0, 0], _strided(block, 17)[0, 0, 0, 0],
            _strided(block, 18)[0, 0, 0, 0], _strided(block, 19)[0, 0, 0], _strided(block, 20)[0, 0, 0, 0],
            _strided(block, 21)[0, 0, 0, 0], _at(block, 22)[0, 0, 0])
        return 0
    return jit.native(body)
