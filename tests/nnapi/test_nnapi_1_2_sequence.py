"""API level 29's sequence RNNs and LSTMs against plain NumPy references written from the header's text.

UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM
in TENSOR_FLOAT32 and TENSOR_FLOAT16, time-major and batch-major, over every optional-input combination the
header allows (CIFG, peepholes, projection with and without bias, layer normalization, auxiliary input,
merged outputs) and clipping. The references step the cell in float64; float16 results are the reference
rounded once to float16.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from nnapi_harness import F16T, F32T, Out, Tensor, boolean, build, f16, f32, i32, refused, run

from openvx_nn import nnapi

OP = nnapi.OperationType
GATES = "ifco"
ACTIVATIONS = {0: lambda v: v, 1: lambda v: np.maximum(v, 0.0), 2: lambda v: np.clip(v, -1.0, 1.0),
               3: lambda v: np.clip(v, 0.0, 6.0), 4: np.tanh, 6: lambda v: 1.0 / (1.0 + np.exp(-v))}
DTYPES = {F32T: np.float32, F16T: np.float16}


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def layer_norm(v, w):
    """Normalized over the units of each batch row (biased variance, epsilon 1e-8), times the weights."""
    mean = v.mean(axis=-1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=-1, keepdims=True)
    return (v - mean) / np.sqrt(var + 1e-8) * w


def lstm_reference(x, cell, h, c, act, cell_clip, proj_clip, reverse=False, aux=None):
    """Time-major ``x [T, B, I]``; ``cell`` holds float64 weights by short name (absent keys: no value)."""
    f_act = ACTIVATIONS[act]
    out = np.zeros(x.shape[:2] + (h.shape[1],))

    def pre(g, xt, at, h, state):
        v = xt @ cell[f"wx_{g}"].T + h @ cell[f"wh_{g}"].T
        if at is not None:
            v = v + at @ cell[f"wa_{g}"].T
        if state is not None and f"p_{g}" in cell:
            v = v + cell[f"p_{g}"] * state
        if "n_f" in cell:
            v = layer_norm(v, cell[f"n_{g}"])
        return v + cell[f"b_{g}"]

    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        at = None if aux is None else aux[t]
        f = sigmoid(pre("f", x[t], at, h, c))
        i = 1.0 - f if "wx_i" not in cell else sigmoid(pre("i", x[t], at, h, c))
        c = f * c + i * f_act(pre("c", x[t], at, h, None))
        if cell_clip > 0:
            c = np.clip(c, -cell_clip, cell_clip)
        o = sigmoid(pre("o", x[t], at, h, c))
        h = o * f_act(c)
        if "proj" in cell:
            h = h @ cell["proj"].T + cell.get("proj_b", 0.0)
            if proj_clip > 0:
                h = np.clip(h, -proj_clip, proj_clip)
        out[t] = h
    return out


def rnn_reference(x, w, r, b, h, act, reverse=False, aux=None, wa=None):
    out = np.zeros(x.shape[:2] + (w.shape[0],))
    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        v = x[t] @ w.T + h @ r.T + b
        if aux is not None:
            v = v + aux[t] @ wa.T
        h = ACTIVATIONS[act](v)
        out[t] = h
    return out


def lstm_cell(rng, kind, size, units, out_size, cifg, peephole, projection, norm, aux_size=0):
    """Random weights (rounded to the type) by short name, and the NNAPI operands of inputs 1 to 17."""
    dtype = DTYPES[kind]

    def rand(*shape):
        return rng.uniform(-0.6, 0.6, shape).astype(dtype)

    cell = {}
    for g in GATES:
        if g == "i" and cifg:
            continue
        cell[f"wx_{g}"], cell[f"wh_{g}"], cell[f"b_{g}"] = rand(units, size), rand(units, out_size), rand(units)
        if aux_size:
            cell[f"wa_{g}"] = rand(units, aux_size)
        if norm:
            cell[f"n_{g}"] = rng.uniform(0.5, 1.5, units).astype(dtype)
        if peephole and g != "c":
            cell[f"p_{g}"] = rand(units)
    if projection:
        cell["proj"] = rand(out_size, units)
        if projection == "bias":
            cell["proj_b"] = rand(out_size)

    def operand(key):
        return Tensor(cell[key], const=True) if key in cell else ("none", kind)

    ops = ([operand(f"wx_{g}") for g in GATES] + [operand(f"wh_{g}") for g in GATES]
           + [operand(f"p_{g}") for g in "ifo"] + [operand(f"b_{g}") for g in GATES]
           + [operand("proj"), operand("proj_b")])
    norms = [operand(f"n_{g}") for g in GATES]
    auxes = [operand(f"wa_{g}") for g in GATES]
    return {k: v.astype(np.float64) for k, v in cell.items()}, ops, norms, auxes


def _scalar(kind, v):
    return f32(v) if kind == F32T else f16(v)


def _dims(time_major, steps, batch, size):
    return (steps, batch, size) if time_major else (batch, steps, size)


def _major(x_tm, time_major):
    return x_tm if time_major else x_tm.transpose(1, 0, 2)


def _check(got, want, kind):
    want = _major(want, True)
    if kind == F32T:
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    else:
        rounded = want.astype(np.float16).astype(np.float64)
        np.testing.assert_allclose(got.astype(np.float64), rounded, rtol=2e-3, atol=2e-3)


LSTM_OPTIONS = list(itertools.product((False, True), (False, True), (None, "plain", "bias"), (False, True)))


@pytest.mark.parametrize("kind", [F32T, F16T])
def test_unidirectional_sequence_lstm_over_every_optional_input_combination_both_majors(kind):
    rng = np.random.default_rng(92 + int(kind))
    dtype = DTYPES[kind]
    for n, ((cifg, peephole, projection, norm), time_major) in enumerate(
            itertools.product(LSTM_OPTIONS, (True, False))):
        steps, batch, size, units = (int(v) for v in rng.integers(1, 5, 4))
        out_size = int(rng.integers(1, 5)) if projection else units
        act = (0, 1, 3, 4, 6)[n % 5]
        cell_clip, proj_clip = (0.0, 0.0) if n % 3 == 0 else (0.4, 0.3)
        cell, ops, norms, _ = lstm_cell(rng, kind, size, units, out_size, cifg, peephole, projection, norm)
        x = rng.uniform(-1, 1, (steps, batch, size)).astype(dtype)
        h0 = rng.uniform(-1, 1, (batch, out_size)).astype(dtype)
        c0 = rng.uniform(-1, 1, (batch, units)).astype(dtype)
        inputs = ([Tensor(_major(x, time_major))] + ops + [Tensor(h0), Tensor(c0), i32(act),
                  _scalar(kind, cell_clip), _scalar(kind, proj_clip), boolean(time_major)] + norms)
        dims = (steps, batch, out_size) if time_major else (batch, steps, out_size)
        (got,) = run(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, [Out(kind, dims)])
        want = lstm_reference(x.astype(np.float64), cell, h0.astype(np.float64), c0.astype(np.float64), act,
                              cell_clip, proj_clip)
        _check(_major(got, time_major), want, kind)


def test_the_lstm_clips_bind_the_cell_state_and_the_projection():
    """With small thresholds the result differs from the unclipped one, and matches the clipped reference."""
    rng = np.random.default_rng(7)
    cell, ops, norms, _ = lstm_cell(rng, F32T, 3, 4, 2, False, True, "bias", False)
    x = rng.uniform(-2, 2, (5, 2, 3)).astype(np.float32)
    h0, c0 = np.zeros((2, 2), np.float32), np.full((2, 4), 1.5, np.float32)
    results = {}
    for clips in ((0.0, 0.0), (0.25, 0.1)):
        inputs = [Tensor(x)] + ops + [Tensor(h0), Tensor(c0), i32(4), f32(clips[0]), f32(clips[1]),
                                      boolean(True)] + norms
        (results[clips],) = run(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, [Out(F32T, (5, 2, 2))])
        want = lstm_reference(x.astype(np.float64), cell, h0.astype(np.float64), c0.astype(np.float64), 4, *clips)
        _check(results[clips], want, F32T)
    assert np.abs(results[(0.25, 0.1)]).max() <= 0.1 + 1e-7
    assert np.abs(results[(0.0, 0.0)]).max() > 0.1


@pytest.mark.parametrize("kind", [F32T, F16T])
def test_bidirectional_sequence_lstm_merged_and_separate_with_and_without_auxiliary_input(kind):
    rng = np.random.default_rng(42 + int(kind))
    dtype = DTYPES[kind]
    combos = list(itertools.product((True, False), (True, False), (True, False)))
    for n, (time_major, merge, with_aux) in enumerate(combos):
        cifg, peephole, projection, norm = LSTM_OPTIONS[(5 * n + 3) % len(LSTM_OPTIONS)]
        steps, batch, size, fw_units, bw_units = (int(v) for v in rng.integers(1, 5, 5))
        aux_size = int(rng.integers(1, 4)) if with_aux else 0
        fw_out = int(rng.integers(1, 4)) if projection else fw_units
        bw_out = int(rng.integers(1, 4)) if projection else bw_units
        act = (4, 6, 0, 1, 3)[n % 5]
        cell_clip, proj_clip = (0.5, 0.35) if n % 2 else (0.0, 0.0)
        fw, fw_ops, fw_norms, fw_aux = lstm_cell(rng, kind, size, fw_units, fw_out, cifg, peephole, projection, norm,
                                                 aux_size)
        bw, bw_ops, bw_norms, bw_aux = lstm_cell(rng, kind, size, bw_units, bw_out, cifg, peephole, projection,
                                                 norm, aux_size)
        x = rng.uniform(-1, 1, (steps, batch, size)).astype(dtype)
        aux = rng.uniform(-1, 1, (steps, batch, aux_size)).astype(dtype) if with_aux else None
        states = [rng.uniform(-1, 1, s).astype(dtype) for s in ((batch, fw_out), (batch, fw_units),
                                                                  (batch, bw_out), (batch, bw_units))]
        absent = ("none", kind)
        aux_ops = (fw_aux + bw_aux) if with_aux else [absent] * 8
        inputs = ([Tensor(_major(x, time_major))] + fw_ops + bw_ops + [Tensor(s) for s in states]
                  + [Tensor(_major(aux, time_major)) if with_aux else absent] + aux_ops
                  + [i32(act), _scalar(kind, cell_clip), _scalar(kind, proj_clip), boolean(merge),
                     boolean(time_major)] + fw_norms + bw_norms)
        outs = ([Out(kind, _dims(time_major, steps, batch, fw_out + bw_out))] if merge else
                [Out(kind, _dims(time_major, steps, batch, fw_out)), Out(kind, _dims(time_major, steps, batch, bw_out))])
        got = run(OP.BIDIRECTIONAL_SEQUENCE_LSTM, inputs, outs)
        x64, aux64 = x.astype(np.float64), None if aux is None else aux.astype(np.float64)
        s64 = [s.astype(np.float64) for s in states]
        want_fw = lstm_reference(x64, fw, s64[0], s64[1], act, cell_clip, proj_clip, aux=aux64)
        want_bw = lstm_reference(x64, bw, s64[2], s64[3], act, cell_clip, proj_clip, reverse=True, aux=aux64)
        if merge:
            _check(_major(got[0], time_major), np.concatenate([want_fw, want_bw], axis=2), kind)
        else:
            _check(_major(got[0], time_major), want_fw, kind)
            _check(_major(got[1], time_major), want_bw, kind)


@pytest.mark.parametrize("kind", [F32T, F16T])
def test_unidirectional_sequence_rnn_with_every_activation_both_majors(kind):
    rng = np.random.default_rng(93 + int(kind))
    dtype = DTYPES[kind]
    for act, time_major in itertools.product((0, 1, 2, 3), (1, 0)):
        steps, batch, size, units = (int(v) for v in rng.integers(1, 6, 4))
        w, r = rng.uniform(-0.6, 0.6, (units, size)).astype(dtype), rng.uniform(-0.6, 0.6, (units, units)).astype(dtype)
        b, h0 = rng.uniform(-0.5, 0.5, units).astype(dtype), rng.uniform(-1, 1, (batch, units)).astype(dtype)
        x = rng.uniform(-1, 1, (steps, batch, size)).astype(dtype)
        dims = (steps, batch, units) if time_major else (batch, steps, units)
        (got,) = run(OP.UNIDIRECTIONAL_SEQUENCE_RNN, [Tensor(_major(x, time_major)), Tensor(w, const=True),
                                                      Tensor(r, const=bool(time_major)), Tensor(b, const=True), Tensor(h0),
                                                      i32(act), i32(time_major)], [Out(kind, dims)])
        want = rnn_reference(*(a.astype(np.float64) for a in (x, w, r, b, h0)), act)
        _check(_major(got, bool(time_major)), want, kind)


@pytest.mark.parametrize("kind", [F32T, F16T])
def test_bidirectional_sequence_rnn_merged_and_separate_with_and_without_auxiliary_input(kind):
    rng = np.random.default_rng(43 + int(kind))
    dtype = DTYPES[kind]
    for n, (time_major, merge, with_aux) in enumerate(itertools.product((True, False), repeat=3)):
        steps, batch, size, fw_units, bw_units, aux_size = (int(v) for v in rng.integers(1, 5, 6))

        def rand(*shape):
            return rng.uniform(-0.6, 0.6, shape).astype(dtype)
        fw = [rand(fw_units, size), rand(fw_units, fw_units), rand(fw_units), rand(batch, fw_units)]
        bw = [rand(bw_units, size), rand(bw_units, bw_units), rand(bw_units), rand(batch, bw_units)]
        x = rng.uniform(-1, 1, (steps, batch, size)).astype(dtype)
        aux = rng.uniform(-1, 1, (steps, batch, aux_size)).astype(dtype)
        fwa, bwa = rand(fw_units, aux_size), rand(bw_units, aux_size)
        act = n % 4
        absent = ("none", kind)
        extra = ([Tensor(_major(aux, time_major)), Tensor(fwa, const=True), Tensor(bwa, const=True)] if with_aux
                 else [absent] * 3)
        inputs = ([Tensor(_major(x, time_major))] + [Tensor(a, const=k < 3) for k, a in enumerate(fw)]
                  + [Tensor(a, const=k < 3) for k, a in enumerate(bw)] + extra
                  + [i32(act), boolean(time_major), boolean(merge)])
        outs = ([Out(kind, _dims(time_major, steps, batch, fw_units + bw_units))] if merge else
                [Out(kind, _dims(time_major, steps, batch, fw_units)), Out(kind, _dims(time_major, steps, batch, bw_units))])
        got = run(OP.BIDIRECTIONAL_SEQUENCE_RNN, inputs, outs)
        f64 = [a.astype(np.float64) for a in (x, aux, fwa, bwa)]
        aux_args = {"aux": f64[1]} if with_aux else {}
        want_fw = rnn_reference(f64[0], *(a.astype(np.float64) for a in fw), act, wa=f64[2], **aux_args)
        want_bw = rnn_reference(f64[0], *(a.astype(np.float64) for a in bw), act, reverse=True, wa=f64[3],
                                **aux_args)
        if merge:
            _check(_major(got[0], time_major), np.concatenate([want_fw, want_bw], axis=2), kind)
        else:
            _check(_major(got[0], time_major), want_fw, kind)
            _check(_major(got[1], time_major), want_bw, kind)


def _uni_lstm_inputs(rng, act=4, cifg=False, norm=True, drop=None, extra=None):
    _, ops, norms, _ = lstm_cell(rng, F32T, 3, 4, 4, cifg, True, None, norm)
    if drop is not None:
        ops[drop] = ("none", F32T)
    if extra is not None:
        ops[extra] = Tensor(rng.uniform(-1, 1, (4, 4) if extra < 8 else (4,)).astype(np.float32), const=True)
    return ([Tensor(np.zeros((2, 1, 3), np.float32))] + ops + [Tensor(np.zeros((1, 4), np.float32)),
            Tensor(np.zeros((1, 4), np.float32)), i32(act), f32(0.0), f32(0.0), boolean(True)] + norms)


def test_the_rules_of_the_headers_text_refuse_a_model_naming_what_is_wrong():
    rng = np.random.default_rng(1)
    out = [Out(F32T, (2, 1, 4))]
    with pytest.raises(nnapi.NNAPIError, match=r"input 20"):  # relu1 is not among the sequence LSTM's codes
        build(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, _uni_lstm_inputs(rng, act=2), out)
    inputs = _uni_lstm_inputs(rng)
    inputs[-1] = ("none", F32T)  # three of the four layer normalization weights
    assert "layer normalization weights are all given or all absent" in refused(OP.UNIDIRECTIONAL_SEQUENCE_LSTM,
                                                                                 inputs, out)
    assert "input gate weights" in refused(OP.UNIDIRECTIONAL_SEQUENCE_LSTM,  # CIFG with recurrent-to-input
                                           _uni_lstm_inputs(rng, cifg=True, norm=False, extra=4), out)
    assert "peephole" in refused(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, _uni_lstm_inputs(rng, norm=False, drop=9), out)
    with pytest.raises(nnapi.NNAPIError, match=r"input 7 \(recurrent-to-cell weights\)"):  # not optional
        build(OP.UNIDIRECTIONAL_SEQUENCE_LSTM, _uni_lstm_inputs(rng, norm=False, drop=6), out)
    x, w = np.zeros((2, 1, 3), np.float32), np.zeros((2, 3), np.float32)
    r, b, h = np.zeros((2, 2), np.float32), np.zeros(2, np.float32), np.zeros((1, 2), np.float32)
    cell = [Tensor(w, const=True), Tensor(r, const=True), Tensor(b, const=True), Tensor(h)]
    absent = [("none", F32T)] * 3
    tail = [i32(0), boolean(True)]
    assert "give one output" in refused(OP.BIDIRECTIONAL_SEQUENCE_RNN, [Tensor(x)] + cell + cell + absent + tail
                                        + [boolean(True)], [Out(F32T, (2, 1, 4)), Out(F32T, (2, 1, 2))])
    assert "both needed" in refused(OP.BIDIRECTIONAL_SEQUENCE_RNN, [Tensor(x)] + cell + cell + absent + tail
                                    + [boolean(False)], [Out(F32T, (2, 1, 2))])
    aux_only = [Tensor(x), ("none", F32T), ("none", F32T)]
    assert "auxiliary input and its weights" in refused(
        OP.BIDIRECTIONAL_SEQUENCE_RNN, [Tensor(x)] + cell + cell + aux_only + tail + [boolean(True)],
        [Out(F32T, (2, 1, 4))])
    with pytest.raises(nnapi.NNAPIError, match=r"input 6 \(time major\) is 2; NNAPI defines \[0, 1\]"):
        build(OP.UNIDIRECTIONAL_SEQUENCE_RNN, [Tensor(x)] + cell + [i32(0), i32(2)], [Out(F32T, (2, 1, 2))])
