"""Typed node constructors check their required parameters at creation (the
sample implementation's rule: a required parameter must exist), and
vxSetParameterByIndex / vxSetParameterByReference refuse NULL for them.

Before this check the constructors returned a valid node for a NULL required
tensor and the error surfaced only at verify (VX_ERROR_NOT_SUFFICIENT)."""
from __future__ import annotations

import numpy as np
import pytest
from vxhelp import as_ref, empty, release, scalar, status

I16 = np.int16


def _conv_params(vx):
    p = vx.ffi.new("vx_nn_convolution_params_t *")
    p.overflow_policy = vx.VX_CONVERT_POLICY_SATURATE
    p.rounding_policy = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    p.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    return p


def _deconv_params(vx):
    p = vx.ffi.new("vx_nn_deconvolution_params_t *")
    p.overflow_policy = vx.VX_CONVERT_POLICY_SATURATE
    p.rounding_policy = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    return p


# constructor: (dims of each tensor argument, call(graph, tensors) -> node)
def _constructors(vx):
    sat, even = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    conv, deconv = _conv_params(vx), _deconv_params(vx)
    roi = vx.ffi.new("vx_nn_roi_pool_params_t *", {"pool_type": vx.VX_NN_POOLING_MAX})
    return {
        "vxConvolutionLayer": ([(8, 8, 3), (3, 3, 3, 4), (4,), (6, 6, 4)], lambda g, t: vx.vxConvolutionLayer(
            g, t[0], t[1], t[2], conv, vx.ffi.sizeof(conv[0]), t[3])),
        "vxDeconvolutionLayer": ([(4, 4, 2), (3, 3, 2, 2), (2,), (6, 6, 2)], lambda g, t: vx.vxDeconvolutionLayer(
            g, t[0], t[1], t[2], deconv, vx.ffi.sizeof(deconv[0]), t[3])),
        "vxFullyConnectedLayer": ([(6,), (6, 3), (3,), (3,)], lambda g, t: vx.vxFullyConnectedLayer(
            g, t[0], t[1], t[2], sat, even, t[3])),
        "vxPoolingLayer": ([(4, 4, 2), (2, 2, 2)], lambda g, t: vx.vxPoolingLayer(
            g, t[0], vx.VX_NN_POOLING_MAX, 2, 2, 0, 0, vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, t[1])),
        "vxSoftmaxLayer": ([(5,), (5,)], lambda g, t: vx.vxSoftmaxLayer(g, t[0], t[1])),
        "vxLocalResponseNormalizationLayer": ([(4, 4, 5), (4, 4, 5)], lambda g, t:
                                              vx.vxLocalResponseNormalizationLayer(
                                                  g, t[0], vx.VX_NN_NORMALIZATION_ACROSS_MAPS, 3, 1e-4, 0.75,
                                                  1.0, t[1])),
        "vxActivationLayer": ([(5,), (5,)], lambda g, t: vx.vxActivationLayer(
            g, t[0], vx.VX_NN_ACTIVATION_RELU, 0.0, 0.0, t[1])),
        "vxROIPoolingLayer": ([(8, 8, 2), (4, 1), (2, 2, 2, 1)], lambda g, t: vx.vxROIPoolingLayer(
            g, t[0], t[1], roi, vx.ffi.sizeof(roi[0]), t[2])),
        "vxTensorAddNode": ([(4, 3), (4, 3), (4, 3)], lambda g, t: vx.vxTensorAddNode(g, t[0], t[1], sat, t[2])),
        "vxTensorTransposeNode": ([(4, 3), (3, 4)], lambda g, t: vx.vxTensorTransposeNode(g, t[0], t[1], 0, 1)),
    }


# constructor: {position in its tensor list: name of a required tensor parameter}
REQUIRED = {
    "vxConvolutionLayer": {0: "inputs", 1: "weights", 3: "outputs"},
    "vxDeconvolutionLayer": {0: "inputs", 1: "weights", 3: "outputs"},
    "vxFullyConnectedLayer": {0: "inputs", 1: "weights", 3: "outputs"},
    "vxPoolingLayer": {0: "inputs", 1: "outputs"},
    "vxSoftmaxLayer": {0: "inputs", 1: "outputs"},
    "vxLocalResponseNormalizationLayer": {0: "inputs", 1: "outputs"},
    "vxActivationLayer": {0: "inputs", 1: "outputs"},
    "vxROIPoolingLayer": {0: "input_data", 1: "input_rois", 2: "output_arr"},
    "vxTensorAddNode": {0: "input1", 1: "input2", 2: "output"},
    "vxTensorTransposeNode": {0: "input", 1: "output"},
}
CONSTRUCTORS = list(REQUIRED)
CASES = [(name, position) for name, required in REQUIRED.items() for position in required]


def _tensors(vx, ctx, dims):
    return [empty(vx, ctx, d, I16, 0) for d in dims]


def test_the_case_table_names_every_constructor(vx):
    assert sorted(_constructors(vx)) == sorted(CONSTRUCTORS)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_every_constructor_accepts_its_good_arguments(vx, ctx, graph, name):
    """Control: with every tensor given the same call makes a valid node."""
    dims, make = _constructors(vx)[name]
    tensors = _tensors(vx, ctx, dims)
    node = make(graph, tensors)
    assert status(vx, node) == vx.VX_SUCCESS
    release(vx, node, *tensors)


