"""Every invalid NN layer configuration of the seed fails verification with a
specific status and a log line that names the node, the parameter and the
expected value."""
from __future__ import annotations

import numpy as np
import pytest
from vxhelp import empty, release, status, virtual

I16 = np.int16


@pytest.fixture
def graph(vx, ctx):
    g = vx.vxCreateGraph(ctx)
    yield g
    release(vx, g)


def conv_params(vx, pad=(0, 0), dilation=(0, 0), ds=None, overflow=None, rounding=None):
    p = vx.ffi.new("vx_nn_convolution_params_t *")
    p.padding_x, p.padding_y = pad
    p.dilation_x, p.dilation_y = dilation
    p.overflow_policy = overflow if overflow is not None else vx.VX_CONVERT_POLICY_SATURATE
    p.rounding_policy = rounding if rounding is not None else vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    p.down_scale_size_rounding = ds if ds is not None else vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    return p


def fails(vx, graph, log, node, expected, *words):
    assert status(vx, node) == vx.VX_SUCCESS
    rc = vx.vxVerifyGraph(graph)
    assert rc == expected, (rc, log.entries)
    assert log.has(expected, "vxVerifyGraph", *words), log.entries
    holder = vx.ffi.new("vx_node *", node)
    assert vx.vxRemoveNode(holder) == vx.VX_SUCCESS


def conv(vx, ctx, graph, x_dims=(8, 8, 3), w_dims=(3, 3, 3, 4), out_dims=(6, 6, 4), b_dims=None,
         dtype=I16, w_dtype=None, params=None):
    x, w = empty(vx, ctx, x_dims, dtype, 8), empty(vx, ctx, w_dims, w_dtype or dtype, 0 if w_dtype else 8)
    b = empty(vx, ctx, b_dims, dtype, 8) if b_dims else vx.ffi.NULL
    out = empty(vx, ctx, out_dims, dtype, 8)
    params = params or conv_params(vx)
    node = vx.vxConvolutionLayer(graph, x, w, b, params, vx.ffi.sizeof("vx_nn_convolution_params_t"), out)
    return node, [x, w, out] + ([b] if b_dims else [])


