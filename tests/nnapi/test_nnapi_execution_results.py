"""What an execution reports besides its outputs (API level 29, HAL 1.2): each output's dimensions (a dynamic
output's too, and after a too small buffer), the durations it measured, and which operations a model's device
supports, in the order they were added."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn import nnapi
from openvx_nn.nnapi import hal

T = nnapi.OperandType
OP = nnapi.OperationType
DC = nnapi.DurationCode
ES = nnapi.ErrorStatus


def _relu(dims=(0,)) -> nnapi.Compilation:
    m = nnapi.Model()
    x = m.add_operand(T.TENSOR_FLOAT32, list(dims))
    y = m.add_operand(T.TENSOR_FLOAT32, list(dims))
    m.add_operation(OP.RELU, [x], [y])
    m.identify_inputs_and_outputs([x], [y])
    m.finish()
    c = nnapi.Compilation(m)
    c.finish()
    return c


@pytest.mark.parametrize("length", [1, 3, 17])
def test_a_dynamic_output_reports_the_shape_the_execution_gave_it(length):
    c = _relu()
    rng = np.random.default_rng(length)
    e = nnapi.Execution(c)
    with pytest.raises(nnapi.NNAPIError, match="has not computed yet"):
        e.output_shape(0)
    x = rng.standard_normal(length).astype(np.float32)
    y = np.zeros(length, np.float32)
    e.set_input(0, x)
    e.set_output(0, y)
    e.compute()
    assert e.output_shape(0) == (length,)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    with pytest.raises(nnapi.NNAPIError, match="output 1 does not exist"):
        e.output_shape(1)
    c.release()


def test_a_too_small_output_buffer_is_refused_and_its_needed_shape_reported():
    c = _relu()
    e = nnapi.Execution(c)
    x = np.array([-1.0, 2.0, -3.0, 4.0, 5.0], np.float32)
    e.set_input(0, x)
    e.set_output(0, np.zeros(2, np.float32))
    with pytest.raises(nnapi.NNAPIError, match="has 8 bytes, it needs 20") as err:
        e.compute()
    assert err.value.status == ES.OUTPUT_INSUFFICIENT_SIZE
    assert e.output_shape(0) == (5,)
    big = np.full(8, 7.0, np.float32)  # a larger buffer takes the values at its start
    e.set_output(0, big)
    e.compute()
    np.testing.assert_array_equal(big, [0, 2, 0, 4, 5, 7, 7, 7])
    assert e.output_shape(0) == (5,)
    c.release()


def test_hal_synchronous_execution_reports_shapes_and_sufficiency():
    c = _relu()
    prepared = c.prepared
    x = np.arange(-2, 4, dtype=np.float32)
    for room, sufficient in ((6, True), (5, False)):
        out = np.zeros(room, np.float32)
        request = hal.Request([hal.RequestArgument(False, hal.DataLocation(0, 0, x.nbytes), [6])],
                              [hal.RequestArgument(False, hal.DataLocation(1, 0, out.nbytes), [])],
                              [x.view(np.uint8), out.view(np.uint8)])
        status, shapes, timing = prepared.execute_synchronously(request)
        assert status == (ES.NONE if sufficient else ES.OUTPUT_INSUFFICIENT_SIZE)
        assert shapes == [hal.OutputShape([6], sufficient)]
        assert timing == hal.Timing(hal.NO_TIME, hal.NO_TIME)
    status, _, timing = prepared.execute_synchronously(request, measure=True)  # failed: nothing measured
    assert status == ES.OUTPUT_INSUFFICIENT_SIZE and timing == hal.Timing()
    c.release()


@pytest.mark.parametrize("fast", [True, False], ids=["arrays", "request"])
def test_durations_are_measured_when_asked_in_nanoseconds(fast):
    c = _relu((64, 64) if fast else (0, 64))  # known dimensions: the arrays path; unknown: the request path
    e = nnapi.Execution(c)
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    e.set_input(0, x)
    e.set_output(0, np.zeros((64, 64), np.float32))
    with pytest.raises(nnapi.NNAPIError, match="has not computed yet"):
        e.get_duration(DC.IN_DRIVER)
    e.compute()
    assert e.get_duration(DC.IN_DRIVER) is None and e.get_duration(DC.ON_HARDWARE) is None
    e.set_measure_timing(True)
    e.compute()
    on_hardware, in_driver = e.get_duration(DC.ON_HARDWARE), e.get_duration(DC.IN_DRIVER)
    assert 0 <= on_hardware <= in_driver < 10**10 and in_driver > 0
    assert on_hardware % 1000 == 0 and in_driver % 1000 == 0  # the HAL's microseconds
    with pytest.raises(nnapi.NNAPIError, match="duration code 5 is not a DurationCode"):
        e.get_duration(5)
    e.set_measure_timing(False)
    e.compute()
    assert e.get_duration(DC.IN_DRIVER) is None
    c.release()


def test_supported_operations_answer_in_the_order_operations_were_added():
    m = nnapi.Model()
    a = m.add_operand(T.TENSOR_FLOAT32, [2])
    b = m.add_operand(T.TENSOR_FLOAT32, [2])
    bad = m.add_operand(T.TENSOR_FLOAT32, [3])  # RELU of [2] declared [3]: does not lower
    good = m.add_operand(T.TENSOR_FLOAT32, [2])
    m.add_operation(OP.RELU, [b], [bad])  # added first, runs after the operation writing b
    m.add_operation(OP.RELU, [a], [b])
    m.add_operation(OP.RELU6, [b], [good])
    m.identify_inputs_and_outputs([a], [bad, good])
    with pytest.raises(nnapi.NNAPIError, match="not finished"):
        m.supported_operations()
    m.finish()
    assert [op.type for op in m.to_hal().operations] == [OP.RELU, OP.RELU, OP.RELU6]  # execution order
    assert m.to_hal().operations[0].inputs == [a]
    assert m.supported_operations() == [False, True, True]
    assert m.supported_operations(hal.Device()) == [False, True, True]
