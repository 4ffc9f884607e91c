"""Through the C API: the compatibility mode (``VX_CONTEXT_OPENVX_NN_COMPAT``,
``OPENVX_NN_COMPAT``) and the supersets accepted in every mode, each against the plain references of
tests/kernels (switched to the same mode) bit for bit."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import F32, Q78, S8, U8, assert_bits_equal, assert_float32_sums, random_values
from layer_references import fully_connected_ref, roi_pooling_ref
from nn_forms import FORMS, run_layer
from test_convert_depth import reference_convert
from test_elementwise import reference_add_sub, reference_multiply
from vxhelp import empty, query_dims, read, release, scalar, tensor, virtual

MODES = ("standard", "khronos-sample")


def _set_mode(vx, ctx, name: str) -> int:
    value = {"standard": vx.VX_OPENVX_NN_COMPAT_STANDARD, "khronos-sample": vx.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE,
             "environment": vx.VX_OPENVX_NN_COMPAT_ENVIRONMENT}[name]
    return vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_OPENVX_NN_COMPAT, vx.ffi.new("vx_enum *", value), 4)


def _query_mode(vx, ctx) -> tuple[int, int]:
    out = vx.ffi.new("vx_enum *")
    rc = vx.vxQueryContext(ctx, vx.VX_CONTEXT_OPENVX_NN_COMPAT, out, 4)
    return rc, out[0]


@pytest.fixture
def mode(vx, ctx, monkeypatch):
    """Sets the context's mode by attribute; the context goes back to following the environment after."""
    monkeypatch.delenv("OPENVX_NN_COMPAT", raising=False)

    def use(name: str) -> None:
        assert _set_mode(vx, ctx, name) == vx.VX_SUCCESS

    yield use
    assert _set_mode(vx, ctx, "environment") == vx.VX_SUCCESS


def _fpp(fmt):
    return 0 if fmt.is_float else fmt.fpp


# -- the attribute and the environment ---------------------------------------------------------------
def test_the_attribute_follows_the_environment_until_set(vx, ctx, mode, monkeypatch, log):
    assert _query_mode(vx, ctx) == (vx.VX_SUCCESS, vx.VX_OPENVX_NN_COMPAT_STANDARD)
    monkeypatch.setenv("OPENVX_NN_COMPAT", "khronos-sample")
    assert _query_mode(vx, ctx) == (vx.VX_SUCCESS, vx.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE)
    mode("standard")  # an explicit setting wins over the environment
    assert _query_mode(vx, ctx) == (vx.VX_SUCCESS, vx.VX_OPENVX_NN_COMPAT_STANDARD)
    monkeypatch.delenv("OPENVX_NN_COMPAT")
    mode("khronos-sample")
    assert _query_mode(vx, ctx) == (vx.VX_SUCCESS, vx.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE)
    # the value is the attribute's enumerator in our vendor range: VX_ATTRIBUTE_BASE(VX_ID_USER, VX_TYPE_CONTEXT)
    assert vx.VX_CONTEXT_OPENVX_NN_COMPAT & 0xFFFFFFFF == (vx.VX_ID_USER << 20) | (vx.VX_TYPE_CONTEXT << 8)


def test_the_attribute_refuses_bad_values_and_sizes(vx, ctx, mode, log):
    bad = vx.ffi.new("vx_enum *", 7)
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_OPENVX_NN_COMPAT, bad, 4) == vx.VX_ERROR_INVALID_VALUE
    assert log.has(vx.VX_ERROR_INVALID_VALUE, "VX_CONTEXT_OPENVX_NN_COMPAT", "VX_OPENVX_NN_COMPAT_STANDARD")
    good = vx.ffi.new("vx_enum *", vx.VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE)
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_OPENVX_NN_COMPAT, good, 8) == vx.VX_ERROR_INVALID_PARAMETERS
    assert vx.vxSetContextAttribute(ctx, vx.VX_CONTEXT_OPENVX_NN_COMPAT, vx.ffi.NULL, 4) \
        == vx.VX_ERROR_INVALID_PARAMETERS
    assert _query_mode(vx, ctx) == (vx.VX_SUCCESS, vx.VX_OPENVX_NN_COMPAT_STANDARD)  # unchanged


