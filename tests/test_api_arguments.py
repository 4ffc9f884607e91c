"""Every bad argument of the Pythonic API raises TypeError, ValueError or a
VXError subclass whose message names the argument (before: ZeroDivisionError,
OverflowError, AttributeError, IndexError or a silently truncated shape), and
raw values (NumPy arrays, nested lists) are accepted wherever a constant tensor
is expected."""
from __future__ import annotations

import numpy as np
import pytest
from api_testing import leak_checked_context

from openvx_nn.api import VXError, quantize


@pytest.fixture
def context():
    yield from leak_checked_context()


@pytest.fixture
def x(context):
    return context.tensor(np.zeros((8, 8, 2), np.int16), fixed_point_position=8)


def _w(context):
    return context.tensor(shape=(3, 3, 2, 4), dtype=np.int16, fixed_point_position=8)


BAD_LAYER_CALLS = {
    "pool-size-zero": (lambda c, g, x: g.max_pool(x, size=(0, 0)), ValueError, "size"),
    "pool-size-text": (lambda c, g, x: g.max_pool(x, size="2"), TypeError, "size"),
    "pool-padding-negative": (lambda c, g, x: g.max_pool(x, padding=(-1, 0)), ValueError, "padding"),
    "pool-stride-zero": (lambda c, g, x: g.max_pool(x, stride=0), ValueError, "stride"),
    "pool-size-float": (lambda c, g, x: g.avg_pool(x, size=(2.5, 2)), TypeError, "size"),
    "conv-padding-negative": (lambda c, g, x: g.convolution(x, _w(c), padding=-1), ValueError, "padding"),
    "conv-dilation-negative": (lambda c, g, x: g.convolution(x, _w(c), dilation=-1), ValueError, "dilation"),
    "conv-weights-string": (lambda c, g, x: g.convolution(x, "w"), TypeError, "weights"),
    "conv-input-list": (lambda c, g, x: g.convolution([1, 2], _w(c)), TypeError, "x"),
    "conv-out-array": (lambda c, g, x: g.convolution(x, _w(c), out=np.zeros(3)), TypeError, "out"),
    "deconv-a-negative": (lambda c, g, x: g.deconvolution(x, _w(c), a=-1), ValueError, "a"),
    "deconv-upscale-zero": (lambda c, g, x: g.deconvolution(x, _w(c), upscale=0), ValueError, "upscale"),
    "fc-float-weights-for-q78": (lambda c, g, x: g.fully_connected(x, np.ones((128, 2))), TypeError, "weights"),
    "fc-weights-out-of-range": (lambda c, g, x: g.fully_connected(x, [[40000] * 2] * 128), ValueError, "weights"),
    "fc-ragged-weights": (lambda c, g, x: g.fully_connected(x, [[1, 2], [3]]), ValueError, "weights"),
    "lrn-size-negative": (lambda c, g, x: g.lrn(x, size=-3), ValueError, "size"),
    "lrn-alpha-text": (lambda c, g, x: g.lrn(x, alpha="0.1"), TypeError, "alpha"),
    "activation-a-text": (lambda c, g, x: g.activation(x, "brelu", a="x"), TypeError, "a"),
    "activation-unknown": (lambda c, g, x: g.activation(x, "swish"), ValueError, "activation function"),
    "relu-input-list": (lambda c, g, x: g.relu([1, 2, 3]), TypeError, "x"),
    "roi-pooled-size-zero": (lambda c, g, x: g.roi_pooling(x, [[0, 0, 3, 3]], pooled_size=(0, 2)), ValueError,
                             "pooled_size"),
    "transpose-dim-out-of-range": (lambda c, g, x: g.transpose(x, 0, 7), ValueError, "dim"),
    "transpose-dim-negative": (lambda c, g, x: g.transpose(x, -1, 0), ValueError, "dim1"),
    "multiply-scale-text": (lambda c, g, x: g.multiply(x, x, scale="a"), TypeError, "scale"),
    "table-lookup-array-lut": (lambda c, g, x: g.table_lookup(x, np.zeros(4)), TypeError, "lut"),
    "convert-depth-norm-text": (lambda c, g, x: g.convert_depth(x, np.int16, norm="1"), TypeError, "norm"),
    "graph-parameter-index": (lambda c, g, x: g.set_parameter(-1, x), ValueError, "index"),
    "virtual-shape-negative": (lambda c, g, x: g.virtual((-1, 2)), ValueError, "shape"),
}


@pytest.mark.parametrize("case", list(BAD_LAYER_CALLS))
def test_a_bad_graph_argument_raises_an_error_naming_it(context, x, case):
    call, error, name = BAD_LAYER_CALLS[case]
    with context.graph() as g, pytest.raises(error) as info:
        call(context, g, x)
    assert name in str(info.value), str(info.value)


