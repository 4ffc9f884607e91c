"""The CHW GEMM route of CoreML's convolution (``chw_convolution``) and the shared depthwise kernel match a
plainly written float64 NumPy convolution over random geometry, fused clips and residuals, within the
float32 summation bound (docs/coreml.md)."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import chw_convolution
from openvx_nn.kernels.frontend.grouped_convolution import Geometry, prepare

CLIPS = [None, (0.0, np.inf), (0.0, 6.0), (-0.5, 0.25)]


def reference(x, w, b, stride, dilation, pads, groups=1):
    """float64 convolution: x [N, C, H, W], w [O, C/groups, kh, kw], pads (top, bottom, left, right), zeros
    outside; one shifted window per tap."""
    top, bottom, left, right = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    o, cg, kh, kw = w.shape
    (sy, sx), (dy, dx) = stride, dilation
    oh = (xp.shape[2] - (kh - 1) * dy - 1) // sy + 1
    ow = (xp.shape[3] - (kw - 1) * dx - 1) // sx + 1
    out = np.zeros((x.shape[0], o, oh, ow)) + b[:, None, None]
    og = o // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg, ky * dy:ky * dy + (oh - 1) * sy + 1:sy,
                           kx * dx:kx * dx + (ow - 1) * sx + 1:sx]
                out[:, g * og:(g + 1) * og] += np.einsum("oc,ncyx->noyx", w[g * og:(g + 1) * og, :, ky, kx], patch)
    return out


def _expected(x, w, b, stride, dilation, pads, clip, residual, groups=1):
    """(expected, error bound): the float32 sum of K products is within (K + 2) * 2**-24 * sum |terms|."""
    exact = reference(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), stride, dilation, pads, groups)
    size = reference(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)), np.abs(b.astype(np.float64)),
                     stride, dilation, pads, groups)
    if residual is not None:
        exact, size = exact + residual, size + np.abs(residual)
    if clip is not None:
        exact = np.clip(exact, *clip)
    terms = w[0].size + 3
    return exact, terms * 2.0 ** -24 * size + 1e-30


def _case(rng, c_in, c_out, n_items, hw, k, stride, dilation, pads):
    x = rng.standard_normal((n_items, c_in) + hw).astype(np.float32)
    x.flat[rng.integers(0, x.size, 3)] = [0.0, -1e4, 1e4]  # edge values among the normal ones
    w = rng.standard_normal((c_out, c_in) + k).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    return x, w, b


@pytest.mark.parametrize("trial", range(10))
def test_the_gemm_route_matches_the_reference_over_random_geometry(trial):
    rng = np.random.default_rng(1000 + trial)
    k = (1, 1) if trial % 3 == 0 else tuple(int(v) for v in rng.integers(1, 5, 2))
    stride = (1, 1) if trial % 3 == 0 else tuple(int(v) for v in rng.integers(1, 4, 2))
    dilation = (1, 1) if trial % 3 == 0 else tuple(int(v) for v in rng.integers(1, 3, 2))
    pads = (0, 0, 0, 0) if trial % 3 == 0 else tuple(int(v) for v in rng.integers(0, 4, 4))
    c_in = 40 if trial == 1 else int(rng.integers(1, 50))  # trial 1: K = 40 * kh * kw + 1 spans K blocks
    c_out = int(rng.integers(1, 40))
    hw = tuple(int(v) for v in rng.integers(3, 30, 2))
    hw = tuple(max(n, (kk - 1) * d + 1) for n, kk, d in zip(hw, k, dilation))
    x, w, b = _case(rng, c_in, c_out, int(rng.integers(1, 3)), hw, k, stride, dilation, pads)
    clip = CLIPS[trial % len(CLIPS)]
    shape = reference(x[:, :1], w[:1, :1], b[:1], stride, dilation, pads).shape
    residual = rng.standard_normal((x.shape[0], c_out) + shape[2:]).astype(np.float32) if trial % 2 else None
    out = np.full((x.shape[0], c_out) + shape[2:], np.nan, np.float32)
    low, high = clip or (-np.inf, np.inf)
    geometry = k + stride + dilation + (pads[0], pads[2])
    chw_convolution.bind(x, chw_convolution.pack(w, b), out, residual, geometry, (low, high))()
    expected, bound = _expected(x, w, b, stride, dilation, pads, clip, residual)
    assert np.all(np.abs(out - expected) <= bound), np.max(np.abs(out - expected) - bound)


@pytest.mark.parametrize("shape", [(64, 96, 14, 3), (24, 144, 56, 1), (32, 20, 7, 3)])
def test_a_layer_large_enough_to_share_takes_the_gemm_route_and_matches(shape, monkeypatch):
    """Through ``prepare`` (OpenVX-order tensors), so the route choice and the helpers' share are covered."""
    monkeypatch.setenv(chw_convolution.ROUTE_ENV, "own")
    c_in, c_out, size, kernel = shape
    rng = np.random.default_rng(size)
    pad = kernel // 2
    x, w, b = _case(rng, c_in, c_out, 1, (size, size), (kernel, kernel), (1, 1), (1, 1), (pad,) * 4)
    assert chw_convolution.fits(1, c_in, c_out, (kernel, kernel), (size, size), 1) == (
        c_in * c_out * kernel * kernel * size * size >= chw_convolution.PARALLEL_WORK)
    residual = rng.standard_normal((1, c_out, size, size)).astype(np.float32)
    out = np.zeros((1, c_out, size, size), np.float32)
    prepare(x.T, w.T, b, out.T, Geometry(1, (1, 1), (1, 1), (pad, pad)), (0.0, 6.0), residual.T)()
    expected, bound = _expected(x, w, b, (1, 1), (1, 1), (pad,) * 4, (0.0, 6.0), residual)
    assert np.all(np.abs(out - expected) <= bound)


