"""DEQUANTIZE in the types API level 29 lists: TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_SYMM and
TENSOR_QUANT8_SYMM_PER_CHANNEL in, TENSOR_FLOAT32 or TENSOR_FLOAT16 out, against the header's formula written
as a loop ("output = (input - zeroPoint) * scale"; per channel, "realValue[..., C, ...] = integerValue[..., C,
...] * scales[C]"), from Python (constants and model inputs, known and execution-given dimensions) and from a
compiled C program."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import compile_c, run_c
from test_nnapi_c_api import nnapi_flags

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType
Q8, Q8S, PC = T.TENSOR_QUANT8_ASYMM, T.TENSOR_QUANT8_SYMM, T.TENSOR_QUANT8_SYMM_PER_CHANNEL
TF32, TF16 = T.TENSOR_FLOAT32, T.TENSOR_FLOAT16


def reference(q: np.ndarray, scale: float, zero: int, scales=None, axis: int = 0, half: bool = False) -> np.ndarray:
    """The header's formula element by element, in float64, rounded once to the output type."""
    out = np.zeros(q.shape, np.float64)
    for index in itertools.product(*(range(n) for n in q.shape)):
        if scales is None:
            out[index] = (int(q[index]) - zero) * float(np.float32(scale))
        else:
            out[index] = int(q[index]) * float(np.float32(scales[index[axis]]))
    with np.errstate(over="ignore"):
        return out.astype(np.float16 if half else np.float32)


def _case(rng: np.random.Generator, kind: T):
    rank = int(rng.integers(1, 5))
    shape = tuple(int(d) for d in rng.integers(1, 5, rank))
    if kind == Q8:
        q = rng.integers(0, 256, shape).astype(np.uint8)
        q.flat[0] = 255
        return q, float(rng.uniform(0.01, 3)), int(rng.integers(0, 256)), None, 0
    q = rng.integers(-128, 128, shape).astype(np.int8)
    q.flat[0] = -128  # the edges of int8
    q.flat[-1] = 127
    if kind == Q8S:
        return q, float(rng.uniform(0.01, 3)), 0, None, 0
    axis = int(rng.integers(0, rank))
    return q, 0.0, 0, list(rng.uniform(0.001, 40, shape[axis]).astype(np.float32)), axis


def _model(kind, q, scale, zero, scales, axis, out_kind, constant: bool, unknown: bool = False):
    m = nnapi.Model()
    dims = list(q.shape)
    if unknown:  # a dimension other than the channel's left to the execution
        other = next((a for a in range(len(dims)) if a != axis), None)
        if other is not None:
            dims[other] = 0
    x = m.add_operand(kind, dims, scale, zero)
    if scales is not None:
        m.set_operand_symm_per_channel_quant_params(x, scales, axis)
    y = m.add_operand(out_kind, [0] * len(dims) if unknown else list(q.shape))
    if constant:
        m.set_operand_value(x, q)
        dummy = m.add_operand(TF32, [1])  # a model needs an input
        sink = m.add_operand(TF32, [1])
        m.add_operation(OP.RELU, [dummy], [sink])
        m.add_operation(OP.DEQUANTIZE, [x], [y])
        m.identify_inputs_and_outputs([dummy], [y, sink])
    else:
        m.add_operation(OP.DEQUANTIZE, [x], [y])
        m.identify_inputs_and_outputs([x], [y])
    m.finish()
    return m


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", [Q8, Q8S, PC], ids=lambda k: k.name)
@pytest.mark.parametrize("out_kind", [TF32, TF16], ids=lambda k: k.name)
@pytest.mark.parametrize("how", ["input", "constant", "unknown dimensions"])
def test_dequantize_follows_the_headers_formula(seed, kind, out_kind, how):
    rng = np.random.default_rng([seed, int(kind), int(out_kind), len(how)])
    q, scale, zero, scales, axis = _case(rng, kind)
    m = _model(kind, q, scale, zero, scales, axis, out_kind, how == "constant", how == "unknown dimensions")
    c = nnapi.Compilation(m)
    c.finish()
    assert m.supported_operations() == [True] * len(m.to_hal().operations)
    e = nnapi.Execution(c)
    half = out_kind == TF16
    out = np.zeros(q.shape, np.float16 if half else np.float32)
    if how == "constant":
        e.set_input(0, np.zeros(1, np.float32))
        e.set_output(1, np.zeros(1, np.float32))
    else:
        e.set_input(0, q)
    e.set_output(0, out)
    e.compute()
    np.testing.assert_array_equal(out, reference(q, scale, zero, scales, axis, half))
    assert e.output_shape(0) == q.shape
    c.release()


