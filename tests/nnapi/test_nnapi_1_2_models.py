"""A MediaPipe-style model of NNAPI 1.2's operations (PRELU, INSTANCE_NORMALIZATION, CHANNEL_SHUFFLE,
RESIZE_NEAREST_NEIGHBOR, SPLIT, MAXIMUM, PAD_V2, REDUCE_SUM, LOG_SOFTMAX, GREATER, NEG, SELECT, ARGMAX, SLICE, EXP,
QUANTIZE, REDUCE_ANY, EXPAND_DIMS, TILE, GATHER) through the Python front end and through the C API, against a
NumPy reference written from the header's text; five outputs of four types (float32, int32, uint8, bool8)."""
from __future__ import annotations

import numpy as np
from conftest import compile_c, run_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
F32T, I32T, Q8, B8 = T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_BOOL8
ALPHA = np.array([[[0.25, 0.5, 0.0, 2.0]]], np.float32)
GAMMA, BETA, EPSILON = 1.5, 0.1, 1e-3
Q_SCALE, Q_ZERO = 0.05, 10


C_MAIN = r"""
#include <NeuralNetworks.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int status, const char *what)
{
    if (status != ANEURALNETWORKS_NO_ERROR) {
        printf("%s %d\n", what, status);
        exit(1);
    }
}

int main(void)
{
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
"""
"""The head of a test's C program: the header, ``check`` (print the label and code of a failed call, exit 1) and
``main``'s model, compilation and execution; the program goes on with its own declarations, ``BODY`` (where
:meth:`Spec.c_source` writes the model's calls) and its run."""


class Spec:
    """A model as data (operands with their values, operations), built by the Python API or written out as a C
    program of ``ANeuralNetworksModel_*`` calls."""

    def __init__(self):
        self.operands: list[tuple[int, list[int], float, int, bytes | None]] = []
        self.operations: list[tuple[int, list[int], list[int]]] = []

    def operand(self, kind, dims=(), scale=0.0, zero=0, value=None) -> int:
        data = None if value is None else np.asarray(value, nnapi.enums.DTYPES[kind]).tobytes()
        self.operands.append((int(kind), list(dims), scale, zero, data))
        return len(self.operands) - 1

    def op(self, code, ins, outs) -> None:
        self.operations.append((int(code), list(ins), list(outs)))

    def python(self) -> nnapi.Model:
        m = nnapi.Model()
        for kind, dims, scale, zero, data in self.operands:
            k = m.add_operand(kind, dims, scale, zero)
            if data == b"":  # an omitted optional operand (no value)
                m.set_operand_value(k, None)
            elif data is not None:
                shape = dims if dims else ()
                m.set_operand_value(k, np.frombuffer(data, nnapi.enums.DTYPES[kind]).reshape(shape))
        for code, ins, outs in self.operations:
            m.add_operation(code, ins, outs)
        m.identify_inputs_and_outputs(self.inputs, self.outputs)
        m.finish()
        return m

    def c_source(self, program: str) -> str:
        """``program`` with the model's input and output indexes for ``INPUTS``/``OUTPUTS`` and its calls for
        ``BODY``."""
        return (program.replace("INPUTS", ", ".join(map(str, self.inputs)))
                .replace("OUTPUTS", ", ".join(map(str, self.outputs))).replace("BODY", self.c_body()))

    def c_body(self) -> str:
        lines = []
        for k, (kind, dims, scale, zero, data) in enumerate(self.operands):
            d = f"static const uint32_t d[] = {{{', '.join(map(str, dims))}}}; " if dims else ""
            lines.append(f"    {{ {d}ANeuralNetworksOperandType t = {{{kind}, {len(dims)}, "
                         f"{'d' if dims else 'NULL'}, {scale!r}f, {zero}}};")
            lines.append("      check(ANeuralNetworksModel_addOperand(model, &t), \"addOperand\"); }")
            if data is not None:
                values = ", ".join(str(b) for b in data)
                lines.append(f"    {{ static const unsigned char v[] = {{{values}}}; check("
                             f"ANeuralNetworksModel_setOperandValue(model, {k}, v, sizeof v), \"setOperandValue\"); }}")
        for code, ins, outs in self.operations:
            lines.append(f"    {{ static const uint32_t i[] = {{{', '.join(map(str, ins))}}}, "
                         f"o[] = {{{', '.join(map(str, outs))}}};")
            lines.append(f"      check(ANeuralNetworksModel_addOperation(model, {code}, {len(ins)}, i, {len(outs)}, "
                         "o), \"addOperation\"); }")
        return "\n".join(lines)