def test_an_unknown_environment_word_fails_verification_with_a_clear_error(vx, ctx, mode, monkeypatch, log):
    monkeypatch.setenv("OPENVX_NN_COMPAT", "khronos")
    x = tensor(vx, ctx, np.full((4,), 512, np.int16), 8)
    out = empty(vx, ctx, (4,), np.uint8)
    n, o = scalar(vx, ctx, "vx_float32", 1.0, "VX_TYPE_FLOAT32"), scalar(vx, ctx, "vx_float32", 0.0, "VX_TYPE_FLOAT32")
    assert vx.vxuTensorConvertDepth(ctx, x, vx.VX_CONVERT_POLICY_SATURATE, n, o, out) == vx.VX_ERROR_INVALID_VALUE
    assert log.has(vx.VX_ERROR_INVALID_VALUE, "OPENVX_NN_COMPAT", "'khronos'", "khronos-sample")
    assert _query_mode(vx, ctx)[0] == vx.VX_ERROR_INVALID_VALUE
    release(vx, x, out, n, o)


def _dilated(vx, ctx, graph, x, w, out, dilation):
    params = vx.ffi.new("vx_nn_convolution_params_t *")
    params.dilation_x, params.dilation_y = dilation
    params.overflow_policy, params.rounding_policy = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_ZERO
    params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    return vx.vxConvolutionLayer(graph, x, w, vx.ffi.NULL, params, vx.ffi.sizeof(params[0]), out)


def test_the_mode_is_taken_when_the_graph_is_verified(vx, ctx, mode, monkeypatch):
    rng = np.random.default_rng(93)
    x, w = random_values(rng, S8, (7, 6, 2)), random_values(rng, S8, (2, 2, 2, 3))
    tx, tw = tensor(vx, ctx, x), tensor(vx, ctx, w)
    out = empty(vx, ctx, (5, 4, 3), np.int8)
    graph = vx.vxCreateGraph(ctx)
    node = _dilated(vx, ctx, graph, tx, tw, out, (1, 1))

    def expected(sample):
        return reference_convolution(x, w, None, (5, 4, 3), (0, 0), (1, 1), (1, 1), S8, (0,) * 4, True, False,
                                     sample=sample)

    assert not np.array_equal(expected(False), expected(True))
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    mode("khronos-sample")  # too late for this verification
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert_bits_equal(read(vx, out, (5, 4, 3), np.int8), expected(False))
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert_bits_equal(read(vx, out, (5, 4, 3), np.int8), expected(True))
    mode("environment")  # back to the environment: OPENVX_NN_COMPAT=khronos-sample works the same way
    monkeypatch.setenv("OPENVX_NN_COMPAT", "khronos-sample")
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    monkeypatch.setenv("OPENVX_NN_COMPAT", "standard")  # read at verify only, not per call
    assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
    assert_bits_equal(read(vx, out, (5, 4, 3), np.int8), expected(True))
    release(vx, node, graph, tx, tw, out)


