"""uint8 convolutions in API level 29's forms against plain loops written from the Android 10 ``NeuralNetworks.h``:
CONV_2D and DEPTHWISE_CONV_2D with dilation, TRANSPOSE_CONV_2D, GROUPED_CONV_2D in NCHW and with more groups than
one concatenation joins; TENSOR_QUANT8_ASYMM inputs with per-tensor (TENSOR_QUANT8_ASYMM) and per-channel
(TENSOR_QUANT8_SYMM_PER_CHANNEL) filters, both layouts, explicit and implicit padding, randomized shapes.

The reference: acc = bias + sum of (x - input zero point) * (filter - filter zero point), exact integers; out =
acc * input scale * filter scale / output scale rounded to nearest (halves away from zero), plus the output zero
point, clamped to the fused activation's range. With power-of-two scales the multiplier is exact and so is the
expected byte; with other scales NNAPI's 31-bit multiplier may move a result by 1.
"""
from __future__ import annotations

import numpy as np
import pytest
from nnapi_harness import I32T, Q8, collect_garbage, run_filter_op  # noqa: F401
from test_nnapi_1_2_convolutions import conv_reference, same_padding, to_layout, transposed_reference

from openvx_nn import nnapi

OP = nnapi.OperationType
T = nnapi.OperandType
SAME, VALID = 1, 2
IN_QUANT = (0.5, 100)
OUT_QUANT = (0.0625, 120)


def activation_range(act):
    """The raw bounds of a fused activation on the output (scale 1/16, zero point 120)."""
    scale, zero = OUT_QUANT
    real = {0: (None, None), 1: (0.0, None), 2: (-1.0, 1.0), 3: (0.0, 6.0)}[act]
    low = 0 if real[0] is None else max(0, zero + round(real[0] / scale))
    high = 255 if real[1] is None else min(255, zero + round(real[1] / scale))
    return low, high


def requantize(acc, multipliers, act):
    real = acc * multipliers
    low, high = activation_range(act)
    return np.clip(np.sign(real) * np.floor(np.abs(real) + 0.5) + OUT_QUANT[1], low, high)


class Filter:
    """A random uint8 filter with one scale, or an int8 one with a scale per channel along ``dim``; ``exact``:
    power-of-two scales."""

    def __init__(self, rng, shape, per_channel, dim, exact):
        self.per_channel, self.dim = per_channel, dim
        units = shape[dim]
        if exact:
            scales = 2.0 ** -rng.integers(3, 9, units if per_channel else 1)
        else:
            scales = rng.uniform(0.002, 0.03, units if per_channel else 1)
        self.scales = scales.astype(np.float32)
        if per_channel:
            self.values, self.zero = rng.integers(-127, 128, shape, dtype=np.int8), 0
        else:
            self.values, self.zero = rng.integers(0, 256, shape, dtype=np.uint8), int(rng.integers(90, 160))

    def offsets(self):
        return self.values.astype(np.float64) - self.zero

    def multipliers(self):
        """in scale * filter scale / out scale per output channel (broadcast on the last axis)."""
        return IN_QUANT[0] * self.scales.astype(np.float64) / OUT_QUANT[0]

    def bias_scale(self):
        return 0.0 if self.per_channel else float(IN_QUANT[0] * self.scales[0])


def run_q8(op, x, filt: Filter, bias, scalars, out_shape):
    """One ``op`` on uint8 ``x`` (a model input) with ``filt`` and ``bias`` as constants, the scales above."""
    return run_filter_op(op, x, IN_QUANT, filt.values, filt.scales, filt.zero, filt.dim if filt.per_channel else None,
                         bias, filt.bias_scale(), scalars, out_shape, OUT_QUANT)


def check(got, want, nchw, exact):
    want = to_layout(want, nchw)
    assert got.shape == want.shape
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max(initial=0) <= (0 if exact else 1), f"max difference {diff.max()}"


def i32(v):
    return (T.INT32, int(v))


def boolean(v):
    return (T.BOOL, bool(v))


SEEDS = range(3)  # seed 2: scales that are not powers of two


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["one-scale", "per-channel"])
@pytest.mark.parametrize("depthwise", [False, True], ids=["conv", "depthwise"])
def test_a_dilated_uint8_convolution_reads_every_dilation_th_pixel(depthwise, per_channel, nchw, seed):
    rng = np.random.default_rng(100 + seed + 10 * depthwise + 20 * per_channel + 40 * nchw)
    exact = seed != 2
    n, h, w, c = int(rng.integers(1, 3)), int(rng.integers(5, 11)), int(rng.integers(5, 11)), int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(2, 4))
    dh, dw = int(rng.integers(1, 4)), int(rng.integers(2, 4))  # at least one factor above 1
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    act = int(rng.integers(0, 4))
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    if depthwise:
        mult = int(rng.integers(1, 3))
        units = c * mult
        filt = Filter(rng, (1, kh, kw, units), per_channel, 3, exact)
    else:
        units = int(rng.integers(1, 6))
        filt = Filter(rng, (units, kh, kw, c), per_channel, 0, exact)
    bias = rng.integers(-3000, 3000, units).astype(np.int32)
    pads = tuple(int(p) for p in rng.integers(0, 3, 4))
    top, bottom = same_padding(h, (kh - 1) * dh + 1, sh)
    left, right = same_padding(w, (kw - 1) * dw + 1, sw)
    forms = [([i32(p) for p in pads], pads), ([i32(SAME)], (left, right, top, bottom)), ([i32(VALID)], (0, 0, 0, 0))]
    for head, padding in forms:
        if (h + padding[2] + padding[3] - (kh - 1) * dh - 1) < 0 or (w + padding[0] + padding[1] - (kw - 1) * dw - 1) < 0:
            continue  # the dilated window does not fit (VALID on a small input)
        acc = conv_reference(x.astype(np.float64) - IN_QUANT[1], filt.offsets(), bias, padding, (sw, sh), (dw, dh),
                             1, 0, depthwise=depthwise)
        want = requantize(acc, filt.multipliers(), act)
        tail = head + [i32(sw), i32(sh)] + ([i32(mult)] if depthwise else []) + [i32(act), boolean(nchw), i32(dw),
                                                                                 i32(dh)]
        got = run_q8(OP.DEPTHWISE_CONV_2D if depthwise else OP.CONV_2D, to_layout(x, nchw), filt, bias, tail,
                     to_layout(want, nchw).shape)
        check(got, want, nchw, exact)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["one-scale", "per-channel"])
