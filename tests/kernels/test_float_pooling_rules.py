"""NNAPI's float pooling rules as parameters of ``window_runs``' reductions (``float_pooling``): bit for bit
against a plain float32 reference written from NeuralNetworks.h's text -- padded positions take no part, the
average and the L2 mean divide by the count of input positions inside the window, the maximum passes a NaN over,
the fused RELU/RELU1/RELU6 clamps -- summing in the window's row order as the kernel promises; and float16 pools
on the binary16 bits themselves, the bytes of the float32 pool of the widened values rounded once."""
from __future__ import annotations

import numpy as np
import pytest

from openvx_nn.kernels.frontend import float_pooling

CLAMP = {0: (-np.inf, np.inf), 1: (0.0, np.inf), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


def reference(x, mode, pads, strides, size, activation):
    """Each output from the window's input positions in row order, in float32: the sum (of squares, each square
    rounded) from +0.0 divided by their count (L2: square-rooted), or the largest of them a ``>`` test finds from
    -inf (a NaN never is); 0 for a window with no input position; then clamped (a NaN stays)."""
    left, right, top, bottom = pads
    sw, sh = strides
    fw, fh = size
    n, h, w, c = x.shape
    out_h, out_w = (h + top + bottom - fh) // sh + 1, (w + left + right - fw) // sw + 1
    low, high = (np.float32(v) for v in CLAMP[activation])
    out = np.zeros((n, out_h, out_w, c), np.float32)
    with np.errstate(all="ignore"):
        for b in range(n):
            for i in range(out_h):
                for j in range(out_w):
                    taps = [x[b, y, z] for y in range(i * sh - top, i * sh - top + fh) if 0 <= y < h
                            for z in range(j * sw - left, j * sw - left + fw) if 0 <= z < w]
                    if not taps:
                        continue
                    if mode == float_pooling.MAX:
                        acc = np.full(c, -np.inf, np.float32)
                        for t in taps:
                            acc = np.where(t > acc, t, acc)
                    else:
                        acc = np.zeros(c, np.float32)
                        for t in taps:
                            acc = acc + (t * t if mode == float_pooling.L2 else t)
                        acc = acc / np.float32(len(taps))
                        if mode == float_pooling.L2:
                            acc = np.sqrt(acc)
                    acc = np.where(acc < low, low, acc)
                    out[b, i, j] = np.where(acc > high, high, acc)
    return out


def case(rng):
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 11)), int(rng.integers(1, 11))
    c = int(rng.choice([1, 5, 8, 16, 23, 64, 71]))
    fw, fh = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    pads = tuple(int(v) for v in rng.integers(0, 4, 4))
    strides = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if (h + pads[2] + pads[3] - fh) < 0 or (w + pads[0] + pads[1] - fw) < 0:
        pads = (fw, fw, fh, fh)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32) * np.float32(rng.choice([1.0, 1e-3, 1e3]))
    pick = rng.random(x.shape)
    x[pick < 0.04] = np.nan
    x[(pick > 0.04) & (pick < 0.08)] = -0.0
    x[(pick > 0.08) & (pick < 0.1)] = np.inf
    x[(pick > 0.1) & (pick < 0.12)] = -np.inf
    return x, pads, strides, (fw, fh)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("mode", [float_pooling.AVERAGE, float_pooling.MAX, float_pooling.L2])
def test_float32_pools_equal_the_rules_bit_for_bit(mode, seed):
    rng = np.random.default_rng(4100 + seed)
    x, pads, strides, size = case(rng)
    act = seed % 4
    want = reference(x, mode, pads, strides, size, act)
    got = np.full(want.shape, 7, np.float32)
    float_pooling.pool2d(x, got, mode, pads, strides, size, act)
    # NaN payloads are the CPU's choice: compare every NaN as NaN, every other value by its bits
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_a_window_of_nans_only_gives_the_maximum_of_nothing_clamped():
    x = np.full((1, 2, 2, 3), np.nan, np.float32)
    x[0, 1, 1] = [5.0, -7.0, np.nan]
    got = np.zeros((1, 2, 2, 3), np.float32)
    float_pooling.pool2d(x, got, float_pooling.MAX, (0, 1, 0, 1), (1, 1), (2, 2), 0)
    assert np.array_equal(got[0, 1, 1], [5.0, -7.0, -np.inf])
    assert np.array_equal(got[0, 0, 0], [5.0, -7.0, -np.inf])
    float_pooling.pool2d(x, got, float_pooling.MAX, (0, 1, 0, 1), (1, 1), (2, 2), 3)  # RELU6
    assert np.array_equal(got[0, 0, 0], [5.0, 0.0, 0.0])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mode", [float_pooling.AVERAGE, float_pooling.MAX, float_pooling.L2])
def test_float16_pools_run_on_the_bits_with_the_float32_pools_bytes(mode, seed):
    rng = np.random.default_rng(4200 + seed)
    x32, pads, strides, size = case(rng)
    x = x32.astype(np.float16)
    act = seed % 4
    wide = reference(x.astype(np.float32), mode, pads, strides, size, act)
    want = wide.astype(np.float16)
    got = np.full(want.shape, 7, np.float16)
    float_pooling.bind_pool2d(x, got, mode, pads, strides, size, act)()
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))
    if seed % 2:  # strided views on both sides: through buffers, the same bytes
        wide_x = np.zeros(x.shape[:3] + (2 * x.shape[3],), np.float16)
        wide_x[..., 1::2] = x
        wide_out = np.full(want.shape[:3] + (2 * want.shape[3],), 7, np.float16)
        float_pooling.bind_pool2d(wide_x[..., 1::2], wide_out[..., ::2], mode, pads, strides, size, act)()
        np.testing.assert_array_equal(wide_out[..., ::2].view(np.uint16), got.view(np.uint16))
        assert np.all(wide_out[..., 1::2] == 7)


def test_mixed_widths_are_refused():
    with pytest.raises(ValueError, match="must both be float32 or both float16"):
        float_pooling.bind_pool2d(np.zeros((1, 2, 2, 1), np.float16), np.zeros((1, 1, 1, 1), np.float32),
                                  float_pooling.MAX, (0, 0, 0, 0), (1, 1), (2, 2), 0)
