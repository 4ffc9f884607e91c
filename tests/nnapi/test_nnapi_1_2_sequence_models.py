"""A speech-style model of the sequence operations (BIDIRECTIONAL_SEQUENCE_LSTM with merged outputs, layer
normalization, projection and a CIFG backward cell; UNIDIRECTIONAL_SEQUENCE_RNN; BIDIRECTIONAL_SEQUENCE_RNN with an
auxiliary input and separate outputs; UNIDIRECTIONAL_SEQUENCE_LSTM with CIFG and peepholes) in TENSOR_FLOAT32 and
in TENSOR_FLOAT16, through the Python front end and through the C API, against the NumPy references of
``test_nnapi_1_2_sequence``."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import compile_c, run_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_1_2_models import Spec
from test_nnapi_1_2_sequence import lstm_reference, rnn_reference
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
STEPS, BATCH, SIZE = 5, 2, 3
ABSENT = b""
"""An operand value meaning "no value" (``setOperandValue(NULL, 0)``)."""


class SequenceSpec(Spec):
    """``Spec`` with omitted optional operands."""

    def operand(self, kind, dims=(), scale=0.0, zero=0, value=None) -> int:
        if isinstance(value, bytes) and value == ABSENT:
            self.operands.append((int(kind), list(dims), scale, zero, ABSENT))
            return len(self.operands) - 1
        return super().operand(kind, dims, scale, zero, value)

    def c_body(self) -> str:
        kept = self.operands
        self.operands = [(*o[:4], None if o[4] == ABSENT else o[4]) for o in kept]
        try:
            body = super().c_body()
        finally:
            self.operands = kept
        head, sep, operations = body.partition("    { static const uint32_t i[]")
        for k, (_, _, _, _, data) in enumerate(kept):
            if data == ABSENT:
                head += f"    check(ANeuralNetworksModel_setOperandValue(model, {k}, NULL, 0), \"no value\");\n"
        return head + sep + operations


def build(kind):
    """The model and its weights (float64, as stored) for the reference."""
    dtype = np.float16 if kind == T.TENSOR_FLOAT16 else np.float32
    scalar = T.FLOAT16 if kind == T.TENSOR_FLOAT16 else T.FLOAT32
    rng = np.random.default_rng(29)
    s = SequenceSpec()
    weights = {}

    def tensor(name, *shape, value=True):
        v = rng.uniform(-0.6, 0.6, shape).astype(dtype) if value else None
        if v is not None:
            weights[name] = v.astype(np.float64)
        return s.operand(kind, shape, value=v)

    def absent():
        return s.operand(kind, [0], value=ABSENT)

    def lstm_cell(p, size, units, out, cifg, peephole, projection, norm):
        ops = [absent() if g == "i" and cifg else tensor(f"{p}wx_{g}", units, size) for g in "ifco"]
        ops += [absent() if g == "i" and cifg else tensor(f"{p}wh_{g}", units, out) for g in "ifco"]
        ops += [tensor(f"{p}p_{g}", units) if peephole and not (g == "i" and cifg) else absent() for g in "ifo"]
        ops += [absent() if g == "i" and cifg else tensor(f"{p}b_{g}", units) for g in "ifco"]
        ops += [tensor(f"{p}proj", out, units), tensor(f"{p}proj_b", out)] if projection else [absent(), absent()]
        norms = [tensor(f"{p}n_{g}", units) if norm else absent() for g in "ifco"]
        return ops, norms

    x = s.operand(kind, [STEPS, BATCH, SIZE])
    zeros = {}

    def state(name, *shape):
        zeros[name] = np.zeros(shape)
        return s.operand(kind, shape, value=np.zeros(shape, dtype))

    fw, fw_norms = lstm_cell("fw_", SIZE, 4, 3, False, True, True, True)
    bw, bw_norms = lstm_cell("bw_", SIZE, 3, 3, True, False, False, False)
    y1 = s.operand(kind, [STEPS, BATCH, 6])
    s.op(OP.BIDIRECTIONAL_SEQUENCE_LSTM,
         [x, *fw, *bw, state("h_fw", BATCH, 3), state("c_fw", BATCH, 4), state("h_bw", BATCH, 3),
          state("c_bw", BATCH, 3), absent(), *[absent() for _ in range(8)], s.operand(T.INT32, value=4),
          s.operand(scalar, value=0.8), s.operand(scalar, value=0.6), s.operand(T.BOOL, value=True),
          s.operand(T.BOOL, value=True), *fw_norms, *bw_norms], [y1])
    y2 = s.operand(kind, [STEPS, BATCH, 4])
    s.op(OP.UNIDIRECTIONAL_SEQUENCE_RNN, [y1, tensor("r_w", 4, 6), tensor("r_r", 4, 4), tensor("r_b", 4),
                                          state("h_r", BATCH, 4), s.operand(T.INT32, value=1),
                                          s.operand(T.INT32, value=1)], [y2])
    out_fw, out_bw = s.operand(kind, [STEPS, BATCH, 2]), s.operand(kind, [STEPS, BATCH, 3])
    s.op(OP.BIDIRECTIONAL_SEQUENCE_RNN,
         [y2, tensor("bf_w", 2, 4), tensor("bf_r", 2, 2), tensor("bf_b", 2), state("h_bf", BATCH, 2),
          tensor("bb_w", 3, 4), tensor("bb_r", 3, 3), tensor("bb_b", 3), state("h_bb", BATCH, 3), x,
          tensor("bf_a", 2, SIZE), tensor("bb_a", 3, SIZE), s.operand(T.INT32, value=3),
          s.operand(T.BOOL, value=True), s.operand(T.BOOL, value=False)], [out_fw, out_bw])
    uni, uni_norms = lstm_cell("u_", 4, 3, 3, True, True, False, False)
    out_lstm = s.operand(kind, [STEPS, BATCH, 3])
    s.op(OP.UNIDIRECTIONAL_SEQUENCE_LSTM,
         [y2, *uni, state("h_u", BATCH, 3), state("c_u", BATCH, 3), s.operand(T.INT32, value=6),
          s.operand(scalar, value=0.0), s.operand(scalar, value=0.0), s.operand(T.BOOL, value=True), *uni_norms],
         [out_lstm])
    s.inputs, s.outputs = [x], [out_fw, out_bw, out_lstm]
    return s, weights, dtype


def model_input(dtype):
    return (np.arange(STEPS * BATCH * SIZE).reshape(STEPS, BATCH, SIZE) % 7 / 3.0 - 1.0).astype(dtype)


def numpy_reference(weights, x, dtype):
    """Each operation's result is stored in ``dtype`` (rounded once) before the next reads it."""
    def stored(v):
        return v.astype(dtype).astype(np.float64)

    def cell(p):
        return {k[len(p):]: v for k, v in weights.items() if k.startswith(p)}
    z = np.zeros
    y1 = np.concatenate([lstm_reference(x, cell("fw_"), z((BATCH, 3)), z((BATCH, 4)), 4, 0.8, 0.6),
                         lstm_reference(x, cell("bw_"), z((BATCH, 3)), z((BATCH, 3)), 4, 0.8, 0.6, reverse=True)],
                        axis=2)
    y1 = stored(y1)
    y2 = rnn_reference(y1, weights["r_w"], weights["r_r"], weights["r_b"], z((BATCH, 4)), 1)
    y2 = stored(y2)
    out_fw = rnn_reference(y2, weights["bf_w"], weights["bf_r"], weights["bf_b"], z((BATCH, 2)), 3, aux=x,
                           wa=weights["bf_a"])
    out_bw = rnn_reference(y2, weights["bb_w"], weights["bb_r"], weights["bb_b"], z((BATCH, 3)), 3, reverse=True,
                           aux=x, wa=weights["bb_a"])
    out_lstm = lstm_reference(y2, cell("u_"), z((BATCH, 3)), z((BATCH, 3)), 6, 0.0, 0.0)
    return [out_fw, out_bw, out_lstm]


