"""Convolution and deconvolution through the C API (typed constructor and
generic node with the seed's numbering) against the plain references."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conv_reference import reference_convolution, reference_deconvolution
from kernel_testing import F32, Q7, Q78, S8, U8, Format, assert_bits_equal, assert_float32_sums, random_values
from layer_references import fully_connected_ref
from nn_forms import FORMS, run_layer
from vxhelp import empty, read, release, tensor

Q11_4 = Format("Q11.4", np.int16, 4)
FORMATS = [U8, S8, Q7, Q78, Q11_4, F32]
POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def _fpp(fmt):
    return 0 if fmt.is_float else fmt.fpp


def _policy_enums(vx, saturate, nearest):
    return (vx.VX_CONVERT_POLICY_SATURATE if saturate else vx.VX_CONVERT_POLICY_WRAP,
            vx.VX_ROUND_POLICY_TO_NEAREST_EVEN if nearest else vx.VX_ROUND_POLICY_TO_ZERO)


def _smallest_stride(extent, pad, k_eff, out, ceiling):
    span = extent + 2 * pad - k_eff
    return next(s for s in range(1, span + 2) if (math.ceil(span / s) if ceiling else span // s) + 1 == out)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("policies", POLICIES, ids=["sat-even", "sat-zero", "wrap-even", "wrap-zero"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_convolution_matches_the_reference(vx, ctx, seed, fmt, policies, form):
    saturate, nearest = policies
    rng = np.random.default_rng([41, seed, FORMATS.index(fmt), *policies, FORMS.index(form)])
    width, height = (int(d) for d in rng.integers(4, 11, 2))
    channels, ofm = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 4))))
    kx, ky = (int(d) for d in rng.integers(1, 4, 2))
    dil = tuple(int(d) for d in rng.integers(0, 2, 2))
    pad = tuple(int(d) for d in rng.integers(0, 3, 2))
    ceiling = bool(rng.integers(2))
    stride = tuple(int(d) for d in rng.integers(1, 3, 2))
    dims, outs, strides = (width, height), [], []
    for a, k in enumerate((kx, ky)):
        k_eff = k + (k - 1) * dil[a]
        span = dims[a] + 2 * pad[a] - k_eff
        if span < 0:
            pad = tuple(p + (-span if i == a else 0) for i, p in enumerate(pad))
            span = 0
        out = (math.ceil(span / stride[a]) if ceiling else span // stride[a]) + 1
        outs.append(out)
        strides.append(_smallest_stride(dims[a], pad[a], k_eff, out, ceiling))
    x = random_values(rng, fmt, (width, height, channels) + batch)
    w = random_values(rng, fmt, (kx, ky, channels, ofm))
    bias_kind = int(rng.integers(3))
    bias_shape = [None, (ofm,), (outs[0], outs[1], ofm)][bias_kind]
    b = random_values(rng, fmt, bias_shape) if bias_shape else None
    out_shape = (outs[0], outs[1], ofm) + batch
    p = _fpp(fmt)
    tx, tw = tensor(vx, ctx, x, p), tensor(vx, ctx, w, p)
    tb = tensor(vx, ctx, b, p) if b is not None else None
    out = empty(vx, ctx, out_shape, fmt.dtype, p)
    params = vx.ffi.new("vx_nn_convolution_params_t *")
    params.padding_x, params.padding_y = pad
    params.dilation_x, params.dilation_y = dil
    params.overflow_policy, params.rounding_policy = _policy_enums(vx, saturate, nearest)
    params.down_scale_size_rounding = (vx.VX_NN_DS_SIZE_ROUNDING_CEILING if ceiling
                                       else vx.VX_NN_DS_SIZE_ROUNDING_FLOOR)
    bias_arg = tb if tb is not None else vx.ffi.NULL
    run_layer(vx, ctx, form, vx.VX_KERNEL_CONVOLUTION_LAYER,
              lambda g: vx.vxConvolutionLayer(g, tx, tw, bias_arg, params,
                                              vx.ffi.sizeof("vx_nn_convolution_params_t"), out),
              [tx, tw, tb, ("VX_TYPE_NN_CONVOLUTION_PARAMS", params), out])
    expected = reference_convolution(x, w, b, out_shape, pad, tuple(strides), dil, fmt, (p, p, p, p),
                                     saturate, nearest)
    got = read(vx, out, out_shape, fmt.dtype)
    if fmt.is_float and bias_kind != 2:  # the float engine's float32 sums (dilated layers too)
        magnitude = reference_convolution(np.abs(x), np.abs(w), None if b is None else np.abs(b), out_shape, pad,
                                          tuple(strides), dil, fmt, (p, p, p, p), saturate, nearest)
        assert_float32_sums(got, expected, magnitude)
    else:
        assert_bits_equal(got, expected)
    release(vx, tx, tw, out, *([tb] if tb is not None else []))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("policies", POLICIES, ids=["sat-even", "sat-zero", "wrap-even", "wrap-zero"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("seed", range(2))
def test_deconvolution_matches_the_reference(vx, ctx, seed, fmt, policies, form):
    saturate, nearest = policies
    rng = np.random.default_rng([42, seed, FORMATS.index(fmt), *policies, FORMS.index(form)])
    width, height = (int(d) for d in rng.integers(2, 7, 2))
    channels, ofm = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 2))))
    kx, ky = (int(d) for d in rng.integers(1, 4, 2))
    up = tuple(int(d) for d in rng.integers(1, 4, 2))
    a = tuple(int(rng.integers(0, u)) for u in up)
    pad = tuple(int(rng.integers(0, k)) for k in (kx, ky))
    outs = [(n - 1) * u - 2 * p + k + e for n, u, p, k, e in zip((width, height), up, pad, (kx, ky), a)]
    if min(outs) < 1:
        pad, outs = (0, 0), [(n - 1) * u + k + e for n, u, k, e in zip((width, height), up, (kx, ky), a)]
    x = random_values(rng, fmt, (width, height, channels) + batch)
    w = random_values(rng, fmt, (kx, ky, channels, ofm))
    b = random_values(rng, fmt, (ofm,)) if rng.integers(2) else None
    out_shape = (outs[0], outs[1], ofm) + batch
    p = _fpp(fmt)
    tx, tw = tensor(vx, ctx, x, p), tensor(vx, ctx, w, p)
    tb = tensor(vx, ctx, b, p) if b is not None else None
    out = empty(vx, ctx, out_shape, fmt.dtype, p)
    params = vx.ffi.new("vx_nn_deconvolution_params_t *")
    params.padding_x, params.padding_y = pad
    params.a_x, params.a_y = a
    params.overflow_policy, params.rounding_policy = _policy_enums(vx, saturate, nearest)
    bias_arg = tb if tb is not None else vx.ffi.NULL
    run_layer(vx, ctx, form, vx.VX_KERNEL_DECONVOLUTION_LAYER,
              lambda g: vx.vxDeconvolutionLayer(g, tx, tw, bias_arg, params,
                                                vx.ffi.sizeof("vx_nn_deconvolution_params_t"), out),
              [tx, tw, tb, ("VX_TYPE_NN_DECONVOLUTION_PARAMS", params), out])
    # the library infers the smallest upscale above a that gives this output size
    inferred = []
    for n, pd, k, e, o in zip((width, height), pad, (kx, ky), a, outs):
        inferred.append(e + 1 if n == 1 else (o + 2 * pd - k - e) // (n - 1))
    expected = reference_deconvolution(x, w, b, pad, tuple(inferred), a, fmt, (p, p, p, p), saturate, nearest)
    assert expected.shape == out_shape
    got = read(vx, out, out_shape, fmt.dtype)
    if fmt.is_float:  # float32 sums where the float engine takes the layer (kernels/openvx/float_deconvolution)
        magnitude = reference_deconvolution(np.abs(x), np.abs(w), None if b is None else np.abs(b), pad,
                                            tuple(inferred), a, fmt, (p, p, p, p), saturate, nearest)
        assert_float32_sums(got, expected, magnitude)
    else:
        assert_bits_equal(got, expected)
    release(vx, tx, tw, out, *([tb] if tb is not None else []))


@pytest.mark.parametrize("fmt", [U8, Q78], ids=str)
def test_weights_written_between_runs_are_used(vx, ctx, fmt):
    # The route (packed weights) is made at verify; writing the [static] weights afterwards makes the
    # next run plan again from the new values.
    from vxhelp import write
    rng = np.random.default_rng(77)
    x = random_values(rng, fmt, (6, 5, 3))
    weights = [random_values(rng, fmt, (3, 3, 3, 4)) for _ in range(2)]
    p = _fpp(fmt)
    tx, tw, out = tensor(vx, ctx, x, p), tensor(vx, ctx, weights[0], p), empty(vx, ctx, (4, 3, 4), fmt.dtype, p)
    params = vx.ffi.new("vx_nn_convolution_params_t *")
    params.overflow_policy, params.rounding_policy = _policy_enums(vx, True, True)
    params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    graph = vx.vxCreateGraph(ctx)
    node = vx.vxConvolutionLayer(graph, tx, tw, vx.ffi.NULL, params, vx.ffi.sizeof("vx_nn_convolution_params_t"),
                                 out)
    for w in weights:
        write(vx, tw, w)
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        expected = reference_convolution(x, w, None, (4, 3, 4), (0, 0), (1, 1), (0, 0), fmt, (p, p, p, p))
        assert_bits_equal(read(vx, out, (4, 3, 4), fmt.dtype), expected)
    release(vx, node, graph, tx, tw, out)


def _write_through_map(vx, t, array) -> None:
    """Write ``array`` into tensor ``t`` through vxMapTensorPatch's pointer, then unmap."""
    array = np.asfortranarray(array)
    n = array.ndim
    sizes = vx.ffi.new("vx_size[]", list(array.shape))
    map_id, stride, ptr = vx.ffi.new("vx_map_id *"), vx.ffi.new(f"vx_size[{n}]"), vx.ffi.new("void **")
    assert vx.vxMapTensorPatch(t, n, vx.ffi.new("vx_size[]", [0] * n), sizes, map_id, stride, ptr,
                               vx.VX_WRITE_ONLY, vx.VX_MEMORY_TYPE_HOST) == vx.VX_SUCCESS
    mapped = np.lib.stride_tricks.as_strided(
        np.frombuffer(vx.ffi.buffer(ptr[0], int(stride[n - 1]) * array.shape[-1]), array.dtype),
        array.shape, tuple(stride))
    mapped[...] = array
    assert vx.vxUnmapTensorPatch(t, map_id[0]) == vx.VX_SUCCESS


