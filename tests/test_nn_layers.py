"""Fully connected, pooling and ROI pooling layers through the C API (typed
constructor and generic node) against the plain references."""
from __future__ import annotations

import math

import numpy as np
import pytest
from kernel_testing import (
    F32,
    Q7,
    Q78,
    S8,
    U8,
    Format,
    assert_bits_equal,
    assert_float32_means,
    assert_float32_sums,
    random_values,
)
from layer_references import fully_connected_ref, pooling_ref, roi_pooling_ref
from nn_forms import FORMS, run_layer
from vxhelp import empty, read, release, tensor

Q11_4 = Format("Q11.4", np.int16, 4)
FORMATS = [U8, S8, Q7, Q78, Q11_4, F32]
POLICIES = [(True, True), (True, False), (False, True), (False, False)]


def _fpp(fmt):
    return 0 if fmt.is_float else fmt.fpp


def smallest_stride(extent, pad, kernel, out, ceiling):
    """The stride the seed infers: the smallest giving ``out`` outputs."""
    for stride in range(1, extent + 2 * pad + 2):
        span = extent + 2 * pad - kernel
        if (math.ceil(span / stride) if ceiling else span // stride) + 1 == out:
            return stride
    raise AssertionError("no stride")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("policies", POLICIES, ids=["sat-even", "sat-zero", "wrap-even", "wrap-zero"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("seed", range(2))
def test_fully_connected_matches_the_reference(vx, ctx, seed, fmt, policies, form):
    saturate, nearest = policies
    rng = np.random.default_rng([31, seed, FORMATS.index(fmt), *policies, FORMS.index(form)])
    spatial = bool(rng.integers(2))
    core = tuple(int(d) for d in rng.integers(1, 4, 3)) if spatial else (int(rng.integers(1, 40)),)
    batch = tuple(int(d) for d in rng.integers(1, 3, int(rng.integers(0, 4 if spatial else 5))))
    ifm, ofm = math.prod(core), int(rng.integers(1, 12))
    x = random_values(rng, fmt, core + batch)
    w = random_values(rng, fmt, (ifm, ofm))
    b = random_values(rng, fmt, (ofm,)) if rng.integers(2) else None
    tx, tw = tensor(vx, ctx, x, _fpp(fmt)), tensor(vx, ctx, w, _fpp(fmt))
    tb = tensor(vx, ctx, b, _fpp(fmt)) if b is not None else None
    out = empty(vx, ctx, (ofm,) + batch, fmt.dtype, _fpp(fmt))
    ov = vx.VX_CONVERT_POLICY_SATURATE if saturate else vx.VX_CONVERT_POLICY_WRAP
    rd = vx.VX_ROUND_POLICY_TO_NEAREST_EVEN if nearest else vx.VX_ROUND_POLICY_TO_ZERO
    bias_arg = tb if tb is not None else vx.ffi.NULL
    run_layer(vx, ctx, form, vx.VX_KERNEL_FULLY_CONNECTED_LAYER,
              lambda g: vx.vxFullyConnectedLayer(g, tx, tw, bias_arg, ov, rd, out),
              [tx, tw, tb, ("enum", ov), ("enum", rd), out])
    flat = x.reshape((ifm, math.prod(batch)), order="F")
    p = _fpp(fmt)
    expected = fully_connected_ref(flat, w, b, fmt, saturate, nearest, p, p, p, p)
    got = read(vx, out, (ofm,) + batch, fmt.dtype).reshape((ofm, math.prod(batch)), order="F")
    if fmt.is_float:  # the float engine's float32 sums
        magnitude = fully_connected_ref(np.abs(flat), np.abs(w), None if b is None else np.abs(b), fmt, saturate,
                                        nearest, p, p, p, p)
        assert_float32_sums(got, expected, magnitude)
    else:
        assert_bits_equal(got, expected)
    release(vx, tx, tw, out, *([tb] if tb is not None else []))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("ceiling", [False, True], ids=["floor", "ceil"])
@pytest.mark.parametrize("max_pool", [True, False], ids=["max", "avg"])
@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize("seed", range(2))
def test_pooling_matches_the_reference(vx, ctx, seed, fmt, max_pool, ceiling, form):
    rng = np.random.default_rng([32, seed, FORMATS.index(fmt), max_pool, ceiling, FORMS.index(form)])
    dims = tuple(int(d) for d in rng.integers(3, 11, 2)) + tuple(
        int(d) for d in rng.integers(1, 4, int(rng.integers(1, 5))))
    size = tuple(int(s) for s in rng.integers(1, 4, 2))
    pad = tuple(int(rng.integers(0, s)) for s in size)
    stride = tuple(int(s) for s in rng.integers(1, 4, 2))
    outs = [((dims[a] + 2 * pad[a] - size[a] + (stride[a] - 1 if ceiling else 0)) // stride[a]) + 1 for a in (0, 1)]
    strides = [smallest_stride(dims[a], pad[a], size[a], outs[a], ceiling) for a in (0, 1)]
    out_shape = tuple(outs) + dims[2:]
    x = random_values(rng, fmt, dims)
    tx, out = tensor(vx, ctx, x, _fpp(fmt)), empty(vx, ctx, out_shape, fmt.dtype, _fpp(fmt))
    kind = vx.VX_NN_POOLING_MAX if max_pool else vx.VX_NN_POOLING_AVG
    rounding = vx.VX_NN_DS_SIZE_ROUNDING_CEILING if ceiling else vx.VX_NN_DS_SIZE_ROUNDING_FLOOR
    run_layer(vx, ctx, form, vx.VX_KERNEL_POOLING_LAYER,
              lambda g: vx.vxPoolingLayer(g, tx, kind, *size, *pad, rounding, out),
              [tx, ("enum", kind), ("size", size[0]), ("size", size[1]), ("size", pad[0]), ("size", pad[1]),
               ("enum", rounding), out])
    expected = pooling_ref(x, out_shape, fmt, max_pool, *size, *pad, *strides)
    got = read(vx, out, out_shape, fmt.dtype)
    if fmt.is_float and not max_pool:  # float32 sums
        magnitude = pooling_ref(np.abs(x), out_shape, fmt, False, *size, *pad, *strides)
        assert_float32_means(got, expected, magnitude, size[0] * size[1])
    else:
        assert_bits_equal(got, expected)
    release(vx, tx, out)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("batched", [False, True], ids=["single", "batched"])
@pytest.mark.parametrize("fmt", [U8, S8, Q78, F32], ids=str)
@pytest.mark.parametrize("seed", range(3))
def test_roi_pooling_matches_the_reference(vx, ctx, seed, fmt, batched, form):
    rng = np.random.default_rng([33, seed, [U8, S8, Q78, F32].index(fmt), batched, FORMS.index(form)])
    width, height, maps = (int(d) for d in rng.integers(3, 12, 3))
    batch = (int(rng.integers(1, 4)),) if batched else ()
    count = int(rng.integers(1, 5))
    x = random_values(rng, fmt, (width, height, maps) + batch)
    rois = rng.integers(-2, max(width, height) + 2, (4, count) + batch).astype(np.int16)
    rois[2] = np.maximum(rois[2], rois[0] - 1)  # some degenerate (empty) ROIs, most proper
    rois[3] = np.maximum(rois[3], rois[1])
    ow, oh = (int(d) for d in rng.integers(1, 5, 2))
    out_shape = (ow, oh, maps, count) + batch
    tx, tr = tensor(vx, ctx, x, _fpp(fmt)), tensor(vx, ctx, rois)
    out = empty(vx, ctx, out_shape, fmt.dtype, _fpp(fmt))
    params = vx.ffi.new("vx_nn_roi_pool_params_t *", [vx.VX_NN_POOLING_MAX])
    run_layer(vx, ctx, form, vx.VX_KERNEL_ROI_POOLING_LAYER,
              lambda g: vx.vxROIPoolingLayer(g, tx, tr, params, vx.ffi.sizeof("vx_nn_roi_pool_params_t"), out),
              [tx, tr, ("VX_TYPE_NN_ROI_POOL_PARAMS", params), out])
    assert_bits_equal(read(vx, out, out_shape, fmt.dtype), roi_pooling_ref(x, rois, out_shape, fmt))
    release(vx, tx, tr, out)