def test_small_or_grouped_layers_stay_off_the_gemm_route(monkeypatch):
    assert not chw_convolution.fits(1, 512, 512, (3, 3), (7, 7), 1)  # not chosen: BLAS
    monkeypatch.setenv(chw_convolution.ROUTE_ENV, "own")
    assert not chw_convolution.fits(1, 16, 16, (1, 1), (7, 7), 1)  # too little work to share
    assert not chw_convolution.fits(1, 512, 1000, (1, 1), (1, 1), 1)  # one pixel: a panel of padding
    assert not chw_convolution.fits(1, 512, 512, (3, 3), (14, 14), 2)  # grouped
    assert chw_convolution.fits(1, 512, 512, (3, 3), (7, 7), 1)


@pytest.mark.parametrize("stride,multiplier", [(1, 1), (2, 1), (1, 2)])
def test_a_depthwise_layer_shared_with_the_helpers_matches_the_reference(stride, multiplier):
    rng = np.random.default_rng(stride * 10 + multiplier)
    channels, size = 96, 57  # 96 * 57 * 57 * 9 multiply-adds: enough to lend
    x = rng.standard_normal((2, channels, size, size)).astype(np.float32)
    w = rng.standard_normal((channels * multiplier, 1, 3, 3)).astype(np.float32)
    b = rng.standard_normal(channels * multiplier).astype(np.float32)
    shape = reference(x[:, :1], w[:1], b[:1], (stride, stride), (1, 1), (1, 1, 1, 1)).shape
    out = np.zeros((2, channels * multiplier) + shape[2:], np.float32)
    prepare(x.T, w.T, b, out.T, Geometry(channels, (stride, stride), (1, 1), (1, 1)), (0.0, 6.0))()
    expected, bound = _expected(x, w, b, (stride, stride), (1, 1), (1, 1, 1, 1), (0.0, 6.0), None, channels)
    assert np.all(np.abs(out - expected) <= bound)
