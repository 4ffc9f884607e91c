"""NNAPI's LSTM and basic RNN cells stepped over a sequence, in one compiled loop per direction.

Arrays are float64 and time-major (``[T, B, size]``); the caller converts its tensors once per run, so the
state is carried in float64 from step to step and rounded only where it is stored. Gate order is input,
forget, cell, output; peepholes are input, forget, output. Layer normalization (Ba et al., as TensorFlow
Lite computes it): a gate's sum of products (peephole included) is normalized over the units of its batch
row (mean, biased variance, epsilon 1e-8), multiplied by the gate's weights, then the bias is added.
"""
from __future__ import annotations

import math

import numpy as np

from ..support import jit

NORM_EPSILON = 1e-8


@jit.kernel
def activate(code, v):
    """NNAPI's activation codes: 0 none, 1 relu, 2 relu1, 3 relu6, 4 tanh, 6 sigmoid."""
    if code == 1:
        return max(v, 0.0)
    if code == 2:
        return min(max(v, -1.0), 1.0)
    if code == 3:
        return min(max(v, 0.0), 6.0)
    if code == 4:
        return math.tanh(v)
    if code == 6:
        return 1.0 / (1.0 + math.exp(-v))
    return v


@jit.kernel
def _normalize(row, weights):
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
        row[u] = (row[u] - mean) * inv * weights[u]


@jit.kernel
def lstm_sequence(x, aux, w_x, w_aux, w_h, peep, bias, norm, proj, proj_bias, h, c, out, column, cifg,
                  peephole, layer_norm, projection, activation, cell_clip, proj_clip, reverse, gates):
    """``x [T, B, I]``, ``aux [T, B, A]`` (A may be 0), ``w_x [4, I, U]``, ``w_aux [4, A, U]``, ``w_h [4, O, U]``,
    ``peep [3, U]``, ``bias [4, U]``, ``norm [4, U]``, ``proj [U, O]``, ``proj_bias [O]`` (weights transposed from
    NNAPI's, so that the innermost loops run along contiguous units in the order of each sum); the state ``h [B, O]``,
    ``c [B, U]`` is read and left holding the last step's; step t's output goes to ``out[t, :, column:column+O]``.
    With ``reverse`` the steps run from the last time to the first (a backward cell). ``gates [4, B, U]`` is left
    holding the last step's gate values after their activation (the input gate's is ``1 - forget`` with CIFG)."""
    steps, batch, inputs = x.shape
    units = w_x.shape[2]
    outs = h.shape[1]
    extra = aux.shape[2]
    pre = np.zeros((4, units))
    hidden = np.zeros(units)
    h_new = np.zeros(outs)
    first = 1 if cifg else 0
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        for b in range(batch):
            for g in range(first, 4):
                row = pre[g]
                row[:] = 0.0
                for i in range(inputs):
                    v = x[t, b, i]
                    w = w_x[g, i]
                    for u in range(units):
                        row[u] += v * w[u]
                for a in range(extra):
                    v = aux[t, b, a]
                    w = w_aux[g, a]
                    for u in range(units):
                        row[u] += v * w[u]
                for o in range(outs):
                    v = h[b, o]
                    w = w_h[g, o]
                    for u in range(units):
                        row[u] += v * w[u]
            if peephole:
                for u in range(units):
                    if not cifg:
                        pre[0, u] += peep[0, u] * c[b, u]
                    pre[1, u] += peep[1, u] * c[b, u]
            for g in range(first, 3):
                if layer_norm:
                    _normalize(pre[g], norm[g])
                for u in range(units):
                    pre[g, u] += bias[g, u]
            for u in range(units):
                f = 1.0 / (1.0 + math.exp(-pre[1, u]))
                ig = 1.0 - f if cifg else 1.0 / (1.0 + math.exp(-pre[0, u]))
                cell = f * c[b, u] + ig * activate(activation, pre[2, u])
                if cell_clip > 0.0:
                    cell = min(max(cell, -cell_clip), cell_clip)
                c[b, u] = cell
                gates[0, b, u], gates[1, b, u], gates[2, b, u] = ig, f, activate(activation, pre[2, u])
                if peephole:
                    pre[3, u] += peep[2, u] * cell
            if layer_norm:
                _normalize(pre[3], norm[3])
            for u in range(units):
                og = 1.0 / (1.0 + math.exp(-(pre[3, u] + bias[3, u])))
                hidden[u] = og * activate(activation, c[b, u])
                gates[3, b, u] = og
            if projection:
                for o in range(outs):
                    h_new[o] = proj_bias[o]
                for u in range(units):
                    v = hidden[u]
                    w = proj[u]
                    for o in range(outs):
                        h_new[o] += v * w[o]
                if proj_clip > 0.0:
                    for o in range(outs):
                        h_new[o] = min(max(h_new[o], -proj_clip), proj_clip)
            else:
                for o in range(outs):
                    h_new[o] = hidden[o]
            for o in range(outs):
                h[b, o] = h_new[o]
                out[t, b, column + o] = h_new[o]


@jit.kernel
def rnn_sequence(x, aux, w_x, w_aux, w_h, bias, h, out, column, activation, reverse):
    """``h = act(x_t w_x' + aux_t w_aux' + h w_h' + bias)`` per step; shapes as :func:`lstm_sequence`'s with one
    gate (``w_x [I, U]``, ``w_aux [A, U]``, ``w_h [U, U]`` transposed, ``h [B, U]``)."""
    steps, batch, inputs = x.shape
    units = w_x.shape[1]
    extra = aux.shape[2]
    h_new = np.zeros(units)
    for s in range(steps):
        t = steps - 1 - s if reverse else s
        for b in range(batch):
            for u in range(units):
                h_new[u] = 0.0
            for i in range(inputs):
                v = x[t, b, i]
                for u in range(units):
                    h_new[u] += v * w_x[i, u]
            for a in range(extra):
                v = aux[t, b, a]
                for u in range(units):
                    h_new[u] += v * w_aux[a, u]
            for o in range(units):
                v = h[b, o]
                for u in range(units):
                    h_new[u] += v * w_h[o, u]
            for u in range(units):
                h_new[u] = activate(activation, h_new[u] + bias[u])
            for u in range(units):
                h[b, u] = h_new[u]
                out[t, b, column + u] = h_new[u]