@pytest.mark.parametrize("case, expected, words", [
    ({"w_dims": (3, 3, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 1", "4-D")),
    ({"w_dims": (3, 3, 2, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 1", "input has 3")),
    ({"w_dtype": np.int8}, "VX_ERROR_INVALID_TYPE", ("parameter 1", "weights data type")),
    ({"b_dims": (5,)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 2", "[4]")),
    ({"out_dims": (5, 6, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 4",
     "no stride gives an output width of 5 from 8 inputs, padding 0, kernel span 3 (stride 1 gives 6)")),
    ({"out_dims": (6, 6, 5)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 4", "expected [6, 6, 4]")),
    ({"x_dims": (8, 8)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 0", "3 to 6 dims")),
    ({"w_dims": (9, 3, 3, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 1", "spans 9")),
], ids=["weights-rank", "weights-ifm", "weights-type", "bias-dims", "no-stride", "ofm", "input-rank",
        "kernel-too-big"])
def test_invalid_convolutions_fail_verification(vx, ctx, graph, log, case, expected, words):
    node, tensors = conv(vx, ctx, graph, **case)
    fails(vx, graph, log, node, getattr(vx, expected), "convolution_layer", *words)
    release(vx, *tensors)


@pytest.mark.parametrize("field, value, words", [
    ("overflow_policy", 0x1234, ("overflow_policy",)),
    ("rounding_policy", 0x1234, ("rounding_policy",)),
    ("down_scale_size_rounding", 0x1234, ("down_scale_size_rounding",)),
])
def test_bad_convolution_parameters_fail_with_invalid_value(vx, ctx, graph, log, field, value, words):
    params = conv_params(vx)
    setattr(params, field, value)
    node, tensors = conv(vx, ctx, graph, params=params)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "parameter 3", *words)
    release(vx, *tensors)


def test_convolution_stride_is_the_smallest_that_fits(vx, ctx, graph, log):
    # 227 wide, 11x11 kernel: 55 outputs need stride 4; 54 outputs fit no stride
    node, tensors = conv(vx, ctx, graph, x_dims=(227, 227, 3), w_dims=(11, 11, 3, 2), out_dims=(55, 55, 2))
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    release(vx, node, *tensors)
    node, tensors = conv(vx, ctx, graph, x_dims=(227, 227, 3), w_dims=(11, 11, 3, 2), out_dims=(54, 55, 2))
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_DIMENSION, "output width of 54")
    release(vx, *tensors)


def test_wrong_struct_size_is_refused_at_node_creation(vx, ctx, graph, log):
    x, w, out = empty(vx, ctx, (8, 8, 3), I16, 8), empty(vx, ctx, (3, 3, 3, 4), I16, 8), empty(vx, ctx, (6, 6, 4), I16, 8)
    node = vx.vxConvolutionLayer(graph, x, w, vx.ffi.NULL, conv_params(vx), 40, out)
    assert status(vx, node) == vx.VX_ERROR_INVALID_PARAMETERS
    assert log.has(vx.VX_ERROR_INVALID_PARAMETERS, "vxConvolutionLayer", "40 bytes, expected 48")
    release(vx, x, w, out)


def test_virtual_weights_are_refused_as_static(vx, ctx, graph, log):
    x, out = empty(vx, ctx, (8, 8, 3), I16, 8), empty(vx, ctx, (6, 6, 4), I16, 8)
    w = virtual(vx, graph, (3, 3, 3, 4), I16, 8)
    node = vx.vxConvolutionLayer(graph, x, w, vx.ffi.NULL, conv_params(vx),
                                 vx.ffi.sizeof("vx_nn_convolution_params_t"), out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_PARAMETERS, "parameter 1", "[static]")
    release(vx, x, w, out)


def deconv(vx, ctx, graph, out_dims, pad=(0, 0), a=(0, 0), w_dims=(3, 3, 2, 2)):
    x, w = empty(vx, ctx, (4, 4, 2), I16, 8), empty(vx, ctx, w_dims, I16, 8)
    out = empty(vx, ctx, out_dims, I16, 8)
    p = vx.ffi.new("vx_nn_deconvolution_params_t *")
    p.padding_x, p.padding_y = pad
    p.a_x, p.a_y = a
    p.overflow_policy, p.rounding_policy = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_ZERO
    node = vx.vxDeconvolutionLayer(graph, x, w, vx.ffi.NULL, p, vx.ffi.sizeof("vx_nn_deconvolution_params_t"), out)
    return node, [x, w, out]


def test_deconvolution_infers_upscale_and_refuses_a_not_below_it(vx, ctx, graph, log):
    node, tensors = deconv(vx, ctx, graph, (10, 10, 2), a=(1, 1))       # (4-1)*2 + 3 + 1 = 10
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    release(vx, node, *tensors)
    node, tensors = deconv(vx, ctx, graph, (9, 9, 2), a=(3, 3))          # upscale would be 1 <= a
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_DIMENSION, "deconvolution_layer", "a_x=3")
    release(vx, *tensors)


def test_deconvolution_padding_beyond_kernel_plus_one_is_invalid(vx, ctx, graph, log):
    node, tensors = deconv(vx, ctx, graph, (2, 2, 2), pad=(5, 5))
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "padding_x 5", "kernel_x 3")
    release(vx, *tensors)


def test_fully_connected_needs_matching_inputs(vx, ctx, graph, log):
    x, w, out = empty(vx, ctx, (10, 2), I16, 8), empty(vx, ctx, (12, 5), I16, 8), empty(vx, ctx, (5, 2), I16, 8)
    node = vx.vxFullyConnectedLayer(graph, x, w, vx.ffi.NULL, vx.VX_CONVERT_POLICY_SATURATE,
                                    vx.VX_ROUND_POLICY_TO_ZERO, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_DIMENSION, "fully_connected_layer", "expect 12 inputs")
    release(vx, x, w, out)


def test_fully_connected_accepts_both_input_layouts(vx, ctx, graph):
    w, out = empty(vx, ctx, (24, 5), I16, 8), empty(vx, ctx, (5, 3), I16, 8)
    for dims in ((24, 3), (2, 3, 4, 3)):
        x = empty(vx, ctx, dims, I16, 8)
        node = vx.vxFullyConnectedLayer(graph, x, w, vx.ffi.NULL, vx.VX_CONVERT_POLICY_SATURATE,
                                        vx.VX_ROUND_POLICY_TO_ZERO, out)
        assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS, dims
        holder = vx.ffi.new("vx_node *", node)
        assert vx.vxRemoveNode(holder) == vx.VX_SUCCESS
        release(vx, x)
    release(vx, w, out)


def pool(vx, ctx, graph, kind=None, size=(3, 3), pad=(0, 0), out_dims=(27, 27, 4), ds=None):
    x, out = empty(vx, ctx, (55, 55, 4), np.uint8), empty(vx, ctx, out_dims, np.uint8)
    node = vx.vxPoolingLayer(graph, x, kind if kind is not None else vx.VX_NN_POOLING_MAX, *size, *pad,
                             ds if ds is not None else vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, out)
    return node, [x, out]


@pytest.mark.parametrize("case, expected, words", [
    ({"kind": 0x1234}, "VX_ERROR_INVALID_VALUE", ("parameter 1", "pooling type")),
    ({"pad": (3, 0)}, "VX_ERROR_INVALID_VALUE", ("parameter 4", "smaller than the window")),
    ({"out_dims": (26, 27, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 7",
     "no stride gives an output width of 26 from 55 inputs, padding 0, window 3 (stride 1 gives 53)")),
    ({"size": (0, 3)}, "VX_ERROR_INVALID_VALUE", ("parameter 2", "at least 1")),
    ({"ds": 0x77}, "VX_ERROR_INVALID_VALUE", ("parameter 6",)),
], ids=["type", "padding", "no-stride", "size", "rounding"])
def test_invalid_pooling_fails_verification(vx, ctx, graph, log, case, expected, words):
    node, tensors = pool(vx, ctx, graph, **case)
    fails(vx, graph, log, node, getattr(vx, expected), "pooling_layer", *words)
    release(vx, *tensors)


def test_pooling_ceiling_rounding_changes_the_inferred_stride(vx, ctx, graph):
    node, tensors = pool(vx, ctx, graph, out_dims=(28, 28, 4), ds=vx.VX_NN_DS_SIZE_ROUNDING_CEILING,
                         size=(2, 2))
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS   # ceil((55-2)/2)+1 = 28
    release(vx, node, *tensors)


@pytest.mark.parametrize("size", [1, 2, 4, 6, 9])
def test_lrn_sizes_other_than_3_5_7_are_invalid(vx, ctx, graph, log, size):
    x, out = empty(vx, ctx, (5, 5, 8), I16, 8), empty(vx, ctx, (5, 5, 8), I16, 8)
    node = vx.vxLocalResponseNormalizationLayer(graph, x, vx.VX_NN_NORMALIZATION_ACROSS_MAPS, size,
                                                1e-4, 0.75, 1.0, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "normalization_size", "expected 3, 5 or 7")
    release(vx, x, out)


def test_lrn_parameters_must_be_positive(vx, ctx, graph, log):
    x, out = empty(vx, ctx, (5, 5, 8), I16, 8), empty(vx, ctx, (5, 5, 8), I16, 8)
    node = vx.vxLocalResponseNormalizationLayer(graph, x, vx.VX_NN_NORMALIZATION_SAME_MAP, 3,
                                                1e-4, -0.75, 1.0, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "beta must be a positive number")
    release(vx, x, out)


def test_activation_function_and_parameters_are_checked(vx, ctx, graph, log):
    x, out = empty(vx, ctx, (5, 5, 8), I16, 8), empty(vx, ctx, (5, 5, 8), I16, 8)
    node = vx.vxActivationLayer(graph, x, 0x1d0ff, 1.0, 1.0, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "activation function")
    node = vx.vxActivationLayer(graph, x, vx.VX_NN_ACTIVATION_BRELU, 0.0, 1.0, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_VALUE, "parameter 2", "a must be a positive number")
    release(vx, x, out)


def test_softmax_output_must_match_the_input(vx, ctx, graph, log):
    x, out = empty(vx, ctx, (10, 3), I16, 8), empty(vx, ctx, (10, 4), I16, 8)
    node = vx.vxSoftmaxLayer(graph, x, out)
    fails(vx, graph, log, node, vx.VX_ERROR_INVALID_DIMENSION, "softmax_layer", "expected [10, 3]")
    release(vx, x, out)


def roi(vx, ctx, graph, rois_dims=(4, 3), out_dims=(2, 2, 5, 3), pool_type=None, rois_dtype=np.int16):
    x = empty(vx, ctx, (9, 9, 5), I16, 8)
    rois = empty(vx, ctx, rois_dims, rois_dtype)
    out = empty(vx, ctx, out_dims, I16, 8)
    p = vx.ffi.new("vx_nn_roi_pool_params_t *")
    p.pool_type = pool_type if pool_type is not None else vx.VX_NN_POOLING_MAX
    node = vx.vxROIPoolingLayer(graph, x, rois, p, vx.ffi.sizeof("vx_nn_roi_pool_params_t"), out)
    return node, [x, rois, out]


@pytest.mark.parametrize("case, expected, words", [
    ({"rois_dims": (5, 3)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 1", "[4, roi_count")),
    ({"pool_type": "avg"}, "VX_ERROR_INVALID_VALUE", ("parameter 2", "pool_type")),
    ({"out_dims": (2, 2, 5, 4)}, "VX_ERROR_INVALID_DIMENSION", ("parameter 3", "expected [2, 2, 5, 3]")),
    ({"rois_dtype": np.float32}, "VX_ERROR_INVALID_TYPE", ("parameter 1", "integer")),
], ids=["rois-dims", "avg", "roi-count", "rois-type"])
def test_invalid_roi_pooling_fails_verification(vx, ctx, graph, log, case, expected, words):
    if case.get("pool_type") == "avg":
        case["pool_type"] = vx.VX_NN_POOLING_AVG
    node, tensors = roi(vx, ctx, graph, **case)
    fails(vx, graph, log, node, getattr(vx, expected), "roi_pooling_layer", *words)
    release(vx, *tensors)
