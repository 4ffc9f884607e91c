"""The float convolution's native entry runs its tile loop through that loop's own entry (``_conv_loop``, its
address in the layer's block): the output is the bound call's, bit for bit, and within float32 rounding of a
float64 reference of the definition; a block naming another layer's loop fails without writing anything."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_convolution as fconv
from openvx_nn.kernels.support import jit, native


def _layer(rng, pixels_hw, k, units, residual):
    h, w = pixels_hw
    c = int(rng.integers(1, 9))
    x = rng.standard_normal((1, h, w, c)).astype(np.float32)
    wt = rng.standard_normal((units, k, k, c)).astype(np.float32)
    bias = rng.standard_normal(units).astype(np.float32)
    res = rng.standard_normal((1, h, w, units)).astype(np.float32) if residual else None
    return x, wt, bias, res


def _reference(x, wt, bias, res, pad):
    """float64 ``bias + sum x * w (+ residual)``, stride 1, zero padding ``pad`` each side, written from the
    definition."""
    _, h, w, _ = x.shape
    units, k = wt.shape[0], wt.shape[1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((1, h, w, units)) + bias
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("nhwc,oc->nhwo", xp[:, dy:dy + h, dx:dx + w], wt[:, dy, dx].astype(np.float64))
    return out if res is None else out + res


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("pixels_hw", "k", "units", "residual"), [
    ((1, 1), 1, 40, False),  # one output pixel: the one-row tiles
    ((5, 7), 3, 24, True),
    ((9, 4), 1, 70, False),
])
def test_the_native_entry_gives_the_bound_calls_bits(seed, pixels_hw, k, units, residual):
    rng = np.random.default_rng([913, seed, k, units])
    x, wt, bias, res = _layer(rng, pixels_hw, k, units, residual)
    pad = k // 2
    h, w = pixels_hw
    wp = fconv.pack_conv(wt, pixels=h * w)
    got = np.full((1, h, w, units), 7.0, np.float32)
    entry = fconv.native_conv2d(x, wp, bias, got, (pad, pad, pad, pad), (1, 1), 0, res)
    assert entry is not None and native.run(entry) == 0
    bound = np.full_like(got, -7.0)
    fconv.bind_conv2d(x, wp, bias, bound, (pad, pad, pad, pad), (1, 1), 0, res)()
    assert got.tobytes() == bound.tobytes()
    want = _reference(x, wt, bias, res, pad)
    scale = np.abs(x).max() * np.abs(wt).sum(axis=(1, 2, 3)).max() + np.abs(bias).max() + 4
    assert np.abs(got - want).max() <= 1e-5 * scale


def test_a_block_naming_another_layers_loop_fails_untouched():
    rng = np.random.default_rng(5)
    x, wt, bias, res = _layer(rng, (5, 7), 3, 24, True)
    wp = fconv.pack_conv(wt, pixels=35)
    out = np.full((1, 5, 7, 24), 7.0, np.float32)
    entry = fconv.native_conv2d(x, wp, bias, out, (1, 1, 1, 1), (1, 1), 0, res)
    ours = fconv._variant_of(wp, out, 0, res)
    assert entry.block[fconv._LOOP] == fconv._conv_loop(ours)
    entry.block[fconv._LOOP] = fconv._conv_loop(ours ^ 1)  # the same loop without (or with) a residual
    assert native.run(entry) == jit.RAISED
    assert (out == 7.0).all()
