"""The float engine's short last tile of pixels (``float_convolution._tiles``): its pixels get the bytes they get
inside a full tile -- bias, residual (NaN and infinities included), clamp and PRELU -- and nothing past the
layer's pixels is written. Each layer is run twice: on its own pixels (a short last tile) and with more pixels
appended so that the same pixels lie in full tiles; the shared pixels must agree bit for bit, and both agree with
a float64 reference of the definition where the values are finite."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import epilogue_activation as ea
from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.support import native

EDGES = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30], np.float32)


def _run(x, wt, bias, res, activation, epilogue, border=0):
    """The 1x1 layer through the native entry, into a zero-bordered output when ``border`` > 0 (the interior
    returned; the border checked untouched)."""
    n, h, w, _ = x.shape
    units = wt.shape[0]
    out = np.full((n, h + 2 * border, w + 2 * border, units), 0.0 if border else 7.0, np.float32)
    entry = fconv.native_conv2d(x, fconv.pack_conv(wt, pixels=n * h * w), bias, out, (0, 0, 0, 0), (1, 1),
                                activation, res, epilogue, borders=(0, border, 0))
    native.run(entry)
    if border:
        inside = out[:, border:border + h, border:border + w].copy()
        out[:, border:border + h, border:border + w] = 0.0
        assert not out.any(), "the border was written"
        return inside
    return out


def _reference(x, wt, bias, res, low, high, alpha):
    v = np.einsum("nhwc,oc->nhwo", x.astype(np.float64), wt[:, 0, 0].astype(np.float64)) + bias
    if res is not None:
        v = v + res
    v = np.minimum(np.maximum(v, low), high)
    return v if alpha is None else np.where(v >= 0, v, alpha * v)


@pytest.mark.parametrize("seed", range(12))
def test_short_tile_matches_full_tiles(seed):
    rng = np.random.default_rng(seed)
    pixels = int(rng.integers(2, 12))  # a short tile of 8- or 12-row tiles (one pixel takes the one-row tiles)
    extra = int(rng.integers(12, 30))  # the shared pixels then lie in full tiles
    c, units = int(rng.integers(1, 70)), int(rng.integers(1, 140))
    residual, clamp, prelu, border = seed % 2 == 1, seed % 3 == 0, seed % 4 < 2, seed % 5 == 4
    low, high = (0.0, 6.0) if clamp else (-np.inf, np.inf)
    x = rng.standard_normal((1, 1, pixels + extra, c)).astype(np.float32)
    wt = (rng.standard_normal((units, 1, 1, c)) * 0.5).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    res = (rng.standard_normal((1, 1, pixels + extra, units)) * 3).astype(np.float32) if residual else None
    if residual and seed % 3 != 1:
        flat = res[0, 0, :pixels].reshape(-1)
        flat[rng.integers(0, flat.size, EDGES.size)] = EDGES
    alpha = rng.uniform(-1, 1, units).astype(np.float32) if prelu else None
    epilogue = ea.epilogue_of("prelu", units, alpha) if prelu else None
    activation = (low, high) if clamp else 0
    if border:  # a bordered output takes no activation epilogue
        epilogue, alpha = None, None
    whole = _run(x, wt, bias, res, activation, epilogue)
    short = _run(np.ascontiguousarray(x[:, :, :pixels]), wt, bias,
                 None if res is None else np.ascontiguousarray(res[:, :, :pixels]), activation, epilogue,
                 border=1 if border else 0)
    shared = whole[:, :, :pixels]
    assert np.array_equal(np.isnan(shared), np.isnan(short))
    assert np.array_equal(shared.view(np.int32), short.view(np.int32)), (pixels, c, units)
    ref = _reference(x[:, :, :pixels], wt, bias, None if res is None else res[:, :, :pixels], low, high, alpha)
    finite = np.isfinite(ref) & (np.abs(ref) < 1e20)
    assert np.allclose(short[finite], ref[finite], rtol=1e-4, atol=1e-3)
