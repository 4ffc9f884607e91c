"""Optional inputs omitted at execution (``Execution.set_input(k, None)``, the HAL's ``hasNoValue``): LSTM
without peephole, projection or input gate (CIFG), SVDF without bias, LSH_PROJECTION without weight; a
required input omitted is an error naming the operation and the operand."""
import numpy as np
import pytest
from nnapi_harness import (
    F32T,
    I32T,
    assert_close,
    collect_garbage,  # noqa: F401 - an autouse fixture
)
from nnapi_reference import lstm

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType


def model_of(op, inputs, outputs):
    """One operation whose tensor inputs are all model inputs: ``inputs`` holds (type, declared dims) for a
    model input, or ("i32"|"f32", value) for a constant scalar; ``outputs`` (type, dims)."""
    m = nnapi.Model()
    ins, model_inputs = [], []
    for kind, spec in inputs:
        if kind in ("i32", "f32"):
            k = m.add_operand(T.INT32 if kind == "i32" else T.FLOAT32)
            m.set_operand_value(k, spec)
        else:
            k = m.add_operand(kind, dimensions=spec)
            model_inputs.append(k)
        ins.append(k)
    outs = [m.add_operand(kind, dimensions=dims) for kind, dims in outputs]
    m.add_operation(op, inputs=ins, outputs=outs)
    m.identify_inputs_and_outputs(inputs=model_inputs, outputs=outs)
    m.finish()
    assert nnapi.hal.Device().get_supported_operations(m.to_hal()) == [True]  # decided at execution
    c = nnapi.Compilation(m)
    c.finish()
    return c


def execute(c, feeds, out_shapes, dtype=np.float32):
    e = nnapi.Execution(c)
    for k, value in enumerate(feeds):
        e.set_input(k, value)
    results = [np.zeros(s, dtype) for s in out_shapes]
    for k, r in enumerate(results):
        e.set_output(k, r)
    e.compute()
    return results


LSTM_CASES = [(False, False, False), (False, True, True), (True, True, False), (True, False, True)]


def _lstm_model(batch, size, units, out_size, gates):
    """The Android test generator's form: every optional input a model input of unknown dimensions."""
    f, f2 = (F32T, [0]), (F32T, [0, 0])
    inputs = ([(F32T, [batch, size])] + [f2] + [(F32T, [units, size])] * 3 + [f2] + [(F32T, [units, out_size])] * 3
              + [f] * 3 + [f] + [(F32T, [units])] * 3 + [f2, f]
              + [(F32T, [batch, out_size]), (F32T, [batch, units]), ("i32", 4), ("f32", 0.0), ("f32", 0.0)])
    outputs = [(F32T, [batch, units * gates]), (F32T, [batch, out_size]), (F32T, [batch, units]),
               (F32T, [batch, out_size])]
    return model_of(OP.LSTM, inputs, outputs)


@pytest.mark.parametrize("cifg,peephole,projection", LSTM_CASES)
def test_lstm_with_optional_inputs_omitted_at_execution(cifg, peephole, projection):
    rng = np.random.default_rng(11 + 2 * cifg + 4 * peephole + 8 * projection)
    batch, size, units = 2, 3, 4
    out_size = 2 if projection else units

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)
    W = {g: r(units, size) for g in "ifco" if g != "i" or not cifg}
    R = {g: r(units, out_size) for g in W}
    B = {g: r(units) for g in W}
    C = {g: r(units) for g in "ifo" if g != "i" or not cifg} if peephole else {}
    P, pb = (r(out_size, units), r(out_size)) if projection else (None, None)
    x, h, c = r(batch, size), r(batch, out_size), r(batch, units)
    gates = 3 if cifg else 4
    compiled = _lstm_model(batch, size, units, out_size, gates)
    feeds = ([x] + [W.get(g) for g in "ifco"] + [R.get(g) for g in "ifco"] + [C.get(g) for g in "ifo"]
             + [B.get(g) for g in "ifco"] + [P, pb, h, c])
    shapes = [(batch, units * gates), (batch, out_size), (batch, units), (batch, out_size)]
    scratch, h_out, c_out, out = execute(compiled, feeds, shapes)
    activated = []
    want_h, want_c = lstm(x.astype(np.float64), W, R, C, B, P, pb, h.astype(np.float64), c.astype(np.float64),
                          np.tanh, 0.0, 0.0, activated)
    assert_close(out, want_h, F32T)
    assert_close(h_out, want_h, F32T)
    assert_close(c_out, want_c, F32T)
    assert_close(scratch.reshape(-1), np.concatenate([g.reshape(-1) for g in activated]), F32T)