SHAPES = [(STEPS, BATCH, 2), (STEPS, BATCH, 3), (STEPS, BATCH, 3)]


def run_python(m, dtype):
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, model_input(dtype))
    outs = [np.zeros(shape, dtype) for shape in SHAPES]
    for k, out in enumerate(outs):
        e.set_output(k, out)
    e.compute()
    c.release()
    return outs


def check(got, want, dtype):
    for g, w in zip(got, want):
        if dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=0, atol=2e-5)
        else:  # the reference rounded once to float16 (within a float16 step of 2^-11 relative, or 2^-12 near 0)
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float16), rtol=2e-3, atol=5e-4)


KINDS = [T.TENSOR_FLOAT32, T.TENSOR_FLOAT16]


@pytest.mark.parametrize("kind", KINDS, ids=["float32", "float16"])
def test_the_model_matches_numpy_through_the_python_front_end(kind):
    spec, weights, dtype = build(kind)
    x = model_input(dtype)
    want = numpy_reference(weights, x.astype(np.float64), dtype)
    assert all(np.abs(w).max() > 0.05 for w in want)
    check(run_python(spec.python(), dtype), want, dtype)


def c_program(spec, feeds, sizes) -> str:
    """A C program building ``spec`` through ``ANeuralNetworksModel_*``, running it once on ``feeds`` (bytes) and
    printing every output byte, one a line."""
    arrays = "\n".join(f"    static const unsigned char in{k}[] = {{{', '.join(str(b) for b in v.tobytes())}}};"
                        for k, v in enumerate(feeds))
    arrays += "\n" + "\n".join(f"    static unsigned char out{k}[{n}];" for k, n in enumerate(sizes))
    sets = "\n".join(f"    check(ANeuralNetworksExecution_setInput(run, {k}, NULL, in{k}, sizeof in{k}), \"in\");"
                      for k in range(len(feeds)))
    sets += "\n" + "\n".join(f"    check(ANeuralNetworksExecution_setOutput(run, {k}, NULL, out{k}, sizeof out{k}), "
                             "\"out\");" for k in range(len(sizes)))
    prints = "\n".join(f"    for (i = 0; i < sizeof out{k}; i++) printf(\"%d\\n\", out{k}[i]);"
                        for k in range(len(sizes)))
    return f"""#include <NeuralNetworks.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int status, const char *what)
{{
    if (status != ANEURALNETWORKS_NO_ERROR) {{ printf("%s %d\\n", what, status); exit(1); }}
}}

int main(void)
{{
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *compiled = NULL;
    ANeuralNetworksExecution *run = NULL;
    static const uint32_t inputs[] = {{{', '.join(map(str, spec.inputs))}}};
    static const uint32_t outputs[] = {{{', '.join(map(str, spec.outputs))}}};
{arrays}
    unsigned i;
    check(ANeuralNetworksModel_create(&model), "create");
{spec.c_body()}
    check(ANeuralNetworksModel_identifyInputsAndOutputs(model, {len(feeds)}, inputs, {len(sizes)}, outputs), "ids");
    check(ANeuralNetworksModel_finish(model), "finish");
    check(ANeuralNetworksCompilation_create(model, &compiled), "compilation");
    check(ANeuralNetworksCompilation_finish(compiled), "compile");
    check(ANeuralNetworksExecution_create(compiled, &run), "execution");
{sets}
    check(ANeuralNetworksExecution_compute(run), "compute");
{prints}
    ANeuralNetworksExecution_free(run);
    ANeuralNetworksCompilation_free(compiled);
    ANeuralNetworksModel_free(model);
    return 0;
}}
"""