def build() -> Spec:
    s = Spec()

    def f32(dims):
        return s.operand(F32T, dims)

    def ints(values):
        value = np.asarray(values, np.int32)
        return s.operand(I32T, value.shape, value=value)

    x = f32([1, 8, 8, 4])
    a, b, c, d = f32([1, 8, 8, 4]), f32([1, 8, 8, 4]), f32([1, 8, 8, 4]), f32([1, 16, 16, 4])
    e1, e2, f, g = f32([1, 16, 16, 2]), f32([1, 16, 16, 2]), f32([1, 16, 16, 2]), f32([1, 18, 18, 2])
    h, ls, neg, out1 = f32([1, 2]), f32([1, 2]), f32([1, 2]), f32([1, 2])
    mask, any_ = s.operand(B8, [1, 2]), s.operand(B8, [1, 1])
    arg = s.operand(I32T, [1, 18, 18])
    window, grown, quantized = f32([1, 4, 4, 2]), f32([1, 4, 4, 2]), s.operand(Q8, [1, 4, 4, 2], Q_SCALE, Q_ZERO)
    expanded, tiled, gathered = f32([1, 1, 2]), f32([2, 1, 2]), f32([2, 1, 2])
    s.op(OP.PRELU, [x, s.operand(F32T, [1, 1, 4], value=ALPHA)], [a])
    s.op(OP.INSTANCE_NORMALIZATION, [a, s.operand(T.FLOAT32, value=GAMMA), s.operand(T.FLOAT32, value=BETA),
                                     s.operand(T.FLOAT32, value=EPSILON), s.operand(T.BOOL, value=False)], [b])
    s.op(OP.CHANNEL_SHUFFLE, [b, s.operand(T.INT32, value=2), s.operand(T.INT32, value=-1)], [c])
    s.op(OP.RESIZE_NEAREST_NEIGHBOR, [c, s.operand(T.INT32, value=16), s.operand(T.INT32, value=16),
                                      s.operand(T.BOOL, value=False)], [d])
    s.op(OP.SPLIT, [d, s.operand(T.INT32, value=3), s.operand(T.INT32, value=2)], [e1, e2])
    s.op(OP.MAXIMUM, [e1, e2], [f])
    s.op(OP.PAD_V2, [f, ints([[0, 0], [1, 1], [1, 1], [0, 0]]), s.operand(T.FLOAT32, value=-1.0)], [g])
    s.op(OP.REDUCE_SUM, [g, ints([1, -2]), s.operand(T.BOOL, value=False)], [h])
    s.op(OP.LOG_SOFTMAX, [h, s.operand(T.FLOAT32, value=0.125), s.operand(T.INT32, value=-1)], [ls])
    s.op(OP.GREATER, [ls, s.operand(F32T, [1], value=[-0.5])], [mask])
    s.op(OP.NEG, [ls], [neg])
    s.op(OP.SELECT, [mask, ls, neg], [out1])
    s.op(OP.ARGMAX, [g, s.operand(T.INT32, value=-1)], [arg])
    s.op(OP.SLICE, [f, ints([0, 4, 4, 0]), ints([1, 4, 4, -1])], [window])
    s.op(OP.EXP, [window], [grown])
    s.op(OP.QUANTIZE, [grown], [quantized])
    s.op(OP.REDUCE_ANY, [mask, ints([1]), s.operand(T.BOOL, value=True)], [any_])
    s.op(OP.EXPAND_DIMS, [ls, s.operand(T.INT32, value=0)], [expanded])
    s.op(OP.TILE, [expanded, ints([2, 1, 1])], [tiled])
    s.op(OP.GATHER, [tiled, s.operand(T.INT32, value=2), ints([1, 0])], [gathered])
    s.inputs, s.outputs = [x], [out1, arg, quantized, any_, gathered]
    return s


SHAPES = [((1, 2), np.float32), ((1, 18, 18), np.int32), ((1, 4, 4, 2), np.uint8), ((1, 1), np.bool_),
          ((2, 1, 2), np.float32)]


def model_input() -> np.ndarray:
    """``(i * 37 % 23) / 4 - 2`` for element i (the C program's formula)."""
    return np.array([(i * 37 % 23) / 4.0 - 2.0 for i in range(256)], np.float32).reshape(1, 8, 8, 4)