def test_float16_output_rounds_once_and_saturates_to_infinity_past_its_range():
    m = nnapi.Model()
    x = m.add_operand(PC, [3, 2])
    m.set_operand_symm_per_channel_quant_params(x, [1000.0, 1.0 / 3.0, 0.1], 0)  # 127000 overflows float16
    y = m.add_operand(TF16, [3, 2])
    m.add_operation(OP.DEQUANTIZE, [x], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    q = np.array([[127, -128], [1, -3], [7, 0]], np.int8)
    out = np.zeros((3, 2), np.float16)
    e.set_input(0, q)
    e.set_output(0, out)
    e.compute()
    assert out[0, 0] == np.inf and out[0, 1] == -np.inf  # beyond 65504: IEEE rounding to float16
    assert out[1, 0] == np.float16(float(np.float32(1 / 3)))  # float64 product rounded once
    np.testing.assert_array_equal(out, reference(q, 0.0, 0, [1000.0, 1 / 3, 0.1], 0, True))


@pytest.mark.parametrize("out_kind", [T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM, T.TENSOR_BOOL8])
def test_dequantize_refuses_outputs_the_header_does_not_list(out_kind):
    m = nnapi.Model()
    x = m.add_operand(Q8S, [2], 0.5, 0)
    y = m.add_operand(out_kind, [2], *((0.5, 0) if out_kind == T.TENSOR_QUANT8_ASYMM else (0.0, 0)))
    with pytest.raises(nnapi.NNAPIError, match="DEQUANTIZE"):
        m.add_operation(OP.DEQUANTIZE, [x], [y])


PROGRAM = r"""
#include <NeuralNetworks.h>
#include <stdio.h>
#include <string.h>

static const uint32_t dims[] = {2, 3};

/* y = DEQUANTIZE(x), x of type in_type (scales per row for the per-channel type), y of out_type; prints y */
static int run(int32_t in_type, float scale, int32_t zero, int32_t out_type, const void *x, size_t x_bytes,
               const float *row_scales)
{
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksCompilation *compilation = NULL;
    ANeuralNetworksExecution *execution = NULL;
    ANeuralNetworksOperandType in = {in_type, 2, dims, scale, zero}, out = {out_type, 2, dims, 0.0f, 0};
    ANeuralNetworksSymmPerChannelQuantParams params = {0, 2, row_scales};
    uint32_t i0 = 0, o0 = 1;
    unsigned char y[6 * 4];
    int status, i;
    ANeuralNetworksModel_create(&model);
    ANeuralNetworksModel_addOperand(model, &in);
    ANeuralNetworksModel_addOperand(model, &out);
    if (row_scales)
        ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(model, 0, &params);
    ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_DEQUANTIZE, 1, &i0, 1, &o0);
    ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &i0, 1, &o0);
    ANeuralNetworksModel_finish(model);
    ANeuralNetworksCompilation_create(model, &compilation);
    ANeuralNetworksCompilation_finish(compilation);
    ANeuralNetworksExecution_create(compilation, &execution);
    ANeuralNetworksExecution_setInput(execution, 0, NULL, x, x_bytes);
    ANeuralNetworksExecution_setOutput(execution, 0, NULL, y, out_type == ANEURALNETWORKS_TENSOR_FLOAT16 ? 12 : 24);
    status = ANeuralNetworksExecution_compute(execution);
    printf("%d", status);
    for (i = 0; i < 6; i++) {
        if (out_type == ANEURALNETWORKS_TENSOR_FLOAT16) {
            uint16_t h;
            memcpy(&h, y + 2 * i, 2);
            printf(" %u", h);
        } else {
            float f;
            memcpy(&f, y + 4 * i, 4);
            printf(" %.9g", f);
        }
    }
    printf("\n");
    ANeuralNetworksExecution_free(execution);
    ANeuralNetworksCompilation_free(compilation);
    ANeuralNetworksModel_free(model);
    return status;
}

int main(void)
{
    const int8_t s8[6] = {-128, -3, 0, 1, 77, 127};
    const uint8_t u8[6] = {0, 3, 100, 128, 200, 255};
    const float rows[2] = {0.25f, 3.0f};
    run(ANEURALNETWORKS_TENSOR_QUANT8_SYMM, 0.125f, 0, ANEURALNETWORKS_TENSOR_FLOAT32, s8, 6, NULL);
    run(ANEURALNETWORKS_TENSOR_QUANT8_SYMM, 0.1f, 0, ANEURALNETWORKS_TENSOR_FLOAT16, s8, 6, NULL);
    run(ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0f, 0, ANEURALNETWORKS_TENSOR_FLOAT32, s8, 6, rows);
    run(ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.0f, 0, ANEURALNETWORKS_TENSOR_FLOAT16, s8, 6, rows);
    run(ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 0.5f, 128, ANEURALNETWORKS_TENSOR_FLOAT16, u8, 6, NULL);
    return 0;
}
"""


def test_dequantize_of_each_type_from_c_matches_the_reference():
    result = run_c(compile_c(PROGRAM, "nnapi_dequantize_types", nnapi_flags()), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert [line[0] for line in lines] == ["0"] * 5, result.stderr
    s8 = np.array([-128, -3, 0, 1, 77, 127], np.int8).reshape(2, 3)
    u8 = np.array([0, 3, 100, 128, 200, 255], np.uint8).reshape(2, 3)
    rows = [0.25, 3.0]
    expected = [reference(s8, 0.125, 0), reference(s8, 0.1, 0, half=True), reference(s8, 0, 0, rows, 0),
                reference(s8, 0, 0, rows, 0, True), reference(u8, 0.5, 128, half=True)]
    for line, want in zip(lines, expected):
        if want.dtype == np.float16:
            got = np.array([int(v) for v in line[1:]], np.uint16).view(np.float16).reshape(2, 3)
        else:
            got = np.array([float(v) for v in line[1:]], np.float32).reshape(2, 3)
        np.testing.assert_array_equal(got, want)
