"""Context, tensors, graphs and errors of the Pythonic API: round trips,
views, virtual tensors, graph parameters, scheduling, exceptions with status
names and log messages, quantization, and no leaked references."""
from __future__ import annotations

import numpy as np
import pytest
from api_testing import leak_checked_context

from openvx_nn.api import (
    Context,
    InvalidDimensionError,
    InvalidValueError,
    OptimizedAwayError,
    VXError,
    dequantize,
    quantize,
)


@pytest.fixture
def context():
    yield from leak_checked_context()


def test_context_reports_extensions_kernels_and_implementation(context):
    assert "KHR_NN_16" in context.extensions
    names = {k.name for k in context.kernels}
    assert "org.khronos.nn_extension.convolution_layer" in names and "org.khronos.openvx.tensor_add" in names
    assert context.implementation == "openvx-nn" and context.version == (1, 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32])
def test_a_tensor_round_trips_a_numpy_array_in_openvx_dim_order(context, dtype):
    array = (np.arange(2 * 3 * 4).reshape(2, 3, 4) % 100).astype(dtype)
    t = context.tensor(array, fixed_point_position=0)
    assert t.shape == (2, 3, 4) and t.dtype == np.dtype(dtype)
    assert np.array_equal(t.numpy(), array)
    t.write(array[::-1])
    assert np.array_equal(t.numpy(), array[::-1])


def test_a_view_reads_and_writes_its_parents_memory(context):
    array = np.arange(24, dtype=np.int16).reshape(4, 6)
    parent = context.tensor(array, fixed_point_position=8)
    view = parent.view([1, 2], [3, 5])
    assert view.shape == (2, 3) and view.fixed_point_position == 8
    assert np.array_equal(view.numpy(), array[1:3, 2:5])
    view.write(np.zeros((2, 3), np.int16))
    expected = array.copy()
    expected[1:3, 2:5] = 0
    assert np.array_equal(parent.numpy(), expected)


def test_quantize_rounds_saturates_and_dequantize_inverts():
    real = np.array([0.5, -1.25, 1 / 512, 3 / 512, 200.0, -200.0])
    raw = quantize(real, np.int16, 8)
    assert raw.dtype == np.int16
    assert raw.tolist() == [128, -320, 0, 2, 32767, -32768]   # 0.5 and 1.5 ulp round to even
    assert quantize(real, np.int16, 8, rounding="to_zero")[3] == 1
    assert np.allclose(dequantize(raw[:2], 8), [0.5, -1.25])
    assert quantize(np.array([1.0]), np.int8, 7)[0] == 127


def test_virtual_outputs_get_their_shape_before_verification_and_cannot_be_read(context):
    x = context.tensor(np.ones((6, 6, 2), np.int16), fixed_point_position=8)
    with context.graph() as g:
        y = g.max_pool(x)
        assert y.virtual and y.shape == (3, 3, 2) and y.dtype == np.int16
        g.process()
        with pytest.raises(OptimizedAwayError) as err:
            y.numpy()
        assert err.value.status_name == "VX_ERROR_OPTIMIZED_AWAY"


def test_a_shape_mismatch_raises_with_the_status_name_and_the_library_message(context):
    x = context.tensor(np.zeros((4, 4, 2), np.int16), fixed_point_position=8)
    w = context.tensor(np.zeros((3, 3, 3, 1), np.int16), fixed_point_position=8)   # 3 IFM, input has 2
    with context.graph() as g:
        g.convolution(x, w)
        with pytest.raises(InvalidDimensionError) as err:
            g.verify()
    e = err.value
    assert isinstance(e, VXError)
    assert e.status_name == "VX_ERROR_INVALID_DIMENSION" and e.function == "vxVerifyGraph"
    assert "input feature maps" in e.log and "input feature maps" in str(e)


def test_a_bad_fixed_point_position_raises_invalid_value(context):
    with pytest.raises(InvalidValueError, match="VX_ERROR_INVALID_VALUE"):
        context.tensor(shape=(2,), dtype=np.int8, fixed_point_position=9)


def test_bad_names_are_refused_before_reaching_the_library(context):
    x = context.tensor(np.zeros((4, 4, 1), np.int16))
    with context.graph() as g, pytest.raises(ValueError, match="'sigmoid' is not one of"):
        g.activation(x, "sigmoid")
    with pytest.raises(TypeError, match="float64"):
        context.tensor(np.zeros(3))


def test_graph_parameters_swap_batches_without_rebuilding(context):
    w = context.tensor(np.array([[2.0], [1.0]], np.float32))     # [#IFM=2, #OFM=1]
    first = context.tensor(np.array([[1, 2], [3, 4]], np.float32))
    second = context.tensor(np.array([[10, 0], [0, 10]], np.float32))
    out = context.tensor(shape=(1, 2), dtype=np.float32)
    with context.graph() as g:
        g.fully_connected(first, w, None, out)
        index = g.add_parameter(first)
        assert index == 0
        g.process()
        assert out.numpy().tolist() == [[5.0, 8.0]]   # batch b is column b: (1, 3) and (2, 4)
        g.set_parameter(index, second)
        g.process()
        assert out.numpy().tolist() == [[20.0, 10.0]]


def test_schedule_and_wait_run_the_graph(context):
    x = context.tensor(np.array([-1.0, 2.0], np.float32))
    out = context.tensor(shape=(2,), dtype=np.float32)
    with context.graph() as g:
        g.relu(x, out)
        assert g.state == "unverified"
        g.verify()
        g.schedule()
        g.wait()
        assert g.state == "completed"
    assert out.numpy().tolist() == [0.0, 2.0]


def test_closing_the_context_releases_everything_it_made():
    with Context() as outer:   # keeps the process-wide context alive to count its references
        baseline = outer.references
        ctx = Context()
        x = ctx.tensor(np.ones((4, 4, 1), np.float32))
        g = ctx.graph()
        g.softmax(g.relu(x))
        g.process()
        assert outer.references > baseline
        ctx.close()
        assert outer.references == baseline
        ctx.close()   # idempotent


def test_using_a_closed_object_is_a_clear_error(context):
    t = context.tensor(np.zeros(2, np.uint8))
    t.close()
    with pytest.raises(ValueError, match="closed"):
        t.numpy()
