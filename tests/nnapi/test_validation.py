"""NNAPI models are validated before they run: one test per rule NNAPI 1.0 states (quantization it fixes, enum
operands, operands that must have values, model inputs and outputs, dimensions and sizes, operand indexes), through
the Python API, the HAL driver, ``.nnapi`` files and the C API; and only ``NNAPIError`` reaches a caller."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import compile_c, run_c
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture
from test_nnapi_c_api import nnapi_flags

import openvx_nn
from openvx_nn import nnapi
from openvx_nn.nnapi.lowering import registry

T = nnapi.OperandType
OP = nnapi.OperationType
ES = nnapi.ErrorStatus
F32T, I32T, Q8 = T.TENSOR_FLOAT32, T.TENSOR_INT32, T.TENSOR_QUANT8_ASYMM


def scalar(m: nnapi.Model, value, kind=T.INT32) -> int:
    k = m.add_operand(kind)
    m.set_operand_value(k, value)
    return k


def softmax(out_scale=1 / 256, out_zero=0, op=OP.SOFTMAX) -> nnapi.Model:
    m = nnapi.Model()
    x = m.add_operand(Q8, [1, 4], 0.5, 3)
    out = m.add_operand(Q8, [1, 4], out_scale, out_zero)
    m.add_operation(op, [x, scalar(m, 1.0, T.FLOAT32)] if op == OP.SOFTMAX else [x], [out])
    m.identify_inputs_and_outputs([x], [out])
    return m


def conv(bias_scale=0.125, bias_zero=0, bias_kind=I32T, bias="set", activation=0, padding=None) -> nnapi.Model:
    """A quant8 CONV_2D, input scale 0.5 and filter scale 0.25: its bias takes scale 0.125 and zero point 0."""
    m = nnapi.Model()
    x = m.add_operand(Q8, [1, 3, 3, 1], 0.5, 0)
    f = m.add_operand(Q8, [1, 2, 2, 1], 0.25, 128)
    m.set_operand_value(f, np.full((1, 2, 2, 1), 130, np.uint8))
    b = m.add_operand(bias_kind, [1], bias_scale, bias_zero)
    if bias == "set":
        m.set_operand_value(b, np.array([4], np.int32 if bias_kind == I32T else np.float32))
    elif bias == "no value":
        m.set_operand_value(b, None)
    out = m.add_operand(Q8, [1, 2, 2, 1] if padding is None else [1, 3, 3, 1], 1.0, 0)
    window = [0, 0, 0, 0, 1, 1] if padding is None else [padding, 1, 1]
    m.add_operation(OP.CONV_2D, [x, f, b] + [scalar(m, v) for v in window] + [scalar(m, activation)], [out])
    m.identify_inputs_and_outputs([x], [out])
    return m


def refused(m: nnapi.Model, *words: str) -> nnapi.NNAPIError:
    """``finish`` refuses ``m`` with INVALID_ARGUMENT, naming ``words``."""
    with pytest.raises(nnapi.NNAPIError) as err:
        m.finish()
    assert err.value.status == ES.INVALID_ARGUMENT
    for word in words:
        assert word in str(err.value)
    return err.value


def runs(m: nnapi.Model) -> None:
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    c.release()


# -- quantization NNAPI fixes ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", [OP.SOFTMAX, OP.LOGISTIC])
def test_a_quant8_softmax_or_logistic_output_needs_scale_1_256(op):
    err = refused(softmax(0.1, op=op), "operation 0", op.name, "1/256")
    assert err.operation == 0 and err.operation_type == op


@pytest.mark.parametrize("op", [OP.SOFTMAX, OP.LOGISTIC])
def test_a_quant8_softmax_or_logistic_output_needs_zero_point_0(op):
    refused(softmax(1 / 256, 5, op=op), "zero point 5")


@pytest.mark.parametrize("op", [OP.SOFTMAX, OP.LOGISTIC])
def test_a_quant8_softmax_or_logistic_output_at_1_256_runs(op):
    runs(softmax(np.float32(1 / 256), op=op))


def test_softmax_beta_must_be_positive():
    m = nnapi.Model()
    x = m.add_operand(F32T, [1, 4])
    out = m.add_operand(F32T, [1, 4])
    m.add_operation(OP.SOFTMAX, [x, scalar(m, 0.0, T.FLOAT32)], [out])
    m.identify_inputs_and_outputs([x], [out])
    refused(m, "beta")


@pytest.mark.parametrize("scale", [0.25, 0.125 * (1 + 1e-4), 0.0])
def test_a_bias_scale_must_be_input_scale_times_filter_scale(scale):
    refused(conv(bias_scale=scale), "operation 0 (CONV_2D)", "input 2 (bias", "0.125")


def test_a_bias_scale_within_the_tolerance_runs():
    runs(conv(bias_scale=0.125 * (1 + 1e-7)))


@pytest.mark.parametrize("scale", [math.nan, math.inf, -0.125])
def test_a_bias_scale_that_is_not_finite_or_negative_is_refused(scale):
    with pytest.raises(nnapi.NNAPIError, match="TENSOR_INT32 needs a finite scale"):
        conv(bias_scale=scale)


def test_a_bias_zero_point_must_be_0():
    refused(conv(bias_zero=1), "zero point 1")


def test_a_quant8_convolution_takes_an_int32_bias():
    with pytest.raises(nnapi.NNAPIError, match=r"operation 0 \(CONV_2D\): input 2 \(bias\) is TENSOR_FLOAT32; "
                                               r"expected TENSOR_INT32"):
        conv(bias_kind=F32T, bias_scale=0.0)  # refused when the operation is added


@pytest.mark.parametrize("op", [OP.DEPTHWISE_CONV_2D, OP.FULLY_CONNECTED])
def test_the_bias_rule_holds_for_depthwise_and_fully_connected(op):
    m = nnapi.Model()
    x = m.add_operand(Q8, [1, 2, 2, 1] if op == OP.DEPTHWISE_CONV_2D else [1, 4], 0.5, 0)
    f = m.add_operand(Q8, [1, 2, 2, 1] if op == OP.DEPTHWISE_CONV_2D else [1, 4], 0.25, 128)
    m.set_operand_value(f, np.full((1, 2, 2, 1) if op == OP.DEPTHWISE_CONV_2D else (1, 4), 130, np.uint8))
    b = m.add_operand(I32T, [1], 0.5, 0)
    m.set_operand_value(b, np.array([1], np.int32))
    out = m.add_operand(Q8, [1, 1, 1, 1] if op == OP.DEPTHWISE_CONV_2D else [1, 1], 1.0, 0)
    params = [2, 1, 1, 1, 0] if op == OP.DEPTHWISE_CONV_2D else [0]
    m.add_operation(op, [x, f, b] + [scalar(m, v) for v in params], [out])
    m.identify_inputs_and_outputs([x], [out])
    refused(m, op.name, "input 2 (bias")


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, math.inf])
def test_a_quant8_scale_must_be_finite_and_positive(scale):
    with pytest.raises(nnapi.NNAPIError, match="finite positive scale"):
        nnapi.Model().add_operand(Q8, [2], scale, 0)


@pytest.mark.parametrize("zero", [-1, 256])
def test_a_quant8_zero_point_must_be_in_0_255(zero):
    with pytest.raises(nnapi.NNAPIError, match="outside 0..255"):
        nnapi.Model().add_operand(Q8, [2], 0.5, zero)


# -- enum operands ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("code", [-1, 4, 99])
def test_a_fused_activation_must_be_one_nnapi_defines(code):
    refused(conv(activation=code), "input 9 (fused activation)", str(code))


@pytest.mark.parametrize("code", [0, 3])
def test_a_padding_scheme_must_be_same_or_valid(code):
    refused(conv(padding=code), "input 3 (padding scheme)", str(code))


def test_an_lsh_projection_type_must_be_sparse_or_dense():
    m = nnapi.Model()
    h = m.add_operand(F32T, [2, 2])
    m.set_operand_value(h, np.ones((2, 2), np.float32))
    x = m.add_operand(F32T, [3, 2])
    w = m.add_operand(F32T, [3])
    m.set_operand_value(w, np.ones(3, np.float32))
    out = m.add_operand(I32T, [2])
    m.add_operation(OP.LSH_PROJECTION, [h, x, w, scalar(m, 3)], [out])
    m.identify_inputs_and_outputs([x], [out])
    refused(m, "projection type")


def test_an_enum_given_by_an_execution_is_checked_when_it_arrives():
    m = nnapi.Model()
    a = m.add_operand(F32T, [2])
    act = m.add_operand(T.INT32)
    out = m.add_operand(F32T, [2])
    m.add_operation(OP.ADD, [a, a, act], [out])
    m.identify_inputs_and_outputs([a, act], [out])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, np.ones(2, np.float32))
    e.set_input(1, np.int32(7))
    e.set_output(0, np.zeros(2, np.float32))
    with pytest.raises(nnapi.NNAPIError, match="fused activation"):
        e.compute()


# -- operands that must have values ----------------------------------------------------------------------------------

def test_a_bias_never_given_a_value_is_refused():
    refused(conv(bias="unset"), "operand 2 is never written", "operation 0 (CONV_2D) reads it as input 2")


def test_a_required_input_without_a_value_is_refused():
    refused(conv(bias="no value"), "input 2 (operand 2) has no value; it is not optional")


def test_an_operand_meant_as_a_model_input_but_not_listed_is_refused():
    m = nnapi.Model()
    a, b = m.add_operand(F32T, [2]), m.add_operand(F32T, [2])
    out = m.add_operand(F32T, [2])
    m.add_operation(OP.ADD, [a, b, scalar(m, 0)], [out])
    m.identify_inputs_and_outputs([a], [out])
    refused(m, "operand 1 is never written", "operation 0 (ADD) reads it as input 1")


def test_a_required_input_omitted_by_an_execution_is_refused():
    m = nnapi.Model()
    a, b = m.add_operand(F32T, [2]), m.add_operand(F32T, [2])
    out = m.add_operand(F32T, [2])
    m.add_operation(OP.ADD, [a, b, scalar(m, 0)], [out])
    m.identify_inputs_and_outputs([a, b], [out])
    runs(m)
    c = nnapi.Compilation(m)
    c.finish()
    e = nnapi.Execution(c)
    e.set_input(0, np.ones(2, np.float32))
    e.set_input(1, None)
    e.set_output(0, np.zeros(2, np.float32))
    with pytest.raises(nnapi.NNAPIError, match="not optional"):
        e.compute()


# -- model inputs and outputs ------------------------------------------------------------------------------------------

def _relu(inputs: bool = True, outputs: bool = True) -> nnapi.Model:
    m = nnapi.Model()
    a, out = m.add_operand(F32T, [2]), m.add_operand(F32T, [2])
    m.add_operation(OP.RELU, [a], [out])
    m.identify_inputs_and_outputs([a] if inputs else [], [out] if outputs else [])
    return m


def test_a_model_without_outputs_is_refused():
    refused(_relu(outputs=False), "no outputs")


def test_a_model_without_inputs_is_refused():
    refused(_relu(inputs=False), "no inputs")


def test_an_operand_listed_twice_among_the_outputs_is_refused():
    m = nnapi.Model()
    a, out = m.add_operand(F32T, [2]), m.add_operand(F32T, [2])
    m.add_operation(OP.RELU, [a], [out])
    with pytest.raises(nnapi.NNAPIError, match="operand 1 is listed twice"):  # refused at the call
        m.identify_inputs_and_outputs([a], [out, out])


# -- dimensions, sizes and indexes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dims", [[-1], [2**31], [2**31 - 1, 2**31 - 1], [2**20, 2**20, 4]])
def test_dimensions_and_sizes_that_overflow_are_refused(dims):
    with pytest.raises(nnapi.NNAPIError, match="dimensions"):
        nnapi.Model().add_operand(F32T, dims)


@pytest.mark.parametrize("index", [3, -1, 2**32])
def test_an_operand_index_out_of_range_is_refused(index):
    m = nnapi.Model()
    a, out = m.add_operand(F32T, [2]), m.add_operand(F32T, [2])
    with pytest.raises(nnapi.NNAPIError, match="not an operand index"):
        m.add_operation(OP.RELU, [index], [out])
    with pytest.raises(nnapi.NNAPIError, match="not an operand index"):
        m.identify_inputs_and_outputs([a, index], [out])


def _hal_relu() -> nnapi.hal.Model:
    m = _relu()
    m.finish()
    return m.to_hal()


@pytest.mark.parametrize("change, words", [
    (lambda h: h.operations[0].inputs.__setitem__(0, 7), "out of range"),
    (lambda h: setattr(h.operands[0], "numberOfConsumers", 3), "numberOfConsumers"),
    (lambda h: setattr(h.operands[1].location, "offset", 8), "location"),
    (lambda h: setattr(h.operands[0], "dimensions", [10**308]), "dimensions"),
    (lambda h: h.outputIndexes.clear(), "no outputs"),
])
def test_the_driver_validates_a_hal_model_before_preparing_it(change, words):
    model = _hal_relu()
    change(model)
    with pytest.raises(nnapi.NNAPIError, match=words):
        nnapi.hal.Device().prepare_model(model)


# -- .nnapi files ----------------------------------------------------------------------------------------------------

def _file_with(tmp_path, edit) -> str:
    path = tmp_path / "m.nnapi"
    nnapi.hal.save_model(_hal_relu(), path)
    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files}
    description = json.loads(members["model.json"].tobytes())
    text = edit(description)
    members["model.json"] = np.frombuffer(text.encode(), np.uint8)
    with open(path, "wb") as f:
        np.savez(f, **members)
    return str(path)


@pytest.mark.parametrize("value", ["1e308", "NaN", "-1", "4294967296", "1.5"])
def test_a_file_with_a_dimension_that_is_not_a_small_integer_is_refused(tmp_path, value):
    def edit(d):
        d["operands"][0]["dimensions"] = ["@"]
        return json.dumps(d).replace('"@"', value)
    with pytest.raises(nnapi.NNAPIError, match="dimension"):
        nnapi.hal.load_model(_file_with(tmp_path, edit))


def test_a_file_whose_bytes_are_damaged_raises_nnapi_error(tmp_path):
    path = tmp_path / "m.nnapi"
    nnapi.hal.save_model(_hal_relu(), path)
    data = bytearray(path.read_bytes())
    for cut in (len(data) // 2, 40):
        path.write_bytes(bytes(data[:cut]))
        with pytest.raises(nnapi.NNAPIError):
            nnapi.hal.load_model(path)


# -- only NNAPIError reaches a caller ----------------------------------------------------------------------------------

def test_nnapi_error_is_an_error_of_the_library():
    assert issubclass(nnapi.NNAPIError, openvx_nn.errors.Error)


@pytest.mark.parametrize("call", [
    lambda: nnapi.Model().add_operand(F32T, ["x"]),
    lambda: nnapi.Model().add_operand(F32T, [math.inf]),
    lambda: nnapi.hal.Device().prepare_model(object()),
    lambda: nnapi.Compilation(nnapi.Model()).finish(),
])
def test_what_the_checks_did_not_foresee_is_an_nnapi_error(call):
    with pytest.raises(nnapi.NNAPIError):
        call()


def test_an_internal_error_of_a_lowering_names_its_operation(monkeypatch):
    def broken(op):
        raise KeyError("surprise")
    monkeypatch.setitem(registry.LOWERINGS, OP.RELU, broken)
    m = _relu()
    m.finish()
    with pytest.raises(nnapi.NNAPIError, match=r"operation 0 \(RELU\): KeyError"):
        nnapi.Compilation(m).finish()


# -- the C API -------------------------------------------------------------------------------------------------------

C_PROGRAM = r"""
#include <NeuralNetworks.h>
#include <stdio.h>