def numpy_reference(x: np.ndarray) -> list[np.ndarray]:
    v = x.astype(np.float64)
    a = np.where(v >= 0, v, ALPHA * v)  # PRELU
    mean = a.mean(axis=(1, 2), keepdims=True)
    var = ((a - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    b = (a - mean) * np.float32(GAMMA) / np.sqrt(var + np.float32(EPSILON)) + np.float32(BETA)
    b = b.astype(np.float32).astype(np.float64)
    c = b[..., [0, 2, 1, 3]]  # two groups of two: channel k * 2 + g = g * 2 + k
    d = c.repeat(2, axis=1).repeat(2, axis=2)  # nearest, twice the size
    f = np.maximum(d[..., :2], d[..., 2:])
    g = np.pad(f, [(0, 0), (1, 1), (1, 1), (0, 0)], constant_values=-1.0)
    h = g.sum(axis=(1, 2)).astype(np.float32).astype(np.float64)
    scaled = h * 0.125
    ls = (scaled - np.log(np.exp(scaled).sum(axis=-1, keepdims=True))).astype(np.float32)
    mask = ls > np.float32(-0.5)
    out1 = np.where(mask, ls, -ls)
    arg = g.argmax(axis=-1).astype(np.int32)
    grown = np.exp(f[:, 4:8, 4:8, :]).astype(np.float32).astype(np.float64)
    r = grown / float(np.float32(Q_SCALE))
    quantized = np.clip(np.floor(r + 0.5) + Q_ZERO, 0, 255).astype(np.uint8)
    any_ = mask.any(axis=1, keepdims=True)
    gathered = np.tile(ls[None], (2, 1, 1))[..., [1, 0]]
    return [out1, arg, quantized, any_, gathered]


def run_python(m: nnapi.Model) -> list[np.ndarray]:
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, model_input())
    outs = [np.zeros(shape, dtype) for shape, dtype in SHAPES]
    for k, out in enumerate(outs):
        e.set_output(k, out)
    e.compute()
    c.release()
    return outs


def check(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    assert np.abs(got[2].astype(int) - want[2].astype(int)).max() <= 1  # exp within a float32 rounding: at a half
    np.testing.assert_array_equal(got[3], want[3])
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5, atol=1e-6)


def test_the_model_matches_numpy_through_the_python_front_end():
    want = numpy_reference(model_input())
    assert (want[0] < 0).any() and (want[0] > 0).any()  # both of SELECT's branches are taken
    assert 0 < (want[1] == 1).sum() < want[1].size  # ARGMAX picks either channel
    check(run_python(build().python()), want)


PROGRAM = C_MAIN + r"""
    ANeuralNetworksEvent *event = NULL;
    static const uint32_t inputs[] = {INPUTS}, outputs[] = {OUTPUTS};
    float input[256], out1[2], gathered[4];
    int32_t arg[324];
    uint8_t quantized[32], any[1];
    int i;

    check(ANeuralNetworksModel_create(&model), "create");
BODY
    check(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, inputs, 5, outputs), "identify");
    check(ANeuralNetworksModel_finish(model), "finish");
    check(ANeuralNetworksCompilation_create(model, &compilation), "compilation");
    check(ANeuralNetworksCompilation_finish(compilation), "compile");
    for (i = 0; i < 256; i++)
        input[i] = (float)(i * 37 % 23) / 4.0f - 2.0f;
    check(ANeuralNetworksExecution_create(compilation, &execution), "execution");
    check(ANeuralNetworksExecution_setInput(execution, 0, NULL, input, sizeof input), "setInput");
    check(ANeuralNetworksExecution_setOutput(execution, 0, NULL, out1, sizeof out1), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 1, NULL, arg, sizeof arg), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 2, NULL, quantized, sizeof quantized), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 3, NULL, any, sizeof any), "setOutput");
    check(ANeuralNetworksExecution_setOutput(execution, 4, NULL, gathered, sizeof gathered), "setOutput");
    check(ANeuralNetworksExecution_startCompute(execution, &event), "startCompute");
    check(ANeuralNetworksEvent_wait(event), "wait");
    ANeuralNetworksEvent_free(event);
    for (i = 0; i < 2; i++) printf("%.9g\n", out1[i]);
    for (i = 0; i < 324; i++) printf("%d\n", arg[i]);
    for (i = 0; i < 32; i++) printf("%d\n", quantized[i]);
    printf("%d\n", any[0]);
    for (i = 0; i < 4; i++) printf("%.9g\n", gathered[i]);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""


def test_the_model_through_the_c_api_matches_numpy_and_the_python_front_end():
    spec = build()
    source = spec.c_source(PROGRAM)
    run = run_c(compile_c(source, "nnapi_1_2", nnapi_flags()), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    values = run.stdout.split()
    sizes = [int(np.prod(shape)) for shape, _ in SHAPES]
    got, start = [], 0
    for (shape, dtype), n in zip(SHAPES, sizes):
        got.append(np.array([float(v) for v in values[start:start + n]]).astype(dtype).reshape(shape))
        start += n
    assert start == len(values)
    check(got, numpy_reference(model_input()))
    for mine, python in zip(got, run_python(spec.python())):
        np.testing.assert_array_equal(mine, python)  # the same graph: the same bits


def test_the_model_survives_its_nnapi_file_and_runs_the_same_from_it(tmp_path):
    m = build().python()
    m.save(tmp_path / "mediapipe.nnapi")
    loaded = nnapi.hal.load_model(tmp_path / "mediapipe.nnapi")
    assert loaded == m.to_hal()
    prepared = nnapi.hal.Device().prepare_model(loaded)
    outs = [np.zeros(shape, dtype) for shape, dtype in SHAPES]
    assert prepared.execute_arrays([model_input()], outs)[0] == nnapi.ErrorStatus.NONE
    for got, want in zip(outs, run_python(m)):
        np.testing.assert_array_equal(got, want)