# -- item 9: dilated convolution ------------------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fmt", [U8, Q78, F32], ids=str)
@pytest.mark.parametrize("compat", MODES)
def test_dilated_convolution_in_both_modes(vx, ctx, mode, compat, fmt, form):
    mode(compat)
    rng = np.random.default_rng([94, MODES.index(compat), [U8, Q78, F32].index(fmt), FORMS.index(form)])
    dil, pad, k = (int(rng.integers(1, 3)), int(rng.integers(0, 3))), (1, 0), (3, 2)
    x = random_values(rng, fmt, (9, 8, 2, 2))
    w = random_values(rng, fmt, k + (2, 3))
    b = random_values(rng, fmt, (3,))
    outs = [(n + 2 * p - (kk + (kk - 1) * d)) // 1 + 1 for n, p, kk, d in zip((9, 8), pad, k, dil)]
    out_shape = (outs[0], outs[1], 3, 2)
    p = _fpp(fmt)
    tx, tw, tb = tensor(vx, ctx, x, p), tensor(vx, ctx, w, p), tensor(vx, ctx, b, p)
    out = empty(vx, ctx, out_shape, fmt.dtype, p)
    params = vx.ffi.new("vx_nn_convolution_params_t *")
    params.padding_x, params.padding_y = pad
    params.dilation_x, params.dilation_y = dil
    params.overflow_policy, params.rounding_policy = vx.VX_CONVERT_POLICY_WRAP, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    run_layer(vx, ctx, form, vx.VX_KERNEL_CONVOLUTION_LAYER,
              lambda g: vx.vxConvolutionLayer(g, tx, tw, tb, params, vx.ffi.sizeof(params[0]), out),
              [tx, tw, tb, ("VX_TYPE_NN_CONVOLUTION_PARAMS", params), out])
    sample = compat == "khronos-sample"
    expected = reference_convolution(x, w, b, out_shape, pad, (1, 1), dil, fmt, (p,) * 4, False, True, sample=sample)
    got = read(vx, out, out_shape, fmt.dtype)
    if fmt.is_float and not sample:  # taps at origin 0: the float engine's float32 sums, with the dilation
        magnitude = reference_convolution(np.abs(x), np.abs(w), np.abs(b), out_shape, pad, (1, 1), dil, fmt,
                                          (p,) * 4, False, True)
        assert_float32_sums(got, expected, magnitude)
    else:  # integers, and the sample's shifted taps on the exact float64 route
        assert_bits_equal(got, expected)
    release(vx, tx, tw, tb, out)


# -- item 6: deconvolution bound (sample mode) and 3-D biases (always) ------------------------------------
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bias_rank", [1, 3])
@pytest.mark.parametrize("fmt", [S8, Q78, F32], ids=str)
@pytest.mark.parametrize("compat", MODES)
def test_deconvolution_in_both_modes(vx, ctx, mode, compat, fmt, bias_rank, form):
    mode(compat)
    rng = np.random.default_rng([95, MODES.index(compat), [S8, Q78, F32].index(fmt), bias_rank, FORMS.index(form)])
    size, k, a, pad = (5, 4), (3, 2), (1, 0), (1, 0)
    up = (2, 3)  # the output size below makes the library infer these (the smallest upscale above a)
    outs = tuple((n - 1) * u - 2 * p + kk + e for n, u, p, kk, e in zip(size, up, pad, k, a))
    out_shape = outs + (2,)
    x, w = random_values(rng, fmt, size + (3,)), random_values(rng, fmt, k + (3, 2))
    b = random_values(rng, fmt, (2,) if bias_rank == 1 else out_shape)
    p = _fpp(fmt)
    tx, tw, tb = tensor(vx, ctx, x, p), tensor(vx, ctx, w, p), tensor(vx, ctx, b, p)
    out = empty(vx, ctx, out_shape, fmt.dtype, p)
    params = vx.ffi.new("vx_nn_deconvolution_params_t *")
    params.padding_x, params.padding_y = pad
    params.a_x, params.a_y = a
    params.overflow_policy, params.rounding_policy = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_ZERO
    run_layer(vx, ctx, form, vx.VX_KERNEL_DECONVOLUTION_LAYER,
              lambda g: vx.vxDeconvolutionLayer(g, tx, tw, tb, params, vx.ffi.sizeof(params[0]), out),
              [tx, tw, tb, ("VX_TYPE_NN_DECONVOLUTION_PARAMS", params), out])
    expected = reference_deconvolution(x, w, b, pad, up, a, fmt, (p,) * 4, True, False,
                                       sample=compat == "khronos-sample")
    assert_bits_equal(read(vx, out, out_shape, fmt.dtype), expected)
    release(vx, tx, tw, tb, out)


def test_deconvolution_refuses_biases_of_other_shapes(vx, ctx, log):
    tx, tw = empty(vx, ctx, (3, 3, 1), np.int8), empty(vx, ctx, (2, 2, 1, 2), np.int8)
    tb, out = empty(vx, ctx, (4, 4, 3), np.int8), empty(vx, ctx, (4, 4, 2), np.int8)
    params = vx.ffi.new("vx_nn_deconvolution_params_t *")
    params.overflow_policy, params.rounding_policy = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_ZERO
    run_layer(vx, ctx, "typed", None,
              lambda g: vx.vxDeconvolutionLayer(g, tx, tw, tb, params, vx.ffi.sizeof(params[0]), out), [],
              expect=vx.VX_ERROR_INVALID_DIMENSION)
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "biases dims [4, 4, 3]", "[2] or [4, 4, 2]")
    release(vx, tx, tw, tb, out)