BAD_TENSORS = {
    "negative-dim": ({"shape": (-4,), "dtype": np.int16}, ValueError, "shape[0]"),
    "zero-dim": ({"shape": (4, 0), "dtype": np.int16}, ValueError, "shape[1]"),
    "float-dim": ({"shape": (4.5,), "dtype": np.int16}, TypeError, "shape[0]"),
    "no-dims": ({"shape": (), "dtype": np.int16}, ValueError, "shape"),
    "seven-dims": ({"shape": (1,) * 7, "dtype": np.int16}, ValueError, "shape"),
    "shape-text": ({"shape": "44", "dtype": np.int16}, TypeError, "shape"),
    "float-fpp": ({"shape": (4,), "dtype": np.int16, "fixed_point_position": 1.5}, TypeError, "fixed_point_position"),
    "float-values-for-int16": ({"array": [0.5, 1.5], "dtype": np.int16}, TypeError, "quantize"),
    "strings": ({"array": ["a", "b"]}, TypeError, "array"),
    "array-and-shape": ({"array": [1, 2], "shape": (2,), "dtype": np.int16}, ValueError, "shape"),
}


@pytest.mark.parametrize("case", list(BAD_TENSORS))
def test_a_bad_tensor_argument_raises_an_error_naming_it(context, case):
    kwargs, error, name = BAD_TENSORS[case]
    with pytest.raises(error) as info:
        context.tensor(**kwargs)
    assert name in str(info.value), str(info.value)


def test_a_fixed_point_position_out_of_range_is_the_librarys_invalid_value(context):
    with pytest.raises(VXError) as info:
        context.tensor(shape=(4,), dtype=np.int16, fixed_point_position=99)
    assert info.value.status_name == "VX_ERROR_INVALID_VALUE" and "fixed point position" in str(info.value)


def test_nested_lists_make_a_tensor(context):
    t = context.tensor([[1, 2, 3], [4, 5, 6]], dtype=np.int16, fixed_point_position=8)
    assert t.shape == (2, 3) and t.dtype == np.int16 and t.fixed_point_position == 8
    assert t.numpy().tolist() == [[1, 2, 3], [4, 5, 6]]


def test_array_and_list_weights_equal_tensor_weights(context):
    """Raw weights/biases become constant tensors of the input's format: the
    result is the one the same values in explicit tensors give."""
    rng = np.random.default_rng(5)
    x_raw = rng.integers(-256, 256, (6, 5, 2), dtype=np.int16)
    w_raw = rng.integers(-64, 64, (3, 3, 2, 3), dtype=np.int16)
    b_raw = rng.integers(-256, 256, (3,), dtype=np.int16)
    results = []
    for as_tensors in (True, False):
        x = context.tensor(x_raw, fixed_point_position=8)
        out = context.tensor(shape=(4, 3, 3), dtype=np.int16, fixed_point_position=8)
        if as_tensors:
            w, b = (context.tensor(a, fixed_point_position=8) for a in (w_raw, b_raw))
        else:
            w, b = w_raw, b_raw.tolist()  # a NumPy array and a plain list
        with context.graph() as g:
            g.convolution(x, w, b, out)
            g.process()
        results.append(out.numpy())
    assert np.array_equal(results[0], results[1])
    assert np.any(results[0] != 0)


def test_float_weights_for_a_float_layer_are_converted_to_float32(context):
    x = context.tensor(np.arange(6, dtype=np.float32))
    with context.graph() as g:
        y = g.fully_connected(x, [[1.0, 0.5]] * 6, [0.25, 0.0],
                              out=context.tensor(shape=(2,), dtype=np.float32))
        g.process()
    assert np.allclose(y.numpy(), [15.25, 7.5])


def test_quantized_weights_for_a_q78_layer(context):
    x = context.tensor(quantize(np.full(4, 1.0), np.int16, 8), fixed_point_position=8)
    with context.graph() as g:
        y = g.add(x, quantize([0.5, 1.0, -1.0, 2.0], np.int16, 8),
                  out=context.tensor(shape=(4,), dtype=np.int16, fixed_point_position=8))
        g.process()
    assert (y.numpy() / 256).tolist() == [1.5, 2.0, 0.0, 3.0]


def test_list_rois_become_an_int32_tensor(context):
    x = context.tensor(np.arange(16, dtype=np.int16).reshape(4, 4, 1, order="F"))
    with context.graph() as g:
        y = g.roi_pooling(x, [[0], [0], [3], [3]], pooled_size=(1, 1))
        out = g.add(y, [[[[0]]]], out=context.tensor(shape=(1, 1, 1, 1), dtype=np.int16))
        g.process()
    assert out.numpy().ravel().tolist() == [15]


@pytest.mark.parametrize("layer", ["convolution", "deconvolution"])
def test_weights_of_the_wrong_rank_are_the_librarys_dimension_error(context, x, layer):
    """The API's output-shape inference no longer indexes past a short shape
    (an IndexError before); verification names the problem."""
    with context.graph() as g:
        getattr(g, layer)(x, np.zeros((3, 3), np.int16))
        with pytest.raises(VXError) as info:
            g.verify()
    assert info.value.status_name == "VX_ERROR_INVALID_DIMENSION" and "weights" in str(info.value)
