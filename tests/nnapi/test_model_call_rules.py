"""The model calls' own rules, checked where Android's runtime checks them: ``setOperandValue`` (a value of the
operand's size), ``identifyInputsAndOutputs`` (no constant, nothing twice), ``finish`` (every operand written
exactly once, no cycle), and a HAL model held to the same operation signatures as ``add_operation``. (The C API's
BAD_DATA for these: ``test_add_operation_validation``.)"""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture

from openvx_nn import nnapi

T = nnapi.OperandType
OP = nnapi.OperationType


def test_set_operand_value_needs_the_operands_size():
    m = nnapi.Model()
    k = m.add_operand(T.TENSOR_FLOAT32, [2, 3])
    with pytest.raises(nnapi.NNAPIError, match=r"operand 0 has dimensions \[2, 3\]; got a value of shape \(6,\)"):
        m.set_operand_value(k, np.zeros(6, np.float32))
    with pytest.raises(nnapi.NNAPIError, match=r"takes 24 bytes, got 20"):
        m.set_operand_reference(k, bytes(20))
    m.set_operand_reference(k, bytes(24))
    m.set_operand_value(k, np.zeros((2, 3), np.float32))
    unknown = m.add_operand(T.TENSOR_FLOAT32, [2, 0])
    for value in (np.zeros((2, 0), np.float32), np.zeros((2, 5), np.float32)):
        with pytest.raises(nnapi.NNAPIError, match=r"operand 1 has unknown dimensions \[2, 0\]"):
            m.set_operand_value(unknown, value)
    m.set_operand_value(unknown, None)  # no value: an omitted optional operand
    s = m.add_operand(T.INT32)
    with pytest.raises(nnapi.NNAPIError, match="scalar"):
        m.set_operand_value(s, np.zeros(2, np.int32))


def test_identify_refuses_constants_repeats_and_bad_indexes_at_the_call():
    m = nnapi.Model()
    a, b, c = (m.add_operand(T.TENSOR_FLOAT32, [2]) for _ in range(3))
    m.set_operand_value(c, np.ones(2, np.float32))
    with pytest.raises(nnapi.NNAPIError, match=r"operand 2 is a constant; it cannot be a model input or output"):
        m.identify_inputs_and_outputs([a, c], [b])
    with pytest.raises(nnapi.NNAPIError, match=r"operand 2 is a constant"):
        m.identify_inputs_and_outputs([a], [c])
    with pytest.raises(nnapi.NNAPIError, match=r"operand 0 is listed twice"):
        m.identify_inputs_and_outputs([a], [a])
    with pytest.raises(nnapi.NNAPIError, match=r"operand 0 is listed twice"):
        m.identify_inputs_and_outputs([a, a], [b])
    with pytest.raises(nnapi.NNAPIError, match=r"model input/output 3 is not an operand index"):
        m.identify_inputs_and_outputs([3], [b])
    m.add_operation(OP.RELU, [a], [b])
    m.identify_inputs_and_outputs([a], [b])
    m.finish()


def relu_chain(extra: str = "") -> nnapi.Model:
    m = nnapi.Model()
    x, y = m.add_operand(T.TENSOR_FLOAT32, [2]), m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(OP.RELU, [x], [y])
    if extra == "dangling":
        m.add_operand(T.TENSOR_FLOAT32, [2])  # read by nothing, written by nothing
    if extra == "written twice":
        m.add_operation(OP.RELU1, [x], [y])
    if extra == "output is an input":
        m.add_operation(OP.RELU1, [y], [x])
    m.identify_inputs_and_outputs([x], [y])
    return m


@pytest.mark.parametrize("extra, words", [
    ("dangling", r"operand 2 is never written"),
    ("written twice", r"operation 1 \(RELU1\): operand 1 is already written by operation 0"),
    ("output is an input", r"operation 1 \(RELU1\): output operand 0 is a model input"),
])
def test_finish_refuses_an_operand_not_written_exactly_once(extra, words):
    with pytest.raises(nnapi.NNAPIError, match=words):
        relu_chain(extra).finish()
    relu_chain().finish()


def test_finish_refuses_a_cycle():
    m = nnapi.Model()
    x, a, b, y = (m.add_operand(T.TENSOR_FLOAT32, [2]) for _ in range(4))
    zero = m.add_operand(T.INT32)
    m.set_operand_value(zero, 0)
    m.add_operation(OP.ADD, [x, b, zero], [a])
    m.add_operation(OP.RELU, [a], [b])
    m.add_operation(OP.RELU, [a], [y])
    m.identify_inputs_and_outputs([x], [y])
    with pytest.raises(nnapi.NNAPIError, match=r"is part of a cycle"):
        m.finish()


def test_a_hal_model_is_held_to_the_same_signatures():
    """``load_model`` and the driver check what ``add_operation`` checks (a model not built by the builder)."""
    m = nnapi.Model()
    x, y = m.add_operand(T.TENSOR_FLOAT32, [2]), m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(OP.RELU, [x], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    hal_model = m.to_hal()
    hal_model.operands[1].type = T.TENSOR_INT32
    prepared = None
    with pytest.raises(nnapi.NNAPIError, match=r"operation 0 \(RELU\): output 0 \(output\) is TENSOR_INT32; "
                                               r"expected TENSOR_FLOAT32, the type of input 0"):
        prepared = nnapi.hal.Device().prepare_model(hal_model)
    assert prepared is None
    assert nnapi.hal.Device().get_supported_operations(hal_model) == [False]