# -- item 5: ConvertDepth --------------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["node", "vxu"])
@pytest.mark.parametrize("saturate", [True, False], ids=["saturate", "wrap"])
@pytest.mark.parametrize("fout", [U8, S8, Q78], ids=str)
@pytest.mark.parametrize("compat", MODES)
def test_convert_depth_in_both_modes(vx, ctx, mode, compat, fout, saturate, form):
    mode(compat)
    rng = np.random.default_rng([96, MODES.index(compat), [U8, S8, Q78].index(fout), saturate])
    x = random_values(rng, Q78, (7, 5, 3), extremes=0.1)
    x.flat[:4] = [26304, -704, 640, -32768]  # 102.75 (the suite's 103 vs 102), -2.75, 2.5, -128
    norm, offset = 0.75, -1.25
    tx, out = tensor(vx, ctx, x, 8), empty(vx, ctx, x.shape, fout.dtype, fout.fpp)
    n, o = scalar(vx, ctx, "vx_float32", norm, "VX_TYPE_FLOAT32"), scalar(vx, ctx, "vx_float32", offset,
                                                                         "VX_TYPE_FLOAT32")
    policy = vx.VX_CONVERT_POLICY_SATURATE if saturate else vx.VX_CONVERT_POLICY_WRAP
    if form == "vxu":
        assert vx.vxuTensorConvertDepth(ctx, tx, policy, n, o, out) == vx.VX_SUCCESS
    else:
        graph = vx.vxCreateGraph(ctx)
        node = vx.vxTensorConvertDepthNode(graph, tx, policy, n, o, out)
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        release(vx, node, graph)
    expected = reference_convert(x, Q78, fout, norm, offset, saturate, sample=compat == "khronos-sample")
    assert_bits_equal(read(vx, out, x.shape, fout.dtype), expected)
    release(vx, tx, out, n, o)


# -- item 4: element-wise broadcasting of either input ----------------------------------------------------
BROADCASTS = [((1, 5, 5), (4, 5, 1)), ((1, 5, 5), (4, 1, 5)), ((3, 1), (3, 4, 2)), ((3, 4, 2), (1, 4)),
              ((1,), (2, 3, 1, 2))]


@pytest.mark.parametrize("form", ["node", "vxu"])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
@pytest.mark.parametrize("shapes", BROADCASTS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_either_input_broadcasts_to_the_output(vx, ctx, shapes, op, form):
    s1, s2 = shapes
    rank = max(len(s1), len(s2))
    out_shape = tuple(max(a, b) for a, b in zip(s1 + (1,) * (rank - len(s1)), s2 + (1,) * (rank - len(s2))))
    rng = np.random.default_rng([97, BROADCASTS.index(shapes), len(op), form == "vxu"])
    a, b = random_values(rng, Q78, s1), random_values(rng, Q78, s2)
    ta, tb = tensor(vx, ctx, a, 8), tensor(vx, ctx, b, 8)
    out = empty(vx, ctx, out_shape, np.int16, 8)
    wrap = vx.VX_CONVERT_POLICY_WRAP
    scale = scalar(vx, ctx, "vx_float32", 0.75, "VX_TYPE_FLOAT32")
    rd = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    calls = {"add": (lambda g: vx.vxTensorAddNode(g, ta, tb, wrap, out), lambda: vx.vxuTensorAdd(ctx, ta, tb, wrap, out)),
             "subtract": (lambda g: vx.vxTensorSubtractNode(g, ta, tb, wrap, out),
                          lambda: vx.vxuTensorSubtract(ctx, ta, tb, wrap, out)),
             "multiply": (lambda g: vx.vxTensorMultiplyNode(g, ta, tb, scale, wrap, rd, out),
                          lambda: vx.vxuTensorMultiply(ctx, ta, tb, scale, wrap, rd, out))}[op]
    if form == "vxu":
        assert calls[1]() == vx.VX_SUCCESS
    else:
        graph = vx.vxCreateGraph(ctx)
        node = calls[0](graph)
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        release(vx, node, graph)
    # The references broadcast NumPy-style: give both operands the output's rank first (OpenVX pads high dims).
    a_full, b_full = a.reshape(s1 + (1,) * (rank - len(s1))), b.reshape(s2 + (1,) * (rank - len(s2)))
    if op == "multiply":
        expected = reference_multiply(a_full, b_full, out_shape, 0.75, Q78, Q78, Q78, False, True)
    else:
        expected = reference_add_sub(a_full, b_full, out_shape, Q78, False, op == "subtract")
    assert_bits_equal(read(vx, out, out_shape, np.int16), expected)
    release(vx, ta, tb, out, scale)


def test_a_virtual_output_gets_the_broadcast_shape_and_mismatches_are_refused(vx, ctx, log):
    ta, tb = empty(vx, ctx, (1, 5, 5), np.uint8), empty(vx, ctx, (4, 5, 1), np.uint8)
    graph = vx.vxCreateGraph(ctx)
    out = virtual(vx, graph, (0, 0, 0))
    node = vx.vxTensorAddNode(graph, ta, tb, vx.VX_CONVERT_POLICY_SATURATE, out)
    assert vx.vxVerifyGraph(graph) == vx.VX_SUCCESS
    assert query_dims(vx, out) == (4, 5, 5)
    release(vx, node, out, graph)
    tc, wrong = empty(vx, ctx, (3, 5, 1), np.uint8), empty(vx, ctx, (4, 5, 5), np.uint8)
    assert vx.vxuTensorAdd(ctx, tc, tb, vx.VX_CONVERT_POLICY_SATURATE, wrong) == vx.VX_ERROR_INVALID_DIMENSION
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "[4, 5, 1]", "[3, 5, 1]", "do not broadcast")
    assert vx.vxuTensorAdd(ctx, ta, tb, vx.VX_CONVERT_POLICY_SATURATE, tc) == vx.VX_ERROR_INVALID_DIMENSION
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "output dims are [3, 5, 1], expected [4, 5, 5]")
    release(vx, ta, tb, tc, wrong)


