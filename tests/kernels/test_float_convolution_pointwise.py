"""Float32 1x1 convolutions on small maps (``float_convolution``'s tiles, deep layers' input channels taken in
chunks: ``K_CHUNK``) against plain references written from the definition: a float64 einsum within the bound of
sequential float32 sums, and bit for bit a float32 loop of fused multiply-adds over the input channels in order
(each from +0.0; then the bias, the residual, the clamp, PRELU), the order the module documents. Randomized
shapes: pixels 1..300, channels off multiples of 16, input channels on both sides of the chunking, residuals,
activations, channel slices of wider pixels, 8- and 16-lane blocks; one and two threads give the same bits."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import epilogue_activation as ea
from openvx_nn.kernels.frontend import float_convolution as fconv


def _fma_loop(x, wt):
    """sum over c of x[p, c] * wt[o, c] as float32 fused multiply-adds from +0.0, c in order: each step exact in
    80-bit long double (a float32 product has 48 bits) and rounded once to float32."""
    xs = x.reshape(-1, x.shape[-1]).astype(np.longdouble)
    ws = wt.reshape(wt.shape[0], -1).astype(np.longdouble)
    acc = np.zeros((xs.shape[0], ws.shape[0]), np.float32)
    for c in range(xs.shape[1]):
        acc = (np.multiply.outer(xs[:, c], ws[:, c]) + acc.astype(np.longdouble)).astype(np.float32)
    return acc


def _finish(acc, bias, res, low, high, alpha):
    """The epilogue in float32: + bias, + residual, clamped, PRELU."""
    v = acc + bias
    if res is not None:
        v = v + res.reshape(v.shape)
    v = np.minimum(np.maximum(v, np.float32(low)), np.float32(high))
    return v if alpha is None else np.where(v >= 0, v, alpha * v)


def _case(seed):
    rng = np.random.default_rng(seed)
    side_h, side_w = (int(v) for v in rng.integers(1, 18, 2))
    deep = seed % 3 != 0  # input channels past ``K_CHUNK_ABOVE`` (chunked) or below it
    c = int(rng.integers(fconv.K_CHUNK_ABOVE + 1, 1100)) if deep else int(rng.integers(1, 300))
    units = int(rng.integers(1, 200))
    if seed % 7 == 0:
        units = 16 * int(rng.integers(1, 9)) + int(rng.integers(0, 2))
    return rng, (1, side_h, side_w, c), units


@pytest.mark.parametrize("seed", range(24))
def test_pointwise_layers_equal_a_loop_of_fused_multiply_adds(seed):
    rng, shape, units = _case(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    wt = (rng.standard_normal((units, 1, 1, shape[3])) / np.sqrt(shape[3])).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    residual, clamp, prelu, sliced = seed % 2 == 1, seed % 4 == 0, seed % 5 == 2, seed % 6 == 3
    res = rng.standard_normal((*shape[:3], units)).astype(np.float32) if residual else None
    low, high = (-1.5, 2.0) if clamp else (-np.inf, np.inf)
    alpha = rng.uniform(-1, 1, units).astype(np.float32) if prelu else None
    epilogue = ea.epilogue_of("prelu", units, alpha) if prelu else None
    block = (2, 8) if seed % 8 == 5 else None  # AVX2's blocks (never chunked) where the CPU has AVX-512 too
    pixels = shape[1] * shape[2]
    if sliced:  # the layer's channels inside wider pixels (a concatenation's slice), the others untouched
        wide = np.full((*shape[:3], units + 11), 5.0, np.float32)
        out = wide[..., 3:3 + units]
    else:
        out = np.full((*shape[:3], units), np.nan, np.float32)
    fconv.conv2d(x, fconv.pack_conv(wt, block, pixels=pixels), bias, out, (0, 0, 0, 0), (1, 1),
                 (low, high) if clamp else 0, res, epilogue)
    want = _finish(_fma_loop(x, wt), bias, res, low, high, alpha).reshape(out.shape)
    np.testing.assert_array_equal(out, want)
    if sliced:
        assert (wide[..., :3] == 5.0).all() and (wide[..., 3 + units:] == 5.0).all()
    exact = np.einsum("nhwc,oc->nhwo", x.astype(np.float64), wt[:, 0, 0].astype(np.float64)) + bias
    size = np.einsum("nhwc,oc->nhwo", np.abs(x.astype(np.float64)), np.abs(wt[:, 0, 0].astype(np.float64)))
    if res is not None:
        exact = exact + res
    exact = np.minimum(np.maximum(exact, low), high)
    if alpha is not None:
        exact = np.where(exact >= 0, exact, alpha * exact)
    bound = (shape[3] + 3) * 2.0 ** -24 * (size + np.abs(bias) + (0 if res is None else np.abs(res)) + 1e-30)
    assert (np.abs(out - exact) <= bound * (1 + (np.abs(alpha) if alpha is not None else 0))).all()


@pytest.mark.parametrize("shape, units", [((1, 7, 7, 1024), 96), ((1, 14, 14, 480), 80), ((1, 5, 3, 700), 40)])
def test_deep_pointwise_layers_shared_between_threads_equal_one_thread(shape, units, monkeypatch):
    from openvx_nn.kernels.frontend import float_sharing
    rng = np.random.default_rng(shape[3])
    x = rng.standard_normal(shape).astype(np.float32)
    wt = rng.standard_normal((units, 1, 1, shape[3])).astype(np.float32)
    packed, bias = fconv.pack_conv(wt), rng.standard_normal(units).astype(np.float32)
    res = rng.standard_normal((*shape[:3], units)).astype(np.float32)
    alone, shared = (np.empty((*shape[:3], units), np.float32) for _ in range(2))
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 0)
    fconv.conv2d(x, packed, bias, alone, (0, 0, 0, 0), (1, 1), 1, res)
    monkeypatch.setattr(float_sharing.workers, "helpers", lambda: 1)
    monkeypatch.setattr(float_sharing, "PARALLEL_WORK", 0)
    fconv.conv2d(x, packed, bias, shared, (0, 0, 0, 0), (1, 1), 1, res)
    np.testing.assert_array_equal(shared, alone)
    np.testing.assert_array_equal(alone, _finish(_fma_loop(x, wt), bias, res, 0.0, np.inf, None).reshape(alone.shape))