def test_one_lstm_compilation_runs_with_and_without_peepholes():
    rng = np.random.default_rng(5)
    batch, size, units = 1, 2, 3
    c = _lstm_model(batch, size, units, units, 4)
    W = {g: rng.standard_normal((units, size)).astype(np.float32) for g in "ifco"}
    R = {g: rng.standard_normal((units, units)).astype(np.float32) for g in "ifco"}
    B = {g: rng.standard_normal(units).astype(np.float32) for g in "ifco"}
    C = {g: rng.standard_normal(units).astype(np.float32) for g in "ifo"}
    x, h, cell = (rng.standard_normal(s).astype(np.float32) for s in ((batch, size), (batch, units), (batch, units)))
    shapes = [(batch, units * 4), (batch, units), (batch, units), (batch, units)]
    for peep in ({}, C, {}):
        feeds = ([x] + [W[g] for g in "ifco"] + [R[g] for g in "ifco"] + [peep.get(g) for g in "ifo"]
                 + [B[g] for g in "ifco"] + [None, None, h, cell])
        out = execute(c, feeds, shapes)[3]
        want, _ = lstm(x.astype(np.float64), W, R, peep, B, None, None, h.astype(np.float64),
                       cell.astype(np.float64), np.tanh, 0.0, 0.0)
        assert_close(out, want, F32T)


def test_svdf_without_bias():
    rng = np.random.default_rng(12)
    batch, size, units, rank, memory = 2, 3, 2, 2, 3
    filters = units * rank
    wf, wt = rng.standard_normal((filters, size)), rng.standard_normal((filters, memory))
    x, state = rng.standard_normal((batch, size)), rng.standard_normal((batch, (memory - 1) * filters))
    wf, wt, x, state = (a.astype(np.float32) for a in (wf, wt, x, state))
    c = model_of(OP.SVDF, [(F32T, [batch, size]), (F32T, [filters, size]), (F32T, [filters, memory]), (F32T, [0]),
                           (F32T, list(state.shape)), ("i32", rank), ("i32", 0)],
                 [(F32T, list(state.shape)), (F32T, [batch, units])])
    _, out = execute(c, [x, wf, wt, None, state], [state.shape, (batch, units)])
    # the seed: each filter's memory is its state (oldest first) and the new feature; the output sums
    # memory * weights_time over the rank's filters of a unit, plus bias (none here)
    want = np.zeros((batch, units))
    for b in range(batch):
        for f in range(filters):
            mem = list(state[b, f * (memory - 1):(f + 1) * (memory - 1)]) + [float(wf[f].astype(float) @ x[b])]
            want[b, f // rank] += sum(m * t for m, t in zip(mem, wt[f]))
    assert_close(out, want, F32T)


def test_lsh_projection_without_weight_weighs_every_row_one():
    """The seed: "if not set, each input element is considered to have the same weight of 1.0"."""
    rng = np.random.default_rng(13)
    hashes = rng.standard_normal((4, 3)).astype(np.float32)
    x = rng.integers(-50, 50, size=(5, 2), dtype=np.int32)
    for kind, shape in ((1, (4,)), (2, (12,))):
        c = model_of(OP.LSH_PROJECTION, [(F32T, [4, 3]), (I32T, [5, 2]), (F32T, [0]), ("i32", kind)],
                     [(I32T, list(shape))])
        (omitted,) = execute(c, [hashes, x, None], [shape], np.int32)
        (ones,) = execute(c, [hashes, x, np.ones(5, np.float32)], [shape], np.int32)
        np.testing.assert_array_equal(omitted, ones)


@pytest.mark.parametrize("op,inputs,position,pattern", [
    (OP.SVDF, [(F32T, [1, 2]), (F32T, [2, 2]), (F32T, [2, 3]), (F32T, [0]), ("i32", 1), ("i32", 0)], 2,
     r"operation 0 \(SVDF\): input 2 \(weights_time, operand 2\) has no value; it is not optional"),
    (OP.RELU, [(F32T, [2])], 0, r"operation 0 \(RELU\): input 0 \(operand 0\) has no value; it is not optional"),
])
def test_omitting_a_required_input_names_the_operation_and_operand(op, inputs, position, pattern):
    outputs = [(F32T, [1, 2]), (F32T, [1, 2])] if op == OP.SVDF else [(F32T, [2])]
    c = model_of(op, inputs, outputs)
    e = nnapi.Execution(c)
    for k in range(sum(1 for kind, _ in inputs if kind not in ("i32", "f32"))):
        e.set_input(k, None if k == position else np.ones([d or 1 for d in inputs[k][1]], np.float32))
    for k, (_, dims) in enumerate(outputs):
        e.set_output(k, np.zeros(dims, np.float32))
    with pytest.raises(nnapi.NNAPIError, match=pattern) as err:
        e.compute()
    assert err.value.status == nnapi.ErrorStatus.INVALID_ARGUMENT
