"""LSTM (CIFG, peephole, projection, clipping; all four outputs), RNN and SVDF."""
import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    NO_VALUE,
    Out,
    Tensor,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
    f32,
    i32,
    run,
)
from nnapi_reference import lstm

from openvx_nn import nnapi

OP = nnapi.OperationType


def _lstm_inputs(rng, batch, size, units, out_size, cifg, peephole, projection):
    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)
    W = {g: r(units, size) for g in "ifco"}
    R = {g: r(units, out_size) for g in "ifco"}
    B = {g: r(units) for g in "ifco"}
    C = {g: r(units) for g in "ifo"} if peephole else {}
    if cifg:
        for d in (W, R, B, C):
            d.pop("i", None)
    P = r(out_size, units) if projection else None
    pb = r(out_size) if projection else None
    return W, R, B, C, P, pb


def _const(a):
    return NO_VALUE if a is None else Tensor(a, const=True)


@pytest.mark.parametrize("cifg,peephole,projection,clip", [(False, False, False, 0.0), (True, True, False, 0.0),
                                                           (False, True, True, 0.3), (True, False, True, 0.0)])
def test_lstm_step_with_state_inputs(cifg, peephole, projection, clip):
    rng = np.random.default_rng(int(cifg) + 2 * int(peephole) + 4 * int(projection))
    batch, size, units = 2, 3, 4
    out_size = 3 if projection else units
    W, R, B, C, P, pb = _lstm_inputs(rng, batch, size, units, out_size, cifg, peephole, projection)
    x = rng.standard_normal((batch, size)).astype(np.float32)
    h = rng.standard_normal((batch, out_size)).astype(np.float32)
    c = rng.standard_normal((batch, units)).astype(np.float32)
    inputs = ([Tensor(x)] + [_const(W.get(g)) for g in "ifco"] + [_const(R.get(g)) for g in "ifco"]
              + [_const(C.get(g)) for g in "ifo"] + [_const(B.get(g)) for g in "ifco"] + [_const(P), _const(pb)]
              + [Tensor(h), Tensor(c), i32(4), f32(clip), f32(clip)])
    gates = 3 if cifg else 4
    scratch, h_out, c_out, out = run(OP.LSTM, inputs, [Out(F32T, (batch, units * gates)), Out(F32T, (batch, out_size)),
                                                       Out(F32T, (batch, units)), Out(F32T, (batch, out_size))])
    activated = []
    want_h, want_c = lstm(x.astype(np.float64), W, R, C, B, P, pb, h, c, np.tanh, clip, clip, activated)
    assert_close(out, want_h, F32T)
    assert_close(h_out, want_h, F32T)
    assert_close(c_out, want_c, F32T)
    assert_close(scratch.reshape(-1), np.concatenate([g.reshape(-1) for g in activated]), F32T)


def test_rnn_step_both_operand_orders():
    rng = np.random.default_rng(8)
    x, w, rw = rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), rng.standard_normal((4, 4))
    b, h = rng.standard_normal(4), rng.standard_normal((2, 4))
    x, w, rw, b, h = (a.astype(np.float32) for a in (x, w, rw, b, h))
    want = np.clip(x.astype(np.float64) @ w.T + h.astype(np.float64) @ rw.T + b, 0, 6)
    ins = [Tensor(x), Tensor(w, const=True), Tensor(rw, const=True), Tensor(b, const=True)]
    state, out = run(OP.RNN, ins + [Tensor(h), i32(3)], [Out(F32T, (2, 4)), Out(F32T, (2, 4))])
    assert_close(out, want, F32T)
    assert_close(state, want, F32T)
    (out,) = run(OP.RNN, ins + [i32(3), Tensor(h)], [Out(F32T, (2, 4))])  # the seed's order
    assert_close(out, want, F32T)


@pytest.mark.parametrize("rank", [1, 2])
def test_svdf_pushes_the_memory(rank):
    rng = np.random.default_rng(rank)
    batch, size, units, memory = 2, 3, 2, 4
    filters = units * rank
    wf = rng.standard_normal((filters, size)).astype(np.float32)
    wt = rng.standard_normal((filters, memory)).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    x = rng.standard_normal((batch, size)).astype(np.float32)
    state = rng.standard_normal((batch, (memory - 1) * filters)).astype(np.float32)
    # memory per filter: the state's (memory - 1) entries, oldest first, then the new activation
    want_state = np.zeros_like(state, dtype=np.float64)
    want = np.zeros((batch, units))
    for b in range(batch):
        for f in range(filters):
            old = list(state[b, f * (memory - 1):(f + 1) * (memory - 1)])
            mem = old + [float(np.dot(wf[f].astype(np.float64), x[b]))]
            want[b, f // rank] += sum(m * t for m, t in zip(mem, wt[f]))
            want_state[b, f * (memory - 1):(f + 1) * (memory - 1)] = mem[1:]
        want[b] += bias
    new_state, out = run(OP.SVDF, [Tensor(x), Tensor(wf, const=True), Tensor(wt, const=True),
                                   Tensor(bias, const=True), Tensor(state), i32(rank), i32(1)],
                         [Out(F32T, state.shape), Out(F32T, (batch, units))])
    assert_close(out, np.maximum(want, 0), F32T)
    assert_close(new_state, want_state, F32T)


def _sequence(op, inputs, outputs, steps, feed):
    """Run one prepared model ``steps`` times with ``feed(step)`` as input 0; returns every output list."""
    from nnapi_harness import build
    m, _, outs = build(op, inputs, outputs)
    c = nnapi.Compilation(m)
    c.finish()
    results = []
    for step in range(steps):
        e = nnapi.Execution(c)
        e.set_input(0, feed(step))
        got = [np.zeros(o.dims, np.float32) for o in outs]
        for k, g in enumerate(got):
            e.set_output(k, g)
        e.compute()
        results.append(got)
    c.release()
    return results


def test_rnn_without_a_state_input_carries_its_state():
    rng = np.random.default_rng(9)
    w, rw, b = (rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (3, 3), (3,)))
    xs = rng.standard_normal((4, 1, 2)).astype(np.float32)
    results = _sequence(OP.RNN, [Tensor(xs[0]), Tensor(w, const=True), Tensor(rw, const=True),
                                 Tensor(b, const=True), i32(2)], [Out(F32T, (1, 3))], 4, lambda t: xs[t])
    h = np.zeros((1, 3))
    for t in range(4):
        h = np.clip(xs[t].astype(np.float64) @ w.T + h @ rw.T + b, -1, 1)
        assert_close(results[t][0], h, F32T)


def test_svdf_without_a_state_input_carries_its_memory():
    rng = np.random.default_rng(10)
    size, units, rank, memory = 2, 2, 1, 3
    wf = rng.standard_normal((units * rank, size)).astype(np.float32)
    wt = rng.standard_normal((units * rank, memory)).astype(np.float32)
    xs = rng.standard_normal((5, 1, size)).astype(np.float32)
    results = _sequence(OP.SVDF, [Tensor(xs[0]), Tensor(wf, const=True), Tensor(wt, const=True), NO_VALUE,
                                  i32(rank), i32(0)],
                        [Out(F32T, (1, (memory - 1) * units)), Out(F32T, (1, units))], 5, lambda t: xs[t])
    history = [np.zeros(units), np.zeros(units)]  # stage-1 outputs, oldest first
    for t in range(5):
        history.append(wf.astype(np.float64) @ xs[t][0])
        window = history[-memory:]
        want = [sum(window[j][f] * wt[f, j] for j in range(memory)) for f in range(units)]
        assert_close(results[t][1][0], want, F32T)