# -- item 7: fully connected with weights of 2 or more dims ----------------------------------------------
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fmt", [U8, Q78, F32], ids=str)
@pytest.mark.parametrize("weights", [(2, 3, 4), (2, 3, 4, 1), (24,)], ids=["kx-ky-ifm", "with-1", "flat"])
def test_fully_connected_with_weights_of_several_dims(vx, ctx, weights, fmt, form):
    rng = np.random.default_rng([98, len(weights), [U8, Q78, F32].index(fmt), FORMS.index(form)])
    ofm, batch = 5, (2,)
    x = random_values(rng, fmt, (2, 3, 4) + batch)  # a convolution output [W, H, C, batch]
    w = random_values(rng, fmt, weights + (ofm,))
    b = random_values(rng, fmt, (ofm,))
    p = _fpp(fmt)
    tx, tw, tb = tensor(vx, ctx, x, p), tensor(vx, ctx, w, p), tensor(vx, ctx, b, p)
    out = empty(vx, ctx, (ofm,) + batch, fmt.dtype, p)
    ov, rd = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    run_layer(vx, ctx, form, vx.VX_KERNEL_FULLY_CONNECTED_LAYER,
              lambda g: vx.vxFullyConnectedLayer(g, tx, tw, tb, ov, rd, out),
              [tx, tw, tb, ("enum", ov), ("enum", rd), out])
    # weights [kx, ky, #IFM_maps, #OFM] pair with the input's [W, H, C] element by element (dim 0 fastest)
    flat_x, flat_w = x.reshape((24, 2), order="F"), w.reshape((24, ofm), order="F")
    expected = fully_connected_ref(flat_x, flat_w, b, fmt, True, True, p, p, p, p)
    got = read(vx, out, (ofm,) + batch, fmt.dtype)
    if fmt.is_float:  # the float engine's float32 sums
        magnitude = fully_connected_ref(np.abs(flat_x), np.abs(flat_w), None if b is None else np.abs(b), fmt,
                                        True, True, p, p, p, p)
        assert_float32_sums(got, expected, magnitude)
    else:
        assert_bits_equal(got, expected)
    release(vx, tx, tw, tb, out)


def test_fully_connected_refuses_weights_whose_leading_dims_do_not_match(vx, ctx, log):
    tx, tw, out = empty(vx, ctx, (2, 3, 4), np.int8), empty(vx, ctx, (2, 3, 5, 7), np.int8), empty(vx, ctx, (7,),
                                                                                                   np.int8)
    ov, rd = vx.VX_CONVERT_POLICY_SATURATE, vx.VX_ROUND_POLICY_TO_NEAREST_EVEN
    run_layer(vx, ctx, "typed", None, lambda g: vx.vxFullyConnectedLayer(g, tx, tw, vx.ffi.NULL, ov, rd, out), [],
              expect=vx.VX_ERROR_INVALID_DIMENSION)
    assert log.has(vx.VX_ERROR_INVALID_DIMENSION, "weights [2, 3, 5, 7] expect 30 inputs")
    release(vx, tx, tw, out)