def test_a_uint8_transpose_conv_2d_scatters_each_input_pixel(per_channel, nchw, seed):
    rng = np.random.default_rng(200 + seed + 10 * per_channel + 20 * nchw)
    exact = seed != 2
    n, h, w, c, o = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 6)), \
        int(rng.integers(1, 4)), int(rng.integers(1, 5))
    kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    act = int(rng.integers(0, 4))
    x = rng.integers(0, 256, (n, h, w, c), dtype=np.uint8)
    filt = Filter(rng, (o, kh, kw, c), per_channel, 0, exact)
    bias = rng.integers(-3000, 3000, o).astype(np.int32)
    full_h, full_w = (h - 1) * sh + kh, (w - 1) * sw + kw
    left, right = int(rng.integers(0, min(2, full_w - 1) + 1)), 0
    top, bottom = 0, int(rng.integers(0, min(2, full_h - 1) + 1))
    if full_h - top - bottom > 1 and rng.integers(0, 2):
        top, bottom = 1, bottom - 1 if bottom else 0  # a padding ahead of the rows, too
    out_hw = (full_h - top - bottom, full_w - left - right)

    def expect(pad_top, pad_left, hw):
        acc = transposed_reference(x.astype(np.float64) - IN_QUANT[1], filt.offsets(), bias, pad_top, pad_left,
                                   (sw, sh), hw, 0)
        return requantize(acc, filt.multipliers(), act)
    want = expect(top, left, out_hw)
    got = run_q8(OP.TRANSPOSE_CONV_2D, to_layout(x, nchw), filt, bias,
                 [i32(v) for v in (left, right, top, bottom, sw, sh, act)] + [boolean(nchw)],
                 to_layout(want, nchw).shape)
    check(got, want, nchw, exact)
    for scheme in (SAME, VALID):
        out_hw = (h * sh, w * sw) if scheme == SAME else (full_h, full_w)
        shape = to_layout(np.zeros((n, *out_hw, o)), nchw).shape
        pad_top = max(full_h - out_hw[0], 0) // 2 if scheme == SAME else 0
        pad_left = max(full_w - out_hw[1], 0) // 2 if scheme == SAME else 0
        want = expect(pad_top, pad_left, out_hw)
        got = run_q8(OP.TRANSPOSE_CONV_2D, to_layout(x, nchw), filt, bias,
                     [(I32T, np.asarray(shape, np.int32)), i32(scheme), i32(sw), i32(sh), i32(act), boolean(nchw)],
                     shape)
        check(got, want, nchw, exact)


@pytest.mark.parametrize("groups", [3, 18], ids=["3-groups", "18-groups"])
@pytest.mark.parametrize("nchw", [False, True], ids=["nhwc", "nchw"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["one-scale", "per-channel"])
def test_a_uint8_grouped_conv_2d_in_either_layout_with_any_number_of_groups(per_channel, nchw, groups):
    rng = np.random.default_rng(300 + groups + 10 * per_channel + 20 * nchw)
    cg, og = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    n, h, w = int(rng.integers(1, 3)), int(rng.integers(3, 7)), int(rng.integers(3, 7))
    kh, kw, act = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(0, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    x = rng.integers(0, 256, (n, h, w, groups * cg), dtype=np.uint8)
    units = groups * og
    filt = Filter(rng, (units, kh, kw, cg), per_channel, 0, True)
    bias = rng.integers(-3000, 3000, units).astype(np.int32)
    top, bottom = same_padding(h, kh, sh)
    left, right = same_padding(w, kw, sw)
    acc = conv_reference(x.astype(np.float64) - IN_QUANT[1], filt.offsets(), bias, (left, right, top, bottom),
                         (sw, sh), (1, 1), groups, 0)
    want = requantize(acc, filt.multipliers(), act)
    got = run_q8(OP.GROUPED_CONV_2D, to_layout(x, nchw), filt, bias,
                 [i32(SAME), i32(sw), i32(sh), i32(groups), i32(act), boolean(nchw)], to_layout(want, nchw).shape)
    check(got, want, nchw, True)