@pytest.mark.parametrize("name, position", CASES)
def test_null_for_a_required_tensor_gives_an_invalid_reference_error_node(vx, ctx, graph, log, name, position):
    dims, make = _constructors(vx)[name]
    required = REQUIRED[name]
    tensors = _tensors(vx, ctx, dims)
    args = list(tensors)
    args[position] = vx.ffi.NULL
    node = make(graph, args)
    assert status(vx, node) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, f"{name}:", required[position], "required"), log.entries
    count = vx.ffi.new("vx_uint32 *")
    assert vx.vxQueryGraph(graph, vx.VX_GRAPH_NUMNODES, count, 4) == vx.VX_SUCCESS
    assert count[0] == 0, "the refused node must not stay in the graph"
    release(vx, *tensors)


@pytest.mark.parametrize("name", ["vxConvolutionLayer", "vxDeconvolutionLayer", "vxFullyConnectedLayer"])
def test_null_biases_stay_accepted(vx, ctx, graph, name):
    dims, make = _constructors(vx)[name]
    tensors = _tensors(vx, ctx, dims)
    args = list(tensors)
    args[2] = vx.ffi.NULL
    node = make(graph, args)
    assert status(vx, node) == vx.VX_SUCCESS
    release(vx, node, *tensors)


def test_a_scalar_where_a_tensor_is_required_gives_an_invalid_type_error_node(vx, ctx, graph, log):
    dims, make = _constructors(vx)["vxConvolutionLayer"]
    tensors = _tensors(vx, ctx, dims)
    s = scalar(vx, ctx, "vx_int32", 1, "VX_TYPE_INT32")
    node = make(graph, [tensors[0], vx.ffi.cast("vx_tensor", s), tensors[2], tensors[3]])
    assert status(vx, node) == vx.VX_ERROR_INVALID_TYPE
    assert log.has(vx.VX_ERROR_INVALID_TYPE, "vxConvolutionLayer:", "parameter 1", "weights"), log.entries
    release(vx, s, *tensors)


def test_a_null_scale_scalar_of_tensor_multiply_is_refused(vx, ctx, graph, log):
    a, b, out = _tensors(vx, ctx, [(4,), (4,), (4,)])
    node = vx.vxTensorMultiplyNode(graph, a, b, vx.ffi.NULL, vx.VX_CONVERT_POLICY_SATURATE,
                                   vx.VX_ROUND_POLICY_TO_ZERO, out)
    assert status(vx, node) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxTensorMultiplyNode:", "scale"), log.entries
    release(vx, a, b, out)


def test_set_parameter_refuses_null_for_a_required_parameter(vx, ctx, graph, log):
    a, out = _tensors(vx, ctx, [(4,), (4,)])
    node = vx.vxTensorAddNode(graph, a, a, vx.VX_CONVERT_POLICY_SATURATE, out)
    assert vx.vxSetParameterByIndex(node, 0, vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxSetParameterByIndex", "parameter 0", "required")
    param = vx.vxGetParameterByIndex(node, 3)
    assert vx.vxSetParameterByReference(param, vx.ffi.NULL) == vx.VX_ERROR_INVALID_REFERENCE
    assert log.has(vx.VX_ERROR_INVALID_REFERENCE, "vxSetParameterByReference", "parameter 3", "required")
    # The node still holds its tensors and runs.
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    release(vx, param, node, a, out)


def test_set_parameter_clears_an_optional_parameter_with_null(vx, ctx, graph):
    x, w, b, out = _tensors(vx, ctx, [(8, 8, 3), (3, 3, 3, 4), (4,), (6, 6, 4)])
    conv = _conv_params(vx)
    node = vx.vxConvolutionLayer(graph, x, w, b, conv, vx.ffi.sizeof(conv[0]), out)
    assert vx.vxSetParameterByIndex(node, 2, vx.ffi.NULL) == vx.VX_SUCCESS
    param = vx.vxGetParameterByIndex(node, 2)
    held = vx.ffi.new("vx_reference *")
    assert vx.vxQueryParameter(param, vx.VX_PARAMETER_REF, held, vx.ffi.sizeof("vx_reference")) == vx.VX_SUCCESS
    assert held[0] == vx.ffi.NULL
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    release(vx, param, node, x, w, b, out)


def test_generic_node_parameters_set_one_by_one_still_work(vx, ctx, graph):
    """Only NULL is refused: a generic node's unset parameters are still legal
    until verification, which names what is missing."""
    kernel = vx.vxGetKernelByEnum(ctx, vx.VX_KERNEL_TENSOR_ADD)
    node = vx.vxCreateGenericNode(graph, kernel)
    assert status(vx, node) == vx.VX_SUCCESS
    a = empty(vx, ctx, (4,), I16)
    assert vx.vxSetParameterByIndex(node, 0, as_ref(vx, a)) == vx.VX_SUCCESS
    assert vx.vxVerifyGraph(graph) == vx.VX_ERROR_NOT_SUFFICIENT
    release(vx, node, kernel, a)


def test_a_huge_size_argument_is_a_value_error_not_an_internal_error(vx, ctx, graph, log):
    """A vx_size past INT64_MAX travels as a negative int64: it is read back
    unsigned and rejected at verify, never a VX_FAILURE with a traceback."""
    x, out = _tensors(vx, ctx, [(4, 4, 2), (2, 2, 2)])
    node = vx.vxPoolingLayer(graph, x, vx.VX_NN_POOLING_MAX, 2**64 - 1, 2, 0, 0,
                             vx.VX_NN_DS_SIZE_ROUNDING_FLOOR, out)
    assert status(vx, node) == vx.VX_SUCCESS, log.entries
    rc = vx.vxVerifyGraph(graph)
    assert rc not in (vx.VX_SUCCESS, vx.VX_FAILURE), (rc, log.entries)
    assert not log.has(vx.VX_FAILURE, "internal error"), log.entries
    release(vx, node, x, out)