@pytest.mark.parametrize("kind", KINDS, ids=["float32", "float16"])
def test_the_model_through_the_c_api_matches_numpy_and_the_python_front_end(kind):
    spec, weights, dtype = build(kind)
    x = model_input(dtype)
    sizes = [int(np.prod(shape)) * np.dtype(dtype).itemsize for shape in SHAPES]
    source = c_program(spec, [x], sizes)
    run = run_c(compile_c(source, "nnapi_1_2_sequence", nnapi_flags()), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    raw = bytes(int(v) for v in run.stdout.split())
    assert len(raw) == sum(sizes)
    got, start = [], 0
    for shape, n in zip(SHAPES, sizes):
        got.append(np.frombuffer(raw[start:start + n], dtype).reshape(shape))
        start += n
    check(got, numpy_reference(weights, x.astype(np.float64), dtype), dtype)
    for mine, python in zip(got, run_python(spec.python(), dtype)):
        np.testing.assert_array_equal(mine, python)  # the same graph: the same bits


def build_quantized():
    """Two QUANTIZED_16BIT_LSTM steps: the second reads the first's cell state and output."""
    rng = np.random.default_rng(73)
    s = SequenceSpec()
    act, state, w_scale = (1 / 128, 128), (2.0 ** -11, 0), 0.03125
    x = s.operand(T.TENSOR_QUANT8_ASYMM, [2, 3], *act)
    h0 = s.operand(T.TENSOR_QUANT8_ASYMM, [2, 4], *act)
    c0 = s.operand(T.TENSOR_QUANT16_SYMM, [2, 4], *state)
    weights = [s.operand(T.TENSOR_QUANT8_ASYMM, [4, n], w_scale, 120, rng.integers(0, 256, (4, n)))
               for n in (3, 3, 3, 3, 4, 4, 4, 4)]
    biases = [s.operand(T.TENSOR_INT32, [4], w_scale / 128, 0, rng.integers(-2000, 2000, 4)) for _ in range(4)]
    c1, h1 = s.operand(T.TENSOR_QUANT16_SYMM, [2, 4], *state), s.operand(T.TENSOR_QUANT8_ASYMM, [2, 4], *act)
    s.op(OP.QUANTIZED_16BIT_LSTM, [x, *weights, *biases, c0, h0], [c1, h1])
    c2, h2 = s.operand(T.TENSOR_QUANT16_SYMM, [2, 4], *state), s.operand(T.TENSOR_QUANT8_ASYMM, [2, 4], *act)
    s.op(OP.QUANTIZED_16BIT_LSTM, [x, *weights, *biases, c1, h1], [c2, h2])
    s.inputs, s.outputs = [x, h0, c0], [c2, h2]
    feeds = [rng.integers(0, 256, (2, 3)).astype(np.uint8), rng.integers(0, 256, (2, 4)).astype(np.uint8),
             rng.integers(-9000, 9000, (2, 4)).astype(np.int16)]
    return s, feeds




def test_two_quantized_16bit_lstm_steps_give_the_same_bits_from_c_and_python():
    spec, feeds = build_quantized()
    m = spec.python()
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    for k, v in enumerate(feeds):
        e.set_input(k, v)
    want = [np.zeros((2, 4), np.int16), np.zeros((2, 4), np.uint8)]
    for k, out in enumerate(want):
        e.set_output(k, out)
    e.compute()
    c.release()
    assert len(np.unique(want[1])) > 2 and np.abs(want[0]).max() > 100  # the cell did work
    source = c_program(spec, feeds, [16, 8])
    run = run_c(compile_c(source, "nnapi_quantized_lstm", nnapi_flags()), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    raw = bytes(int(v) for v in run.stdout.split())
    np.testing.assert_array_equal(np.frombuffer(raw[:16], np.int16).reshape(2, 4), want[0])
    np.testing.assert_array_equal(np.frombuffer(raw[16:], np.uint8).reshape(2, 4), want[1])


def test_float32_sequence_layers_run_the_native_plan():
    """A batch-major UNIDIRECTIONAL_SEQUENCE_LSTM (peepholes, projection), a merged BIDIRECTIONAL_SEQUENCE_LSTM
    and a UNIDIRECTIONAL_SEQUENCE_RNN in float32: every node is an entry of the recurrent engine, so the graph runs
    its native plan, and gives the references' numbers run after run."""
    rng = np.random.default_rng(43)
    s = SequenceSpec()
    weights = {}
    f32 = T.TENSOR_FLOAT32

    def tensor(name, *shape):
        weights[name] = rng.uniform(-0.6, 0.6, shape).astype(np.float32)
        return s.operand(f32, shape, value=weights[name])

    def absent():
        return s.operand(f32, [0], value=ABSENT)

    def zeros(*shape):
        return s.operand(f32, shape, value=np.zeros(shape, np.float32))

    def cell(p, size, units, out, peephole, projection):
        ops = [tensor(f"{p}wx_{g}", units, size) for g in "ifco"] + [tensor(f"{p}wh_{g}", units, out) for g in "ifco"]
        ops += [tensor(f"{p}p_{g}", units) if peephole else absent() for g in "ifo"]
        ops += [tensor(f"{p}b_{g}", units) for g in "ifco"]
        return ops + ([tensor(f"{p}proj", out, units), tensor(f"{p}proj_b", out)] if projection else [absent(), absent()])

    x = s.operand(f32, [BATCH, STEPS, SIZE])  # batch-major
    y1 = s.operand(f32, [BATCH, STEPS, 3])
    s.op(OP.UNIDIRECTIONAL_SEQUENCE_LSTM,
         [x, *cell("u_", SIZE, 4, 3, True, True), zeros(BATCH, 3), zeros(BATCH, 4), s.operand(T.INT32, value=4),
          s.operand(T.FLOAT32, value=0.0), s.operand(T.FLOAT32, value=0.0), s.operand(T.BOOL, value=False),
          *[absent() for _ in range(4)]], [y1])
    y2 = s.operand(f32, [BATCH, STEPS, 5])
    s.op(OP.BIDIRECTIONAL_SEQUENCE_LSTM,
         [y1, *cell("fw_", 3, 2, 2, False, False), *cell("bw_", 3, 3, 3, False, False), zeros(BATCH, 2),
          zeros(BATCH, 2), zeros(BATCH, 3), zeros(BATCH, 3), absent(), *[absent() for _ in range(8)],
          s.operand(T.INT32, value=4), s.operand(T.FLOAT32, value=0.0), s.operand(T.FLOAT32, value=0.0),
          s.operand(T.BOOL, value=True), s.operand(T.BOOL, value=False), *[absent() for _ in range(8)]], [y2])
    y3 = s.operand(f32, [BATCH, STEPS, 4])
    s.op(OP.UNIDIRECTIONAL_SEQUENCE_RNN, [y2, tensor("r_w", 4, 5), tensor("r_r", 4, 4), tensor("r_b", 4),
                                          zeros(BATCH, 4), s.operand(T.INT32, value=1), s.operand(T.INT32, value=0)],
         [y3])
    s.inputs, s.outputs = [x], [y3]
    compilation = nnapi.Compilation(s.python())
    compilation.finish()
    execution = nnapi.Execution(compilation)
    feed = rng.standard_normal((BATCH, STEPS, SIZE)).astype(np.float32)
    out = np.zeros((BATCH, STEPS, 4), np.float32)
    execution.set_input(0, feed)
    execution.set_output(0, out)
    execution.compute()  # binds and publishes the plan
    graph = compilation.prepared.graph
    assert graph.plan.native is not None, "the graph has no native plan"
    runs = graph.native_runs
    out[...] = 0
    execution.compute()
    assert graph.native_runs == runs + 1, "Execution.compute did not run the native plan"

    def of(p):
        return {k[len(p):]: v.astype(np.float64) for k, v in weights.items() if k.startswith(p)}
    z = np.zeros
    tm = feed.transpose(1, 0, 2).astype(np.float64)
    y1 = lstm_reference(tm, of("u_"), z((BATCH, 3)), z((BATCH, 4)), 4, 0.0, 0.0)
    y2 = np.concatenate([lstm_reference(y1, of("fw_"), z((BATCH, 2)), z((BATCH, 2)), 4, 0.0, 0.0),
                         lstm_reference(y1, of("bw_"), z((BATCH, 3)), z((BATCH, 3)), 4, 0.0, 0.0, reverse=True)],
                        axis=2)
    y3 = rnn_reference(y2, weights["r_w"].astype(np.float64), weights["r_r"].astype(np.float64),
                       weights["r_b"].astype(np.float64), z((BATCH, 4)), 1)
    np.testing.assert_allclose(out, y3.transpose(1, 0, 2), rtol=0, atol=2e-5)
    compilation.release()
