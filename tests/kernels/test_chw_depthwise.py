"""CoreML's depthwise kernel (``chw_depthwise``: phase planes, every 3x3 tap in one pass, FMA) matches the
NumPy matmul route (one matmul per group, kept as the reference) and a plainly written float64 convolution,
over random windows, strides (the contiguous, the stride-2 and the general phase copy), dilations, paddings,
channel multipliers, fused clips and residuals, either order of the bias, within the float32 summation bound
(docs/coreml.md); its native entry gives the bound call's bytes."""
from __future__ import annotations

import numpy as np
import pytest
from test_chw_convolution import CLIPS, _expected, reference

from openvx_nn.kernels.frontend import chw_depthwise, grouped_convolution
from openvx_nn.kernels.frontend.float_sharing import PARALLEL_WORK
from openvx_nn.kernels.frontend.grouped_convolution import Geometry
from openvx_nn.kernels.support import native


def _layer(rng, channels, multiplier, n_items, hw, k):
    x = rng.standard_normal((n_items, channels) + hw).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [0.0, -1e4, 1e4]  # edge values among the normal ones
    w = rng.standard_normal((channels * multiplier, 1) + k).astype(np.float32)
    b = rng.standard_normal(channels * multiplier).astype(np.float32)
    return x, w, b


def _matmul_route(x, w, b, stride, dilation, pads, clip, residual):
    """The layer through ``grouped_convolution``'s NumPy matmul route (the reference route)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    shape = reference(x[:, :1], w[:1], b[:1], stride, dilation, pads).shape
    out = np.full((n, o) + shape[2:], np.nan, np.float32)
    low, high = clip or (-np.inf, np.inf)
    run = grouped_convolution._gemm_plan(w, b, Geometry(c, stride, dilation, (pads[0], pads[2])), n, c, h, wd, o,
                                         shape[2], shape[3], low, high)
    run(x, out, np.zeros((1, 1, 1, 1), np.float32) if residual is None else residual, residual is not None)
    return out


def _ours(x, w, b, stride, dilation, pads, clip, residual, bias_last=False):
    """The kernel's bound call, twice, and its native entry: the same bytes each time."""
    shape = reference(x[:, :1], w[:1], b[:1], stride, dilation, pads).shape
    out = np.full((x.shape[0], w.shape[0]) + shape[2:], np.nan, np.float32)
    low, high = clip or (-np.inf, np.inf)
    w2 = np.ascontiguousarray(w[:, 0].reshape(w.shape[0], -1))
    geometry = w.shape[2:] + stride + dilation + (pads[0], pads[2])
    run = chw_depthwise.bind(x, w2, b, out, residual, geometry, (low, high), bias_last)
    run()
    first = out.copy()
    run()  # a second call on the bound arrays: the same numbers
    assert np.array_equal(out, first, equal_nan=True)
    out[...] = np.nan
    entry = chw_depthwise.native_bind(x, w2, b, out, residual, geometry, (low, high), bias_last)
    assert native.run(entry) == 0
    assert out.tobytes() == first.tobytes()
    return out


@pytest.mark.parametrize("trial", range(16))
def test_the_depthwise_kernel_matches_the_matmul_route_and_the_reference(trial):
    rng = np.random.default_rng(3000 + trial)
    k = (3, 3) if trial % 2 == 0 else tuple(int(v) for v in rng.integers(1, 6, 2))  # 3x3: the one-pass sum
    stride = ((1, 1), (2, 2), (1, 2), (3, 3), (2, 1))[trial % 5]
    dilation = (1, 1) if trial % 4 < 2 else tuple(int(v) for v in rng.integers(1, 3, 2))
    pads = tuple(int(v) for v in rng.integers(0, 4, 4))
    multiplier = int(rng.choice([1, 1, 2]))
    channels = int(rng.integers(1, 12))
    big = trial % 3 == 0  # enough work to be shared with the helpers
    hw = tuple(int(v) for v in rng.integers(40, 70, 2)) if big else tuple(int(v) for v in rng.integers(2, 20, 2))
    hw = tuple(max(n, (kk - 1) * d + 1) for n, kk, d in zip(hw, k, dilation))
    x, w, b = _layer(rng, channels * (8 if big else 1), multiplier, int(rng.integers(1, 3)), hw, k)
    clip = CLIPS[trial % len(CLIPS)]
    shape = reference(x[:, :1], w[:1], b[:1], stride, dilation, pads).shape
    residual = rng.standard_normal((x.shape[0], w.shape[0]) + shape[2:]).astype(np.float32) if trial % 3 else None
    ours = _ours(x, w, b, stride, dilation, pads, clip, residual, bias_last=trial % 4 == 1)
    matmul = _matmul_route(x, w, b, stride, dilation, pads, clip, residual)
    expected, bound = _expected(x, w, b, stride, dilation, pads, clip, residual, x.shape[1])
    assert np.all(np.abs(ours - expected) <= bound), np.max(np.abs(ours - expected) - bound)
    assert np.all(np.abs(ours - matmul) <= 2 * bound)


def test_nan_and_infinities_pass_through_the_one_pass_sum():
    x = np.zeros((1, 2, 6, 6), np.float32)
    x[0, 0, 2, 2], x[0, 1, 3, 3] = np.nan, np.inf
    w = np.ones((2, 1, 3, 3), np.float32)
    b = np.zeros(2, np.float32)
    out = _ours(x, w, b, (1, 1), (1, 1), (1, 1, 1, 1), (0.0, 6.0), None)
    assert np.isnan(out[0, 0, 1:4, 1:4]).all() and np.isnan(out[0, 0]).sum() == 9  # the clip keeps NaN
    assert (out[0, 1, 2:5, 2:5] == 6.0).all() and (out[0, 1].sum() == 6.0 * 9)


def test_a_large_layer_is_shared_and_matches():
    rng = np.random.default_rng(5)
    x, w, b = _layer(rng, 160, 1, 1, (56, 56), (3, 3))
    assert 160 * 28 * 28 * 9 >= PARALLEL_WORK
    out = _ours(x, w, b, (2, 2), (1, 1), (0, 1, 0, 1), (0.0, 6.0), None)
    expected, bound = _expected(x, w, b, (2, 2), (1, 1), (0, 1, 0, 1), (0.0, 6.0), None, 160)
    assert np.all(np.abs(out - expected) <= bound)