# -- item 8: ROI pooling with a malformed ROI ----------------------------------------------------------------
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
def test_malformed_rois_pool_one_pixel(vx, ctx, fmt, form):
    rng = np.random.default_rng([99, [U8, S8, Q78, F32].index(fmt), FORMS.index(form)])
    x = random_values(rng, fmt, (8, 7, 3))
    rois = np.array([[5, 1, 2, 6], [0, 6, 7, 2], [6, 5, 1, 0], [1, 1, 6, 5]], np.int16).T  # [4, R]
    out_shape = (3, 2, 3, 4)
    tx, tr = tensor(vx, ctx, x, _fpp(fmt)), tensor(vx, ctx, rois)
    out = empty(vx, ctx, out_shape, fmt.dtype, _fpp(fmt))
    params = vx.ffi.new("vx_nn_roi_pool_params_t *", [vx.VX_NN_POOLING_MAX])
    run_layer(vx, ctx, form, vx.VX_KERNEL_ROI_POOLING_LAYER,
              lambda g: vx.vxROIPoolingLayer(g, tx, tr, params, vx.ffi.sizeof(params[0]), out),
              [tx, tr, ("VX_TYPE_NN_ROI_POOL_PARAMS", params), out])
    got = read(vx, out, out_shape, fmt.dtype)
    assert_bits_equal(got, roi_pooling_ref(x, rois, out_shape, fmt))
    assert_bits_equal(got[:, :, :, 2], np.broadcast_to(x[6, 5], (3, 2, 3)))  # both corners reversed: pixel (6, 5)
    release(vx, tx, tr, out)


# -- the vendor header -------------------------------------------------------------------------------------
HEADER_CHECK = r"""
#include <VX/vx_ext_openvx_nn.h>
#define BASE(vendor, id, shift) ((vx_uint32)(vendor) << 20 | (vx_uint32)(id) << (shift))
typedef char attribute_is_in_the_vendor_range[
    (vx_uint32)VX_CONTEXT_OPENVX_NN_COMPAT == BASE(VX_ID_USER, VX_TYPE_CONTEXT, 8) ? 1 : -1];
typedef char values_follow_the_enum_base[
    (vx_uint32)VX_OPENVX_NN_COMPAT_STANDARD == BASE(VX_ID_USER, 1, 12)
    && VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE == VX_OPENVX_NN_COMPAT_STANDARD + 1
    && VX_OPENVX_NN_COMPAT_ENVIRONMENT == VX_OPENVX_NN_COMPAT_STANDARD + 2 ? 1 : -1];
int main(void) { vx_enum mode = VX_OPENVX_NN_COMPAT_KHRONOS_SAMPLE; return mode == VX_CONTEXT_OPENVX_NN_COMPAT; }
"""


@pytest.mark.parametrize("compiler", [["cc", "-std=c99", "-x", "c"], ["g++", "-std=c++11", "-x", "c++"]],
                         ids=["c99", "c++11"])
def test_the_vendor_header_compiles_pedantic_and_holds_its_values(compiler, tmp_path):
    from openvx_nn.headers import include_dir
    source = tmp_path / "check.c"
    source.write_text(HEADER_CHECK)
    result = subprocess.run([*compiler, "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{include_dir()}", "-c",
                             str(source), "-o", str(tmp_path / "check.o")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# -- the Pythonic API infers the same shapes ---------------------------------------------------------------
def test_the_pythonic_api_infers_broadcast_and_fully_connected_shapes():
    # Its virtual outputs are declared with the shapes it infers: a wrong one fails verification.
    from api_testing import leak_checked_context
    for ctx in leak_checked_context():
        ta, tb = ctx.tensor(np.zeros((1, 5, 5), np.int16)), ctx.tensor(np.zeros((4, 5), np.int16))
        tx, tw = ctx.tensor(np.zeros((2, 3, 4), np.int8)), ctx.tensor(np.zeros((2, 3, 4, 6), np.int8))
        with ctx.graph() as g:
            total, product = g.add(ta, tb), g.multiply(tb, ta, scale=0.5)
            difference, dense = g.subtract(tb, tb), g.fully_connected(tx, tw)
            g.verify()
            assert (total.shape, product.shape, difference.shape, dense.shape) == ((4, 5, 5), (4, 5, 5), (4, 5), (6,))
