"""A model of API level 29's convolution forms in NCHW (a dilated CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D with an
output-shape input, MAX_POOL_2D with the layout flag, SOFTMAX along the channel axis) through the Python front end
and through the C API, against NumPy references written from the header's text."""
from __future__ import annotations

import numpy as np
from conftest import compile_c, run_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_1_2_convolutions import conv_reference, same_padding, transposed_reference
from test_nnapi_1_2_models import C_MAIN, Spec
from test_nnapi_1_2_normalizations import softmax_reference
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
F32T, I32T = T.TENSOR_FLOAT32, T.TENSOR_INT32
RNG = np.random.default_rng(43)
W1, B1 = RNG.standard_normal((6, 3, 3, 4)).astype(np.float32) * 0.5, RNG.standard_normal(6).astype(np.float32)
W2, B2 = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5, RNG.standard_normal(4).astype(np.float32)
W3, B3 = RNG.standard_normal((3, 2, 2, 4)).astype(np.float32) * 0.5, RNG.standard_normal(3).astype(np.float32)
OUT_SHAPE = (1, 3, 6, 6)


def model_input() -> np.ndarray:
    return (np.arange(144, dtype=np.float32).reshape(1, 4, 6, 6) * 37 % 23) / 4 - 2


def build() -> Spec:
    s = Spec()

    def scalar(kind, value):
        return s.operand(kind, value=value)

    def i(v):
        return scalar(T.INT32, v)

    nchw = scalar(T.BOOL, True)
    x = s.operand(F32T, [1, 4, 6, 6])
    a = s.operand(F32T, [1, 6, 6, 6])
    s.op(OP.CONV_2D, [x, s.operand(F32T, W1.shape, value=W1), s.operand(F32T, [6], value=B1), i(1), i(1), i(1), i(1),
                      nchw, i(2), i(2)], [a])  # SAME, stride 1, RELU, NCHW, dilation 2
    b = s.operand(F32T, [1, 4, 3, 3])
    s.op(OP.GROUPED_CONV_2D, [a, s.operand(F32T, W2.shape, value=W2), s.operand(F32T, [4], value=B2), i(1), i(1),
                              i(1), i(1), i(2), i(2), i(2), i(0), nchw], [b])  # pads 1, stride 2, 2 groups
    c = s.operand(F32T, list(OUT_SHAPE))
    s.op(OP.TRANSPOSE_CONV_2D, [b, s.operand(F32T, W3.shape, value=W3), s.operand(F32T, [3], value=B3),
                                s.operand(I32T, [4], value=np.asarray(OUT_SHAPE, np.int32)), i(1), i(2), i(2), i(0),
                                nchw], [c])  # SAME to the output shape, stride 2
    d = s.operand(F32T, [1, 3, 3, 3])
    s.op(OP.MAX_POOL_2D, [c, i(2), i(2), i(2), i(2), i(2), i(0), nchw], [d])  # VALID 2x2, stride 2
    e = s.operand(F32T, [1, 3, 3, 3])
    s.op(OP.SOFTMAX, [d, scalar(T.FLOAT32, 1.0), i(1)], [e])
    s.inputs, s.outputs = [x], [e]
    return s


def numpy_reference(x: np.ndarray) -> np.ndarray:
    nhwc = x.transpose(0, 2, 3, 1)
    top, bottom = same_padding(6, 5, 1)
    a = conv_reference(nhwc, W1, B1, (top, bottom, top, bottom), (1, 1), (2, 2), 1, 1)
    b = conv_reference(a, W2, B2, (1, 1, 1, 1), (2, 2), (1, 1), 2, 0)
    pad = max((3 - 1) * 2 + 2 - 6, 0) // 2
    c = transposed_reference(b, W3, B3, pad, pad, (2, 2), (6, 6), 0)
    d = c.reshape(1, 3, 2, 3, 2, 3).max(axis=(2, 4))
    return softmax_reference(d.transpose(0, 3, 1, 2), 1.0, 1)


def run_python(model: nnapi.Model) -> np.ndarray:
    c = nnapi.Compilation(model)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, model_input())
    out = np.zeros((1, 3, 3, 3), np.float32)
    e.set_output(0, out)
    e.compute()
    c.release()
    return out


def test_the_model_matches_numpy_through_the_python_front_end():
    got, want = run_python(build().python()), numpy_reference(model_input())
    assert want.std() > 0.05  # the softmax is not flat: the convolutions' values reach it
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


PROGRAM = C_MAIN + r"""
    static const uint32_t inputs[] = {INPUTS}, outputs[] = {OUTPUTS};
    float input[144], out[27];
    int i;

    check(ANeuralNetworksModel_create(&model), "create");
BODY
    check(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, inputs, 1, outputs), "identify");
    check(ANeuralNetworksModel_finish(model), "finish");
    check(ANeuralNetworksCompilation_create(model, &compilation), "compilation");
    check(ANeuralNetworksCompilation_finish(compilation), "compile");
    for (i = 0; i < 144; i++)
        input[i] = (float)(i * 37 % 23) / 4.0f - 2.0f;
    check(ANeuralNetworksExecution_create(compilation, &execution), "execution");
    check(ANeuralNetworksExecution_setInput(execution, 0, NULL, input, sizeof input), "setInput");
    check(ANeuralNetworksExecution_setOutput(execution, 0, NULL, out, sizeof out), "setOutput");
    check(ANeuralNetworksExecution_compute(execution), "compute");
    for (i = 0; i < 27; i++) printf("%.9g\n", out[i]);
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return 0;
}
"""


def test_the_model_through_the_c_api_matches_numpy_and_the_python_front_end():
    spec = build()
    source = spec.c_source(PROGRAM)
    run = run_c(compile_c(source, "nnapi_1_2_conv", nnapi_flags()), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    got = np.array([float(v) for v in run.stdout.split()], np.float32).reshape(1, 3, 3, 3)
    np.testing.assert_allclose(got, numpy_reference(model_input()), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got, run_python(spec.python()))  # the same graph: the same bits