@pytest.mark.parametrize("how", ["map", "swap"])
@pytest.mark.parametrize("layer", ["convolution", "fully_connected"])
def test_weights_rewritten_through_a_map_or_a_swap_are_used(vx, ctx, layer, how):
    # Routes are re-planned by the weights' write counter, not by comparing values: every way the
    # application can change a tensor's contents (a mapped pointer, a new handle) must count.
    rng = np.random.default_rng(78)
    fmt, p = U8, 0
    # Values small enough that no sum saturates (a saturated U8 output would hide stale weights).
    x = rng.integers(0, 4, (6, 5, 3)).astype(np.uint8)
    if layer == "convolution":
        w_shape, out_shape = (3, 3, 3, 4), (4, 3, 4)
    else:
        w_shape, out_shape = (90, 7), (7,)
    weights = [rng.integers(0, 3, w_shape).astype(np.uint8) for _ in range(2)]
    tx, tw, out = tensor(vx, ctx, x, p), tensor(vx, ctx, weights[0], p), empty(vx, ctx, out_shape, fmt.dtype, p)
    graph = vx.vxCreateGraph(ctx)
    if layer == "convolution":
        params = vx.ffi.new("vx_nn_convolution_params_t *")
        params.overflow_policy, params.rounding_policy = _policy_enums(vx, True, True)
        params.down_scale_size_rounding = vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
        node = vx.vxConvolutionLayer(graph, tx, tw, vx.ffi.NULL, params,
                                     vx.ffi.sizeof("vx_nn_convolution_params_t"), out)
    else:
        node = vx.vxFullyConnectedLayer(graph, tx, tw, vx.ffi.NULL, *_policy_enums(vx, True, True), out)
    kept = []  # application memory handed to the tensor must outlive it
    for w in weights:
        if how == "map":
            _write_through_map(vx, tw, w)
        else:
            kept.append(np.asfortranarray(w).copy(order="F"))
            previous = vx.ffi.new("void **")
            assert vx.vxSwapTensorHandle(tw, vx.ffi.cast("void *", kept[-1].ctypes.data), previous) == vx.VX_SUCCESS
        assert vx.vxProcessGraph(graph) == vx.VX_SUCCESS
        if layer == "convolution":
            expected = reference_convolution(x, w, None, out_shape, (0, 0), (1, 1), (0, 0), fmt, (p, p, p, p))
        else:
            expected = fully_connected_ref(x.reshape(-1, 1, order="F"), w, None, fmt, True, True).reshape(out_shape)
        assert_bits_equal(read(vx, out, out_shape, fmt.dtype), expected)
    release(vx, node, graph, tx, tw, out)