static const uint32_t four[] = {1, 4}, one[] = {1};

/* SOFTMAX of a quant8 [1, 4] input; its output quantized with out_scale; finish's result. */
static int softmax(float out_scale)
{
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksOperandType in = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, four, 0.5f, 3};
    ANeuralNetworksOperandType out = {ANEURALNETWORKS_TENSOR_QUANT8_ASYMM, 2, four, out_scale, 0};
    ANeuralNetworksOperandType f = {ANEURALNETWORKS_FLOAT32, 0, NULL, 0.0f, 0};
    float beta = 1.0f;
    uint32_t ins[2] = {0, 1}, o = 2;
    ANeuralNetworksModel_create(&model);
    ANeuralNetworksModel_addOperand(model, &in);
    ANeuralNetworksModel_addOperand(model, &f);
    ANeuralNetworksModel_addOperand(model, &out);
    ANeuralNetworksModel_setOperandValue(model, 1, &beta, sizeof beta);
    ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_SOFTMAX, 2, ins, 1, &o);
    ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, ins, 1, &o);
    int code = ANeuralNetworksModel_finish(model);
    ANeuralNetworksModel_free(model);
    return code;
}

/* ADD of two float [1] inputs with activation act; b_listed: the second input is a model input; outputs: 0 or 1. */
static int add(int32_t act, int b_listed, int outputs)
{
    ANeuralNetworksModel *model = NULL;
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, one, 0.0f, 0};
    ANeuralNetworksOperandType i = {ANEURALNETWORKS_INT32, 0, NULL, 0.0f, 0};
    uint32_t ins[3] = {0, 1, 2}, o = 3;
    ANeuralNetworksModel_create(&model);
    ANeuralNetworksModel_addOperand(model, &t);
    ANeuralNetworksModel_addOperand(model, &t);
    ANeuralNetworksModel_addOperand(model, &i);
    ANeuralNetworksModel_addOperand(model, &t);
    ANeuralNetworksModel_setOperandValue(model, 2, &act, sizeof act);
    ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_ADD, 3, ins, 1, &o);
    ANeuralNetworksModel_identifyInputsAndOutputs(model, b_listed ? 2 : 1, ins, (uint32_t)outputs, &o);
    int code = ANeuralNetworksModel_finish(model);
    ANeuralNetworksModel_free(model);
    return code;
}

int main(void)
{
    printf("softmax_1_256 %d\n", softmax(1.0f / 256));
    printf("softmax_bad_scale %d\n", softmax(0.1f));
    printf("add_good %d\n", add(0, 1, 1));
    printf("add_bad_activation %d\n", add(9, 1, 1));
    printf("add_unset_operand %d\n", add(0, 0, 1));
    printf("add_no_outputs %d\n", add(0, 1, 0));
    return 0;
}
"""


def test_the_c_api_refuses_invalid_models_at_finish_with_bad_data():
    exe = compile_c(C_PROGRAM, "nnapi_validation", nnapi_flags())
    result = run_c(exe, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    codes = {label: int(code) for label, code in (line.split() for line in result.stdout.splitlines())}
    assert codes == {"softmax_1_256": 0, "softmax_bad_scale": 4, "add_good": 0, "add_bad_activation": 4,
                     "add_unset_operand": 4, "add_no_outputs": 4}
    assert "1/256" in result.stderr and "fused activation" in result.stderr
